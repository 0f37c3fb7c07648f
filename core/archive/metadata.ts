/**
 * Ownership, mode, times and extended attributes of extracted entries, in the one order that
 * works: chown first (it clears setuid/setgid and `security.capability`), then chmod, then the
 * xattrs, then the times (writing xattrs does not touch mtime, but writing data does).
 *
 * Files and directories are changed through a descriptor opened with O_NOFOLLOW, so nothing is
 * ever changed through a symlink; symlinks themselves get `lchown`/`lutimes`/`lsetxattr`
 * (@napi-rs/xattr uses the `l*` calls), never chmod. xattr names come from `SCHILY.xattr.*` PAX
 * records; `trusted.overlay.*` ones are dropped (a layer must not be able to hand overlayfs
 * redirects or opaque markers other than through `.wh..wh..opq`). As Docker does, an xattr the
 * file system refuses with ENOTSUP or EPERM (user.* on a symlink) is skipped.
 */
import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  futimesSync,
  lchownSync,
  lutimesSync,
  openSync,
} from "node:fs";
import { xattr } from "../fs/xattr.js";
import { XATTR_PREFIX, xattrValue } from "./pax-binary.js";
import type { Header } from "tar-stream";

export interface EntryMeta {
  uid: number;
  gid: number;
  /** Permission bits including setuid, setgid and sticky. */
  mode: number;
  /** Seconds since the epoch, fractions kept when the PAX header has them. */
  mtime: number;
  atime: number;
  xattrs: [name: string, value: Buffer][];
}

/**
 * tar-stream's header as it really comes: `type` is null for kinds it does not know (GNU `S`
 * sparse files, volume labels), and `pax` holds the PAX records it decoded.
 */
export type TarHeader = Omit<Header, "type" | "pax"> & { type: Header["type"] | null; pax?: Record<string, string> | null };

function paxNumber(pax: Record<string, string> | null | undefined, key: string): number | undefined {
  const raw = pax?.[key];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : undefined;
}

/** The metadata an entry header asks for. */
export function entryMeta(h: TarHeader): EntryMeta {
  const mtime = paxNumber(h.pax, "mtime") ?? (h.mtime ? h.mtime.getTime() / 1000 : 0);
  const xattrs: [string, Buffer][] = [];
  for (const [key, value] of Object.entries(h.pax ?? {})) {
    if (!key.startsWith(XATTR_PREFIX)) continue;
    const name = key.slice(XATTR_PREFIX.length);
    if (name.startsWith("trusted.overlay.")) continue;
    xattrs.push([name, xattrValue(value)]);
  }
  return {
    uid: paxNumber(h.pax, "uid") ?? h.uid ?? 0,
    gid: paxNumber(h.pax, "gid") ?? h.gid ?? 0,
    mode: (h.mode ?? 0) & 0o7777,
    mtime,
    atime: paxNumber(h.pax, "atime") ?? mtime,
    xattrs,
  };
}

function ignorableXattrError(e: unknown): boolean {
  // napi-rs errors carry the errno only in the message: "... (os error 95)"
  const m = /\(os error (\d+)\)/.exec(e instanceof Error ? e.message : String(e));
  const errno = m ? Number(m[1]) : -1;
  return errno === 95 /* EOPNOTSUPP/ENOTSUP */ || errno === 1 /* EPERM */;
}

/** Sets xattrs on `path` itself (never through a symlink: lsetxattr). */
function setXattrs(path: string, xattrs: [string, Buffer][]): void {
  for (const [name, value] of xattrs) {
    try {
      xattr().setAttributeSync(path, name, value);
    } catch (e) {
      if (!ignorableXattrError(e)) throw new Error(`setting xattr ${name} on ${path}: ${(e as Error).message}`, { cause: e });
    }
  }
}

/** A regular file just written through the descriptor `fd` at `path`. */
export function applyFileMeta(fd: number, path: string, meta: EntryMeta): void {
  fchownSync(fd, meta.uid, meta.gid);
  fchmodSync(fd, meta.mode);
  setXattrs(path, meta.xattrs);
  futimesSync(fd, meta.atime, meta.mtime);
}

function openDir(path: string): number {
  return openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
}

/** A directory (known to be one, not a symlink): all but the times, which come last of all. */
export function applyDirMeta(path: string, meta: EntryMeta): void {
  const fd = openDir(path);
  try {
    fchownSync(fd, meta.uid, meta.gid);
    fchmodSync(fd, meta.mode);
    setXattrs(path, meta.xattrs);
  } finally {
    closeSync(fd);
  }
}

/** A directory's times, if `path` is still the directory `ino` (a later entry may have replaced it). */
export function applyDirTimes(path: string, ino: number, meta: EntryMeta): void {
  let fd: number;
  try {
    fd = openDir(path);
  } catch {
    return; // gone or replaced by a non-directory
  }
  try {
    if (fstatSync(fd).ino === ino) futimesSync(fd, meta.atime, meta.mtime);
  } finally {
    closeSync(fd);
  }
}

export function applySymlinkMeta(path: string, meta: EntryMeta): void {
  lchownSync(path, meta.uid, meta.gid);
  setXattrs(path, meta.xattrs);
  lutimesSync(path, meta.atime, meta.mtime);
}

/**
 * A device node or fifo just made at `path` by mknod. It is not opened (opening a device acts on
 * the device); extraction is sequential, so `path` is still the node made a moment ago.
 */
export function applyNodeMeta(path: string, meta: EntryMeta): void {
  lchownSync(path, meta.uid, meta.gid);
  chmodSync(path, meta.mode);
  setXattrs(path, meta.xattrs);
  lutimesSync(path, meta.atime, meta.mtime);
}
