/**
 * How the client reaches a daemon: `-H` / `ENGINE_HOST` (unix:// or tcp://; the default is
 * the unix socket `/var/run/engine.sock`), TLS from `--tls`, `--tlsverify` / `ENGINE_TLS_VERIFY`
 * and the files in `ENGINE_CERT_PATH` (default `~/.engine/`), and the API version agreed
 * through `/_ping` (or pinned by `ENGINE_API_VERSION`).
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { Client } from "undici";
import { parseHost } from "../host/listeners/parse-host.js";
import { API_VERSION, compareApiVersions } from "../core/version.js";

export interface ConnectionOptions {
  host?: string;
  tls: boolean;
  tlsverify: boolean;
  tlscacert?: string;
  tlscert?: string;
  tlskey?: string;
}

export interface Connection {
  /** GETs `path` (after the version prefix) and returns the parsed JSON answer. */
  getJson<T>(path: string): Promise<T>;
  close(): Promise<void>;
}

export class DaemonError extends Error {}

export function connect(opts: ConnectionOptions, env: NodeJS.ProcessEnv): Connection {
  const verify = opts.tlsverify || Boolean(env.ENGINE_TLS_VERIFY);
  const tls = opts.tls || verify;
  const addr = parseHost(opts.host ?? env.ENGINE_HOST ?? "", tls);
  const certDir = env.ENGINE_CERT_PATH || join(homedir(), ".engine");
  let client: Client;
  let prefix = "";
  if (addr.proto === "unix") {
    client = new Client("http://localhost", { socketPath: addr.path });
  } else if (addr.proto === "tcp") {
    prefix = addr.prefix;
    const host = addr.host.includes(":") ? `[${addr.host}]` : addr.host;
    client = new Client(`${tls ? "https" : "http"}://${host}:${addr.port}`, {
      connect: tls
        ? {
            ca: readFileSync(opts.tlscacert ?? join(certDir, "ca.pem")),
            ...(verify || opts.tlscert
              ? { cert: readFileSync(opts.tlscert ?? join(certDir, "cert.pem")), key: readFileSync(opts.tlskey ?? join(certDir, "key.pem")) }
              : {}),
            rejectUnauthorized: verify,
          }
        : undefined,
    });
  } else {
    throw new DaemonError("fd:// is for the daemon only; the client connects with unix:// or tcp://");
  }

  let version: Promise<string> | undefined;
  const negotiate = async (): Promise<string> => {
    if (env.ENGINE_API_VERSION) return env.ENGINE_API_VERSION;
    const res = await client.request({ path: `${prefix}/_ping`, method: "GET" });
    await res.body.dump();
    const server = String(res.headers["api-version"] ?? API_VERSION);
    return compareApiVersions(server, API_VERSION) < 0 ? server : API_VERSION;
  };

  return {
    async getJson<T>(path: string): Promise<T> {
      const v = await (version ??= negotiate());
      const res = await client.request({ path: `${prefix}/v${v}${path}`, method: "GET" });
      const text = await res.body.text();
      if (res.statusCode >= 400) {
        let message = text;
        try {
          message = (JSON.parse(text) as { message?: string }).message ?? text;
        } catch {
          // not JSON: show it as it came
        }
        throw new DaemonError(`Error response from daemon: ${message}`);
      }
      return JSON.parse(text) as T;
    },
    close: () => client.close(),
  };
}
