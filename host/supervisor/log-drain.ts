/**
 * Moves a container's output from conmon's k8s-file spool into the log driver (json-file by
 * default), as it comes, and lets the spool drop what the driver has (spool.ts).
 *
 * Progress is saved in `drain.json` after every batch: the spool file being read (by inode: the
 * live file or, after a rotation, `.1`), the byte offset in it, and the logger's mark (where
 * its stored messages end, core/contracts/log.ts). A supervisor killed and started again makes
 * the logger again with that mark; the logger says how many messages it stored after it, and
 * the drain skips that many from the saved offset: no line is lost and none is stored twice.
 * Rotations of the logger's files are fenced by checkpoints, saved here. (A logger without
 * marks repeats the last batch after a kill, never drops it.)
 *
 * The drain ends when the container has exited and the spool is read to its end; then the
 * logger is closed and the drain is marked done.
 */
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, watch, type FSWatcher } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import { basename, dirname } from "node:path";
import type { LogMark, LogResume, LogWriter } from "../../core/contracts/log.js";
import { killPoint } from "../../core/kill-points.js";
import { SpoolBatch } from "./spool-batch.js";
import { statOrUndefined, type Spool } from "./spool.js";

interface DrainState {
  /** The inode of the spool file being read; unset before the first read (then: the live file). */
  ino?: number;
  offset: number;
  /** The logger's mark after the messages before `offset`. */
  mark?: LogMark;
  done: boolean;
}

const CHUNK = 256 * 1024;

export interface DrainOptions {
  spool: Spool;
  /** Where the progress is kept. */
  statePath: string;
  writer: LogWriter;
  /** What the writer was made with: the drain answers its checkpoints. */
  resume: LogResume;
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

/**
 * Replaces the state file by rename. Not synced: it lives beside the spool on the exec root (a
 * tmpfs, gone with a reboot as the spool is); what must hold is a kill, for which a rename is
 * atomic, and a sync per batch would slow the drain down to the disk's pace. Off the event
 * loop: the spool's size must be watched while a slow disk takes its time.
 */
async function saveState(path: string, state: DrainState): Promise<void> {
  const tmp = `${path}.tmp`;
  await writeFile(tmp, JSON.stringify(state));
  await rename(tmp, path);
}

export class LogDrain {
  private stopped = false;
  private wake?: () => void;
  private readonly state: DrainState;
  /** Messages the logger already has past the saved offset (after a kill): not written again. */
  private skip: number;
  private batch?: SpoolBatch;
  /** Messages handed to the writer since it was made. */
  private submitted = 0;
  readonly finished: Promise<void>;

  constructor(private readonly opts: DrainOptions) {
    this.state = drainState(opts.statePath);
    this.skip = opts.resume.mark ? (opts.writer.storedAfterMark ?? 0) : 0;
    opts.resume.checkpoint = (stored) => this.checkpoint(stored);
    this.finished = this.run();
  }

  /** Looks at the spool and the exit state now instead of at the next poll (the container exited). */
  poke(): void {
    this.wake?.();
  }

  /** The container is being stopped (or the supervisor is): conmon is never stopped again. */
  releaseConmon(): void {
    this.opts.spool.release();
  }

  /** Holds conmon (a client that does not read its attach stream) until the returned function is called. */
  holdConmon(): () => void {
    return this.opts.spool.hold();
  }

  /** Stops following (the container is being removed); the logger is closed. */
  stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    return this.finished;
  }

  private async run(): Promise<void> {
    const { spool } = this.opts;
    let watcher: FSWatcher | undefined;
    try {
      // The state file lives beside the spool: only the spool's own changes wake the drain.
      const names = [basename(spool.path), basename(spool.rotated)];
      watcher = watch(dirname(spool.path), (_event, name) => {
        if (name && names.includes(name)) this.wake?.();
      });
      watcher.on("error", () => {});
    } catch {
      // the folder may not exist yet: polling alone
    }
    // A first start: the logger's mark before anything is written, so that a kill inside the
    // first batch finds what that batch stored.
    const first = !existsSync(this.opts.statePath);
    if (first) this.state.mark = this.opts.writer.mark?.();
    try {
      if (first) await this.save();
      while (!this.state.done && !this.stopped) {
        // Read the exit state first: once exited, one more pass reads everything there is.
        const exited = this.opts.exited();
        const moved = await this.pass();
        // While output comes, the spool guard looks at the spool's size often.
        if (moved) spool.hot();
        if (exited && !moved) {
          this.state.done = true;
          await this.save();
        } else if (!moved) {
          await this.sleep();
        }
      }
    } finally {
      watcher?.close();
      spool.close();
      await this.opts.writer.close();
    }
  }

  private save(): Promise<void> {
    return saveState(this.opts.statePath, { ...this.state });
  }

