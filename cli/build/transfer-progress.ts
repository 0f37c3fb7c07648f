/**
 * The CLI's progress lines for bytes that pass through it: "Sending build context to Docker
 * daemon  2.048kB" and "Downloading build context from remote url: URL [==>  ] 1kB/3kB", as
 * moby's progress reader writes them through its raw formatter: an update when 512 kB (or 1% of
 * a known size, if less) more have passed, at most ten a second, each line ending with "\r";
 * the last one (at the end of the stream) followed by "\r\n". `lastOnly` writes that last one
 * alone (the context upload when stdout is not a terminal).
 */
import { Transform, type Readable } from "node:stream";
import { progressText } from "../progress/show-progress.js";

export interface TransferProgress {
  action: string;
  /** Bytes expected, 0 if unknown. */
  total?: number;
  write(text: string): void;
  lastOnly?: boolean;
  /** The terminal's width (bars need more than 110 columns). */
  width: number;
}

const UPDATE_EVERY = 512 * 1024;
const MIN_INTERVAL_MS = 100;

export function withProgress(body: Readable, p: TransferProgress): Readable {
  const total = p.total ?? 0;
  const every = total > 0 ? Math.min(UPDATE_EVERY, Math.trunc(total / 100)) : UPDATE_EVERY;
  let current = 0;
  let lastUpdate = 0;
  let lastWrite = -Infinity;
  const line = (last: boolean) => {
    const text = progressText({ current, total }, p.width);
    // the raw formatter ends a line without numbers with a newline of its own
    return `${p.action} ${text}\r${text === "" ? "\n" : ""}${last ? "\r\n" : ""}`;
  };
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      current += chunk.length;
      if (current - lastUpdate > every) {
        const now = Date.now();
        if (!p.lastOnly && (current === total || now - lastWrite >= MIN_INTERVAL_MS)) {
          p.write(line(false));
          lastWrite = now;
        }
        lastUpdate = current;
      }
      done(null, chunk);
    },
    flush(done) {
      p.write(line(true));
      done();
    },
  });
  body.on("error", (e) => counter.destroy(e));
  return body.pipe(counter);
}
