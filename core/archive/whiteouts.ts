/**
 * OCI whiteouts, turned into what the storage driver keeps on disk.
 *
 * In the tar, `D/.wh.NAME` deletes `D/NAME` of the layers below and `D/.wh..wh..opq` hides all
 * of `D`'s contents below. Both apply to the layers below only (OCI image spec): what this same
 * layer writes is never hidden by its own whiteouts, wherever in the tar they come.
 * - "overlay": `.wh.NAME` becomes a 0:0 character device at `D/NAME` (overlayfs's whiteout),
 *   owned as the whiteout entry says; `.wh..wh..opq` becomes `trusted.overlay.opaque=y` on `D`
 *   (made if missing).
 * - "remove" (drivers that keep a full copy of the parent in the layer folder): `.wh.NAME`
 *   deletes `D/NAME` recursively; `.wh..wh..opq` deletes everything in `D` that this layer has
 *   not written so far. The rule for ordering: an opaque marker removes what was there before
 *   this layer, so entries of this layer under `D` that come before the marker in the tar stay,
 *   and entries after it land in the emptied `D`.
 * - "oci" (fuse-overlayfs, which reads whiteouts in this form): `.wh.NAME` and `.wh..wh..opq`
 *   stay what they are, empty files (owned and dated as the entry says); this needs neither
 *   mknod nor `trusted.*` attributes. A `.wh.NAME` whose `NAME` this layer writes too (before or
 *   after it in the tar) is not kept.
 * Other `.wh..wh.*` names (aufs bookkeeping) are skipped. Only "oci" writes whiteouts as files.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { lstatOrNull, type ApplyOptions, type LayerWriter } from "./layer-writer.js";
import type { EntryMeta } from "./metadata.js";
import { xattr } from "../fs/xattr.js";
import { LayerEntryError } from "./safe-path.js";

export const WHITEOUT_PREFIX = ".wh.";
export const OPAQUE_MARKER = ".wh..wh..opq";
const META_PREFIX = ".wh..wh.";

export type Whiteout = { kind: "opaque" } | { kind: "delete"; name: string } | { kind: "skip" };

/** What a last path component means as a whiteout, or undefined for an ordinary name. */
export function classifyWhiteout(base: string): Whiteout | undefined {
  if (!base.startsWith(WHITEOUT_PREFIX)) return undefined;
  if (base === OPAQUE_MARKER) return { kind: "opaque" };
  if (base.startsWith(META_PREFIX)) return { kind: "skip" };
  return { kind: "delete", name: base.slice(WHITEOUT_PREFIX.length) };
}

/** Whether the entry becomes a device node (so it can join a mknod batch). */
export function whiteoutMakesNode(wh: Whiteout, mode: ApplyOptions["whiteouts"]): boolean {
  return wh.kind === "delete" && mode === "overlay";
}

/** Applies the whiteout entry `entry`, whose cleaned parts are `parts` (last one the marker). */
export async function applyWhiteout(w: LayerWriter, entry: string, parts: string[], wh: Whiteout, meta: EntryMeta): Promise<void> {
  const dirParts = parts.slice(0, -1);
  if (wh.kind === "skip") return;
  if (wh.kind === "delete") {
    const name = wh.name;
    if (name === "." || name === ".." || name.includes("/")) throw new LayerEntryError(entry, "a whiteout for an invalid name");
    const target = [...dirParts, name];
    if (w.opts.whiteouts === "overlay") {
      const r = w.resolve(entry, target);
      if (w.wroteHere(r.rel)) return;
      const whiteoutMeta: EntryMeta = { ...meta, mode: 0, xattrs: [] };
      await w.node(entry, target, dirParts.join("/"), { type: "c", major: 0, minor: 0 }, whiteoutMeta);
      return;
    }
    if (w.opts.whiteouts === "oci") {
      const r = w.resolve(entry, target);
      if (w.wroteHere(r.rel)) return;
      await emptyFile(w, entry, parts, meta);
      w.keepWhiteout(w.resolve(entry, parts).rel, r.rel);
      return;
    }
    const r = w.resolver.resolve(entry, target, { create: false, followSymlinks: true });
    if (!r || w.wroteHere(r.rel)) return;
    await w.remove(r.path);
    return;
  }
  // opaque
  if (w.opts.whiteouts === "oci") {
    await emptyFile(w, entry, parts, meta);
    return;
  }
  if (w.opts.whiteouts === "overlay") {
    const dir = w.resolver.resolveDir(entry, dirParts, { create: true, followSymlinks: true });
    const rel = dir!.join("/");
    if (rel !== "") w.markWritten(rel);
    xattr().setAttributeSync(join(w.root, ...dir!), "trusted.overlay.opaque", "y");
    return;
  }
  const dir = w.resolver.resolveDir(entry, dirParts, { create: false, followSymlinks: true });
  if (!dir) return;
  await prune(w, dir.join("/"));
}

/** A whiteout kept as the empty file it is (whatever data its entry has is skipped). */
async function emptyFile(w: LayerWriter, entry: string, parts: string[], meta: EntryMeta): Promise<void> {
  const data = await w.file(entry, parts, { ...meta, xattrs: [] }, 0);
  await data.end();
}

/** Deletes what is under the directory `rel` that this layer did not write. */
async function prune(w: LayerWriter, rel: string): Promise<void> {
  const abs = rel === "" ? w.root : join(w.root, rel);
  for (const name of readdirSync(abs)) {
    const childRel = rel === "" ? name : `${rel}/${name}`;
    const path = join(abs, name);
    if (!w.wroteHere(childRel)) {
      await w.remove(path);
      continue;
    }
    const st = lstatOrNull(path);
    if (st?.isDirectory()) await prune(w, childRel);
  }
}
