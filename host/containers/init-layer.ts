/**
 * What Docker's init layer puts over every image, made here in the container's writable layer
 * where the image has nothing at that path, once: at the container's first start (or the first
 * look at the files of a container that never ran), as Docker's init layer is made once at the
 * create. What the container removes of it stays removed, as under Docker, where that removal is
 * a whiteout over its init layer (the mount points among them cannot go while it runs): `/.dockerenv`
 * (scripts and tools tell they run in a container by it), `/etc/mtab` -> `/proc/mounts`,
 * `/dev/console`, the empty `/etc/hosts`, `/etc/hostname` and `/etc/resolv.conf` the network
 * files are mounted on, and the folders `/dev/pts`, `/dev/shm`, `/proc`, `/sys`. A running
 * container sees most of `/dev` under the runtime's tmpfs; `docker export` and `docker cp` of it
 * stopped see them all, as with Docker. `docker diff` leaves them out (files/changes.ts), as
 * Docker's lists never show its init layer.
 *
 * The image is not trusted: every path is resolved inside the root (files/scoped-fs.ts), so a
 * symlink in the image (`/etc -> /host`) cannot make the daemon write outside the container.
 */
import { closeSync, fchmodSync, fchownSync, lchownSync } from "node:fs";
import { at, createFileAt, lstatAt, mkdirAt, readlinkAt, ScopedPathError, ScopedRoot, symlinkAt } from "./files/scoped-fs.js";

type Entry = { kind: "file" } | { kind: "dir" } | { kind: "symlink"; target: string };

/** What is made, by container path (layer-mount-points.ts keeps them out of a RUN step's and a commit's layer). */
export const ENTRIES: ReadonlyArray<[string, Entry]> = [
  ["/dev/pts", { kind: "dir" }],
  ["/dev/shm", { kind: "dir" }],
  ["/proc", { kind: "dir" }],
  ["/sys", { kind: "dir" }],
  ["/.dockerenv", { kind: "file" }],
  ["/dev/console", { kind: "file" }],
  ["/etc/mtab", { kind: "symlink", target: "/proc/mounts" }],
  // the network files' mount points: a container that never ran shows them empty, as Docker's does
  ["/etc/resolv.conf", { kind: "file" }],
  ["/etc/hosts", { kind: "file" }],
  ["/etc/hostname", { kind: "file" }],
];

/**
 * Makes the init layer's entries missing under `rootfs` (the container's mounted root), owned by
 * `owner` (the container's root: the remapped one under `--userns-remap`).
 */
export function makeInitLayerEntries(rootfs: string, owner: { uid: number; gid: number } = { uid: 0, gid: 0 }): void {
  const root = ScopedRoot.open(rootfs);
  try {
    for (const [path, entry] of ENTRIES) {
      let r;
      try {
        // the folders on the way made as `mkdir -p` would (the last component is not)
        r = root.resolve(path, { followLast: false, create: true, owner });
      } catch (err) {
        if (err instanceof ScopedPathError) continue; // a file where a folder would be: the image's to keep
        throw err;
      }
      try {
        if (r.name === "" || lstatAt(r.dirFd, r.name)) continue; // there already, as the image has it
        if (entry.kind === "dir") {
          mkdirAt(r.dirFd, r.name, 0o755);
          lchownSync(at(r.dirFd, r.name), owner.uid, owner.gid);
        } else if (entry.kind === "file") {
          const fd = createFileAt(r.dirFd, r.name);
          try {
            fchmodSync(fd, 0o755);
            fchownSync(fd, owner.uid, owner.gid);
          } finally {
            closeSync(fd);
          }
        } else {
          symlinkAt(entry.target, r.dirFd, r.name);
          lchownSync(at(r.dirFd, r.name), owner.uid, owner.gid);
        }
      } finally {
        r.close();
      }
    }
  } finally {
    root.close();
  }
}

/**
 * The bytes the init layer's symlinks (`/etc/mtab`) add to the usage of a container's writable
 * layer `diff` (a driver's diff folder), where they are kept unchanged: Docker keeps them in an
 * init layer of their own, under the writable one, so its `SizeRw` does not count them, and a
 * layer's usage counts a symlink's target length. Looked at inside the folder (ScopedRoot: the
 * folders are the container's to change). 0 for a driver without a diff folder.
 */
export function initLinkBytes(diff: string | undefined): number {
  if (!diff) return 0;
  let root: ScopedRoot;
  try {
    root = ScopedRoot.open(diff);
  } catch (err) {
    // the container was removed meanwhile (a `system df` or `ps -s` racing its removal)
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw err;
  }
  let bytes = 0;
  try {
    for (const [path, e] of ENTRIES) {
      if (e.kind !== "symlink") continue;
      let r;
      try {
        r = root.resolve(path, { followLast: false });
      } catch (err) {
        if (err instanceof ScopedPathError) continue; // a folder on the way is gone or no folder
        throw err;
      }
      try {
        if (lstatAt(r.dirFd, r.name)?.isSymbolicLink() && readlinkAt(r.dirFd, r.name) === e.target) bytes += Buffer.byteLength(e.target);
      } finally {
        r.close();
      }
    }
  } finally {
    root.close();
  }
  return bytes;
}
