/**
 * The answer of a pull or a push: 200 with one JSON object per line, sent from the first
 * progress message on. A failure before that message is an ordinary HTTP error; after it, the
 * last line is `{"errorDetail":{"message":...},"error":...}`. A client that goes away aborts
 * the work (its signal), and the work can wait until the client has read every line so far
 * (`drained`), so that it completes only for a client that reads to the end.
 *
 * A client that does not read costs a bounded buffer: past CLIENT_BUFFER_BYTES waiting, the
 * progress bars' updates are dropped (the statuses that follow them say where each layer is),
 * and work that can wait for the client (a build's RUN output) waits on `ready`.
 */
import type { FastifyReply } from "fastify";
import { PassThrough } from "node:stream";
import { toEngineError } from "../../core/errors.js";
import type { Emit, ProgressMessage } from "../images/progress.js";
import { CLIENT_BUFFER_BYTES } from "./client-stream.js";

export interface ProgressWork {
  emit: Emit;
  /** Commits to the 200 answer without a message yet: later failures go into the stream (a quiet build's). */
  begin: () => void;
  signal: AbortSignal;
  drained: () => Promise<void>;
  /** Resolves once what waits for the client is within its buffer (at once, mostly). */
  ready: () => Promise<void>;
}

/** `onError`: called once a failure after the first message is known, before its error line is written (a quiet build sends what it kept). */
export async function progressStream(reply: FastifyReply, work: (w: ProgressWork) => Promise<void>, onError?: () => void): Promise<FastifyReply> {
  const out = new PassThrough();
  const abort = new AbortController();
  const res = reply.raw;
  // the response closing before it finished: the client went away
  res.on("close", () => {
    if (!res.writableFinished) abort.abort(new Error("the client closed the connection"));
  });
  let started = false;
  let markStarted!: () => void;
  const first = new Promise<void>((r) => (markStarted = r));
  const write = (m: ProgressMessage) => out.write(`${JSON.stringify(m)}\n`);
  const begin = () => {
    if (started) return;
    started = true;
    markStarted();
  };
  /** What waits in this process for the client: the stream's buffers (the response's own is bounded by the pipe). */
  const waiting = () => out.writableLength + out.readableLength;
  const emit: Emit = (m) => {
    if (abort.signal.aborted) return;
    begin();
    if (m.progressDetail?.current !== undefined && waiting() >= CLIENT_BUFFER_BYTES) return;
    write(m);
  };
  const ready = async () => {
    while (!abort.signal.aborted && waiting() >= CLIENT_BUFFER_BYTES) {
      await new Promise<void>((resolve) => {
        const done = () => {
          out.off("drain", done);
          abort.signal.removeEventListener("abort", done);
          resolve();
        };
        out.once("drain", done);
        abort.signal.addEventListener("abort", done, { once: true });
      });
    }
  };
  const buffered = () => out.writableLength > 0 || out.readableLength > 0 || res.writableLength > 0;
  const drained = async () => {
    // the lines written so far have left the stream and the socket's buffer: usually within a
    // few event-loop turns, so looked at after 1 ms, then 2, 4... up to every 50 ms (a fixed 50
    // ms poll cost every pull 50 ms at its end); at most 30 s
    const deadline = Date.now() + 30_000;
    for (let wait = 1; !abort.signal.aborted && buffered() && Date.now() < deadline; wait = Math.min(wait * 2, 50)) {
      await new Promise((r) => setTimeout(r, wait));
    }
  };
  const done = work({ emit, begin, signal: abort.signal, drained, ready }).then(
    () => void out.end(),
    (err) => {
      if (!started) throw err;
      const e = toEngineError(err);
      // a failed build step says its command's exit code too (errorDetail.code), as Docker's builder does
      const code = (e as { exitCode?: unknown }).exitCode;
      const errorDetail = typeof code === "number" ? { code, message: e.message } : { message: e.message };
      onError?.();
      out.end(`${JSON.stringify({ errorDetail, error: e.message })}\n`);
    },
  );
  await Promise.race([first, done]);
  // Docker's CLI renders the lines only when the type is exactly application/json
  return reply.header("content-type", "application/json").send(out);
}
