/**
 * A tar of a path inside a container root, read through scoped-fs (never through a path string
 * the container could redirect): `GET /containers/{id}/archive` and `GET .../export`.
 *
 * The entry named by the caller comes first under `rebase` (Docker renames the resource's base
 * to the base of the requested path; export has no such entry), then, for a directory, its
 * contents depth-first in byte order. Kept: uid/gid, mode bits, mtime (seconds), symlink
 * targets, hard links within the tar, devices and fifos; sockets are skipped, as Docker does.
 * Owners are named as the daemon host names them (host-owner-names.ts), as Docker's are.
 * A file is read through a descriptor checked to be that regular file; one that shrinks while
 * it is read is padded with zeros so the tar stays whole, and entries the container removes or
 * swaps while the walk passes are left out.
 */
import { closeSync, fstatSync, type Stats } from "node:fs";
import { Readable } from "node:stream";
import { pack as tarPack, type Pack } from "tar-stream";
import { hostOwnerNames, type OwnerNames } from "../../../core/archive/host-owner-names.js";
import { installBinaryPax } from "../../../core/archive/pax-binary.js";
import { byteOrder, devNumbers, statsHeader, writeEntry, writeFileEntry, type Header } from "../../../core/archive/tar-entries.js";
import { lstatAt, openDirAt, openFileForReadAt, readdirFd, readlinkAt } from "./scoped-fs.js";
import type { IdMap } from "../../../core/userns/id-map.js";
/** Deepest directory nesting packed (a container could make one deeper than any stack). */
const MAX_DEPTH = 512;

export interface PackTarget {
  /** The open directory holding the entry (the entry itself when `name` is ""). */
  dirFd: number;
  name: string;
}

export interface ScopedPackOptions {
  /** Name of the first entry in the tar; "" for none (export: the root's contents only). */
  rebase: string;
  /** The daemon's user namespace map (`--userns-remap`): owners are written as the container ids the host ids stand for. */
  idMap?: IdMap;
  /** Called once when the tar is complete or failed: releases the descriptors and mounts. */
  release: () => void;
}

/** The tar of `target`; errors come out as stream errors. */
export function packScoped(target: PackTarget, opts: ScopedPackOptions): Readable {
  installBinaryPax();
  const pack = tarPack();
  const out = Readable.from(pack, { objectMode: false });
  const packer = new ScopedPacker(pack, opts.idMap);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    opts.release();
  };
  out.once("close", release);
  packer.top(target, opts.rebase).then(
    () => {
      release();
      pack.finalize();
    },
    (e: Error) => {
      release();
      pack.destroy(e);
    },
  );
  return out;
}

function childName(prefix: string, name: string): string {
  if (prefix === "") return name;
  return prefix.endsWith("/") ? prefix + name : `${prefix}/${name}`;
}

class ScopedPacker {
  /** dev:ino of files with more than one link, to the first name packed. */
  private readonly links = new Map<string, string>();
  private readonly names: OwnerNames = hostOwnerNames();

  constructor(
    private readonly pack: Pack,
    private readonly idMap?: IdMap,
  ) {}

  async top(target: PackTarget, rebase: string): Promise<void> {
    if (target.name === "") {
      const st = fstatSync(target.dirFd);
      if (rebase !== "") await this.entry({ ...this.base(dirName(rebase), st), type: "directory" });
      return this.walk(target.dirFd, rebase, 0);
    }
    const st = lstatAt(target.dirFd, target.name);
    if (!st) throw Object.assign(new Error(`${target.name}: no such file or directory`), { code: "ENOENT" });
    await this.add(target.dirFd, target.name, rebase, st, 0);
  }

  private async walk(dirFd: number, prefix: string, depth: number): Promise<void> {
    if (depth > MAX_DEPTH) throw new Error(`${prefix}: directories nested too deep`);
    for (const name of readdirFd(dirFd).sort(byteOrder)) {
      if (this.pack.destroyed) return;
      const st = lstatAt(dirFd, name);
      if (!st) continue; // removed meanwhile
      await this.add(dirFd, name, childName(prefix, name), st, depth + 1);
    }
  }

  private base(name: string, st: Stats): Header {
    // named by the ids on disk, before a user namespace's map, as Docker names them
    return { ...statsHeader(name, st, this.idMap), uname: this.names.user(st.uid), gname: this.names.group(st.gid) };
  }

  private async add(dirFd: number, name: string, tarName: string, st: Stats, depth: number): Promise<void> {
    if (st.isDirectory()) {
      let fd: number;
      try {
        fd = openDirAt(dirFd, name);
      } catch {
        return; // replaced by something else since the lstat: the container moved it away
      }
      try {
        const now = fstatSync(fd);
        await this.entry({ ...this.base(dirName(tarName), now), type: "directory" });
        await this.walk(fd, tarName, depth);
      } finally {
        closeSync(fd);
      }
      return;
    }
    if (st.isSocket()) return;
    const h = this.base(tarName, st);
    if (st.nlink > 1 && !st.isSymbolicLink()) {
      const key = `${st.dev}:${st.ino}`;
      const first = this.links.get(key);
      if (first !== undefined) return this.entry({ ...h, type: "link", linkname: first, size: 0 });
      this.links.set(key, tarName);
    }
    if (st.isFile()) return this.fileEntry(dirFd, name, tarName);
    if (st.isSymbolicLink()) {
      let target: string;
      try {
        target = readlinkAt(dirFd, name);
      } catch {
        return; // not a symlink any more
      }
      return this.entry({ ...h, type: "symlink", linkname: target });
    }
    if (st.isFIFO()) return this.entry({ ...h, type: "fifo" });
    const type = st.isCharacterDevice() ? "character-device" : "block-device";
    return this.entry({ ...h, type, ...devNumbers(st.rdev) });
  }

  private entry(h: Header): Promise<void> {
    return writeEntry(this.pack, h);
  }

  private async fileEntry(dirFd: number, name: string, tarName: string): Promise<void> {
    const opened = openFileForReadAt(dirFd, name);
    if (!opened) return; // not a regular file any more
    try {
      await writeFileEntry(this.pack, { ...this.base(tarName, opened.stats), type: "file", size: opened.stats.size }, opened.fd);
    } finally {
      closeSync(opened.fd);
    }
  }
}

/** A directory entry's name ends in `/` (the root's is `/` itself). */
function dirName(name: string): string {
  return name.endsWith("/") ? name : `${name}/`;
}
