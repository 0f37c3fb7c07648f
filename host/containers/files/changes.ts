/**
 * `GET /containers/{id}/changes` (`docker diff`): what the container's writable layer changed,
 * from the storage driver's `diff(id)` (core/contracts/storage.ts), so that every driver gives
 * the same answer.
 *
 * Each path of the diff is `Kind` 1 (added) when the image (the layer's parent chain) does not
 * have it and 0 (modified) when it does; a `.wh.NAME` whiteout is 2 (deleted). A directory the
 * image has is listed as modified when its owner or mode changed or when a change is under it
 * (the parents of changes, as Docker lists them), not merely for being in the layer. A directory
 * made opaque (`.wh..wh..opq`: deleted and made again) also lists the image's entries in it as
 * deleted. The mount points Docker keeps in a container's init layer (`/etc/hosts`,
 * `/etc/resolv.conf`, `/proc`...), which the runtime makes in the writable layer here, are left
 * out, as they never show in Docker's lists; so are the folders holding them (`/etc`, `/dev`)
 * where the image has none: Docker's init layer has them, so they count as the image's (listed
 * as changed only with a change under them), and one the container removed is listed deleted. The mount points of volumes and binds do show, as
 * in Docker's lists (Docker makes them in the writable layer too). The order is Docker's walk order (depth-first,
 * names in byte order). The image is looked at through a read-only mount of the parent chain,
 * with scoped-fs lookups (its symlinks resolved inside it).
 */
import { randomBytes } from "node:crypto";
import { fstatSync, type Stats } from "node:fs";
import { rmdir } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { extract } from "tar-stream";
import type { StorageDriver } from "../../../core/contracts/storage.js";
import { cleanEntryName } from "../../../core/archive/safe-path.js";
import { OPAQUE_MARKER, WHITEOUT_PREFIX } from "../../../core/archive/whiteouts.js";
import { mountSpecs, unmountAll } from "../../storage/mount-specs.js";
import { ENTRIES } from "../init-layer.js";
import { lstatAt, readdirFd, ScopedRoot } from "./scoped-fs.js";

export const enum ChangeKind {
  Modified = 0,
  Added = 1,
  Deleted = 2,
}

export interface Change {
  Path: string;
  Kind: ChangeKind;
}

interface DiffEntry {
  parts: string[];
  opaque?: boolean;
  deleted?: boolean;
  /** A directory's own metadata, to tell a changed directory from one that only holds changes. */
  dir?: { mode: number; uid: number; gid: number };
  /** Another entry's: to tell one of the init layer's files as it is made from one the container changed. */
  other?: { type: string; size: number; mode: number; link: string };
}

/** Docker's init layer: mount points under the container's own files, never in its changes. */
const INIT_LAYER_PATHS = new Set([
  "dev/pts", "dev/shm", "dev/console", "proc", "sys", ".dockerenv", "etc/resolv.conf", "etc/hosts", "etc/hostname", "etc/mtab",
]);

/** The folders of those paths: in Docker's init layer (root's, 0755) whether or not the image has them. */
const INIT_LAYER_DIRS = new Set([...INIT_LAYER_PATHS].flatMap((p) => p.split("/").slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join("/"))));

/** The entries of a layer diff: paths, whiteouts as deletions, opaque markers on their directory. */
async function readDiff(tar: Readable): Promise<DiffEntry[]> {
  const out: DiffEntry[] = [];
  const ex = extract({ allowUnknownFormat: true } as Parameters<typeof extract>[0]);
  tar.once("error", (e) => ex.destroy(e));
  tar.pipe(ex as unknown as NodeJS.WritableStream);
  for await (const entry of ex) {
    const parts = cleanEntryName(entry.header.name);
    entry.resume();
    if (parts.length === 0) continue;
    const base = parts[parts.length - 1];
    if (base === OPAQUE_MARKER) out.push({ parts: parts.slice(0, -1), opaque: true });
    else if (base.startsWith(`${WHITEOUT_PREFIX}${WHITEOUT_PREFIX}`)) continue; // aufs bookkeeping
    else if (base.startsWith(WHITEOUT_PREFIX)) out.push({ parts: [...parts.slice(0, -1), base.slice(WHITEOUT_PREFIX.length)], deleted: true });
    else if (entry.header.type === "directory") {
      const h = entry.header;
      out.push({ parts, dir: { mode: (h.mode ?? 0) & 0o7777, uid: h.uid ?? 0, gid: h.gid ?? 0 } });
    } else {
      const h = entry.header;
      out.push({ parts, other: { type: h.type ?? "file", size: h.size ?? 0, mode: (h.mode ?? 0) & 0o7777, link: h.linkname ?? "" } });
    }
  }
  return out;
}

