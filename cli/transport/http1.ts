/**
 * A small HTTP/1.1 client over any duplex stream (a unix socket, TCP, TLS, an SSH channel, a
 * tunnel through a proxy): one request per connection. The client does not use undici or
 * node:http here: both cost more to load (measured 80-95 ms and 45 ms) than `engine ps` may take
 * in all, and neither hands back the raw connection after `101 Switching Protocols` as attach
 * needs it. What the daemon's API uses is all there is: Content-Length and chunked bodies, a
 * body that ends with the connection, and an upgrade to a raw stream.
 */
import { Readable, type Duplex } from "node:stream";

export interface HttpRequest {
  method: string;
  /** Path and query, already encoded. */
  path: string;
  headers?: Record<string, string>;
  /** A buffer goes with Content-Length, a stream chunked. */
  body?: Buffer | Readable;
  /** Ask for a raw stream (`Connection: Upgrade`, `Upgrade: tcp`), as attach and exec do. */
  upgrade?: boolean;
}

export interface HttpResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  /** The body, decoded; after an upgrade, everything the daemon sends from then on. */
  body: Readable;
  /** The connection: after an upgrade, what is written to it goes to the daemon. */
  socket: Duplex;
}

class ConnectionClosed extends Error {
  constructor(what: string) {
    super(`the connection closed ${what}`);
    this.name = "ConnectionClosed";
  }
}

/** Sends `req` on `socket` and resolves with the response once its headers have come. */
export async function send(socket: Duplex, host: string, req: HttpRequest): Promise<HttpResponse> {
  const headers: Record<string, string> = { Host: host, "User-Agent": "engine-cli", ...req.headers };
  if (req.upgrade) Object.assign(headers, { Connection: "Upgrade", Upgrade: "tcp" });
  else headers.Connection ??= "close";
  if (Buffer.isBuffer(req.body)) headers["Content-Length"] = String(req.body.length);
  else if (req.body) headers["Transfer-Encoding"] = "chunked";
  else if (req.method !== "GET" && req.method !== "HEAD") headers["Content-Length"] = "0";
  const head = `${req.method} ${req.path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`;
  const reader = new Reader(socket);
  socket.write(head);
  const writing = writeBody(socket, req.body);
  // the head's failure is the one reported when both fail; the writing's is awaited below
  writing.catch(() => undefined);
  const { status, headers: got } = await reader.head();
  // an upgraded stream keeps its writing side for the caller; a refusal may come before the
  // body is all sent (the daemon then closing the connection under the rest of it), and the
  // answer is what counts, as with Go's client
  if (status !== 101 && status < 400) await writing;
  const body = bodyOf(reader, req, status, got);
  return { status, headers: got, body, socket };
}

async function writeBody(socket: Duplex, body: HttpRequest["body"]): Promise<void> {
  if (!body) return;
  if (Buffer.isBuffer(body)) {
    socket.write(body);
    return;
  }
  for await (const chunk of body as AsyncIterable<Buffer | string>) {
    const data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    if (data.length === 0) continue;
    // all three parts always go out; a full buffer only means waiting before the next chunk
    socket.write(`${data.length.toString(16)}\r\n`);
    socket.write(data);
    if (!socket.write("\r\n")) await drained(socket);
  }
  socket.write("0\r\n\r\n");
}

function drained(socket: Duplex): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onDrain = () => {
      socket.off("close", onClose);
      resolve();
    };
    const onClose = () => {
      socket.off("drain", onDrain);
      reject(new ConnectionClosed("while sending the request"));
    };
    socket.once("drain", onDrain);
    socket.once("close", onClose);
  });
}

function bodyOf(reader: Reader, req: HttpRequest, status: number, headers: Record<string, string>): Readable {
  let source: AsyncGenerator<Buffer>;
  if (req.method === "HEAD" || status === 204 || status === 304) source = (async function* () {})();
  else if (status === 101) source = reader.rest();
  else if (/chunked/i.test(headers["transfer-encoding"] ?? "")) source = reader.chunked();
  else if (headers["content-length"] !== undefined) source = reader.take(Number(headers["content-length"]));
  else source = reader.rest();
  return Readable.from(source, { objectMode: false });
}

/** Bytes from the socket, read as the parser needs them. */
class Reader {
  private buf: Buffer = Buffer.alloc(0);
  private readonly it: AsyncIterator<Buffer>;

  constructor(socket: Duplex) {
    this.it = socket[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  private async more(): Promise<boolean> {
    const next = await this.it.next();
    if (next.done) return false;
    this.buf = this.buf.length > 0 ? Buffer.concat([this.buf, next.value]) : next.value;
    return true;
  }

  async head(): Promise<{ status: number; headers: Record<string, string> }> {
    for (;;) {
      const end = this.buf.indexOf("\r\n\r\n");
      if (end >= 0) {
        const lines = this.buf.toString("latin1", 0, end).split("\r\n");
        this.buf = this.buf.subarray(end + 4);
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
        if (!m) throw new Error(`not an HTTP answer: ${JSON.stringify(lines[0].slice(0, 80))}`);
        const headers: Record<string, string> = {};
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(":");
          if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        // 100 Continue and the like come before the real answer
        if (Number(m[1]) >= 100 && Number(m[1]) < 200 && Number(m[1]) !== 101) continue;
        return { status: Number(m[1]), headers };
      }
      if (this.buf.length > 1 << 20) throw new Error("the answer's headers are too large");
      if (!(await this.more())) throw new ConnectionClosed("before the daemon answered");
    }
  }

  private async line(): Promise<string> {
    for (;;) {
      const nl = this.buf.indexOf("\r\n");
      if (nl >= 0) {
        const text = this.buf.toString("latin1", 0, nl);
        this.buf = this.buf.subarray(nl + 2);
        return text;
      }
      if (!(await this.more())) throw new ConnectionClosed("in the middle of the answer");
    }
  }

  async *take(n: number): AsyncGenerator<Buffer> {
    let left = n;
    while (left > 0) {
      if (this.buf.length === 0 && !(await this.more())) throw new ConnectionClosed("in the middle of the answer");
      const piece = this.buf.subarray(0, Math.min(left, this.buf.length));
      this.buf = this.buf.subarray(piece.length);
      left -= piece.length;
      yield piece;
    }
  }

  async *chunked(): AsyncGenerator<Buffer> {
    for (;;) {
      const size = parseInt((await this.line()).split(";")[0], 16);
      if (!Number.isFinite(size)) throw new Error("a bad chunk in the answer");
      if (size === 0) {
        while ((await this.line()) !== "") {
          // trailers: none the API sends
        }
        return;
      }
      yield* this.take(size);
      await this.line();
    }
  }

  async *rest(): AsyncGenerator<Buffer> {
    if (this.buf.length > 0) {
      const first = this.buf;
      this.buf = Buffer.alloc(0);
      yield first;
    }
    for (;;) {
      const next = await this.it.next();
      if (next.done) return;
      yield next.value;
    }
  }
}
