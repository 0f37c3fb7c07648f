/**
 * A byte stream's chunks as they were written into it, never joined. A Node byte stream's own
 * async iterator reads with `read()`, which joins everything buffered into one new Buffer: when
 * the reader is slower than the writer (a download feeding a decompressor), every byte is
 * copied once more, and the copies are garbage the collector has to find (measured: a 200 MB
 * pull spent 0.17-0.39 s of its event loop in those joins alone). Here the chunks come from
 * 'data' events, one by one; the stream is paused while `max` bytes wait for the reader.
 */
import type { Readable } from "node:stream";

export async function* chunksOf(stream: Readable, max = 1 << 20): AsyncGenerator<Buffer> {
  const queue: Buffer[] = [];
  let head = 0; // queue[head] is the next chunk (shifting an array each time costs more)
  let queued = 0;
  let ended = stream.readableEnded;
  let failure: Error | undefined = stream.destroyed && !ended ? (stream.errored ?? prematureClose()) : undefined;
  let wake: (() => void) | undefined;
  const signal = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const onData = (chunk: Buffer) => {
    queue.push(chunk);
    queued += chunk.length;
    if (queued >= max) stream.pause();
    signal();
  };
  const onEnd = () => {
    ended = true;
    signal();
  };
  const onError = (err: Error) => {
    failure ??= err;
    signal();
  };
  const onClose = () => {
    if (!ended) failure ??= stream.errored ?? prematureClose();
    signal();
  };
  if (!ended && !failure) {
    stream.on("data", onData);
    stream.on("end", onEnd);
    stream.on("error", onError);
    stream.on("close", onClose);
  }
  try {
    for (;;) {
      if (failure) throw failure;
      if (head < queue.length) {
        const chunk = queue[head];
        queue[head++] = undefined as unknown as Buffer;
        if (head > 1024 && head * 2 > queue.length) queue.splice(0, head), (head = 0);
        queued -= chunk.length;
        if (queued < max && stream.isPaused() && !ended) stream.resume();
        yield chunk;
        continue;
      }
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    stream.off("data", onData);
    stream.off("end", onEnd);
    stream.off("error", onError);
    stream.off("close", onClose);
    // a reader that stops early is done with the stream, as with the stream's own iterator
    // (whose listeners stay and take a late error, as this one does)
    if (!ended) {
      stream.on("error", () => undefined);
      stream.destroy();
    }
  }
}

function prematureClose(): Error {
  return Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" });
}

/**
 * Calls `fn` with each chunk of `stream` as it comes ('data' events, nothing joined), pausing
 * the stream while a promise `fn` returned is pending. Resolves at the stream's end; rejects
 * with the stream's error or `fn`'s (and then destroys the stream).
 */
export function forEachChunk(stream: Readable, fn: (chunk: Buffer) => Promise<void> | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    let pending: Promise<unknown> | undefined; // what `fn` is doing with the last chunk
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", fail);
      stream.off("close", onClose);
      if (!err) return resolve();
      stream.on("error", () => undefined); // a late error of the stream it is destroyed with
      stream.destroy();
      // the caller cleans up after a failure: not while `fn` is still at work
      if (pending) pending.then(() => reject(err), () => reject(err));
      else reject(err);
    };
    const fail = (err: Error) => finish(err);
    const onData = (chunk: Buffer) => {
      let wait;
      try {
        wait = fn(chunk);
      } catch (err) {
        return finish(err as Error);
      }
      if (!wait) return;
      stream.pause();
      pending = wait.then(
        () => {
          pending = undefined;
          if (!done) stream.resume();
        },
        (err: Error) => {
          pending = undefined;
          finish(err);
        },
      );
    };
    // the stream may end (and close) while `fn` is still at work on the last chunk: done only after that
    const onEnd = () => (pending ? pending.then(() => finish()) : finish());
    const onClose = () => {
      const err = stream.errored ?? (stream.readableEnded ? undefined : prematureClose());
      if (err) finish(err);
      else onEnd();
    };
    if (stream.readableEnded) return resolve();
    if (stream.destroyed) return reject(stream.errored ?? prematureClose());
    stream.on("data", onData);
    stream.on("end", onEnd);
    stream.on("error", fail);
    stream.on("close", onClose);
  });
}
