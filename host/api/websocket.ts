/**
 * The server's side of a WebSocket (RFC 6455), for `GET /containers/{id}/attach/ws`: the
 * handshake, then a byte stream over the frames. What is written goes out as one data frame
 * per write (binary, or text for clients of API versions before 1.28, as Docker's daemon sends
 * them); what the client's data frames carry is read in order, as one stream (Docker's
 * websocket connection reads the same way); a ping is answered, a close is answered and ends
 * the connection. Nothing is compressed, no subprotocol is taken, no Origin is required (as
 * Docker's daemon, whose handshake checks none).
 *
 * Lifecycle: `acceptWebSocket` checks the request and answers `101 Switching Protocols` on the
 * taken-over connection (or the plain 400 Docker's websocket library writes), and gives a
 * `WebSocketStream`; its end sends a close frame and ends the connection; the connection's
 * close destroys it.
 */
import { createHash } from "node:crypto";
import { Duplex } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { leaveHttpParser } from "./hijack.js";

/** The GUID a handshake's accept key is made with (RFC 6455 §1.3). */
const HANDSHAKE_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** A client frame's payload may be this long at most: a longer one closes the connection (1009, too big). */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

const OP = { continuation: 0x0, text: 0x1, binary: 0x2, close: 0x8, ping: 0x9, pong: 0xa } as const;

/** A frame of the server's (never masked). */
function encodeFrame(opcode: number, payload: Buffer): Buffer {
  const n = payload.length;
  const head = n < 126 ? Buffer.alloc(2) : n <= 0xffff ? Buffer.alloc(4) : Buffer.alloc(10);
  head[0] = 0x80 | opcode; // FIN: a message is never cut in fragments here
  if (n < 126) head[1] = n;
  else if (n <= 0xffff) {
    head[1] = 126;
    head.writeUInt16BE(n, 2);
  } else {
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}

/** Why a handshake is refused, in the words of Docker's websocket library (Go's x/net/websocket). */
function handshakeRefusal(request: FastifyRequest): string | undefined {
  const upgrade = String(request.headers.upgrade ?? "").toLowerCase();
  const connection = String(request.headers.connection ?? "").toLowerCase();
  if (upgrade !== "websocket" || !connection.includes("upgrade")) return "not websocket protocol";
  if (!request.headers["sec-websocket-key"]) return "mismatch challenge/response";
  if (request.headers["sec-websocket-version"] !== "13") return "missing or bad WebSocket Version";
  return undefined;
}

/**
 * Takes over the request's connection as a WebSocket; undefined when the request is no
 * WebSocket handshake (answered then with Docker's plain 400).
 */
export function acceptWebSocket(request: FastifyRequest, reply: FastifyReply, opts: { binary: boolean }): WebSocketStream | undefined {
  const refusal = handshakeRefusal(request);
  reply.hijack();
  const socket = request.raw.socket as Duplex & { setTimeout(ms: number): void };
  if (refusal) {
    reply.raw.statusCode = 400; // (for hooks.answeredRequest)
    const version = refusal.includes("Version") ? "Sec-WebSocket-Version: 13\r\n" : "";
    socket.end(`HTTP/1.1 400 Bad Request\r\n${version}\r\n${refusal}`);
    return undefined;
  }
  const accept = createHash("sha1").update(`${String(request.headers["sec-websocket-key"])}${HANDSHAKE_GUID}`).digest("base64");
  socket.setTimeout(0);
  leaveHttpParser(socket);
  reply.raw.statusCode = 101;
  socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  return new WebSocketStream(socket, opts.binary ? OP.binary : OP.text);
}

/** The bytes of a WebSocket's data frames, both ways (see the file's comment). */
export class WebSocketStream extends Duplex {
  private received: Buffer = Buffer.alloc(0);
  private closeSent = false;
  /** The client's close came (or its frames broke the protocol): nothing more is read. */
  private over = false;

  constructor(
    private readonly socket: Duplex,
    private readonly dataOpcode: number,
  ) {
    super({ allowHalfOpen: true });
    socket.on("data", (data: Buffer) => this.receive(data));
    socket.once("end", () => this.push(null));
    socket.once("close", () => this.destroy());
    socket.on("error", (err) => this.destroy(err));
  }

  override _read(): void {
    this.socket.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.closeSent) return done();
    this.socket.write(encodeFrame(this.dataOpcode, chunk), (err) => done(err));
  }

  override _final(done: (err?: Error | null) => void): void {
    this.sendClose(1000);
    this.socket.end();
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.socket.destroy();
    done(err);
  }

  private sendClose(code: number): void {
    if (this.closeSent || this.socket.destroyed) return;
    this.closeSent = true;
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code);
    this.socket.write(encodeFrame(OP.close, payload));
  }

  /** Parses what came: every whole frame in `received`, the rest kept for the next read. */
  private receive(data: Buffer): void {
    if (this.over) return;
    this.received = this.received.length ? Buffer.concat([this.received, data]) : data;
    for (;;) {
      const b = this.received;
      if (b.length < 2) return;
      const opcode = b[0] & 0x0f;
      const masked = (b[1] & 0x80) !== 0;
      let length = b[1] & 0x7f;
      let at = 2;
      if (length === 126) {
        if (b.length < 4) return;
        length = b.readUInt16BE(2);
        at = 4;
      } else if (length === 127) {
        if (b.length < 10) return;
        const big = b.readBigUInt64BE(2);
        length = big > BigInt(MAX_FRAME_BYTES) ? MAX_FRAME_BYTES + 1 : Number(big);
        at = 10;
      }
      // a client must mask its frames (RFC 6455 §5.1): 1002, protocol error; a frame past the bound: 1009
      if (!masked || length > MAX_FRAME_BYTES) return this.fail(!masked ? 1002 : 1009);
      if (b.length < at + 4 + length) return;
      const mask = b.subarray(at, at + 4);
      const payload = Buffer.from(b.subarray(at + 4, at + 4 + length));
      for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
      this.received = b.subarray(at + 4 + length);
      if (!this.frame(opcode, payload)) return;
    }
  }

  /** One frame of the client's; false once the connection is over. */
  private frame(opcode: number, payload: Buffer): boolean {
    switch (opcode) {
      case OP.continuation:
      case OP.text:
      case OP.binary:
        if (payload.length && !this.push(payload)) this.socket.pause();
        return true;
      case OP.ping:
        if (!this.closeSent) this.socket.write(encodeFrame(OP.pong, payload));
        return true;
      case OP.pong:
        return true;
      case OP.close:
        // answered with the client's code (none: a bare close), then the connection ends
        this.over = true;
        this.sendClose(payload.length >= 2 ? payload.readUInt16BE(0) : 1000);
        this.push(null);
        this.socket.end();
        return false;
      default:
        this.fail(1002);
        return false;
    }
  }

  private fail(code: number): void {
    this.over = true;
    this.sendClose(code);
    this.push(null);
    this.socket.end();
  }
}
