/**
 * Port-forward over SPDY/3.1 (`portforward.k8s.io`), as the kubelet serves client-go's port
 * forwarder: for each connection the client forwards it opens two streams with the same
 * `requestID` and `port` headers, `streamType: error` then `data`. Once both are there, the
 * data stream is joined to a connection to the pod's `localhost:<port>` (port-forward.ts),
 * both ways; a connection that cannot be made (or breaks) is told on the error stream, in the
 * kubelet's words. The session lasts as long as the client keeps it (one kubectl port-forward,
 * many connections); every connection of it ends with it.
 */
import { errors } from "../../../core/errors.js";
import type { SandboxRecord } from "../sandbox/sandbox-service.js";
import { connectPodPort, type PodConnection } from "./port-forward.js";
import { RST_REFUSED_STREAM } from "./spdy/spdy-frames.js";
import type { SpdySession, SpdyStream } from "./spdy/spdy-session.js";

export const PORT_FORWARD_PROTOCOL = "portforward.k8s.io";

/** A pair whose second stream has not come by then is reset, as the kubelet's stream creation timeout does. */
const PAIR_TIMEOUT_MS = 30_000;

interface Pair {
  data?: SpdyStream;
  error?: SpdyStream;
  timer?: NodeJS.Timeout;
}

/** The events of a session that forwards to `pod`; `session()` is the session once made. */
export function portForwardEvents(pod: SandboxRecord, session: () => SpdySession) {
  const pairs = new Map<string, Pair>();
  const open = new Set<PodConnection>();
  const forward = async (pair: Required<Omit<Pair, "timer">>) => {
    const port = Number(pair.data.headers.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      await pair.error.write(Buffer.from(errors.criPortForward(port, pod.id, `invalid port ${JSON.stringify(pair.data.headers.port)}`).message));
      await pair.error.end();
      await pair.data.end();
      return;
    }
    const conn = connectPodPort(pod, port);
    open.add(conn);
    pair.data.input.pipe(conn.connection);
    pair.data.input.on("error", () => conn.close());
    conn.connection.on("error", () => {});
    conn.connection.on("data", (chunk: Buffer) => {
      // what the pod sends leaves at the client's pace
      conn.connection.pause();
      void pair.data.write(chunk).finally(() => conn.connection.resume());
    });
    const why = await Promise.all([conn.failed, new Promise((resolve) => conn.connection.once("end", resolve).once("close", resolve))]).then(([w]) => w);
    open.delete(conn);
    if (why) await pair.error.write(Buffer.from(errors.criPortForward(port, pod.id, why).message));
    await pair.data.end();
    await pair.error.end();
  };
  return {
    onStream(stream: SpdyStream) {
      const kind = stream.headers.streamtype;
      const id = stream.headers.requestid ?? "";
      const pair = pairs.get(id) ?? {};
      if ((kind !== "data" && kind !== "error") || pair[kind]) return void session().refuse(stream, RST_REFUSED_STREAM);
      pair[kind] = stream;
      void session().accept(stream);
      if (pair.data && pair.error) {
        pairs.delete(id);
        clearTimeout(pair.timer);
        void forward(pair as Required<Omit<Pair, "timer">>);
        return;
      }
      pairs.set(id, pair);
      pair.timer = setTimeout(() => {
        pairs.delete(id);
        for (const s of [pair.data, pair.error]) if (s) void session().refuse(s, RST_REFUSED_STREAM);
      }, PAIR_TIMEOUT_MS);
      pair.timer.unref();
    },
    onClose() {
      for (const p of pairs.values()) clearTimeout(p.timer);
      pairs.clear();
      for (const c of open) c.close();
      open.clear();
    },
  };
}
