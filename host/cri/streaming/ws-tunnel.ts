/**
 * SPDY carried in a WebSocket (`SPDY/3.1+portforward.k8s.io`), as kubectl port-forward speaks
 * since client-go's tunneling dialer (KUBECTL_PORT_FORWARD_WEBSOCKETS): the payloads of the
 * binary messages, one after the other, are the SPDY connection's bytes each way. The API
 * server unwraps them before the kubelet; here the streaming server unwraps them itself, so a
 * client reaches it either way. The byte stream is a Duplex for the SPDY session.
 */
import { Duplex } from "node:stream";
import type { WebSocket } from "ws";

export const SPDY_TUNNEL_PREFIX = "SPDY/3.1+";

export function tunnelStream(ws: WebSocket): Duplex {
  const stream = new Duplex({
    read: () => ws.resume(),
    write(chunk: Buffer, _enc, done) {
      if (ws.readyState !== ws.OPEN) return done();
      ws.send(chunk, { binary: true }, () => done());
    },
    final(done) {
      if (ws.readyState === ws.OPEN) ws.close(1000);
      done();
    },
    destroy(err, done) {
      ws.terminate();
      done(err);
    },
  });
  ws.on("message", (data: Buffer | ArrayBuffer | Buffer[]) => {
    const chunk = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer);
    if (!stream.push(chunk)) ws.pause();
  });
  ws.on("close", () => {
    stream.push(null);
    stream.destroy();
  });
  ws.on("error", () => stream.destroy());
  return stream;
}
