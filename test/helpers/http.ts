/** Plain HTTP requests to a daemon over a unix socket or TCP, for checks below any client. */
import { request } from "node:http";
import { connect } from "node:net";

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function httpRequest(
  where: { socketPath: string } | { host: string; port: number },
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
  timeoutMs = 10_000,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    // a Buffer goes as it is (a body that is no JSON), anything else as its JSON
    const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
    const req = request(
      {
        ...where,
        method,
        path,
        headers: payload ? { "content-type": contentType, "content-length": payload.length } : {},
        timeout: timeoutMs,
      },
      (res) => {
        let text = "";
        res.on("data", (d: Buffer) => (text += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(payload);
  });
}

/** `tcp://127.0.0.1:41234/x` -> host and port. */
export function tcpTarget(address: string): { host: string; port: number } {
  const m = /^tcp:\/\/\[?([^\]/]+?)\]?:(\d+)/.exec(address);
  if (!m) throw new Error(`not a tcp address: ${address}`);
  return { host: m[1], port: Number(m[2]) };
}

/**
 * The head a raw request gets on a unix socket, its lines as they came on the wire (the status
 * line first): what a client sees that node:http's parser hides (the names' spelling, the order).
 */
export async function rawHead(socketPath: string, req: string): Promise<string[]> {
  const socket = connect(socketPath);
  let got = "";
  socket.on("data", (b: Buffer) => (got += b.toString("latin1")));
  socket.on("error", () => {});
  socket.write(req);
  const t0 = Date.now();
  while (!got.includes("\r\n\r\n") && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 20));
  socket.destroy();
  return got.split("\r\n\r\n")[0].split("\r\n");
}
