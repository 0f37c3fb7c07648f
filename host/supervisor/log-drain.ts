/**
 * Moves a container's output from conmon's k8s-file spool into the log driver (json-file by
 * default), as it comes. The byte offset read so far is saved after every batch, so a
 * supervisor that is killed and started again goes on from there: no line is lost (a kill
 * between a batch's write and its offset's save would repeat that batch, never drop it).
 * The drain ends when the container has exited and the spool is read to its end; then the
 * logger is closed and the drain is marked done.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import type { LogWriter } from "../../core/contracts/log.js";
import { writeJsonAtomic } from "../../core/images/atomic-file.js";
import { parseRFC3339Nano } from "../../core/rfc3339-nano.js";
import { K8S_LINE } from "./conmon.js";

interface DrainState {
  offset: number;
  done: boolean;
}

const CHUNK = 256 * 1024;

export interface DrainOptions {
  /** conmon's k8s-file log. */
  source: string;
  /** Where the offset is kept. */
  statePath: string;
  writer: LogWriter;
  /** Whether the container has exited (its exit file exists). */
  exited: () => boolean;
  pollMs?: number;
}

export function drainState(statePath: string): DrainState {
  try {
    return JSON.parse(readFileSync(statePath, "utf8")) as DrainState;
  } catch {
    return { offset: 0, done: false };
  }
}

export class LogDrain {
  private stopped = false;
  private wake?: () => void;
  readonly finished: Promise<void>;

  constructor(private readonly opts: DrainOptions) {
    this.finished = this.run();
  }

  /** Looks at the spool and the exit state now instead of at the next poll (the container exited). */
  poke(): void {
    this.wake?.();
  }

  /** Stops following (the container is being removed); the logger is closed. */
  stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    return this.finished;
  }

  private async run(): Promise<void> {
    const state = drainState(this.opts.statePath);
    let watcher: FSWatcher | undefined;
    try {
      // The state file lives beside the spool: only the spool's own changes wake the drain.
      const spool = basename(this.opts.source);
      watcher = watch(dirname(this.opts.source), (_event, name) => {
        if (name === spool) this.wake?.();
      });
    } catch {
      // the folder may not exist yet: polling alone then
    }
    try {
      while (!state.done && !this.stopped) {
        // Read the exit state first: once exited, one more pass reads everything there is.
        const exited = this.opts.exited();
        const moved = await this.pass(state);
        if (exited && !moved) {
          state.done = true;
          writeJsonAtomic(this.opts.statePath, state);
        } else if (!moved) {
          await this.sleep();
        }
      }
    } finally {
      watcher?.close();
      await this.opts.writer.close();
    }
  }

  /** Reads what the spool holds past the offset; writes whole lines; says whether it moved. */
  private async pass(state: DrainState): Promise<boolean> {
    if (!existsSync(this.opts.source)) return false;
    const fd = openSync(this.opts.source, "r");
    let moved = false;
    try {
      const buf = Buffer.alloc(CHUNK);
      for (;;) {
        const n = readSync(fd, buf, 0, CHUNK, state.offset);
        if (n === 0) break;
        const end = buf.subarray(0, n).lastIndexOf(0x0a);
        if (end < 0) break; // a line still being written (or longer than a chunk: conmon splits those)
        const text = buf.subarray(0, end + 1).toString("utf8");
        for (const line of text.split("\n")) {
          const m = K8S_LINE.exec(line);
          if (!m) continue;
          const timeNs = parseRFC3339Nano(m[1]) ?? BigInt(Date.now()) * 1_000_000n;
          const partial = m[3] === "P";
          await this.opts.writer.write({
            line: Buffer.from(m[4]),
            stream: m[2] as "stdout" | "stderr",
            time: new Date(Number(timeNs / 1_000_000n)),
            timeNs,
            partial,
          });
        }
        state.offset += end + 1;
        moved = true;
        writeJsonAtomic(this.opts.statePath, state);
        if (n < CHUNK) break;
      }
    } finally {
      closeSync(fd);
    }
    return moved;
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.opts.pollMs ?? 250);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
