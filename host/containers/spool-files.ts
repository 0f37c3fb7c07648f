/**
 * The files of a k8s-file spool that the supervisor rotates (host/supervisor/spool.ts), as a
 * follower sees them: the one it reads, and the newer ones, each held open as soon as it shows
 * up. The drain retires a rotated file once it has read it, and removes it soon after (a
 * few megabytes later), which may be long before a slower follower gets there: a file held
 * open stays readable, and only files found in time are held. So newer files are
 * looked for on every change of the folder (and by the follower's polls), not only when the
 * follower reaches the end of its file, and the look is synchronous (a few stat(2) calls):
 * a look that waited its turn on the event loop a few times over would come too late.
 *
 * Files are told apart by inode; an inode held open cannot be taken by another file, so only
 * open files are compared. Files the follower finished stay open while they are still in the
 * folder (else a finished `.1` would look new). Newer files are held up to `MAX_AHEAD_BYTES`,
 * rather than keep without limit the memory of a tmpfs spool that the drain has freed.
 *
 * That is all an unregistered follower has. engined's followers (spool-reader.ts) are also
 * registered with the supervisor, and say which file they read (`onCurrent`): the supervisor
 * keeps every file they have not read, and has the container wait while they are behind
 * (host/supervisor/spool-followers.ts), so they find every file in the folder however late.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { retiredSpools } from "../supervisor/spool.js";

/** What newer files a follower holds at most (their sizes now). */
const MAX_AHEAD_BYTES = 32 * 1024 * 1024;

export interface OpenFile {
  fd: number;
  ino: number;
}

export class SpoolFiles {
  current?: OpenFile;
  private readonly ahead: OpenFile[] = [];
  private readonly finished: OpenFile[] = [];
  private readonly rotated: string;
  private closed = false;

  /** `onCurrent`: told the inode of each file the follower begins to read. */
  constructor(
    private readonly path: string,
    private readonly onCurrent?: (ino: number) => void,
  ) {
    this.rotated = `${path}.1`;
  }

  /**
   * From `offset` in the live file (`end`: its size once open); with 0, from the oldest file
   * there is. Says where to read first.
   */
  open(offset: number | "end"): number {
    if (offset !== 0) {
      this.setCurrent(openFile(this.path));
      if (offset === "end") offset = this.current ? fstatSync(this.current.fd).size : 0;
      // The rotated and retired files there now are older: known, not to be read.
      for (const [path] of (this.snapshot() ?? []).slice(0, -1)) {
        const older = openFile(path);
        if (older && older.ino !== this.current?.ino) this.finished.push(older);
        else if (older) closeSync(older.fd);
      }
      return this.current ? offset : 0;
    }
    this.lookForNewer();
    return 0;
  }

  /**
   * Holds the files that came since the last look. Says whether it saw them all: false when a
   * rotation under way made it stop (look again).
   */
  lookForNewer(): boolean {
    if (this.closed) return true;
    const held = (ino: number) => [this.current, ...this.ahead, ...this.finished].some((f) => f?.ino === ino);
    // Oldest first; a file not seen in order now is taken at the next look.
    const files = this.snapshot();
    if (!files) return false;
    for (const [path, ino] of files) {
      if (ino === undefined || held(ino)) continue;
      if (this.bytesAhead() >= MAX_AHEAD_BYTES) return true;
      const file = openFile(path);
      if (file?.ino !== ino) {
        if (file) closeSync(file.fd); // moved meanwhile: the next look takes it, in order
        return false;
      }
      if (this.current) this.ahead.push(file);
      else this.setCurrent(file);
    }
    this.forgetGone(files);
    return true;
  }

  private bytesAhead(): number {
    return this.ahead.reduce((sum, f) => sum + fstatSync(f.fd).size, 0);
  }

  /**
   * The spool's files and their inodes, oldest first (the retired files, the rotated one, the
   * live one), as two looks in a row saw them: a file renamed to its next name during a look is
   * missed by it, and would be taken out of order (or, finished, taken for a new one).
   */
  private snapshot(): [string, number | undefined][] | undefined {
    const look = () => [...retiredSpools(this.path), this.rotated, this.path].map((p): [string, number | undefined] => [p, inode(p)]);
    for (let attempt = 0; attempt < 3; attempt++) {
      const files = look();
      if (JSON.stringify(look()) === JSON.stringify(files)) return files;
    }
    return undefined;
  }

  /** Finished files no longer in the folder (`files`, a snapshot) are closed: their inodes may be reused now. */
  private forgetGone(files: [string, number | undefined][]): void {
    const inos = files.map(([, ino]) => ino);
    for (let i = this.finished.length - 1; i >= 0; i--) {
      if (inos.includes(this.finished[i].ino)) continue;
      closeSync(this.finished[i].fd);
      this.finished.splice(i, 1);
    }
  }

  /** Whether a newer file is held: then the current one is complete (conmon closed it before making the newer). */
  hasNewer(): boolean {
    return this.ahead.length > 0;
  }

  /** The current file is read to its end and a newer one is held: go on with that. */
  next(): void {
    if (this.current) this.finished.push(this.current);
    this.setCurrent(this.ahead.shift());
  }

  private setCurrent(file: OpenFile | undefined): void {
    this.current = file;
    if (file) this.onCurrent?.(file.ino);
  }

  /** Up to 64 KiB of the current file from `offset` (a spool on tmpfs: a read takes microseconds). */
  read(offset: number): Buffer {
    if (!this.current) return Buffer.alloc(0);
    const buf = Buffer.alloc(64 * 1024);
    return buf.subarray(0, readSync(this.current.fd, buf, 0, buf.length, offset));
  }

  close(): void {
    this.closed = true;
    for (const f of [this.current, ...this.ahead, ...this.finished]) if (f) closeSync(f.fd);
    this.current = undefined;
    this.ahead.length = 0;
    this.finished.length = 0;
  }
}

function inode(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

function openFile(path: string): OpenFile | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  return { fd, ino: fstatSync(fd).ino };
}
