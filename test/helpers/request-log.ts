/**
 * A logging proxy on a unix socket in front of a daemon's socket: clients connect to it, every
 * byte goes through unchanged (half-closes too, which attach and exec rely on), and the
 * requests the clients sent are kept (method, path without the API version, JSON body) so that
 * a test can compare what two clients asked for the same command line.
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import { rmSync } from "node:fs";

export interface LoggedRequest {
  method: string;
  /** Without the `/v1.NN` prefix. */
  path: string;
  /** The body parsed, when it was JSON. */
  json?: unknown;
}

export interface RequestLog {
  socket: string;
  /** The requests since the last `take`, in the order they were sent (pings left out). */
  take(): LoggedRequest[];
  close(): Promise<void>;
}

/** Parses the requests in `raw` (one connection's bytes towards the daemon). */
function parseRequests(raw: Buffer): LoggedRequest[] {
  const out: LoggedRequest[] = [];
  let at = 0;
  while (at < raw.length) {
    const end = raw.indexOf("\r\n\r\n", at);
    if (end < 0) break;
    const head = raw.toString("latin1", at, end).split("\r\n");
    const m = /^([A-Z]+) (\S+) HTTP\/1\.[01]$/.exec(head[0]);
    if (!m) break;
    const headers = new Map(head.slice(1).map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
    at = end + 4;
    const length = Number(headers.get("content-length") ?? 0);
    const req: LoggedRequest = { method: m[1], path: m[2].replace(/^\/v1\.\d+/, "") };
    if (/chunked/i.test(headers.get("transfer-encoding") ?? "") || headers.get("upgrade")) {
      out.push(req); // a stream (a tar, or what follows an upgrade): nothing more to parse here
      break;
    }
    if (length > 0) {
      const body = raw.toString("utf8", at, at + length);
      at += length;
      if (/json/.test(headers.get("content-type") ?? "")) req.json = JSON.parse(body);
    }
    if (!req.path.startsWith("/_ping")) out.push(req);
  }
  return out;
}

export async function startRequestLog(daemonSocket: string, socket: string): Promise<RequestLog> {
  rmSync(socket, { force: true });
  const connections: { raw: Buffer[]; seq: number }[] = [];
  let seq = 0;
  const open = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ path: daemonSocket, allowHalfOpen: true });
    const conn = { raw: [] as Buffer[], seq: seq++ };
    connections.push(conn);
    for (const s of [client, upstream]) {
      open.add(s);
      s.once("close", () => open.delete(s));
    }
    client.on("data", (d: Buffer) => {
      conn.raw.push(d);
      upstream.write(d);
    });
    upstream.on("data", (d: Buffer) => client.write(d));
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return {
    socket,
    take() {
      const all = connections.splice(0).flatMap((c) => parseRequests(Buffer.concat(c.raw)));
      return all;
    },
    async close() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(socket, { force: true });
    },
  };
}
