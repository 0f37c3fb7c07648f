/**
 * A tar of a path inside a container root, read through scoped-fs (never through a path string
 * the container could redirect): `GET /containers/{id}/archive` and `GET .../export`.
 *
 * The entry named by the caller comes first under `rebase` (Docker renames the resource's base
 * to the base of the requested path; export has no such entry), then, for a directory, its
 * contents depth-first in byte order. Kept: uid/gid, mode bits, mtime (seconds), symlink
 * targets, hard links within the tar, devices and fifos; sockets are skipped, as Docker does.
 * A file is read through a descriptor checked to be that regular file; one that shrinks while
 * it is read is padded with zeros so the tar stays whole, and entries the container removes or
 * swaps while the walk passes are left out.
 */
import { closeSync, fstatSync, readSync, type Stats } from "node:fs";
import { once } from "node:events";
import { Readable } from "node:stream";
import { pack as tarPack, type Header as TarStreamHeader, type Pack } from "tar-stream";
import { installBinaryPax } from "../../../core/archive/pax-binary.js";
import { lstatAt, openDirAt, openFileForReadAt, readdirFd, readlinkAt } from "./scoped-fs.js";
import { containerOwner, type IdMap } from "../../../core/userns/id-map.js";

type Header = Partial<Omit<TarStreamHeader, "pax">> & { name: string; pax?: Record<string, string> };

const READ_CHUNK = 1024 * 1024;
const USTAR_MAX_ID = 0o777777;
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

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

function devNumbers(rdev: number): { devmajor: number; devminor: number } {
  const r = BigInt(rdev);
  return {
    devmajor: Number(((r >> 8n) & 0xfffn) | ((r >> 32n) & ~0xfffn)),
    devminor: Number((r & 0xffn) | ((r >> 12n) & ~0xffn)),
  };
}

function childName(prefix: string, name: string): string {
  if (prefix === "") return name;
  return prefix.endsWith("/") ? prefix + name : `${prefix}/${name}`;
}

class ScopedPacker {
  /** dev:ino of files with more than one link, to the first name packed. */
  private readonly links = new Map<string, string>();

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
    const { uid, gid } = this.idMap ? containerOwner(this.idMap, st) : st;
    const h: Header = {
      name,
      // tar-stream replaces a mode of 0 with its default; the type bits keep it non-zero and
      // are masked off when the header is written
      mode: st.mode,
      uid,
      gid,
      mtime: new Date(Math.floor(st.mtimeMs / 1000) * 1000),
    };
    const pax: Record<string, string> = {};
    if (uid > USTAR_MAX_ID) pax.uid = String(uid);
    if (gid > USTAR_MAX_ID) pax.gid = String(gid);
    if (Object.keys(pax).length > 0) h.pax = pax;
    return h;
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

  /** An entry without data (an empty body for files, or tar-stream waits for one). */
  private entry(h: Header): Promise<void> {
    return new Promise((res, rej) => {
      const done = (err?: Error | null) => (err ? rej(err) : res());
      if (h.type === "file") this.pack.entry(h, Buffer.alloc(0), done);
      else this.pack.entry(h, done);
    });
  }

  private async fileEntry(dirFd: number, name: string, tarName: string): Promise<void> {
    const opened = openFileForReadAt(dirFd, name);
    if (!opened) return; // not a regular file any more
    const { fd, stats } = opened;
    try {
      const h: Header = { ...this.base(tarName, stats), type: "file", size: stats.size };
      if (stats.size === 0) return await this.entry(h);
      let sink!: ReturnType<Pack["entry"]>;
      const finished = new Promise<void>((res, rej) => {
        sink = this.pack.entry(h, (err) => (err ? rej(err) : res()));
      });
      let left = stats.size;
      while (left > 0) {
        const buf = Buffer.alloc(Math.min(left, READ_CHUNK)); // a new one each time: the pack keeps it
        const n = readSync(fd, buf, 0, buf.length, null);
        left -= n === 0 ? buf.length : n; // shrank: the rest stays zeros
        if (!sink.write(n === 0 || n === buf.length ? buf : buf.subarray(0, n))) {
          await Promise.race([once(sink as unknown as NodeJS.EventEmitter, "drain"), finished]);
        }
      }
      (sink as unknown as NodeJS.WritableStream).end();
      await finished;
    } finally {
      closeSync(fd);
    }
  }
}

/** A directory entry's name ends in `/` (the root's is `/` itself). */
function dirName(name: string): string {
  return name.endsWith("/") ? name : `${name}/`;
}
