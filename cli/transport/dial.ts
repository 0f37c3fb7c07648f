/**
 * Where the client connects (`-H` / `ENGINE_HOST`) and how: a unix socket, TCP, TLS on TCP, an
 * SSH channel to the daemon's socket on another host (ssh.ts), tcp:// optionally through an
 * HTTP proxy (proxy.ts: HTTPS_PROXY for TLS, HTTP_PROXY otherwise, NO_PROXY, never for
 * loopback). Each request opens its own connection (see http1.ts; ssh:// shares one SSH
 * connection among them); TLS, SSH and proxy code load only when a host needs them.
 */
import { isIP, connect as netConnect, type Socket } from "node:net";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";

const DEFAULT_HOST = process.platform === "win32" ? "tcp://127.0.0.1:2376" : "unix:///var/run/engine.sock";

export type Target =
  | { proto: "unix"; path: string }
  | { proto: "tcp"; host: string; port: number; prefix: string }
  | { proto: "ssh"; user?: string; host: string; port: number; socket: string };

export interface TlsFiles {
  /** Verify the daemon's certificate against `ca`. */
  verify: boolean;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

export interface DialOptions {
  target: Target;
  /** TLS for tcp://, or undefined for plain TCP. */
  tls?: TlsFiles;
  env: NodeJS.ProcessEnv;
}

export class HostError extends Error {}

/** Parses `-H`: unix://PATH, tcp://HOST[:PORT][/PREFIX], ssh://[USER@]HOST[:PORT][/SOCKET], HOST:PORT. */
export function parseTarget(value: string, tls: boolean): Target {
  const text = value.trim() || DEFAULT_HOST;
  const scheme = /^([a-z0-9+.-]*):\/\//i.exec(text);
  const name = scheme?.[1].toLowerCase();
  const rest = scheme ? text.slice(scheme[0].length) : text;
  if (name === "unix") return { proto: "unix", path: rest || "/var/run/engine.sock" };
  if (name === "fd") throw new HostError("fd:// is for the daemon only; the client connects with unix://, tcp:// or ssh://");
  if (name === "ssh") {
    const m = /^(?:([^@/]+)@)?(\[[^\]]+\]|[^:/]+)(?::(\d+))?(\/.*)?$/.exec(rest);
    if (!m) throw new HostError(`invalid ssh host "${value}": expected ssh://[user@]host[:port][/socket]`);
    return { proto: "ssh", user: m[1], host: m[2].replace(/^\[|\]$/g, ""), port: m[3] ? Number(m[3]) : 22, socket: m[4] || "/var/run/engine.sock" };
  }
  if (name !== undefined && name !== "tcp" && name !== "http" && name !== "https") {
    throw new HostError(`invalid host "${value}": unsupported scheme "${scheme![1]}://"; use unix://, tcp:// or ssh://`);
  }
  const slash = rest.indexOf("/");
  const hostPort = slash < 0 ? rest : rest.slice(0, slash);
  const prefix = slash < 0 ? "" : rest.slice(slash).replace(/\/+$/, "");
  const m = /^(?:\[([^\]]+)\]|([^:]*))(?::(\d*))?$/.exec(hostPort);
  if (!m) throw new HostError(`invalid host "${value}"`);
  const host = m[1] ?? (m[2] || "127.0.0.1");
  const port = m[3] ? Number(m[3]) : tls ? 2376 : 2375;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new HostError(`invalid host "${value}": bad port`);
  return { proto: "tcp", host, port, prefix };
}

/** A target as a URL again (`-H 1.2.3.4` is tcp://1.2.3.4:2375), as the default context shows it. */
export function targetUrl(t: Target): string {
  if (t.proto === "unix") return `unix://${t.path}`;
  if (t.proto === "tcp") return `${addressOf(t)}${t.prefix}`;
  const host = t.host.includes(":") ? `[${t.host}]` : t.host;
  return `ssh://${t.user ? `${t.user}@` : ""}${host}${t.port === 22 ? "" : `:${t.port}`}${t.socket === "/var/run/engine.sock" ? "" : t.socket}`;
}

