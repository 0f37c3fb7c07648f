/**
 * `treeChanges`: what a layer's tree changed against its parent's tree, for the storage drivers
 * that keep every layer as a whole tree (a snapshot or a copy of its parent, then the layer's
 * own changes) and so cannot read a layer's changes off the disk as overlay2 does. `packChanges`
 * (pack-layer.ts) turns the list into a layer tar in the OCI form.
 *
 * The comparison is Docker's "naive diff": a path only in the layer is added; only in the
 * parent, deleted (a `.wh.NAME` whiteout); in both, modified when its type, mode, owner or
 * device differ, or (not for directories, whose size and mtime say nothing) its size, mtime
 * (to the nanosecond, unless one side has whole seconds only) or symlink target, or its
 * `security.capability`. A directory that holds
 * changes is listed too (before them), so that the tar carries its metadata.
 *
 * With `snapshot` (btrfs and zfs snapshots keep every inode's number and ctime until it
 * changes), a changed ctime or a new inode number is a change too: a file rewritten with the
 * same size and mtime, or an extended attribute set, still shows. A directory whose inode
 * number changed was deleted and made again: it is listed `opaque` (all the parent's contents
 * under it hidden) and everything in it as added.
 *
 * A directory that lost every entry it had and kept none of their names is also listed `opaque`
 * when it had more than one (one marker instead of a whiteout each: the same result).
 *
 * The layer may be a running container's, changing while it is compared (commit with
 * `--pause=false`, `docker diff`): both trees are opened once and walked one name at a time
 * through directories held open (core/fs/held.ts), so no symlink the container swaps in is
 * followed; an entry that goes as the walk passes is left out (deleted, when the parent has
 * it), and one that changes is compared as what it is then.
 *
 * Order: depth-first, names in byte order, as packLayer walks. File system calls are
 * synchronous (see pack-layer.ts); the walk yields to the event loop every few thousand entries
 * so that a daemon comparing a large tree still answers.
 */
import { closeSync, openSync, type BigIntStats } from "node:fs";
import { setImmediate as nextTurn } from "node:timers/promises";
import { at, DIR_FLAGS, lstatAt, readdirFd, readlinkAt } from "../fs/at.js";
import { DirCursor, holdEntryBig, type HeldEntry } from "../fs/held.js";
import { xattr } from "../fs/xattr.js";
import { byteOrder } from "./tar-entries.js";

export type TreeChangeKind = "added" | "modified" | "deleted";

export interface TreeChange {
  /** The path under both roots, `/`-separated, without a leading `/`. */
  path: string;
  kind: TreeChangeKind;
  /** A directory that hides everything the parent had under it (`.wh..wh..opq`). */
  opaque?: boolean;
}

export interface TreeDiffOptions {
  /** The layer is a snapshot of the parent: inode numbers and ctimes are kept until changed. */
  snapshot?: boolean;
}

/** Entries compared between two turns of the event loop. */
const ENTRIES_PER_TURN = 4096;

const CAPABILITY = "security.capability";

/** Deepest directory nesting compared (each level holds two descriptors). */
const MAX_DEPTH = 2048;

type Held = HeldEntry<BigIntStats>;

/** Equal times, or the same second where one side has no fraction (it came from a tar, or a filesystem without nanoseconds), as Docker compares. */
function sameTime(a: bigint, b: bigint): boolean {
  const second = 1_000_000_000n;
  return a === b || (a / second === b / second && (a % second === 0n || b % second === 0n));
}

function capability(dirFd: number, name: string): string {
  try {
    return xattr().getAttributeSync(at(dirFd, name), CAPABILITY)?.toString("base64") ?? "";
  } catch {
    return ""; // a file system without xattrs, or a special file
  }
}

class Walk {
  private left = ENTRIES_PER_TURN;
  readonly out: TreeChange[] = [];

  constructor(private readonly opts: TreeDiffOptions) {}

  private async tick(): Promise<void> {
    if (--this.left > 0) return;
    this.left = ENTRIES_PER_TURN;
    await nextTurn();
  }

  /** Whether `name` (not a directory in both) differs between the directories `oldDir` and `newDir`. */
  private differs(oldDir: number, newDir: number, name: string, o: BigIntStats, n: BigIntStats): boolean {
    if (o.mode !== n.mode || o.uid !== n.uid || o.gid !== n.gid || o.rdev !== n.rdev) return true;
    if (o.size !== n.size || !sameTime(o.mtimeNs, n.mtimeNs)) return true;
    if (this.opts.snapshot && (o.ino !== n.ino || o.ctimeNs !== n.ctimeNs)) return true;
    if (n.isSymbolicLink()) {
      try {
        return readlinkAt(oldDir, name) !== readlinkAt(newDir, name);
      } catch {
        return true; // no longer a symlink: changed as the walk passed
      }
    }
    // a snapshot's ctime already tells an attribute change; elsewhere, the one Docker compares
    return !this.opts.snapshot && n.isFile() && capability(oldDir, name) !== capability(newDir, name);
  }

