/**
 * `packLayer`: a layer folder (a layer's own changes, as overlay2 keeps them) back into an
 * uncompressed tar in the OCI form, for `docker save`, commit and push. `packChanges`: the same
 * for a layer kept as a whole tree, from the list of its changes (tree-diff.ts).
 *
 * Entries come depth-first with each directory's names in byte order (as Go's filepath.Walk
 * gives them), so a directory always precedes its contents and the same tree always gives the
 * same tar. The folder itself has no entry. Kept: uid/gid, mode (setuid/setgid/sticky too),
 * mtime (seconds), symlink targets, hard links (an inode seen again becomes a link entry to the
 * first name), devices and fifos, and xattrs as `SCHILY.xattr.*` PAX records (but not
 * `trusted.overlay.*`, which is overlayfs's bookkeeping). Sockets are skipped, as Docker does.
 * With `whiteouts: "overlay"`, a 0:0 character device becomes an empty `.wh.NAME` file (mode
 * 0600) and a directory with `trusted.overlay.opaque=y` gets a `.wh..wh..opq` file right after
 * its own entry, with the directory's owner, permissions and mtime (both as Docker writes them).
 * `packChanges` writes the listed paths only (a directory's entry, not its contents: they are
 * listed on their own), a deleted path as an empty `.wh.NAME` file (mode 0600, root's, with the
 * mtime of the directory that held it, so that one tree always gives one tar), and an opaque
 * directory's `.wh..wh..opq` as above.
 * `whiteouts: "mixed"` reads a folder where both forms may be (fuse-overlayfs's: its upper
 * directory gets 0:0 devices where it may mknod and `.wh.NAME` files where not, and it marks an
 * opaque directory with an attribute — `trusted.overlay.opaque`, `user.overlay.opaque` or
 * `user.fuseoverlayfs.opaque` — and a `.wh..wh..opq` file at once): each deletion and opaque
 * directory comes out once, in the OCI form, `.wh.NAME` files as they are; a 0:0 device whose
 * own name starts with `.wh.` (fuse-overlayfs whiting out a whiteout's name) is left out, and so
 * are its bookkeeping attributes (`user.overlay.*`, `user.fuseoverlayfs.*`).
 * The folder is read as a running container's layer may be changing under it (commit with
 * `--pause=false`, `docker diff`): it is opened once and every lookup after that is one name in
 * a directory held open (core/fs/held.ts), so no symlink is ever followed, wherever the
 * container swaps one in; an entry that changes or goes while the walk passes is packed as what
 * it is then, or left out, and a file that shrinks is padded with zeros (tar-entries.ts).
 * `packChanges` opens each listed path's directories the same way, from the tree's root.
 * File system calls are synchronous, as in extraction (see safe-path.ts): through the thread pool,
 * packing /usr/share took 50 s instead of 2.7 s. The stream's back-pressure still paces the walk.
 */
import { closeSync, constants, fstatSync, openSync, type Stats } from "node:fs";
import { Readable } from "node:stream";
import { pack as tarPack, type Pack } from "tar-stream";
import { installBinaryPax, XATTR_PREFIX, xattrRecord } from "./pax-binary.js";
import { byteOrder, devNumbers, statsHeader, writeEntry, writeFileEntry, type Header } from "./tar-entries.js";
import type { TreeChange } from "./tree-diff.js";
import { OPAQUE_MARKER, WHITEOUT_PREFIX } from "./whiteouts.js";
import type { IdMap } from "../userns/id-map.js";
import { at, DIR_FLAGS, lstatAt, readdirFd, readlinkAt, self } from "../fs/at.js";
import { DirCursor, holdEntry, type HeldEntry } from "../fs/held.js";
import { xattr } from "../fs/xattr.js";

export interface PackOptions {
  /**
   * "overlay": the folder holds overlayfs whiteouts, to be turned into the OCI form. "mixed":
   * overlayfs whiteouts and OCI ones side by side (fuse-overlayfs). "none": nothing is a whiteout.
   */
  whiteouts: "overlay" | "mixed" | "none";
  /**
   * A user namespace's id map (`--userns-remap`): owners are written as the container ids the
   * host ids stand for, so the tar is what it would be without the map (whiteouts, which
   * overlayfs makes 0:0, are written as they are).
   */
  idMap?: IdMap;
}

/** Extended attributes that are an overlay's bookkeeping, never a file's: by mode. */
const BOOKKEEPING: Record<PackOptions["whiteouts"], readonly string[]> = {
  overlay: ["trusted.overlay."],
  none: ["trusted.overlay."],
  mixed: ["trusted.overlay.", "user.overlay.", "user.fuseoverlayfs."],
};

