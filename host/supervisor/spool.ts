/**
 * conmon's k8s-file spool of one container, kept small. The spool lives under the exec root
 * (usually a tmpfs: memory), and conmon only ever appends to it, so what the drain has handed
 * to the log driver must be dropped from it. How, without losing a byte:
 *
 * - Rotation by rename: once the live file (`output.log`) has passed `SPOOL_ROTATE_BYTES` the
 *   drain renames it to `output.log.1` (conmon's open descriptor follows the file) and asks
 *   conmon through its `ctl` FIFO to reopen its log; conmon then closes the old file and makes
 *   a new `output.log`. Once that new file exists, nothing more comes into `.1`: the drain reads
 *   it to its end, saves that it reads the new file, and retires `.1` (below). (conmon's own
 *   `--log-size-max` is not used: it replaces the file by a new one at once, and whatever the
 *   drain had not read yet, e.g. while the supervisor was down, would be gone. Truncating or
 *   punching holes in a file conmon still appends to races with its writes.)
 * - Retired files: a file the drain has read is kept a little longer as `output.log.old<N>`, up
 *   to `SPOOL_RETAIN_BYTES` in all, oldest removed first; past that, for as long as a
 *   registered follower (engined's attach when the log driver cannot read, and a build's RUN
 *   step: spool-followers.ts) has not read it. Guaranteed: a registered follower reads every
 *   line once, in order, however late its event loop (engined busy, or stopped), as long as it
 *   reports within `FOLLOWER_SILENT_MS` and its container is not told to end while it is more
 *   than `FOLLOWER_RELEASED_BYTES` behind. The bound holds too: while followers keep more than
 *   `SPOOL_RETAIN_BYTES` of retired files, conmon waits (a hold of the guard, below, as for an
 *   attached client that does not read; Docker's attach blocks the container the same way), so
 *   the retired files stay within `SPOOL_RETAIN_BYTES` and the file whose retirement passed it
 *   (conmon is stopped within milliseconds, and no file is retired until conmon makes a new
 *   one): with the guard's bound on the live and rotated files, some 14 MiB at worst, under the
 *   16 MiB the tests check (measured: under 11 MiB on a loaded machine). A follower that goes
 *   away (its connection closes: the client left, engined ended or was killed), or is silent
 *   for `FOLLOWER_SILENT_MS`, keeps nothing. Once the container is told to end (conmon runs freely
 *   from then on), followers keep at most `FOLLOWER_RELEASED_BYTES`; what is past that is
 *   removed, and said in the supervisor's log. Followers that are not registered (the spool
 *   read directly, host/containers/spool-files.ts) hold each file open once they have seen it;
 *   one whose event loop was busy while more than `SPOOL_RETAIN_BYTES` came and went misses it.
 * - Flow control (spool-guard.ts): when the drain falls behind (a container printing faster
 *   than its log driver stores) the spool still grows; past a bound conmon is stopped, so the
 *   container blocks on its full pipe, as Docker's `blocking` log mode blocks it, and is
 *   continued when the drain has caught up. The guard looks at the spool before the container's
 *   process starts (`watching`): all the bounds above count on its looks from the first byte. A
 *   stop, kill or removal of the container, or the supervisor's end, continues it for good; a
 *   supervisor started again continues it at once.
 */
import { readdirSync, renameSync, rmSync, statSync, type Stats } from "node:fs";
import { basename, dirname, join } from "node:path";
import { liveConmonPid, reopenLog } from "./conmon.js";
import { serialCtl } from "./ctl-serial.js";
import { killPoint } from "../../core/kill-points.js";
import { SpoolGuard } from "./spool-guard.js";
import type { SpoolFollowers } from "./spool-followers.js";

/** The live file is rotated away once it has reached this size. */
const SPOOL_ROTATE_BYTES = 1024 * 1024;
/** Files the drain has read, kept for followers (see above); past it, conmon waits for registered followers. */
const SPOOL_RETAIN_BYTES = 4 * 1024 * 1024;
/** Retired files kept for registered followers once conmon runs freely (its container is told to end). */
const FOLLOWER_RELEASED_BYTES = 8 * 1024 * 1024;
/** A reopen conmon has not acted on within this time (while it ran) is asked again. */
const REOPEN_GRACE_MS = 2000;

export function rotatedSpool(path: string): string {
  return `${path}.1`;
}

/** The retired files of a spool (`<path>.old<N>`), oldest first. */
export function retiredSpools(path: string): string[] {
  const base = basename(path);
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return [];
  }
  return names
    .map((n) => ({ n, seq: n.startsWith(`${base}.old`) && /^\d+$/.test(n.slice(base.length + 4)) ? Number(n.slice(base.length + 4)) : NaN }))
    .filter((x) => Number.isSafeInteger(x.seq))
    .sort((a, b) => a.seq - b.seq)
    .map((x) => join(dirname(path), x.n));
}

