/**
 * What a layer changed, found by comparing its whole tree with its parent's: the diff of a
 * driver that keeps full copies (a snapshot driver: zfs, btrfs), which has no upper directory
 * to pack. Docker calls this a naive diff.
 *
 * An entry counts as changed, as Docker judges it, when its type or permissions, owner, device
 * numbers or `security.capability` differ, or (for anything but a directory) its size or
 * modification time does; a directory's own size and time say nothing. A directory is listed
 * when it changed itself or anything under it did, so that its metadata travels with its
 * contents. A path present in the parent only is a deletion (a `.wh.` whiteout in the tar), and
 * a deleted directory is one deletion. The list is in tar order: depth first, each directory's
 * names in byte order, a directory before its contents. A naive diff never gives an opaque
 * marker: a directory whose old contents are gone shows one whiteout per old name.
 */
import { getAttributeSync } from "@napi-rs/xattr";
import { lstatSync, readdirSync, type BigIntStats } from "node:fs";
import { join } from "node:path";

export type ChangeKind = "add" | "modify" | "delete";

export interface TreeChange {
  /** The path relative to the tree, `/`-separated, no leading `./`. */
  rel: string;
  kind: ChangeKind;
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

const lstatBig = (path: string): BigIntStats | undefined => lstatSync(path, { bigint: true, throwIfNoEntry: false });

/** A file capability is part of what a file is (ping without it breaks); only regular files carry one. */
function capability(path: string, st: BigIntStats): string {
  if (!st.isFile()) return "";
  try {
    return getAttributeSync(path, "security.capability")?.toString("hex") ?? "";
  } catch {
    return "";
  }
}

/** Docker's sameFsTime: equal, or equal seconds where one side has no nanoseconds (a filesystem or tar without them). */
function sameTime(a: bigint, b: bigint): boolean {
  if (a === b) return true;
  const second = 1_000_000_000n;
  return a / second === b / second && (a % second === 0n || b % second === 0n);
}

function differs(layerPath: string, l: BigIntStats, parentPath: string, p: BigIntStats): boolean {
  if (l.mode !== p.mode || l.uid !== p.uid || l.gid !== p.gid || l.rdev !== p.rdev) return true;
  if (!l.isDirectory() && (l.size !== p.size || !sameTime(l.mtimeNs, p.mtimeNs))) return true;
  return capability(layerPath, l) !== capability(parentPath, p);
}

/** Every entry under `abs` as added, in tar order. */
function addAll(abs: string, rel: string, out: TreeChange[]): void {
  for (const name of readdirSync(abs).sort(byteOrder)) {
    const childRel = rel === "" ? name : `${rel}/${name}`;
    out.push({ rel: childRel, kind: "add" });
    if (lstatBig(join(abs, name))?.isDirectory()) addAll(join(abs, name), childRel, out);
  }
}

/** Compares one directory level into `out` (empty when called); whether anything under it changed. */
function compareDir(layerAbs: string, parentAbs: string, rel: string, out: TreeChange[]): boolean {
  const names = new Set([...readdirSync(layerAbs), ...readdirSync(parentAbs)]);
  for (const name of [...names].sort(byteOrder)) {
    const childRel = rel === "" ? name : `${rel}/${name}`;
    const lPath = join(layerAbs, name);
    const pPath = join(parentAbs, name);
    const l = lstatBig(lPath);
    const p = lstatBig(pPath);
    if (!l) {
      out.push({ rel: childRel, kind: "delete" });
    } else if (!p) {
      out.push({ rel: childRel, kind: "add" });
      if (l.isDirectory()) addAll(lPath, childRel, out);
    } else if (l.isDirectory() && p.isDirectory()) {
      const below: TreeChange[] = [];
      if (compareDir(lPath, pPath, childRel, below) || differs(lPath, l, pPath, p)) {
        out.push({ rel: childRel, kind: "modify" });
        for (const c of below) out.push(c); // not push(...below): a big directory would overflow the stack
      }
    } else if (differs(lPath, l, pPath, p)) {
      out.push({ rel: childRel, kind: "modify" });
      if (l.isDirectory()) addAll(lPath, childRel, out); // a directory where the parent had a file
    }
  }
  return out.length > 0;
}

/** The changes of the tree `layer` against the tree `parent` (none: everything is added). */
export function treeChanges(layer: string, parent: string | undefined): TreeChange[] {
  const out: TreeChange[] = [];
  if (parent === undefined) addAll(layer, "", out);
  else compareDir(layer, parent, "", out);
  return out;
}

/** Bytes of the regular files and number of inodes a list of changes holds (hard links once). */
export function changesUsage(layer: string, changes: readonly TreeChange[]): { size: number; inodes: number } {
  const seen = new Set<bigint>();
  let size = 0;
  for (const c of changes) {
    if (c.kind === "delete") continue;
    const st = lstatBig(join(layer, c.rel));
    if (!st || seen.has(st.ino)) continue;
    seen.add(st.ino);
    if (st.isFile()) size += Number(st.size);
  }
  return { size, inodes: seen.size };
}