/** The attributes by which overlays (kernel, in a user namespace, fuse-overlayfs) mark an opaque directory. */
const OPAQUE_ATTRIBUTES = ["trusted.overlay.opaque", "user.overlay.opaque", "user.fuseoverlayfs.opaque"];

/** Deepest directory nesting packed (each level holds a descriptor; a container could nest deeper than any limit). */
const MAX_DEPTH = 2048;

/** A tar of everything under `dir`. Errors (an unreadable file) come out as stream errors. */
export function packLayer(dir: string, opts: PackOptions): Readable {
  return packWith(opts, (packer) => packer.layer(dir));
}

/**
 * A tar of the `changes` (in their order) of the tree at `root`: its layer tar in the OCI form;
 * with `idMap`, owners written as the container ids the host ids stand for (see PackOptions).
 */
export function packChanges(root: string, changes: readonly TreeChange[], idMap?: IdMap): Readable {
  return packWith({ whiteouts: "none", idMap }, (packer) => packer.changes(root, changes));
}

function packWith(opts: PackOptions, fill: (packer: Packer) => Promise<void>): Readable {
  installBinaryPax();
  const pack = tarPack();
  const out = Readable.from(pack, { objectMode: false });
  fill(new Packer(pack, opts)).then(
    () => pack.finalize(),
    (e: Error) => pack.destroy(e),
  );
  return out;
}

class Packer {
  /** dev:ino of files with more than one link, to the first name packed. */
  private readonly links = new Map<string, string>();

  constructor(
    private readonly pack: Pack,
    private readonly opts: PackOptions,
  ) {}

  /** Everything under the folder `dir` (a path the driver names: the walk starts from its descriptor). */
  async layer(dir: string): Promise<void> {
    const fd = openSync(dir, DIR_FLAGS);
    try {
      await this.walk(fd, "", 0);
    } finally {
      closeSync(fd);
    }
  }

  private async walk(dirFd: number, rel: string, depth: number): Promise<void> {
    if (depth > MAX_DEPTH) throw new Error(`${rel}: directories nested too deep to pack`);
    for (const name of readdirFd(dirFd).sort(byteOrder)) {
      if (this.pack.destroyed) return;
      const childRel = rel === "" ? name : `${rel}/${name}`;
      const held = holdEntry(dirFd, name, { openFiles: true });
      if (!held) continue; // gone since the listing
      try {
        await this.add(dirFd, name, childRel, held);
        if (held.dirFd !== undefined) await this.walk(held.dirFd, childRel, depth + 1);
      } finally {
        held.release();
      }
    }
  }

  async changes(root: string, changes: readonly TreeChange[]): Promise<void> {
    const cursor = new DirCursor(openSync(root, DIR_FLAGS));
    try {
      for (const change of changes) {
        if (this.pack.destroyed) return;
        const parts = change.path.split("/");
        const name = parts.pop()!;
        const dirFd = cursor.dir(parts);
        if (dirFd === undefined) continue; // a directory on the way is not one any more: nothing of it is read
        if (change.kind === "deleted") {
          const dir = change.path.slice(0, change.path.length - name.length);
          const mtime = fstatSync(dirFd).mtimeMs;
          const h: Header = { name: `${dir}${WHITEOUT_PREFIX}${name}`, mode: constants.S_IFREG | 0o600, uid: 0, gid: 0, mtime: new Date(Math.floor(mtime / 1000) * 1000) };
          await writeEntry(this.pack, { ...h, type: "file", size: 0 });
          continue;
        }
        const held = holdEntry(dirFd, name, { openFiles: true });
        if (!held) continue;
        try {
          await this.add(dirFd, name, change.path, held); // a directory's contents are listed on their own
          if (change.opaque && held.dirFd !== undefined) await this.opaqueMarker(change.path, held);
        } finally {
          held.release();
        }
      }
    } finally {
      cursor.close();
    }
  }

  /** `.wh..wh..opq` right after its directory's entry, with the directory's owner, permissions and mtime. */
  private opaqueMarker(rel: string, dir: HeldEntry<Stats>): Promise<void> {
    const st = dir.stats;
    const h = this.base(`${rel}/${OPAQUE_MARKER}`, st, undefined);
    return writeEntry(this.pack, { ...h, type: "file", mode: constants.S_IFREG | (st.mode & 0o777), size: 0 });
  }

