/**
 * Walking a tree that a running container may change meanwhile (its writable layer, for commit
 * and `docker diff`), on the single-component calls of at.ts. A walk opens its root once and
 * then only ever looks up one name in a directory it holds open:
 * - `holdEntry` takes an entry as it is NOW: a directory comes back open (its stats from fstat
 *   of that descriptor, so the directory described is the one descended), a regular file, when
 *   asked, open for reading (its stats from its descriptor: what is packed is what was
 *   stat'ed), anything else as lstat sees it. An entry that changes type between the lstat and
 *   the open (a directory swapped for a symlink) is looked at again, as what it has become;
 *   one that is gone, or keeps changing, is left out. Nothing is ever followed.
 * - `DirCursor` opens the directories of a list of paths in walk order (a layer's changes),
 *   keeping the ones the next path shares open. A directory on the way that is no longer one
 *   (now a symlink, a file, gone) makes the path unreachable: its entry is left out.
 */
import { closeSync, fstatSync, lstatSync, type BigIntStats, type Stats } from "node:fs";
import { at, openFileForReadAt, tryOpenDirAt } from "./at.js";

/** Looks at an entry that keeps changing this many times before it is left out. */
const MAX_TRIES = 8;

export interface HeldEntry<S extends Stats | BigIntStats> {
  stats: S;
  /** The directory itself, open (a directory entry): release() closes it. */
  dirFd?: number;
  /** The regular file itself, open for reading (with `openFiles`): release() closes it. */
  fileFd?: number;
  release(): void;
}

function held<S extends Stats | BigIntStats>(stats: S, fds: { dirFd?: number; fileFd?: number } = {}): HeldEntry<S> {
  return {
    stats,
    ...fds,
    release: () => {
      if (fds.dirFd !== undefined) closeSync(fds.dirFd);
      if (fds.fileFd !== undefined) closeSync(fds.fileFd);
    },
  };
}

/** `name` in the open directory `dirFd` as it is now (see above), or undefined when it is gone. */
export function holdEntry(dirFd: number, name: string, opts: { openFiles?: boolean } = {}): HeldEntry<Stats> | undefined {
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const st = lstatSync(at(dirFd, name), { throwIfNoEntry: false });
    if (!st) return undefined;
    if (st.isDirectory()) {
      const fd = tryOpenDirAt(dirFd, name);
      if (fd === undefined) continue; // swapped since the lstat: look again
      return held(fstatOr(fd, () => fstatSync(fd)), { dirFd: fd });
    }
    if (opts.openFiles && st.isFile()) {
      const file = openFileForReadAt(dirFd, name);
      if (!file) continue;
      return held(file.stats, { fileFd: file.fd });
    }
    return held(st);
  }
  return undefined;
}

/** As holdEntry, with nanosecond stats (no file is opened). */
export function holdEntryBig(dirFd: number, name: string): HeldEntry<BigIntStats> | undefined {
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const st = lstatSync(at(dirFd, name), { bigint: true, throwIfNoEntry: false });
    if (!st) return undefined;
    if (!st.isDirectory()) return held(st);
    const fd = tryOpenDirAt(dirFd, name);
    if (fd !== undefined) return held(fstatOr(fd, () => fstatSync(fd, { bigint: true })), { dirFd: fd });
  }
  return undefined;
}

/** `stat()`, with `fd` closed should it throw. */
function fstatOr<S>(fd: number, stat: () => S): S {
  try {
    return stat();
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** The directories of `/`-separated paths under a root, opened one component at a time and kept while the next path shares them. */
export class DirCursor {
  /** The open directories from the root (first, never popped) down, with their names. */
  private readonly frames: { name: string; fd: number }[];

  /** `rootFd` becomes the cursor's: close() closes it. */
  constructor(rootFd: number) {
    this.frames = [{ name: "", fd: rootFd }];
  }

  get rootFd(): number {
    return this.frames[0].fd;
  }

  /** The open directory `parts` (from the root), or undefined when one on the way is not a directory now. */
  dir(parts: readonly string[]): number | undefined {
    let keep = 0;
    while (keep < parts.length && keep + 1 < this.frames.length && this.frames[keep + 1].name === parts[keep]) keep++;
    while (this.frames.length > keep + 1) closeSync(this.frames.pop()!.fd);
    for (let i = keep; i < parts.length; i++) {
      const fd = tryOpenDirAt(this.frames[this.frames.length - 1].fd, parts[i]);
      if (fd === undefined) return undefined;
      this.frames.push({ name: parts[i], fd });
    }
    return this.frames[this.frames.length - 1].fd;
  }

  close(): void {
    while (this.frames.length > 0) closeSync(this.frames.pop()!.fd);
  }
}
