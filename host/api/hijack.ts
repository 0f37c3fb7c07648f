/**
 * Docker's attach-style streams (container attach, exec start): the response takes the
 * connection over, and what the client sends afterwards is the process's stdin.
 */
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { DetachMatcher } from "../../core/containers/detach-keys.js";
import { requestedApiVersion } from "./api-version.js";
import { streamContentType } from "./stream-frames.js";
import { canonicalHeaderName } from "./header-names.js";

/**
 * Takes the response over from Fastify. With `Upgrade: tcp` the answer is `101 UPGRADED` and
 * the connection becomes the stream (multiplexed from API 1.42 without a terminal); without it,
 * a `200` of a raw stream whose body lasts until the connection closes, as Docker's heads are
 * written by hand. `daemonHeaders`: the daemon's own headers (Api-Version, Server...) follow,
 * sorted, as Docker's exec start copies them; its attach writes none.
 */
export function hijack(request: FastifyRequest, reply: FastifyReply, tty: boolean, opts: { daemonHeaders: boolean }): Duplex {
  reply.hijack();
  const socket = request.raw.socket as Duplex & { setTimeout(ms: number): void };
  const upgrade = /\btcp\b/i.test(String(request.headers.upgrade ?? ""));
  const own = opts.daemonHeaders
    ? Object.entries(reply.getHeaders())
        .map(([k, v]) => `${canonicalHeaderName(k)}: ${String(v)}\r\n`)
        .sort()
        .join("")
    : "";
  const head = upgrade
    ? `HTTP/1.1 101 UPGRADED\r\nContent-Type: ${streamContentType(requestedApiVersion(request.raw), tty)}\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n${own}\r\n`
    : `HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n${own}\r\n`;
  socket.setTimeout(0);
  leaveHttpParser(socket);
  reply.raw.statusCode = upgrade ? 101 : 200; // what the head says, for hooks.answeredRequest
  socket.write(head);
  return socket;
}

/**
 * An attach refused (no such container, a paused one, bad detach keys): Docker's daemon takes the
 * connection all the same and writes its status and message raw, as a stream's head and body
 * (`Content-Type: application/vnd.docker.raw-stream`, the message ending in CRLF), then closes
 * it; not its JSON error.
 */
export function refuseAttach(request: FastifyRequest, reply: FastifyReply, status: number, message: string): void {
  reply.hijack();
  reply.raw.statusCode = status; // (for hooks.answeredRequest)
  const socket = request.raw.socket;
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n${message}\r\n`);
}

/**
 * Without an upgrade, Node's HTTP server still reads the connection after the request: what
 * the client sends after the request's body (dockerode sends its options as a JSON body, then
 * stdin on the same connection) would be parsed as a next request, refused, and the connection
 * closed with the stream; and the client's end of input would end the connection's other half.
 * Docker's daemon takes the connection from Go's server: from there it is the stream's alone.
 * So the server's readers go (Node does the same at an upgrade, whose parser is gone already)
 * and its parser stops consuming the socket (a `data` listener added makes it let go).
 */
export function leaveHttpParser(socket: Duplex): void {
  if (!(socket as Duplex & { parser?: unknown }).parser) return;
  for (const event of ["data", "end", "drain"]) {
    for (const listener of socket.listeners(event)) if (/\bsocketOn(Data|End|Drain)$/.test(listener.name)) socket.removeListener(event, listener as () => void);
  }
  const unconsume = () => {};
  socket.on("data", unconsume);
  socket.removeListener("data", unconsume);
  socket.pause(); // read again by whoever takes the input (or drops it)
}

/** How the client's input ended: its end of stream, the detach keys, or the connection's loss. */
export type InputEnd = "eof" | "detach" | "closed";

/** Where the client's input goes: `write` answers false when it holds enough; `ready` says when it takes more. */
export interface InputSink {
  write(data: Buffer): boolean;
  ready(): Promise<void>;
}

/**
 * Passes what the client sends to `sink` until it ends its input, types the detach keys
 * (which are not passed on), or goes away. While the sink is full the client's socket is not
 * read (paused): its sends wait in the kernel's buffers, then in the client, as with Docker's
 * unbuffered stdin pipe, and the daemon holds a bounded amount.
 */
export function forwardInput(socket: Duplex, sink: InputSink, detachKeys: Buffer): Promise<InputEnd> {
  const matcher = new DetachMatcher(detachKeys);
  return new Promise((resolve) => {
    let ended = false;
    const done = (how: InputEnd) => {
      if (ended) return;
      ended = true;
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("close", onClose);
      resolve(how);
    };
    const onData = (chunk: Buffer) => {
      const { pass, detach } = matcher.feed(chunk);
      if (detach) {
        if (pass.length > 0) sink.write(pass);
        return done("detach");
      }
      if (pass.length === 0 || sink.write(pass)) return;
      socket.pause();
      void sink.ready().then(() => {
        if (!ended) socket.resume();
      });
    };
    const onEnd = () => done("eof");
    const onClose = () => done("closed");
    socket.on("data", onData);
    socket.once("end", onEnd);
    socket.once("close", onClose);
    socket.resume();
  });
}