  /** The header of an entry; with `xattrs`, its extended attributes (read there, never following a symlink) as PAX records. */
  private base(name: string, st: Stats, xattrs: Attributes | undefined, whiteout = false): Header {
    const h = statsHeader(name, st, whiteout ? undefined : this.opts.idMap);
    if (xattrs !== undefined) {
      const pax: Record<string, string> = { ...h.pax };
      const bookkeeping = BOOKKEEPING[this.opts.whiteouts];
      for (const [key, value] of readAttributes(xattrs)) {
        if (!bookkeeping.some((prefix) => key.startsWith(prefix))) pax[XATTR_PREFIX + key] = xattrRecord(value);
      }
      if (Object.keys(pax).length > 0) h.pax = pax;
    }
    return h;
  }

  /** The entry for `name` in `dirFd`, as `held` has it; a directory's contents are the caller's. */
  private async add(dirFd: number, name: string, rel: string, held: HeldEntry<Stats>): Promise<void> {
    const st = held.stats;
    const xattrPath: Attributes = { dirFd, name, dir: held.dirFd };
    const mixed = this.opts.whiteouts === "mixed";
    const overlay = this.opts.whiteouts === "overlay" || mixed;
    if (st.isCharacterDevice() && st.rdev === 0 && overlay) {
      if (mixed && name.startsWith(WHITEOUT_PREFIX)) return;
      const dir = rel.slice(0, rel.length - name.length);
      const h = this.base(`${dir}${WHITEOUT_PREFIX}${name}`, st, undefined, true);
      return writeEntry(this.pack, { ...h, type: "file", mode: constants.S_IFREG | 0o600, size: 0 });
    }
    if (mixed && name === OPAQUE_MARKER && st.isFile()) return; // given right after its directory
    if (held.dirFd !== undefined) {
      await writeEntry(this.pack, { ...this.base(`${rel}/`, st, xattrPath), type: "directory" });
      if (overlay && this.opaque(held.dirFd, mixed)) await this.opaqueMarker(rel, held);
      return;
    }
    if (st.isSocket()) return;
    const h = this.base(rel, st, xattrPath);
    if (st.nlink > 1) {
      const key = `${st.dev}:${st.ino}`;
      const first = this.links.get(key);
      if (first !== undefined) return writeEntry(this.pack, { ...h, type: "link", linkname: first, size: 0 });
      this.links.set(key, rel);
    }
    if (held.fileFd !== undefined) return writeFileEntry(this.pack, { ...h, type: "file", size: st.size }, held.fileFd);
    if (st.isSymbolicLink()) {
      let target: string;
      try {
        target = readlinkAt(dirFd, name);
      } catch {
        return; // not a symlink any more: the container changed it as the walk passed
      }
      return writeEntry(this.pack, { ...h, type: "symlink", linkname: target });
    }
    if (st.isFIFO()) return writeEntry(this.pack, { ...h, type: "fifo" });
    if (st.isFile()) return; // (held open with openFiles: not reached)
    const type = st.isCharacterDevice() ? "character-device" : "block-device";
    return writeEntry(this.pack, { ...h, type, ...devNumbers(st.rdev) });
  }

  /** Whether the open directory `dirFd` hides what the layers below hold there. */
  private opaque(dirFd: number, mixed: boolean): boolean {
    const path = `${self(dirFd)}/.`;
    if (!mixed) return xattr().getAttributeSync(path, "trusted.overlay.opaque")?.toString() === "y";
    if (lstatAt(dirFd, OPAQUE_MARKER)?.isFile()) return true;
    return OPAQUE_ATTRIBUTES.some((key) => xattr().getAttributeSync(path, key)?.toString() === "y");
  }
}

/** Where an entry's extended attributes are read: `name` in the open directory `dirFd`, or the open directory `dir` itself. */
interface Attributes {
  dirFd: number;
  name: string;
  dir?: number;
}

/**
 * The extended attributes of an entry, in byte order of their names. @napi-rs/xattr's calls do
 * not follow a symlink in the last place; a directory's are read through its own descriptor
 * (`/proc/self/fd/<fd>/.`). An entry whose name went as the walk passed has none.
 */
function readAttributes(where: Attributes): [string, Buffer][] {
  const path = where.dir !== undefined ? `${self(where.dir)}/.` : at(where.dirFd, where.name);
  try {
    const out: [string, Buffer][] = [];
    for (const key of xattr().listAttributesSync(path).sort(byteOrder)) {
      const value = xattr().getAttributeSync(path, key);
      if (value) out.push([key, value]);
    }
    return out;
  } catch (e) {
    // ENOENT, which the binding gives as Rust's io::Error text: the name went (perhaps to come back) as the walk passed
    if (where.dir === undefined && /\(os error 2\)$/.test((e as Error).message)) return [];
    throw e;
  }
}
