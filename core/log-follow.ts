/**
 * What a file-based log driver's follow loop waits on and checks, shared by `json-file` and
 * `local`: a change in the log folder (inotify, when there is one), the producer's end, an abort,
 * or the poll interval, whichever comes first; and whether the file being read was rotated away
 * or truncated under the open handle.
 */

import { watch, type FSWatcher } from "node:fs";
import { stat } from "node:fs/promises";
import type { FileHandle } from "node:fs/promises";
import type { ReadOptions } from "./contracts/log.js";

export class LogFollowWaker {
  private producerDone = false;
  private dirty = false;
  private wakeUp: (() => void) | undefined;
  private readonly watcher: FSWatcher | undefined;
  private readonly wake = () => {
    this.dirty = true;
    this.wakeUp?.();
  };

  constructor(
    folder: string,
    private readonly opts: Pick<ReadOptions, "signal" | "producerDone">,
  ) {
    const done = () => {
      this.producerDone = true;
      this.wake();
    };
    opts.producerDone?.then(done, done);
    opts.signal?.addEventListener("abort", this.wake, { once: true });
    try {
      this.watcher = watch(folder, { persistent: false }, this.wake);
      this.watcher.on("error", () => {});
    } catch {
      // No folder yet, or no inotify: polling alone.
    }
  }

  /**
   * Starts a round of reading. Returns whether the producer was done before it: then what the
   * round reads is the last there will be, and the loop ends after it.
   */
  beginRound(): boolean {
    this.dirty = false;
    return this.producerDone;
  }

  /** Waits for the next wake-up or `pollMs`; returns at once when one came during the round. */
  async wait(pollMs: number): Promise<void> {
    if (this.dirty) return;
    await new Promise<void>((res) => {
      const timer = setTimeout(res, pollMs);
      this.wakeUp = () => {
        clearTimeout(timer);
        res();
      };
    });
    this.wakeUp = undefined;
  }

  close(): void {
    this.watcher?.close();
    this.opts.signal?.removeEventListener("abort", this.wake);
  }
}

/**
 * What became of the file at `path` that `fh` reads, `pos` bytes in: `rotated` (another file, or
 * none, is at the path now; the handle still reads the old one), `truncated` (the same file,
 * shorter than `pos`), or `same`. `present` says whether a file is at the path.
 */
export async function logFileFate(path: string, fh: FileHandle, pos: number): Promise<{ fate: "rotated" | "truncated" | "same"; present: boolean }> {
  const now = await stat(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
  const mine = await fh.stat();
  if (!now || now.ino !== mine.ino || now.dev !== mine.dev) return { fate: "rotated", present: now !== undefined };
  return { fate: now.size < pos ? "truncated" : "same", present: true };
}
