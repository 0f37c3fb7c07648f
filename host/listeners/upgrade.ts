/**
 * Docker's clients ask for `Connection: Upgrade` / `Upgrade: tcp` on attach and exec start, then
 * send stdin on the same connection. Node hands such a request to the `upgrade` event with the
 * HTTP parser already detached from the socket; without a listener it would keep parsing, take
 * the first keystroke for a new request and close the connection with a 400. So upgrades are
 * served by the same handler, on a response bound to the socket: routes that take the stream
 * over (hijack) write to the socket themselves; any other route answers as usual, and the
 * connection ends after its answer (there is no parser left to read a next request).
 */
import type { IncomingMessage, RequestListener, Server } from "node:http";
import { http } from "../../core/node-http.js";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";

export function serveUpgrades(server: Server, handler: RequestListener): void {
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void readBody(req, socket, head).then(
      (request) => serve(request, socket, handler),
      () => socket.destroy(),
    );
  });
}

/**
 * The parser stops at the headers of an upgrade and ends the request's body stream: a body
 * (exec start's JSON) is in `head` and what follows on the socket. So the request is made again
 * with its `Content-Length` bytes as its body, as the parser would have given them; bytes after
 * it (stdin typed early) are put back on the socket.
 */
async function readBody(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<IncomingMessage> {
  const request = new http.IncomingMessage(socket as Socket);
  Object.assign(request, {
    method: req.method, url: req.url, headers: req.headers, rawHeaders: req.rawHeaders, httpVersion: req.httpVersion,
    httpVersionMajor: req.httpVersionMajor, httpVersionMinor: req.httpVersionMinor, complete: true,
  });
  // Everything is pushed here: reading must not resume the socket, whose bytes are stdin.
  request._read = () => {};
  const length = Number(req.headers["content-length"] ?? 0);
  let buf = head;
  if (Number.isInteger(length) && length > 0) {
    if (length > MAX_UPGRADE_BODY) throw new Error("upgrade body too large");
    while (buf.length < length) {
      const chunk = await nextChunk(socket);
      if (!chunk) break;
      buf = Buffer.concat([buf, chunk]);
    }
    request.push(buf.subarray(0, length));
    buf = buf.subarray(length);
  }
  request.push(null);
  if (buf.length > 0) socket.unshift(buf);
  return request;
}

/** Request bodies of upgrades are small JSON objects. */
const MAX_UPGRADE_BODY = 1024 * 1024;

function nextChunk(socket: Duplex): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const onData = (chunk: Buffer) => {
      done();
      socket.pause();
      resolve(chunk);
    };
    const onEnd = () => {
      done();
      resolve(undefined);
    };
    const done = () => {
      socket.off("data", onData);
      socket.off("end", onEnd);
      socket.off("close", onEnd);
    };
    socket.on("data", onData);
    socket.once("end", onEnd);
    socket.once("close", onEnd);
  });
}

function serve(req: IncomingMessage, socket: Duplex, handler: RequestListener): void {
  {
    const res = new http.ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as never);
    res.once("finish", () => socket.end());
    socket.once("error", () => socket.destroy());
    handler(req, res);
  }
}
