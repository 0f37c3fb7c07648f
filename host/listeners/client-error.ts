/**
 * A request Node's HTTP parser refuses before the API sees it (a request line and headers past
 * its limit, a malformed request line or header) gets its 4xx in the API's shape, `{"message":
 * ...}` (Node's own answer has no body); then the connection is read for a moment before it
 * closes, as Go's server does for Docker's daemon: closed with the client's bytes unread, it
 * would reach a client that is still sending as a reset instead of the answer.
 */
import type { Server } from "node:http";
import { http } from "../../core/node-http.js";
import type { Socket } from "node:net";
import { errors } from "../../core/errors.js";

/** How long the rest of a refused request is read and dropped before the connection closes. */
const LINGER_MS = 500;

export function answerUnparsable(server: Server): void {
  /** Connections answered and being read to their end: the parser fails again at each chunk. */
  const lingering = new WeakSet<Socket>();
  server.on("clientError", (err: NodeJS.ErrnoException & { reason?: string }, socket: Socket) => {
    if (lingering.has(socket)) return;
    // as Node's own handler: nothing is written to a connection that already carried an answer
    if (!socket.writable || socket.bytesWritten > 0 || err.code === "ECONNRESET") return void socket.destroy();
    const e =
      err.code === "HPE_HEADER_OVERFLOW" ? errors.apiHeadersTooLarge(http.maxHeaderSize)
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? errors.apiRequestTimeout()
      : errors.apiMalformedRequest(err.reason ?? err.message);
    const body = `${JSON.stringify({ message: e.message })}\n`;
    socket.end(
      `HTTP/1.1 ${e.statusCode} ${http.STATUS_CODES[e.statusCode]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    lingering.add(socket);
    socket.on("data", () => undefined);
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    socket.once("close", () => clearTimeout(timer));
  });
}
