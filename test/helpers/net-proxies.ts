/**
 * Real network middlemen on loopback, for tests of how the daemon copes with a bad network:
 * a reverse proxy in front of a test registry that injects faults on chosen paths (a dropped
 * connection after N bytes, a corrupted body, a Range ignored, a delay, an error status), and
 * a forward proxy (CONNECT tunnels and absolute-URI requests) that only ever dials loopback
 * and the IP addresses a test lists as `dialable` (a few names, like registry-1.docker.io:443,
 * can be routed to a local registry by name, without any DNS lookup). Everything started is closed by a root `after` hook.
 */
import { readFileSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect, isIP, type AddressInfo, type Socket } from "node:net";
import type { CertSet } from "./certs.js";

export interface FaultRule {
  /** Matched against the request path (with its query). */
  path: RegExp;
  /** Restrict to one method (default: any). */
  method?: string;
  /** How many matching requests get the fault (default: all). */
  times?: number;
  /** Send the status, headers and this many body bytes, then destroy the connection. */
  dropAfterBytes?: number;
  /** Flip one byte in the middle of the body (length unchanged). */
  corrupt?: boolean;
  /** Strip the Range header, so the registry answers 200 with the whole body. */
  ignoreRange?: boolean;
  /** Wait this long before forwarding. */
  delayMs?: number;
  /** Hold the request until this settles (a test releases it at the moment it wants), then forward. */
  until?: Promise<unknown>;
  /**
   * Send the status, headers and all of the body but its last byte, then hold that byte until
   * this settles (downloads that end at the moment a test chooses; `holding` says when).
   */
  holdEnd?: Promise<unknown>;
  /** Answer this status with a JSON errors body instead of forwarding. */
  status?: number;
}

export interface ProxiedRequest {
  method: string;
  path: string;
  range?: string;
  /** The status the client saw (0 when the connection failed before any). */
  status: number;
  /** Which fault applied, if any. */
  fault?: FaultRule;
  /** holdEnd: all but the body's last byte was sent; the rest waits. */
  holding?: boolean;
}

export interface FaultyProxy {
  host: string;
  port: number;
  url: string;
  /** Replace between tests; the first rule that matches and still has uses applies. */
  faults: FaultRule[];
  requests: ProxiedRequest[];
  stop(): Promise<void>;
}

const closers = new Set<() => Promise<void>>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** Closes a server and every connection (tunnels included) it still has. */
function closer(server: Server, sockets: Set<Socket>): () => Promise<void> {
  const close = async () => {
    closers.delete(close);
    for (const s of sockets) s.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  closers.add(close);
  return close;
}

/** Hop-by-hop headers that belong to one connection, not to the message. */
const HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authorization", "te", "trailer", "upgrade"]);

function rawWithout(raw: string[], drop: (name: string) => boolean): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (!drop(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1]);
  return out;
}

