/**
 * The followers of one container's spool: engined's readers of it (attach when the log driver
 * cannot read, e.g. `none`; a build's RUN step), registered through `POST .../follow` (server.ts).
 * Each says which spool file it reads (by inode) as it moves on, and once a second besides; the
 * spool (spool.ts) keeps every retired file from the oldest one a follower still reads, and has
 * conmon wait rather than let them grow past its bound. So a follower whose event loop was late
 * (a busy or stopped engined) finds every file it has not read yet.
 *
 * Registered per container id, not per run: engined registers an attach before the container
 * starts (`docker run`), and the next run's spool keeps its files from the first byte.
 *
 * A follower goes with its connection (the client of the attach went away, engined ended or
 * was killed); one that has said nothing for `FOLLOWER_SILENT_MS` (an engined stopped or stuck
 * that long) is dropped with a log line, so that no container waits for a dead follower for ever.
 */

/** A follower silent this long is dropped (engined reports once a second). */
export const FOLLOWER_SILENT_MS = 30_000;
const LOOK_MS = 5_000;

export interface SpoolFollower {
  /** The follower reads the file of inode `ino` now; without it, only that it is alive. */
  report(ino?: number): void;
  /** It is gone (its connection closed). */
  close(): void;
}

interface Entry {
  /** The file it reads; unknown: it has not opened one yet (it needs every file there is). */
  ino?: number;
  seenAt: number;
  /** Ends its connection (it was dropped). */
  drop: () => void;
}

export class SpoolFollowers {
  private readonly entries = new Set<Entry>();
  private timer?: NodeJS.Timeout;
  /** Called when a follower came, moved on or went: the spool lets go of what none needs. */
  onChange?: () => void;

  constructor(private readonly label: string) {}

  get size(): number {
    return this.entries.size;
  }

  add(ino: number | undefined, drop: () => void): SpoolFollower {
    const entry: Entry = { ino, seenAt: Date.now(), drop };
    this.entries.add(entry);
    this.timer ??= setInterval(() => this.dropSilent(), LOOK_MS).unref();
    this.onChange?.();
    return {
      report: (at) => {
        if (!this.entries.has(entry)) return;
        entry.seenAt = Date.now();
        if (at === undefined || at === entry.ino) return;
        entry.ino = at;
        this.onChange?.();
      },
      close: () => this.remove(entry),
    };
  }

  /**
   * Of the spool's files (their inodes, oldest first), the index of the oldest one a follower
   * still reads; `inos.length` when none does. A follower whose file is not among them reads
   * one older than all of them (or none yet): it needs them all.
   */
  neededFrom(inos: (number | undefined)[]): number {
    let from = inos.length;
    for (const e of this.entries) {
      const at = e.ino === undefined ? -1 : inos.indexOf(e.ino);
      from = Math.min(from, Math.max(at, 0));
    }
    return from;
  }

  private remove(entry: Entry): void {
    if (!this.entries.delete(entry)) return;
    if (this.entries.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
    this.onChange?.();
  }

  private dropSilent(): void {
    const now = Date.now();
    for (const e of [...this.entries]) {
      if (now - e.seenAt <= FOLLOWER_SILENT_MS) continue;
      process.stderr.write(`supervisor: a follower of ${this.label} has not reported for ${Math.round((now - e.seenAt) / 1000)} s: dropped, its spool files are no longer kept for it\n`);
      this.remove(e);
      e.drop();
    }
  }
}