function walkOrder(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = Buffer.compare(Buffer.from(a[i]), Buffer.from(b[i]));
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

/** The image's lstat of `parts` (a symlink is itself, whatever it points at), or undefined. */
function inImage(image: ScopedRoot | undefined, parts: string[]): Stats | undefined {
  if (!image) return undefined;
  try {
    const r = image.resolve(`/${parts.join("/")}`, { followLast: false });
    try {
      return r.name === "" ? fstatSync(r.dirFd) : lstatAt(r.dirFd, r.name);
    } finally {
      r.close();
    }
  } catch {
    return undefined; // a parent missing or not a directory in the image
  }
}

/** The names in the image's directory `parts` (none when it is not one there). */
function imageChildren(image: ScopedRoot | undefined, parts: string[]): string[] {
  if (!image) return [];
  try {
    const r = image.resolve(`/${parts.join("/")}`, { followLast: true });
    try {
      if (r.name !== "") return [];
      return readdirFd(r.dirFd);
    } finally {
      r.close();
    }
  } catch {
    return [];
  }
}

/** The init layer's files and links (a container can change or remove `/.dockerenv` or `/etc/mtab`; the others are mount points). */
const INIT_LAYER_FILES = ENTRIES.filter(([, e]) => e.kind !== "dir").map(([path]) => path.slice(1).split("/"));

/** Whether a layer's entry at one of the init layer's files is still as init-layer.ts makes it (an empty 0755 file, or its link). */
function asMade(key: string, e: DiffEntry): boolean {
  const made = ENTRIES.find(([path]) => path.slice(1) === key)?.[1];
  if (!made || !e.other) return false;
  if (made.kind === "symlink") return e.other.type === "symlink" && e.other.link === made.target;
  return e.other.type === "file" && e.other.size === 0 && e.other.mode === 0o755;
}

/**
 * The changes of `diff` against the image seen through `image` (undefined: no parent layer).
 * `initMade`: the init layer's entries were made in the layer (the container has started), so
 * one of its files missing from the layer, and not in the image, was removed by the container:
 * Docker lists it deleted (its init layer, under the writable one, has it).
 */
function changesOf(entries: DiffEntry[], image: ScopedRoot | undefined, initMade: boolean): Change[] {
  const found = new Map<string, { parts: string[]; kind: ChangeKind }>();
  /** Directories the image has, listed only with a change under them (or their own). */
  const heldDirs = new Map<string, string[]>();
  const inDiff = new Set(entries.filter((e) => !e.opaque).map((e) => e.parts.join("/")));
  for (const e of entries) {
    const key = e.parts.join("/");
    // (a whiteout of one is listed: Docker's init layer has it, so the container removed it; and
    // one of its files the container changed, which Docker finds in its writable layer)
    if (INIT_LAYER_PATHS.has(key) && !e.deleted) {
      if (initMade && e.other && !asMade(key, e)) found.set(key, { parts: e.parts, kind: ChangeKind.Modified });
      continue;
    }
    if (e.deleted) {
      found.set(key, { parts: e.parts, kind: ChangeKind.Deleted });
      continue;
    }
    if (e.opaque) {
      for (const name of imageChildren(image, e.parts)) {
        const child = [...e.parts, name];
        if (!inDiff.has(child.join("/"))) found.set(child.join("/"), { parts: child, kind: ChangeKind.Deleted });
      }
      continue;
    }
    const before = inImage(image, e.parts);
    if (!before && INIT_LAYER_DIRS.has(key)) {
      if (e.dir?.mode === 0o755) heldDirs.set(key, e.parts);
      else found.set(key, { parts: e.parts, kind: ChangeKind.Modified });
    } else if (!before) found.set(key, { parts: e.parts, kind: ChangeKind.Added });
    else if (e.dir && before.isDirectory() && (before.mode & 0o7777) === e.dir.mode && before.uid === e.dir.uid && before.gid === e.dir.gid) heldDirs.set(key, e.parts);
    else found.set(key, { parts: e.parts, kind: ChangeKind.Modified });
  }
  for (const parts of initMade ? INIT_LAYER_FILES : []) {
    const key = parts.join("/");
    const folder = parts.slice(0, -1);
    // (made where its folder is one: in the layer, or the image's)
    const hadFolder = folder.length === 0 || inDiff.has(folder.join("/")) || inImage(image, folder)?.isDirectory() === true;
    if (!inDiff.has(key) && hadFolder && !inImage(image, parts)) found.set(key, { parts, kind: ChangeKind.Deleted });
  }
  for (const { parts } of [...found.values()]) {
    for (let n = parts.length - 1; n > 0; n--) {
      const key = parts.slice(0, n).join("/");
      if (found.has(key)) break;
      found.set(key, { parts: parts.slice(0, n), kind: heldDirs.has(key) || INIT_LAYER_DIRS.has(key) || inImage(image, parts.slice(0, n)) ? ChangeKind.Modified : ChangeKind.Added });
    }
  }
  return [...found.values()].sort((a, b) => walkOrder(a.parts, b.parts)).map((c) => ({ Path: `/${c.parts.join("/")}`, Kind: c.kind }));
}

/** Mounts the layer chain `layer` read-only at a private place for `fn`, and unmounts it after. */
async function withImageView<T>(storage: StorageDriver, layer: string | undefined, scratch: string, fn: (image: ScopedRoot | undefined) => Promise<T>): Promise<T> {
  if (!layer) return fn(undefined);
  const target = join(scratch, `changes-${randomBytes(8).toString("hex")}`);
  await mountSpecs(await storage.mounts(layer), target);
  let image: ScopedRoot | undefined;
  try {
    image = ScopedRoot.open(target);
    return await fn(image);
  } finally {
    image?.close();
    await unmountAll(target);
    await rmdir(target).catch(() => {});
  }
}

/** `docker diff` of the container whose layer is `id`; `scratch` is where the image is mounted for the comparison. */
export async function containerChanges(storage: StorageDriver, id: string, scratch: string, initMade: boolean): Promise<Change[]> {
  const entries = await readDiff(await storage.diff(id));
  if (entries.length === 0) return [];
  return withImageView(storage, await storage.parent(id), scratch, async (image) => changesOf(entries, image, initMade));
}