export async function startFaultyProxy(target: { host: string; port: number; tls?: CertSet }, faults: FaultRule[] = []): Promise<FaultyProxy> {
  const ca = target.tls ? readFileSync(target.tls.ca) : undefined;
  const used = new WeakMap<FaultRule, number>();
  const sockets = new Set<Socket>();

  function pick(method: string, path: string): FaultRule | undefined {
    for (const rule of proxy.faults) {
      if (!rule.path.test(path) || (rule.method && rule.method.toUpperCase() !== method)) continue;
      const n = used.get(rule) ?? 0;
      if (n >= (rule.times ?? Infinity)) continue;
      used.set(rule, n + 1);
      return rule;
    }
    return undefined;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const path = req.url ?? "/";
    const range = typeof req.headers.range === "string" ? req.headers.range : undefined;
    const fault = pick(method, path);
    const rec: ProxiedRequest = { method, path, ...(range ? { range } : {}), status: 0, ...(fault ? { fault } : {}) };
    proxy.requests.push(rec);
    if (fault?.delayMs) await sleep(fault.delayMs);
    if (fault?.until) await fault.until.catch(() => undefined);
    if (fault?.status) {
      const body = JSON.stringify({ errors: [{ code: "UNKNOWN", message: `injected fault ${fault.status}`, detail: null }] });
      rec.status = fault.status;
      req.resume();
      res.writeHead(fault.status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    // The client's headers as sent (Host kept, so the registry's Location URLs point back at
    // the proxy), less hop-by-hop ones and, when asked, Range.
    const headers = rawWithout(req.rawHeaders, (n) => HOP.has(n) || (fault?.ignoreRange === true && n === "range"));
    // The proxy serves plain HTTP; a TLS registry would otherwise build https:// Locations.
    if (target.tls) headers.push("X-Forwarded-Proto", "http");
    const send = target.tls ? httpsRequest : httpRequest;
    const upstream = send({ host: target.host, port: target.port, method, path, headers, agent: false, ...(ca ? { ca, servername: "localhost" } : {}) });
    upstream.on("response", (up) => {
      rec.status = up.statusCode ?? 0;
      const resHeaders = rawWithout(up.rawHeaders, (n) => HOP.has(n));
      if (fault?.corrupt) {
        // Buffered, so the flipped byte sits in the middle of the whole body.
        const chunks: Buffer[] = [];
        up.on("data", (c: Buffer) => chunks.push(c));
        up.on("end", () => {
          const body = Buffer.concat(chunks);
          if (body.length > 0) body[body.length >> 1] ^= 0xff;
          res.writeHead(up.statusCode ?? 502, resHeaders);
          res.end(body);
        });
        return;
      }
      if (fault?.holdEnd) {
        const hold = fault.holdEnd;
        const chunks: Buffer[] = [];
        up.on("data", (c: Buffer) => chunks.push(c));
        up.on("end", () => {
          const body = Buffer.concat(chunks);
          res.writeHead(up.statusCode ?? 502, resHeaders);
          if (body.length > 0) res.write(body.subarray(0, body.length - 1));
          rec.holding = true;
          void hold.catch(() => undefined).then(() => res.end(body.subarray(Math.max(0, body.length - 1))));
        });
        return;
      }
      res.writeHead(up.statusCode ?? 502, resHeaders);
      if (fault?.dropAfterBytes !== undefined) {
        let left = fault.dropAfterBytes;
        const drop = () => {
          up.destroy();
          // Flush what was written, then cut the connection without a proper end.
          res.socket?.end(() => res.socket?.destroy());
          setTimeout(() => res.socket?.destroy(), 200).unref();
        };
        if (left === 0) return drop();
        up.on("data", (c: Buffer) => {
          if (left <= 0) return;
          const part = c.subarray(0, left);
          left -= part.length;
          res.write(part);
          if (left <= 0) drop();
        });
        up.on("end", () => res.end());
        return;
      }
      up.pipe(res);
    });
    upstream.on("error", (err) => {
      if (!res.headersSent) {
        rec.status = 502;
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(`proxy: ${err.message}`);
      } else res.destroy();
    });
    req.pipe(upstream);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  const port = await listen(server);
  const stop = closer(server, sockets);
  const proxy: FaultyProxy = { host: `127.0.0.1:${port}`, port, url: `http://127.0.0.1:${port}`, faults, requests: [], stop };
  return proxy;
}

export interface ForwardProxy {
  port: number;
  /** "http://127.0.0.1:PORT", for HTTP(S)_PROXY. */
  url: string;
  /** Every request, with its target as "host:port". */
  seen: { method: string; target: string; refused?: boolean }[];
  routes: Record<string, { host: string; port: number }>;
  /**
   * Addresses besides loopback the proxy may dial (IP literals only, never a name): an
   * address of an interface the test made, say. Mutable.
   */
  dialable: string[];
  stop(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** "host:port" (IPv6 in brackets) -> parts; undefined when malformed. */
function splitTarget(target: string): { host: string; port: number } | undefined {
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(target);
  return m ? { host: m[1], port: Number(m[2]) } : undefined;
}

export async function startForwardProxy(opts: { routes?: Record<string, { host: string; port: number }>; dialable?: string[] } = {}): Promise<ForwardProxy> {
  const sockets = new Set<Socket>();

  /** Where to dial for a target, or undefined: never anything but loopback, never a DNS lookup. */
  function route(target: string): { host: string; port: number } | undefined {
    const allowed = (host: string) => LOOPBACK.has(host.toLowerCase()) || (isIP(host.replace(/^\[|\]$/g, "")) !== 0 && fp.dialable.includes(host.replace(/^\[|\]$/g, "")));
    const routed = Object.entries(fp.routes).find(([k]) => k.toLowerCase() === target.toLowerCase())?.[1];
    if (routed) return allowed(routed.host) ? { host: routed.host === "localhost" ? "127.0.0.1" : routed.host.replace(/^\[|\]$/g, ""), port: routed.port } : undefined;
    const t = splitTarget(target);
    if (!t || !allowed(t.host)) return undefined;
    return { host: t.host === "localhost" ? "127.0.0.1" : t.host.replace(/^\[|\]$/g, ""), port: t.port };
  }

  const server = createServer((req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      fp.seen.push({ method: req.method ?? "", target: "", refused: true });
      res.writeHead(400, { "content-type": "text/plain" });
      res.end("forward proxy: absolute URI required");
      return;
    }
    const target = `${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`;
    const dial = url.protocol === "http:" ? route(target) : undefined;
    fp.seen.push({ method: req.method ?? "", target, ...(dial ? {} : { refused: true }) });
    if (!dial) {
      req.resume();
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(`forward proxy: refusing ${target}`);
      return;
    }
    const headers = rawWithout(req.rawHeaders, (n) => HOP.has(n));
    const upstream = httpRequest({ host: dial.host, port: dial.port, method: req.method, path: `${url.pathname}${url.search}`, headers, agent: false });
    upstream.on("response", (up) => {
      res.writeHead(up.statusCode ?? 502, rawWithout(up.rawHeaders, (n) => HOP.has(n)));
      up.pipe(res);
    });
    upstream.on("error", (err) => {
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(`forward proxy: ${err.message}`);
      } else res.destroy();
    });
    req.pipe(upstream);
  });

  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.once("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    const target = (req.url ?? "").toLowerCase();
    const dial = route(target);
    fp.seen.push({ method: "CONNECT", target, ...(dial ? {} : { refused: true }) });
    if (!dial) {
      client.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    const upstream = connect(dial.port, dial.host);
    sockets.add(upstream);
    upstream.once("close", () => {
      sockets.delete(upstream);
      client.destroy();
    });
    upstream.on("error", () => {
      if (!client.destroyed) client.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    });
    upstream.once("connect", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    client.once("close", () => upstream.destroy());
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });

  const port = await listen(server);
  const fp: ForwardProxy = { port, url: `http://127.0.0.1:${port}`, seen: [], routes: { ...(opts.routes ?? {}) }, dialable: [...(opts.dialable ?? [])], stop: closer(server, sockets) };
  return fp;
}

/** Closes every proxy still open. */
export async function stopAllProxies(): Promise<void> {
  await Promise.all([...closers].map((c) => c()));
}

// A root hook when mocha loads this module (its `after` is global then): nothing outlives the run.
if (typeof globalThis.after === "function") {
  after(async () => {
    await stopAllProxies();
  });
}
