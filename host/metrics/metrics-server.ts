/**
 * The metrics listener: plain HTTP on `--metrics-addr`, apart from the API's listeners, serving
 * only `GET /metrics` (and HEAD). It has no TLS and no authorization, as Docker's has none:
 * bind it to an address only the scrapers reach. It is opened before the API's listeners and
 * closed with the daemon; an address that cannot be bound stops the start with its reason.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { http } from "../../core/node-http.js";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { errors } from "../../core/errors.js";

export interface MetricsServer {
  /** `ip:port` as bound (the real port when 0 was asked for). */
  address: string;
  close(): Promise<void>;
}

/** `127.0.0.1:9323` or `[::1]:9323` (the option's check has already refused other shapes). */
function splitHostPort(addr: string): { host: string; port: number } {
  const cut = addr.lastIndexOf(":");
  return { host: addr.slice(0, cut).replace(/^\[(.*)\]$/, "$1"), port: Number(addr.slice(cut + 1)) };
}

export async function serveMetrics(addr: string, registry: Registry, log: Logger): Promise<MetricsServer> {
  const server = http.createServer((req, res) => void answer(req, res, registry, log));
  const { host, port } = splitHostPort(addr);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => reject(errors.metricsListenFailed(addr, listenProblem(err))));
    server.listen({ host: host || undefined, port }, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  const address = bound.family === "IPv6" ? `[${bound.address}]:${bound.port}` : `${bound.address}:${bound.port}`;
  log.info({ address }, `metrics API listen on ${address}`);
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // a scraper's keep-alive connection must not hold the stop
      }),
  };
}

async function answer(req: IncomingMessage, res: ServerResponse, registry: Registry, log: Logger): Promise<void> {
  const path = new URL(req.url ?? "/", "http://metrics").pathname;
  if (path !== "/metrics") return plain(res, 404, "404 page not found\n");
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", "GET, HEAD");
    return plain(res, 405, "method not allowed\n");
  }
  try {
    const text = await registry.metrics();
    res.writeHead(200, { "Content-Type": registry.contentType, "Content-Length": Buffer.byteLength(text) });
    res.end(req.method === "HEAD" ? undefined : text);
  } catch (err) {
    log.error({ err }, "collecting metrics failed");
    plain(res, 500, `collecting metrics failed: ${(err as Error).message}\n`);
  }
}

function plain(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(body);
}

function listenProblem(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case "EADDRINUSE":
      return "the address is already in use by another process";
    case "EADDRNOTAVAIL":
      return "the address is not one of this host's";
    case "EACCES":
      return "permission denied";
    default:
      return err.message;
  }
}