/** The TLS files: explicit paths, else `ENGINE_CERT_PATH` (default ~/.engine/) ca.pem, cert.pem, key.pem. */
export function tlsFiles(opts: { verify: boolean; cacert?: string; cert?: string; key?: string }, env: NodeJS.ProcessEnv): TlsFiles {
  const dir = env.ENGINE_CERT_PATH || join(homedir(), ".engine");
  const read = (given: string | undefined, name: string, needed: boolean) => {
    const path = given ?? join(dir, name);
    try {
      return readFileSync(path);
    } catch (err) {
      if (!needed && given === undefined && (err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw new HostError(`could not read ${path}: ${(err as Error).message}`);
    }
  };
  return { verify: opts.verify, ca: read(opts.cacert, "ca.pem", opts.verify), cert: read(opts.cert, "cert.pem", false), key: read(opts.key, "key.pem", false) };
}

/** A fresh connection to the daemon. */
export async function dial({ target, tls, env }: DialOptions): Promise<Duplex> {
  if (target.proto === "unix") return opened(netConnect({ path: target.path }), target.path);
  if (target.proto === "ssh") return (await import("./ssh.js")).dialSsh(target, env);
  const { proxyFor, tunnel } = await import("./proxy.js");
  const proxy = proxyFor(target, Boolean(tls), env);
  const raw = proxy ? await tunnel(proxy, target) : await opened(netConnect({ host: target.host, port: target.port }), `${target.host}:${target.port}`);
  if (!tls) return raw;
  const { connect: tlsConnect } = await import("node:tls");
  const secure = tlsConnect({
    socket: raw as Socket,
    // the name the certificate must show: the daemon's, also when `raw` is a proxy's tunnel
    host: target.host,
    servername: isIP(target.host) ? undefined : target.host,
    ca: tls.ca,
    cert: tls.cert,
    key: tls.key,
    rejectUnauthorized: tls.verify,
  });
  if (tls.cert) {
    // With TLS 1.3 the daemon checks the client's certificate after the handshake has completed
    // on this side: a refused one shows as the connection ending before any answer. Name that.
    secure.prependOnceListener("end", () => {
      if (!secure.readableDidRead) secure.emit("error", new HostError(`error during connect: ${addressOf(target)}: tls: the daemon closed the connection after the handshake: it did not accept the client certificate`));
    });
  }
  return new Promise((resolve, reject) => {
    secure.once("secureConnect", () => resolve(secure));
    secure.once("error", (err: NodeJS.ErrnoException) => reject(tlsError(err, target)));
  });
}

const addressOf = (t: { host: string; port: number }) => `tcp://${t.host.includes(":") ? `[${t.host}]` : t.host}:${t.port}`;

/** Certificate problems as the Docker CLI words them ("tls: failed to verify certificate: ..."). */
function tlsError(err: NodeJS.ErrnoException, target: { host: string; port: number }): HostError {
  const where = addressOf(target);
  const verifying = /CERT|SIGNATURE|ISSUER|ALTNAME/.test(err.code ?? "");
  const alert = /alert (.+)$/i.exec(err.message)?.[1];
  const why = verifying ? `failed to verify certificate: ${err.message}` : alert ? `the daemon refused the connection: ${alert}` : err.message;
  return new HostError(`error during connect: ${where}: tls: ${why}`);
}

/** Resolves once `socket` is connected; a failure names `where`. */
function opened(socket: Socket, where: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    socket.once("connect", () => resolve(socket));
    socket.once("error", (err: NodeJS.ErrnoException) => {
      const why = err.code === "ENOENT" || err.code === "ECONNREFUSED" ? "Is the engine daemon running?" : err.message;
      reject(new HostError(`Cannot connect to the engine daemon at ${where.startsWith("/") ? `unix://${where}` : `tcp://${where}`}. ${why}`));
    });
  });
}
