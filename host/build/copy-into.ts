/**
 * Writes a COPY's or ADD's sources into a mounted root file system, by Docker's rules:
 * - a folder's contents go into the destination (the folder itself is not copied): an existing
 *   destination keeps its mode, owner and times, a new one is made 0755 for the copy's owner;
 * - a file goes to the destination path, or into it when the destination ends with `/` or is
 *   a folder already;
 * - owners are `--chown`'s; without it, a `COPY --from`'s files and folders keep the owners they
 *   have in their image (Docker 20.10 and later: its `preserveOwnership`), and the context's
 *   are root's (0:0); a folder made for the copy is root's then. Modes are `--chmod`'s, else
 *   the source's; times are the source's.
 * The files travel as a tar into core's scoped extraction (host/containers/files/scoped-extract.ts):
 * the destination is resolved inside the root (the image's symlinks followed as a chroot would),
 * and nothing lands outside it, whatever the image holds.
 */
import { createReadStream, readlinkSync } from "node:fs";
import { posix } from "node:path";
import { Readable } from "node:stream";
import { pack as tarPack } from "tar-stream";

type Headers = Parameters<ReturnType<typeof tarPack>["entry"]>[0];
import { containerOwner, type IdMap } from "../../core/userns/id-map.js";
import { lstatAt, ScopedRoot } from "../containers/files/scoped-fs.js";
import { extractScoped } from "../containers/files/scoped-extract.js";
import { walkSource, type CopySource } from "./copy-sources.js";

export interface CopyOwnership {
  owner?: { uid: number; gid: number };
  /** Without `owner`: keep the sources' owners (read on the host, so mapped back through `idMap`). */
  preserve?: boolean;
  mode?: number;
}

/** Whether `path` is a folder in the root (symlinks followed inside it). */
function isDirIn(root: ScopedRoot, path: string): boolean {
  try {
    const r = root.resolve(path, { followLast: true });
    try {
      if (r.name === "") return true;
      return lstatAt(r.dirFd, r.name)?.isDirectory() ?? false;
    } finally {
      r.close();
    }
  } catch {
    return false;
  }
}

/** Where each source goes: `dest` is absolute and cleaned, `destIsDir` when it ends with `/`. */
function targetOf(root: ScopedRoot, s: CopySource, dest: string, destIsDir: boolean): string {
  if (s.stats.isDirectory()) return dest;
  if (destIsDir || isDirIn(root, dest)) return posix.join(dest, posix.basename(s.path));
  return dest;
}

/** The owner an entry is written with (see the file's comment). */
function ownerOf(st: { uid: number; gid: number }, own: CopyOwnership, idMap?: IdMap): { uid: number; gid: number } {
  if (own.owner) return own.owner;
  if (!own.preserve) return { uid: 0, gid: 0 };
  return idMap ? containerOwner(idMap, { uid: st.uid, gid: st.gid }) : { uid: st.uid, gid: st.gid };
}

async function* tarOf(root: ScopedRoot, sources: readonly CopySource[], dest: string, destIsDir: boolean, own: CopyOwnership, idMap?: IdMap): AsyncGenerator<Buffer> {
  const pack = tarPack();
  const out = Readable.from(pack as unknown as AsyncIterable<Buffer>);
  const write = async () => {
    for (const s of sources) {
      const target = targetOf(root, s, dest, destIsDir);
      const existed = s.stats.isDirectory() && isDirIn(root, target);
      for (const e of walkSource(s)) {
        const name = (e.rel ? posix.join(target, e.rel) : target).replace(/^\/+/, "") || ".";
        const st = e.stats;
        const owner = ownerOf(st, own, idMap);
        const header: Headers = { name, mode: own.mode ?? st.mode & 0o7777, uid: owner.uid, gid: owner.gid, mtime: st.mtime };
        if (st.isDirectory()) {
          if (e.rel === "") {
            // the source folder itself is not copied: an existing destination keeps what it is,
            // a new one is made 0755 for the copy's owner (root's when none is asked), as
            // Docker's MkdirAllAndChown makes it
            const made = own.owner ?? { uid: 0, gid: 0 };
            if (!existed && name !== ".") await entry(pack, { ...header, uid: made.uid, gid: made.gid, type: "directory", mode: 0o755, mtime: new Date() });
            continue;
          }
          await entry(pack, { ...header, type: "directory" });
        } else if (st.isSymbolicLink()) {
          await entry(pack, { ...header, type: "symlink", linkname: readlinkSync(e.hostPath), mode: 0o777 });
        } else {
          await entry(pack, { ...header, type: "file", size: st.size }, e.hostPath);
        }
      }
    }
    pack.finalize();
  };
  const writing = write().catch((err: Error) => pack.destroy(err));
  yield* out;
  await writing;
}

function entry(pack: ReturnType<typeof tarPack>, header: Headers, file?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const sink = pack.entry(header, (err) => (err ? reject(err) : resolve()));
    if (!file) return;
    const input = createReadStream(file);
    input.once("error", (err) => {
      sink.destroy(err);
      reject(err);
    });
    input.pipe(sink);
  });
}

/** Copies the sources into the root mounted at `rootDir`. */
export async function copyInto(rootDir: string, sources: readonly CopySource[], dest: string, destIsDir: boolean, own: CopyOwnership, idMap?: IdMap): Promise<void> {
  const root = ScopedRoot.open(rootDir);
  try {
    const top = root.openDir("/");
    try {
      await extractScoped(top, Readable.from(tarOf(root, sources, dest, destIsDir, own, idMap)), { noOverwriteDirNonDir: false, idMap });
    } finally {
      top.close();
    }
  } finally {
    root.close();
  }
}

/** Extracts an archive (a tar, decompressed already) into `dest` of the root, its owners kept (ADD of a local archive). */
export async function extractInto(rootDir: string, tar: Readable, dest: string, idMap?: IdMap): Promise<void> {
  const root = ScopedRoot.open(rootDir);
  try {
    const r = root.resolve(dest, { followLast: true, create: true });
    r.close();
    const dir = root.openDir(dest);
    try {
      await extractScoped(dir, tar, { noOverwriteDirNonDir: false, idMap });
    } finally {
      dir.close();
    }
  } finally {
    root.close();
  }
}