export function statOrUndefined(path: string): Stats | undefined {
  try {
    // a missing file is no exception (the drain of every running container asks 4 times a second)
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

export interface SpoolOptions {
  /** The live file conmon writes. */
  path: string;
  /** conmon's control FIFO (reopen commands). */
  ctlPath?: string;
  /** conmon's pid file. */
  conmonPidfile: string;
  /** engined's followers of this container's spool: their files are kept until they have read them. */
  followers?: SpoolFollowers;
}

export class Spool {
  readonly rotated: string;
  private readonly guard: SpoolGuard;
  /** When a reopen was asked (or may have been, by a supervisor before this one). */
  private reopenAskedAt = Date.now();
  /** conmon waits for followers behind (see above): ends that hold. */
  private followersHold?: () => void;
  private released = false;
  private closed = false;
  private readonly trimNow = () => this.trim();

  constructor(private readonly opts: SpoolOptions) {
    this.rotated = rotatedSpool(opts.path);
    this.guard = new SpoolGuard({ live: opts.path, rotated: this.rotated, conmonPidfile: opts.conmonPidfile });
    if (opts.followers) opts.followers.onChange = this.trimNow;
  }

  get path(): string {
    return this.opts.path;
  }

  /** Settles once the guard looks at the spool: a container's process starts only then (spool-guard.ts). */
  get watching(): Promise<void> {
    return this.guard.watching;
  }

  /**
   * Rotates the live file away when it has grown past the limit and no rotated file waits;
   * conmon must be alive to make a new one. Says whether it did.
   */
  maybeRotate(liveSize: number): boolean {
    if (liveSize < SPOOL_ROTATE_BYTES || !this.opts.ctlPath || statOrUndefined(this.rotated) || !this.conmonRuns()) return false;
    renameSync(this.opts.path, this.rotated);
    killPoint("spool-renamed");
    this.askReopen();
    return true;
  }

  /** The rotated file is read to its end and no new live file came: ask again if conmon let it pass. */
  reopenOverdue(): void {
    const since = Math.max(this.reopenAskedAt, this.guard.pausedChangedAt);
    if (this.guard.paused || Date.now() - since < REOPEN_GRACE_MS) return;
    if (statOrUndefined(this.opts.path) || !this.conmonRuns()) return;
    this.askReopen();
  }

  private askReopen(): void {
    this.reopenAskedAt = Date.now();
    const ctl = this.opts.ctlPath!;
    // conmon gone (ENXIO): nothing writes any more, the rotated file is the last one.
    void serialCtl(ctl, () => reopenLog(ctl)).catch(() => {});
  }

  private conmonRuns(): boolean {
    return liveConmonPid(this.opts.conmonPidfile) !== undefined;
  }

  /** The rotated file is read: retire it, and drop the oldest retired ones no follower needs past the limit. */
  retire(): void {
    const retired = retiredSpools(this.opts.path);
    const last = retired.length ? Number(retired[retired.length - 1].slice(this.opts.path.length + 4)) : 0;
    try {
      renameSync(this.rotated, `${this.opts.path}.old${last + 1}`);
    } catch {
      // gone already
    }
    this.trim();
  }

  /**
   * Removes the retired files past `SPOOL_RETAIN_BYTES` (newest kept first) that no follower
   * still needs, and has conmon wait while followers keep more than that. Synchronous, on the
   * supervisor's loop as the drain's retirements are: the two never cross.
   */
  private trim(): void {
    if (this.closed) return;
    const retired = retiredSpools(this.opts.path);
    const inos = [...retired, this.rotated, this.opts.path].map((f) => statOrUndefined(f)?.ino);
    const needed = this.opts.followers?.neededFrom(inos) ?? inos.length;
    let seen = 0;
    let kept = 0;
    for (let i = retired.length - 1; i >= 0; i--) {
      const size = statOrUndefined(retired[i])?.size ?? 0;
      seen += size;
      const keep = seen <= SPOOL_RETAIN_BYTES || (i >= needed && (!this.released || seen <= FOLLOWER_RELEASED_BYTES));
      if (keep) {
        kept += size;
        continue;
      }
      if (i >= needed) process.stderr.write(`supervisor: ${retired[i]} removed before a follower read it: the container is ending and its followers are more than ${FOLLOWER_RELEASED_BYTES} bytes behind\n`);
      rmSync(retired[i], { force: true });
    }
    this.holdForFollowers(kept > SPOOL_RETAIN_BYTES && !this.released);
  }

  private holdForFollowers(wanted: boolean): void {
    if (wanted && !this.followersHold) this.followersHold = this.guard.hold();
    else if (!wanted && this.followersHold) {
      this.followersHold();
      this.followersHold = undefined;
    }
  }

  /** Output comes: the guard looks at the spool often. */
  hot(): void {
    this.guard.hot();
  }

  /** The drain has read every whole line there is: a stopped conmon goes on. */
  caughtUp(): void {
    this.guard.caughtUp();
  }

  /** conmon waits, whatever the spool holds, until the returned function is called (once is enough). */
  hold(): () => void {
    return this.guard.hold();
  }

  /** The container is going away (or the supervisor is): conmon runs freely from now on. */
  release(): void {
    this.released = true;
    this.guard.release();
    // At once as well: the guard's thread may be ended (the supervisor is).
    const pid = liveConmonPid(this.opts.conmonPidfile);
    try {
      if (pid !== undefined) process.kill(pid, "SIGCONT");
    } catch {
      // gone
    }
  }

  /** The drain is over: no file is retired or removed any more (the container's removal takes them). */
  close(): void {
    this.holdForFollowers(false);
    this.closed = true;
    if (this.opts.followers?.onChange === this.trimNow) this.opts.followers.onChange = undefined;
    this.guard.close();
  }
}
