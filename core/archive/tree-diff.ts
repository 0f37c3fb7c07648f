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
 * Order: depth-first, names in byte order, as packLayer walks. File system calls are
 * synchronous (see pack-layer.ts); the walk yields to the event loop every few thousand entries
 * so that a daemon comparing a large tree still answers.
 */
import { getAttributeSync } from "@napi-rs/xattr";
import { lstatSync, readdirSync, readlinkSync, type BigIntStats } from "node:fs";
import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";

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

const S_IFMT = 0o170000n;
const S_IFDIR = 0o040000n;
const CAPABILITY = "security.capability";

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** Equal times, or the same second where one side has no fraction (it came from a tar, or a filesystem without nanoseconds), as Docker compares. */
function sameTime(a: bigint, b: bigint): boolean {
  const second = 1_000_000_000n;
  return a === b || (a / second === b / second && (a % second === 0n || b % second === 0n));
}

function isDir(st: BigIntStats): boolean {
  return (st.mode & S_IFMT) === S_IFDIR;
}

function capability(path: string): string {
  try {
    return getAttributeSync(path, CAPABILITY)?.toString("base64") ?? "";
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

  /** Whether a non-directory (or a type change) differs. */
  private differs(oldAbs: string, newAbs: string, o: BigIntStats, n: BigIntStats): boolean {
    if (o.mode !== n.mode || o.uid !== n.uid || o.gid !== n.gid || o.rdev !== n.rdev) return true;
    if (o.size !== n.size || !sameTime(o.mtimeNs, n.mtimeNs)) return true;
    if (this.opts.snapshot && (o.ino !== n.ino || o.ctimeNs !== n.ctimeNs)) return true;
    if (n.isSymbolicLink()) return readlinkSync(oldAbs) !== readlinkSync(newAbs);
    // a snapshot's ctime already tells an attribute change; elsewhere, the one Docker compares
    return !this.opts.snapshot && n.isFile() && capability(oldAbs) !== capability(newAbs);
  }

  /** Everything under `newAbs`, as added. */
  async added(newAbs: string, rel: string): Promise<void> {
    for (const name of readdirSync(newAbs).sort(byteOrder)) {
      await this.tick();
      const path = `${rel}${name}`;
      this.out.push({ path, kind: "added" });
      const abs = join(newAbs, name);
      if (lstatSync(abs).isDirectory()) await this.added(abs, `${path}/`);
    }
  }

  /** The changes under two directories with the same path; `rel` is their path plus `/` (or ""). */
  async compare(newAbs: string, oldAbs: string, rel: string, newNames = readdirSync(newAbs), oldNames = readdirSync(oldAbs)): Promise<void> {
    const inNew = new Set(newNames);
    const inOld = new Set(oldNames);
    for (const name of [...new Set([...newNames, ...oldNames])].sort(byteOrder)) {
      await this.tick();
      const path = `${rel}${name}`;
      if (!inNew.has(name)) {
        this.out.push({ path, kind: "deleted" });
        continue;
      }
      const n = join(newAbs, name);
      const ns = lstatSync(n, { bigint: true });
      if (!inOld.has(name)) {
        this.out.push({ path, kind: "added" });
        if (isDir(ns)) await this.added(n, `${path}/`);
        continue;
      }
      const o = join(oldAbs, name);
      const os = lstatSync(o, { bigint: true });
      if (isDir(ns) && isDir(os)) {
        await this.directory(n, o, path, ns, os);
        continue;
      }
      if (this.differs(o, n, os, ns)) {
        this.out.push({ path, kind: "modified" });
        if (isDir(ns)) await this.added(n, `${path}/`); // a file became a directory
      }
    }
  }

  /** A directory in both trees: listed when it changed or holds changes, before them. */
  private async directory(n: string, o: string, path: string, ns: BigIntStats, os: BigIntStats): Promise<void> {
    const newNames = readdirSync(n);
    const oldNames = readdirSync(o);
    const replaced = this.opts.snapshot === true && ns.ino !== os.ino;
    const kept = new Set(oldNames);
    const emptied = oldNames.length > 1 && !newNames.some((name) => kept.has(name));
    if (replaced || emptied) {
      this.out.push({ path, kind: "modified", opaque: true });
      await this.added(n, `${path}/`);
      return;
    }
    const at = this.out.length;
    await this.compare(n, o, `${path}/`, newNames, oldNames);
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
  if (parent === undefined) await walk.added(layer, "");
  else await walk.compare(layer, parent, "");
  return walk.out;
}

/** Bytes of the regular files and number of inodes that a layer's `changes` hold (hard links once). */
export function changesUsage(layer: string, changes: readonly TreeChange[]): { size: number; inodes: number } {
  const seen = new Set<string>();
  let size = 0;
  for (const change of changes) {
    if (change.kind === "deleted") continue;
    const st = lstatSync(join(layer, change.path));
    const key = `${st.dev}:${st.ino}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (st.isFile()) size += st.size;
  }
  return { size, inodes: seen.size };
}
