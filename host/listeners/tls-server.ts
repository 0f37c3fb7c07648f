/**
 * A TLS listener that keeps TLS 1.0 and 1.1 possible without lowering OpenSSL's security level
 * for everyone (see tls-options.ts for the two contexts and why).
 *
 * A plain TCP server accepts, reads the client's first record (its ClientHello), puts those
 * bytes back (`unshift`) and hands the socket to one of two TLS servers (`emit("connection")`):
 * the modern one, at security level 2, for every client that offers TLS 1.2 or later, or the
 * legacy one, at level 0 and TLS 1.0-1.1 only, for the rest. A legacy connection whose client
 * chain fails level 2's certificate rules is destroyed once the handshake ends, before the HTTP
 * server sees it. Both hand their TLS sockets to one HTTP server, which serves them as an HTTPS
 * server would: the same handler, upgrades, keep-alive and timeouts.
 *
 * For a modern client this costs one JavaScript read of its first packet and a 2-byte compare;
 * the TLS layer takes the bytes back from the socket's buffer (Node's TLSSocket reads what is
 * buffered before it starts reading the handle).
 */
import type { Server as HttpServer } from "node:http";
import { createServer as createNetServer, type Server, type Socket } from "node:net";
import { Server as TlsServer, type TLSSocket } from "node:tls";
import type { Logger } from "pino";
import { chainWeakness } from "./cert-strength.js";
import { MAX_FIRST_RECORD, routeClientHello } from "./client-hello.js";
import type { TlsSetup } from "./tls-options.js";

/** As long as the TLS servers give a handshake (Node's default), for the ClientHello too. */
const HELLO_TIMEOUT_MS = 120_000;

export function createTlsFront(http: HttpServer, tls: TlsSetup, log: Logger): Server {
  const modern = tlsServer(tls.modern, tls.verify);
  const legacy = tlsServer(tls.legacy, tls.verify);
  modern.on("secureConnection", (socket: TLSSocket) => http.emit("connection", socket));
  legacy.on("secureConnection", (socket: TLSSocket) => {
    const why = tls.verify ? chainWeakness(socket.getPeerCertificate(true)) : undefined;
    if (why) {
      log.warn({ remote: socket.remoteAddress, protocol: socket.getProtocol() }, `TLS client refused: ${why}`);
      socket.destroy();
      return;
    }
    http.emit("connection", socket);
  });
  // The HTTP server never listens itself: this starts its tracking of connections, which
  // enforces headersTimeout and lets closeIdleConnections/closeAllConnections find them.
  http.emit("listening");
  // noDelay as https.Server has. allowHalfOpen as http.Server has, and the TLS sockets inherit
  // it from the socket they wrap: Docker's clients end their side of an attach or exec stream
  // when stdin ends (a TCP FIN under the TLS), and the output must still reach them.
  return createNetServer({ noDelay: true, allowHalfOpen: true }, (socket) => route(socket, modern, legacy));
}

function tlsServer(options: TlsSetup["modern"], verify: boolean): TlsServer {
  const server = new TlsServer({
    ...options,
    requestCert: verify,
    rejectUnauthorized: verify,
    ALPNProtocols: ["http/1.1"],
  });
  // A failed handshake (a refused certificate, a client that goes away) ends that connection only.
  server.on("tlsClientError", (_err, socket: TLSSocket) => socket.destroy());
  return server;
}

function route(socket: Socket, modern: TlsServer, legacy: TlsServer): void {
  let received: Buffer | undefined;
  const onData = (chunk: Buffer) => {
    received = received ? Buffer.concat([received, chunk]) : chunk;
    const choice = received.length >= MAX_FIRST_RECORD ? "modern" : routeClientHello(received);
    if (choice === "wait") return;
    socket.off("data", onData);
    socket.off("error", onError);
    socket.off("end", onError);
    socket.off("timeout", onTimeout);
    socket.setTimeout(0);
    socket.pause();
    socket.unshift(received);
    (choice === "legacy" ? legacy : modern).emit("connection", socket);
  };
  const onError = () => socket.destroy();
  const onTimeout = () => socket.destroy();
  socket.on("data", onData);
  socket.on("error", onError);
  // A client that ends before its ClientHello is complete is gone (half-open is for streams).
  socket.on("end", onError);
  socket.setTimeout(HELLO_TIMEOUT_MS, onTimeout);
}