  /** Reads what the spool holds past the saved offset; says whether anything moved. */
  private async pass(): Promise<boolean> {
    const { spool } = this.opts;
    const live = statOrUndefined(spool.path);
    const rotated = statOrUndefined(spool.rotated);
    if (this.state.ino === undefined) {
      if (!live) return false; // conmon has not made it yet
      this.state.ino = live.ino;
    }
    let path: string;
    if (rotated?.ino === this.state.ino) {
      path = spool.rotated;
    } else if (live?.ino === this.state.ino) {
      path = spool.path;
      // Read to its end before a kill, which came before its retirement.
      if (rotated) spool.retire();
    } else if (rotated ?? live) {
      // The file read last is gone (removed by hand, or replaced by a reopen not asked here):
      // go on with the oldest there is.
      process.stderr.write(`supervisor: spool file ${this.state.ino} of ${spool.path} is gone; reading on from the oldest one there is\n`);
      Object.assign(this.state, { ino: (rotated ?? live)!.ino, offset: 0 });
      return true;
    } else {
      return false;
    }
    const fd = openSync(path, "r");
    try {
      if (fstatSync(fd).ino !== this.state.ino) return true; // renamed meanwhile: look again
      return await this.readFile(fd, path === spool.rotated);
    } finally {
      closeSync(fd);
    }
  }

  private async readFile(fd: number, isRotated: boolean): Promise<boolean> {
    const { spool } = this.opts;
    // Made only when there is something to read: an idle container's drain wakes 4 times a
    // second, and a buffer of CHUNK bytes each time (zero-filled, as it was) grew the
    // supervisor's RSS by 0.7 MiB per running container and took 40% of its idle CPU.
    let buf: Buffer | undefined;
    let moved = false;
    let newLive: ReturnType<typeof statOrUndefined>;
    for (;;) {
      // Seen before the read: once conmon made the new live file, the rotated one is complete.
      if (isRotated) newLive = statOrUndefined(spool.path);
      // (only the bytes read are looked at: the rest of the buffer need not be cleared)
      const n = fstatSync(fd).size > this.state.offset ? readSync(fd, (buf ??= Buffer.allocUnsafe(CHUNK)), 0, CHUNK, this.state.offset) : 0;
      const end = buf && n > 0 ? buf.subarray(0, n).lastIndexOf(0x0a) : -1;
      if (buf && end >= 0) {
        await this.deliver(buf.subarray(0, end + 1));
        moved = true;
      }
      const size = fstatSync(fd).size;
      if (!isRotated && spool.maybeRotate(size)) isRotated = true;
      if (n < CHUNK || end < 0) break;
    }
    // Every whole line of this file is read (a stopped conmon may have left half of one).
    if (!isRotated || !newLive) spool.caughtUp();
    if (!isRotated) return moved;
    if (newLive) {
      // conmon made the new live file before the last read: the rotated file was complete then.
      const torn = fstatSync(fd).size - this.state.offset;
      if (torn > 0) process.stderr.write(`supervisor: ${torn} bytes without a newline at the end of ${spool.rotated} left out\n`);
      // It is done: say so first, then retire it (a kill between is seen by pass()).
      Object.assign(this.state, { ino: newLive.ino, offset: 0, mark: this.opts.writer.mark?.() ?? this.state.mark });
      await this.save();
      killPoint("spool-switched");
      spool.retire();
      return true;
    }
    spool.reopenOverdue();
    return moved;
  }

  /** Hands the k8s lines of `chunk` (whole lines, at the saved offset) to the writer; saves the progress. */
  private async deliver(chunk: Buffer): Promise<void> {
    const start = this.state.offset;
    const batch = new SpoolBatch(start, this.submitted);
    this.batch = batch;
    const waits: Promise<void>[] = [];
    let last: unknown;
    for (const entry of batch.parse(chunk)) {
      if (this.skip > 0) {
        this.skip--;
        batch.skipped(entry);
        continue;
      }
      const p = this.opts.writer.write(entry.msg);
      batch.submitted(entry);
      this.submitted++;
      // Writers that store several messages together give them one promise: wait for each once.
      if (p && p !== last) waits.push(p);
      last = p;
    }
    await Promise.all(waits);
    killPoint("drain-written");
    // (A checkpoint inside the batch moved the saved offset to its message.)
    this.state.offset = start + chunk.length;
    this.state.mark = this.opts.writer.mark?.();
    this.batch = undefined;
    await this.save();
  }

  /** The writer is about to rotate (or has): save the progress at its `stored`-th message. */
  private async checkpoint(stored: number): Promise<void> {
    killPoint("checkpoint");
    if (this.batch) {
      this.state.offset = this.batch.offsetAt(stored);
      this.state.mark = this.opts.writer.mark?.();
      await this.save();
    }
    killPoint("checkpoint-saved");
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
