/**
 * The client's view of the daemon: requests on the API version agreed through `/_ping` (the
 * newest both speak, or `ENGINE_API_VERSION`), JSON in and out, streams, and hijacked
 * connections for attach. Transport: transport/dial.ts; HTTP: transport/http1.ts.
 */
import type { Duplex, Readable } from "node:stream";
import { dial, type Target, type TlsFiles } from "./transport/dial.js";
import { send, type HttpResponse } from "./transport/http1.js";

/** The newest API version this client speaks. */
const CLIENT_API_VERSION = "1.51";

export type QueryValue = string | number | boolean | undefined | null | readonly string[];

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  /** A JSON body (any value but a Buffer or a stream). */
  json?: unknown;
  /** A raw body, with its content type. */
  raw?: Buffer | Readable;
  contentType?: string;
  headers?: Record<string, string>;
  /** Without the `/vX.Y` prefix (for `/_ping`). */
  unversioned?: boolean;
}

/** An error answer of the daemon; `message` is what the Docker CLI prints for it. */
export class DaemonError extends Error {
  constructor(
    readonly status: number,
    readonly daemonMessage: string,
  ) {
    super(`Error response from daemon: ${daemonMessage}`);
  }
}

export interface Connection {
  /** Where the daemon is (`run --use-api-socket` binds a unix socket's path); a context's once read. */
  target(): Promise<Target>;
  /** The API version requests use ("1.51"). */
  apiVersion(): Promise<string>;
  /** Any answer, error or not; the body is left to the caller. */
  request(method: string, path: string, opts?: RequestOptions): Promise<HttpResponse>;
  /** A successful answer (a DaemonError otherwise); the body is left to the caller. */
  call(method: string, path: string, opts?: RequestOptions): Promise<HttpResponse>;
  /** A successful answer's JSON (undefined for an empty body). */
  json<T>(method: string, path: string, opts?: RequestOptions): Promise<T>;
  getJson<T>(path: string, opts?: RequestOptions): Promise<T>;
  /** The raw connection after an upgrade (attach, exec start). */
  hijack(method: string, path: string, opts?: RequestOptions): Promise<{ stream: Readable; socket: Duplex; headers: Record<string, string> }>;
  close(): Promise<void>;
}

export interface ConnectionSettings {
  target: Target;
  tls?: TlsFiles;
  env: NodeJS.ProcessEnv;
}

function encodeQuery(query: Record<string, QueryValue> | undefined): string {
  if (!query) return "";
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    const values = Array.isArray(v) ? v : [v];
    for (const one of values) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(typeof one === "boolean" ? (one ? "1" : "0") : String(one))}`);
  }
  return parts.length ? `?${parts.join("&")}` : "";
}

/** The message of an error answer: `{"message"}` when the body is JSON, else the text. */
export async function errorMessage(res: HttpResponse): Promise<string> {
  const text = (await readAll(res.body)).toString("utf8");
  try {
    // trimmed, as the Docker client trims it (Docker's "predefined host network " ends in a space)
    return ((JSON.parse(text) as { message?: string }).message ?? text).trim();
  } catch {
    return text.trim() || `status ${res.status}`;
  }
}

export async function readAll(body: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

export function connect(settings: ConnectionSettings): Connection {
  const { target, env } = settings;
  const open = new Set<Duplex>();
  const prefix = target.proto === "tcp" ? target.prefix : "";
  const hostHeader = target.proto === "tcp" ? `${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}` : "api.engine";
  let version: Promise<string> | undefined;

  const raw = async (method: string, path: string, opts: RequestOptions = {}, upgrade = false): Promise<HttpResponse> => {
    const v = opts.unversioned ? "" : `/v${await apiVersion()}`;
    const socket = await dial(settings);
    open.add(socket);
    socket.once("close", () => open.delete(socket));
    const headers: Record<string, string> = { ...opts.headers };
    let body: Buffer | Readable | undefined = opts.raw;
    if (opts.json !== undefined) {
      body = Buffer.from(JSON.stringify(opts.json));
      headers["Content-Type"] = "application/json";
    } else if (opts.raw) {
      headers["Content-Type"] = opts.contentType ?? "application/octet-stream";
    }
    try {
      return await send(socket, hostHeader, { method, path: `${prefix}${v}${path}${encodeQuery(opts.query)}`, headers, body, upgrade });
    } catch (err) {
      socket.destroy();
      throw err;
    }
  };

  const apiVersion = (): Promise<string> =>
    (version ??= (async () => {
      if (env.ENGINE_API_VERSION) return env.ENGINE_API_VERSION.replace(/^v/, "");
      const res = await raw("GET", "/_ping", { unversioned: true });
      res.body.resume();
      const server = res.headers["api-version"];
      if (!server) return CLIENT_API_VERSION;
      return compare(server, CLIENT_API_VERSION) < 0 ? server : CLIENT_API_VERSION;
    })());

  const call = async (method: string, path: string, opts?: RequestOptions) => {
    const res = await raw(method, path, opts);
    if (res.status >= 400) throw new DaemonError(res.status, await errorMessage(res));
    return res;
  };

  const json = async <T>(method: string, path: string, opts?: RequestOptions): Promise<T> => {
    const text = (await readAll((await call(method, path, opts)).body)).toString("utf8");
    return (text.trim() === "" ? undefined : JSON.parse(text)) as T;
  };

  return {
    target: async () => target,
    apiVersion,
    request: raw,
    call,
    json,
    getJson: (path, opts) => json("GET", path, opts),
    async hijack(method, path, opts) {
      const res = await raw(method, path, opts, true);
      if (res.status >= 400) throw new DaemonError(res.status, await errorMessage(res));
      return { stream: res.body, socket: res.socket, headers: res.headers };
    },
    async close() {
      for (const s of open) s.destroy();
      // a clean SSH disconnect, rather than a reset the server logs
      if (target.proto === "ssh") (await import("./transport/ssh.js")).closeSshConnections();
    },
  };
}

function compare(a: string, b: string): number {
  const [am, an] = a.split(".").map(Number);
  const [bm, bn] = b.split(".").map(Number);
  return am - bm || an - bn;
}

/**
 * A connection whose settings take a file read to work out (a context's, from the store, which
 * only commands that use a context load): each call waits for them, and their failure (a context
 * that is not there) is that call's failure.
 */
export function deferredConnection(settings: () => Promise<ConnectionSettings>): Connection {
  let opened: Promise<Connection> | undefined;
  const conn = () => (opened ??= settings().then(connect));
  return {
    target: async () => (await conn()).target(),
    apiVersion: async () => (await conn()).apiVersion(),
    request: async (method, path, opts) => (await conn()).request(method, path, opts),
    call: async (method, path, opts) => (await conn()).call(method, path, opts),
    json: async <T>(method: string, path: string, opts?: RequestOptions) => (await conn()).json<T>(method, path, opts),
    getJson: async <T>(path: string, opts?: RequestOptions) => (await conn()).getJson<T>(path, opts),
    hijack: async (method, path, opts) => (await conn()).hijack(method, path, opts),
    async close() {
      const c = await opened?.catch(() => undefined);
      await c?.close();
    },
  };
}