  /** Everything in the open directory `dirFd`, as added. */
  async added(dirFd: number, rel: string, depth: number): Promise<void> {
    if (depth > MAX_DEPTH) throw new Error(`${rel}: directories nested too deep to compare`);
    for (const name of readdirFd(dirFd).sort(byteOrder)) {
      await this.tick();
      const entry = holdEntryBig(dirFd, name);
      if (!entry) continue; // gone since the listing
      try {
        this.out.push({ path: `${rel}${name}`, kind: "added" });
        if (entry.dirFd !== undefined) await this.added(entry.dirFd, `${rel}${name}/`, depth + 1);
      } finally {
        entry.release();
      }
    }
  }

  /** The changes between two open directories with the same path; `rel` is their path plus `/` (or ""). */
  async compare(newDir: number, oldDir: number, rel: string, depth: number, newNames = readdirFd(newDir), oldNames = readdirFd(oldDir)): Promise<void> {
    if (depth > MAX_DEPTH) throw new Error(`${rel}: directories nested too deep to compare`);
    const inNew = new Set(newNames);
    const inOld = new Set(oldNames);
    for (const name of [...new Set([...newNames, ...oldNames])].sort(byteOrder)) {
      await this.tick();
      const path = `${rel}${name}`;
      const n = inNew.has(name) ? holdEntryBig(newDir, name) : undefined;
      if (!n) {
        if (inOld.has(name)) this.out.push({ path, kind: "deleted" });
        continue;
      }
      try {
        const o = inOld.has(name) ? holdEntryBig(oldDir, name) : undefined;
        try {
          await this.entry(newDir, oldDir, name, path, depth, n, o);
        } finally {
          o?.release();
        }
      } finally {
        n.release();
      }
    }
  }

  /** `name`, in the layer as `n` and in the parent as `o` (undefined: not there). */
  private async entry(newDir: number, oldDir: number, name: string, path: string, depth: number, n: Held, o: Held | undefined): Promise<void> {
    if (!o) {
      this.out.push({ path, kind: "added" });
      if (n.dirFd !== undefined) await this.added(n.dirFd, `${path}/`, depth + 1);
      return;
    }
    if (n.dirFd !== undefined && o.dirFd !== undefined) return this.directory(n.dirFd, o.dirFd, path, depth, n.stats, o.stats);
    if (this.differs(oldDir, newDir, name, o.stats, n.stats)) {
      this.out.push({ path, kind: "modified" });
      if (n.dirFd !== undefined) await this.added(n.dirFd, `${path}/`, depth + 1); // a file became a directory
    }
  }

  /** A directory in both trees: listed when it changed or holds changes, before them. */
  private async directory(n: number, o: number, path: string, depth: number, ns: BigIntStats, os: BigIntStats): Promise<void> {
    const newNames = readdirFd(n);
    const oldNames = readdirFd(o);
    const replaced = this.opts.snapshot === true && ns.ino !== os.ino;
    const kept = new Set(oldNames);
    const emptied = oldNames.length > 1 && !newNames.some((name) => kept.has(name));
    if (replaced || emptied) {
      this.out.push({ path, kind: "modified", opaque: true });
      await this.added(n, `${path}/`, depth + 1);
      return;
    }
    const at = this.out.length;
    await this.compare(n, o, `${path}/`, depth + 1, newNames, oldNames);
    const own = ns.mode !== os.mode || ns.uid !== os.uid || ns.gid !== os.gid;
    if (own || this.out.length > at) this.out.splice(at, 0, { path, kind: "modified" });
  }
}

/**
 * The changes of the tree at `layer` against the tree at `parent` (none: everything is added),
 * in tar order. Both must be directories that nothing writes to meanwhile.
 */
export async function treeChanges(layer: string, parent: string | undefined, opts: TreeDiffOptions = {}): Promise<TreeChange[]> {
  const walk = new Walk(opts);
  const layerFd = openSync(layer, DIR_FLAGS);
  try {
    if (parent === undefined) {
      await walk.added(layerFd, "", 0);
      return walk.out;
    }
    const parentFd = openSync(parent, DIR_FLAGS);
    try {
      await walk.compare(layerFd, parentFd, "", 0);
    } finally {
      closeSync(parentFd);
    }
  } finally {
    closeSync(layerFd);
  }
  return walk.out;
}

/**
 * Bytes and number of inodes that a layer's `changes` hold, as Docker's ChangesSize counts them:
 * everything but directories (a symlink counts its target's length), hard links once, what is
 * gone meanwhile not.
 */
export function changesUsage(layer: string, changes: readonly TreeChange[]): { size: number; inodes: number } {
  const seen = new Set<string>();
  let size = 0;
  const cursor = new DirCursor(openSync(layer, DIR_FLAGS));
  try {
    for (const change of changes) {
      if (change.kind === "deleted") continue;
      const parts = change.path.split("/");
      const name = parts.pop()!;
      const dirFd = cursor.dir(parts);
      const st = dirFd === undefined ? undefined : lstatAt(dirFd, name);
      if (!st) continue;
      const key = `${st.dev}:${st.ino}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (!st.isDirectory()) size += st.size;
    }
  } finally {
    cursor.close();
  }
  return { size, inodes: seen.size };
}
