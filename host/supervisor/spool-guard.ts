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
 *
 * From the container's first byte: the supervisor starts a container's process only once the
 * thread looks at its spool (`SpoolGuard.watching`). What a container prints before that look
 * is unguarded: the thread takes a few hundred milliseconds to start on a loaded machine, a
 * container that printed at once had written 13.8 MiB by its first look, and the registered
 * followers of the spool then kept those files too (the spool reached 21 MiB of its 16).
 */
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { runnableFile } from "../bundle-entries.js";

const MiB = 1024 * 1024;
/** conmon is stopped once the spool's live and rotated files hold this much together (retired ones are bounded apart). */
export const SPOOL_PAUSE_BYTES = 5 * MiB;
/** ...and continued below this, or when the drain has read every whole line there is. */
export const SPOOL_RESUME_BYTES = 5 * MiB / 2;
/** After a continue for a caught-up drain, conmon may write this much more before another stop, until it has made the new live file (a reopen needs conmon to run). */
export const SPOOL_SLACK_BYTES = 1 * MiB;
/** How often a spool is looked at while output comes, and while it is quiet. */
export const LOOK_HOT_MS = 5;
export const LOOK_COLD_MS = 100;
/** The longest a container's start waits for the thread's first look at its spool. */
const WATCH_WAIT_MS = 5_000;

export type GuardRequest =
  | { op: "watch"; key: string; live: string; rotated: string; conmonPidfile: string }
  | { op: "hot"; key: string }
  | { op: "caughtUp"; key: string }
  | { op: "release"; key: string }
  | { op: "hold"; key: string; held: boolean }
  | { op: "unwatch"; key: string };

export type GuardNotice = { op: "paused"; key: string; paused: boolean } | { op: "watching"; key: string };

let worker: Worker | undefined;
let ended = false;
const handles = new Map<string, SpoolGuard>();
let serial = 0;

/**
 * Starts the guard's thread if it is not running: a container's start waits for its look
 * (`SpoolGuard.watching`), and a thread started with the container's creation, rather than after
 * it, is mostly up by then (a fresh supervisor's first start took 60 ms more otherwise).
 */
export function startSpoolGuard(): void {
  if (ended || worker) return;
  worker = new Worker(runnableFile(fileURLToPath(new URL("./spool-guard-worker.js", import.meta.url))));
  worker.unref();
  worker.on("message", (n: GuardNotice) => handles.get(n.key)?.notice(n));
  worker.on("error", (err) => process.stderr.write(`supervisor: the spool guard failed: ${err.stack ?? err.message}\n`));
  worker.on("exit", () => {
    worker = undefined;
    // Its watches are gone with it: no start waits for them.
    for (const h of handles.values()) h.settle();
  });
}

function post(msg: GuardRequest): void {
  startSpoolGuard();
  worker?.postMessage(msg);
}

/**
 * Ends the guard's thread (the supervisor is ending): from then on nothing stops a conmon, and
 * the caller continues those that may be stopped (`release`). A message to the thread would not
 * do: the process may be gone before the thread reads it.
 */
export async function endSpoolGuard(): Promise<void> {
  ended = true;
  for (const h of handles.values()) h.settle();
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
  /**
   * Settles once the guard's thread looks at this spool (or is gone). A container's process is
   * started only then: conmon writes up to some 90 MB a second, and a thread still starting (the
   * first container of a supervisor: a few hundred milliseconds on a loaded machine) let a spool
   * reach 13.8 MiB before its first look.
   */
  readonly watching: Promise<void>;
  private watched!: () => void;

  constructor(paths: { live: string; rotated: string; conmonPidfile: string }) {
    this.watching = new Promise((resolve) => (this.watched = resolve));
    // A thread that lives on and never answers (it should not happen) holds no start for long:
    // the container starts unguarded until the thread's first look.
    const bound = setTimeout(() => this.settle(), WATCH_WAIT_MS);
    bound.unref();
    void this.watching.then(() => clearTimeout(bound));
    handles.set(this.key, this);
    // Watching continues conmon first: a supervisor killed before this one may have left it stopped.
    post({ op: "watch", key: this.key, ...paths });
    if (ended) this.settle();
  }

  /** The guard's thread looks at the spool, or never will (it is gone): a start waiting for it goes on. */
  settle(): void {
    this.watched();
  }

  notice(n: GuardNotice): void {
    if (n.op === "watching") return this.settle();
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
    this.settle();
    handles.delete(this.key);
    post({ op: "unwatch", key: this.key });
  }
}
