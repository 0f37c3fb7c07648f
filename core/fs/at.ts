/**
 * Single-component file system calls relative to an open directory descriptor: the primitives
 * for reading or writing a tree that someone else (a running container) may change meanwhile,
 * as `docker cp` (host/containers/files/scoped-fs.ts) and the layer walks of commit and
 * `docker diff` (core/archive/pack-layer.ts, tree-diff.ts) do.
 *
 * Node has neither openat(2) nor openat2(RESOLVE_BENEATH), so a lookup names exactly ONE
 * component through `/proc/self/fd/<dirfd>/<name>`: the kernel resolves `/proc/self/fd/<dirfd>`
 * as a magic link straight to the directory the descriptor holds (not by walking a path string
 * again), so only `<name>` is looked up, in that directory, whatever happens to the directory's
 * ancestors or its own name meanwhile. Directories are opened with O_DIRECTORY|O_NOFOLLOW (a
 * symlink fails with ELOOP, a file or device with ENOTDIR, and neither is followed or opened);
 * lstat, readlink and the l*xattr calls of @napi-rs/xattr do not follow the last component.
 * A regular file to read is first held with O_PATH|O_NOFOLLOW (which neither follows a symlink
 * nor opens a fifo or device), checked with fstat, and only then reopened for reading through
 * its own descriptor: what is read is the inode that was checked.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readlinkSync, type Stats } from "node:fs";

/** Linux's O_PATH (Node does not export it): a handle on an inode that neither reads nor writes it. */
export const O_PATH = 0o10000000;

/** Opens a directory and nothing else: not a symlink (ELOOP), not a file or device (ENOTDIR). libuv adds O_CLOEXEC. */
export const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** A failure of a scoped lookup, with the errno code callers act on (ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG). */
export class ScopedPathError extends Error {
  constructor(
    readonly code: "ENOENT" | "ENOTDIR" | "ELOOP" | "EINVAL" | "ENAMETOOLONG",
    readonly path: string,
    why: string,
  ) {
    super(`${path}: ${why}`);
    this.name = "ScopedPathError";
  }
}

/** `/proc/self/fd/<dirFd>/<name>`: the one name `name` inside the open directory `dirFd`. */
export function at(dirFd: number, name: string): string {
  if (name === "" || name === "." || name === ".." || name.includes("/") || name.includes("\0")) {
    throw new ScopedPathError("EINVAL", name, "not a single path component");
  }
  return `/proc/self/fd/${dirFd}/${name}`;
}

/** `/proc/self/fd/<fd>`: the inode `fd` holds (a directory to list, an O_PATH handle to change). */
export function self(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

export function errnoOf(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException).code;
}

/** lstat of `name` in `dirFd`, or undefined when nothing is there. */
export function lstatAt(dirFd: number, name: string): Stats | undefined {
  return lstatSync(at(dirFd, name), { throwIfNoEntry: false }) ?? undefined;
}

export function readlinkAt(dirFd: number, name: string): string {
  return readlinkSync(at(dirFd, name));
}

/** Opens the directory `name` in `dirFd`; a symlink there fails (ELOOP), never followed. */
export function openDirAt(dirFd: number, name: string): number {
  return openSync(at(dirFd, name), DIR_FLAGS);
}

/** The names in the open directory `dirFd`. */
export function readdirFd(dirFd: number): string[] {
  return readdirSync(self(dirFd));
}

/**
 * Opens the regular file `name` in `dirFd` for reading (held with O_PATH, checked, reopened
 * through its own descriptor). Undefined when it is not a regular file (any more) or is gone.
 */
export function openFileForReadAt(dirFd: number, name: string): { fd: number; stats: Stats } | undefined {
  let handle: number;
  try {
    handle = openSync(at(dirFd, name), O_PATH | constants.O_NOFOLLOW);
  } catch (e) {
    if (errnoOf(e) === "ENOENT") return undefined;
    throw e;
  }
  try {
    const stats = fstatSync(handle);
    if (!stats.isFile()) return undefined;
    return { fd: openSync(self(handle), constants.O_RDONLY), stats };
  } finally {
    closeSync(handle);
  }
}

/** Opens the directory `name` in `dirFd`, or undefined when it is not one (any more): a symlink, a file, gone. */
export function tryOpenDirAt(dirFd: number, name: string): number | undefined {
  try {
    return openDirAt(dirFd, name);
  } catch (e) {
    const code = errnoOf(e);
    if (code === "ELOOP" || code === "ENOTDIR" || code === "ENOENT") return undefined;
    throw e;
  }
}
