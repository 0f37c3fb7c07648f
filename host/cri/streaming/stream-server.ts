/**
 * The CRI's streaming server: an HTTP listener of engined's own (`--cri-stream-address`,
 * `--cri-stream-port`), where the URLs that Exec, Attach and PortForward answer lead:
 * `/exec/<token>`, `/attach/<token>`, `/portforward/<token>` (GET or POST, as the kubelet's).
 * The token is taken first (a second use, or one after its minute, is 404 whatever else the
 * request says), then the connection is handed to the session with the request's upgrade
 * (WebSocket or SPDY/3.1: stream-sessions.ts); a request that asks for no upgrade is 400.
 * With `--cri-stream-tls-cert` and `--cri-stream-tls-key` it serves HTTPS (TLS 1.2 and later,
 * the certificate checked at start as the API's is), as containerd's `enable_tls_streaming`:
 * the URLs answered then begin with https://, and the kubelet's proxy verifies the certificate
 * against the node's trusted roots and the address it dials.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { SecureContextOptions } from "node:tls";
import type { Logger } from "pino";
import { errors, toEngineError } from "../../../core/errors.js";
import type { StreamTicket, StreamTokens } from "./stream-tokens.js";

const ROUTE = /^\/(exec|attach|portforward)\/([A-Za-z0-9_-]+)\/?(\?.*)?$/;

export type StreamHandler = (ticket: StreamTicket, req: IncomingMessage, socket: Duplex, head: Buffer) => Promise<void>;

export interface StreamServerOptions {
  address: string;
  port: number;
  tokens: StreamTokens;
  handle: StreamHandler;
  log: Logger;
  /** Serve HTTPS with these (host/listeners/tls-options.ts); plain HTTP without. */
  tls?: SecureContextOptions;
}

export interface StreamServer {
  /** `http://<address>:<port>` (https:// with TLS) as the URLs answered begin. */
  base: string;
  url(kind: StreamTicket["kind"], token: string): string;
  close(): Promise<void>;
}

/** Sockets whose upgrade was answered: a failure after it cannot be told in HTTP any more. */
const upgraded = new WeakSet<Duplex>();

/** Called by a session once it has answered the upgrade (101). */
export function markUpgraded(socket: Duplex): void {
  upgraded.add(socket);
}

/** An HTTP answer written on a raw socket (an upgrade request refused): the catalogue's status and message. */
export function refuseUpgrade(socket: Duplex, err: unknown, headers: Record<string, string> = {}): void {
  const e = toEngineError(err);
  const body = `${e.message}\n`;
  const head = [`HTTP/1.1 ${e.statusCode} ${statusText(e.statusCode)}`, "Content-Type: text/plain; charset=utf-8", `Content-Length: ${Buffer.byteLength(body)}`, "Connection: close"];
  for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`);
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
}

function statusText(code: number): string {
  return { 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error" }[code] ?? "Error";
}

export async function serveStreams(opts: StreamServerOptions): Promise<StreamServer> {
  const sockets = new Set<Socket>();
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    // no upgrade asked for: the token is spent all the same, as the kubelet spends it
    const ticket = takeTicket(req);
    const err = ticket instanceof Error ? ticket : errors.criStreamUpgrade("missing upgrade headers in request");
    const e = toEngineError(err);
    res.writeHead(e.statusCode, { "content-type": "text/plain; charset=utf-8" }).end(`${e.message}\n`);
  };
  const server: Server = opts.tls ? createTlsServer(opts.tls, answer) : createServer(answer);
  const takeTicket = (req: IncomingMessage): StreamTicket | Error => {
    const m = ROUTE.exec(req.url ?? "");
    if (!m || (req.method !== "GET" && req.method !== "POST")) return errors.criStreamNotFound();
    return opts.tokens.take(m[2], m[1] as StreamTicket["kind"]) ?? errors.criStreamNotFound();
  };
  // the TCP connections, TLS or not: https.Server tells of them too
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => {});
    const ticket = takeTicket(req);
    if (ticket instanceof Error) return refuseUpgrade(socket, ticket);
    opts.handle(ticket, req, socket, head).catch((err: unknown) => {
      opts.log.debug({ err, kind: ticket.kind }, "a streaming session failed");
      if (socket.writable && !upgraded.has(socket)) refuseUpgrade(socket, err);
      else socket.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.address, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === "IPv6" ? `[${bound.address}]` : bound.address;
  const base = `${opts.tls ? "https" : "http"}://${host}:${bound.port}`;
  return {
    base,
    url: (kind, token) => `${base}/${kind}/${token}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // sessions under way end with the daemon
        for (const s of sockets) s.destroy();
      }),
  };
}
