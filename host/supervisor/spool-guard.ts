/**
 * Flow control of conmon's spools, on a thread of its own (spool-guard-worker.ts). When a
 * container prints faster than its log driver stores, the spool grows until conmon is stopped
 * (SIGSTOP; the container then blocks on its full pipe, as Docker's `blocking` log mode blocks
 * it); conmon is continued once the drain has caught up or the spool has shrunk.
 *
 * Why a thread: the decision must come while conmon writes, and conmon writes tens of megabytes
 * a second. On the supervisor's own event loop it waits for the drain's parsing, its logger's
 * writes and, on a busy machine, for the scheduler: a 200 ms wait let a spool pass 16 MiB. A
 * thread that sleeps between its looks is woken at once (the scheduler favours sleepers), so
 * the spool stays within `SPOOL_PAUSE_BYTES` and what conmon writes in a few milliseconds.
 */
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { runnableFile } from "../bundle-entries.js";

const MiB = 1024 * 1024;
/** conmon is stopped once the spool's live and rotated files hold this much together (retired ones are bounded apart). */
export const SPOOL_PAUSE_BYTES = 5 * MiB;
/** ...and continued below this, or when the drain has read every whole line there is. */
export const SPOOL_RESUME_BYTES = 5 * MiB / 2;
/** After a continue for a caught-up drain, conmon may write this much more before another stop (a reopen needs conmon to run). */
export const SPOOL_SLACK_BYTES = 1 * MiB;
/** How often a spool is looked at while output comes, and while it is quiet. */
export const LOOK_HOT_MS = 5;
export const LOOK_COLD_MS = 100;

export type GuardRequest =
  | { op: "watch"; key: string; live: string; rotated: string; conmonPidfile: string }
  | { op: "hot"; key: string }
  | { op: "caughtUp"; key: string }
  | { op: "release"; key: string }
  | { op: "hold"; key: string; held: boolean }
  | { op: "unwatch"; key: string };

export type GuardNotice = { op: "paused"; key: string; paused: boolean };

let worker: Worker | undefined;
let ended = false;
const handles = new Map<string, SpoolGuard>();
let serial = 0;

function post(msg: GuardRequest): void {
  if (ended) return;
  if (!worker) {
    worker = new Worker(runnableFile(fileURLToPath(new URL("./spool-guard-worker.js", import.meta.url))));
    worker.unref();
    worker.on("message", (n: GuardNotice) => handles.get(n.key)?.notice(n));
    worker.on("error", (err) => process.stderr.write(`supervisor: the spool guard failed: ${err.stack ?? err.message}\n`));
    worker.on("exit", () => (worker = undefined));
  }
  worker.postMessage(msg);
}

/**
 * Ends the guard's thread (the supervisor is ending): from then on nothing stops a conmon, and
 * the caller continues those that may be stopped (`release`). A message to the thread would not
 * do: the process may be gone before the thread reads it.
 */
export async function endSpoolGuard(): Promise<void> {
  ended = true;
  const w = worker;
  worker = undefined;
  await w?.terminate();
}

/** One spool under the guard. */
export class SpoolGuard {
  private readonly key = `spool-${++serial}`;
  private hotAt = 0;
  /** As the guard last said; a stop is decided on its thread. */
  paused = false;
  pausedChangedAt = Date.now();

  constructor(paths: { live: string; rotated: string; conmonPidfile: string }) {
    handles.set(this.key, this);
    // Watching continues conmon first: a supervisor killed before this one may have left it stopped.
    post({ op: "watch", key: this.key, ...paths });
  }

  notice(n: GuardNotice): void {
    this.paused = n.paused;
    this.pausedChangedAt = Date.now();
  }

  /** Output comes: look often (the guard also sees it by itself, a little later). */
  hot(): void {
    const now = Date.now();
    if (now - this.hotAt < 200) return;
    this.hotAt = now;
    post({ op: "hot", key: this.key });
  }

  /** The drain has read every whole line there is: conmon may go on. */
  caughtUp(): void {
    if (this.paused) post({ op: "caughtUp", key: this.key });
  }

  /**
   * conmon is stopped until the returned function is called, whatever the spool's size (an
   * attached client that does not read; several may hold at once); `release` ends every hold.
   */
  hold(): () => void {
    post({ op: "hold", key: this.key, held: true });
    let done = false;
    return () => {
      if (done) return;
      done = true;
      post({ op: "hold", key: this.key, held: false });
    };
  }

  /** conmon runs freely from now on (its container is told to end, or the supervisor ends). */
  release(): void {
    post({ op: "release", key: this.key });
  }

  close(): void {
    handles.delete(this.key);
    post({ op: "unwatch", key: this.key });
  }
}
