/**
 * The file system side of extracting one layer: each kind of tar entry written at a path that
 * `safe-path` resolved inside the layer folder, replacing what was there the way tar does (a
 * later entry wins; a directory over a directory keeps it and updates its metadata; anything
 * else over a directory removes the directory first, as Docker does).
 *
 * Regular files are created with O_CREAT|O_EXCL|O_NOFOLLOW after the old entry is removed, so
 * data never goes through a symlink or into another name's hard-linked inode. Hard-link entries
 * get no metadata of their own (as GNU tar): their target already has it. Directory times are
 * set at the very end (`finish`), since creating entries in a directory changes its mtime.
 * It also keeps the set of paths this layer wrote, which whiteouts must leave alone.
 */
import { closeSync, constants, linkSync, lstatSync, mkdirSync, openSync, symlinkSync, unlinkSync, type Stats } from "node:fs";
import { rm } from "node:fs/promises";
import { fileData, type FileData, type SparseInfo } from "./file-data.js";
import { WriteSlots } from "./file-writer.js";
import {
  applyDirMeta,
  applyDirTimes,
  applyFileMeta,
  applyNodeMeta,
  applySymlinkMeta,
  type EntryMeta,
} from "./metadata.js";
import { NodeBatch, type NodeRequest } from "./mknod.js";
import { cleanEntryName, LayerEntryError, SafeResolver, type Resolved } from "./safe-path.js";
import type { LayoutRecorder } from "./tar-layout.js";
import type { EntryData } from "./tar-reader.js";
import { rootOwner, type IdMap } from "../userns/id-map.js";

export interface ApplyOptions {
  /**
   * How OCI whiteouts land: overlayfs's form, deleting what they name (full-copy drivers), or
   * kept as the `.wh.` files they are (fuse-overlayfs). See whiteouts.ts. "none": the tar is
   * not a layer (a build context), `.wh.` names are ordinary entries.
   */
  whiteouts: "overlay" | "remove" | "oci" | "none";
  /** Let character/block devices and fifos through (default: refuse them). */
  allowDevices?: boolean;
  /** Leave character/block devices and fifos out, and go on with the rest (default: refuse them). */
  skipDevices?: boolean;
  /**
   * A `..` that climbs above the folder stays at it, as in an extraction chrooted into the folder
   * (a build context: Docker untars it chrooted), instead of failing the entry.
   */
  clampDotDot?: boolean;
  /** Records the tar's layout (tar-layout.ts), its regular files' data by their paths here. */
  layout?: LayoutRecorder;
  /**
   * A user namespace's id map (`--userns-remap`): every owner in the tar is a container id and
   * is written as its host id; an id the map does not cover fails the entry.
   */
  idMap?: IdMap;
}

const CREATE = { create: true, followSymlinks: true } as const;

/** lstat, or null when nothing is there (without the cost of an exception). */
export function lstatOrNull(path: string): Stats | null {
  return lstatSync(path, { throwIfNoEntry: false }) ?? null;
}

export class LayerWriter {
  readonly resolver: SafeResolver;
  /** Bytes of regular files written. */
  size = 0;
  /** Paths (relative, resolved) this layer wrote, and every directory above them. */
  private readonly written = new Set<string>();
  private readonly dirTimes: { rel: string; ino: number; meta: EntryMeta }[] = [];
  /** Whiteouts kept as files ("oci"), and the path each names: dropped at the end if this layer wrote that path. */
  private readonly keptWhiteouts: { rel: string; target: string }[] = [];
  private readonly nodes = new NodeBatch<EntryMeta>();
  /** The write buffers of this layer's files (file-writer.ts). */
  private readonly slots = new WriteSlots();
  /** The file whose data is being written. */
  private open: { fd: number; data: FileData } | undefined;

  constructor(
    readonly root: string,
    readonly opts: ApplyOptions,
  ) {
    this.resolver = new SafeResolver(root, opts.idMap ? rootOwner(opts.idMap) : undefined);
  }

  resolve(entry: string, parts: string[]): Resolved {
    return this.resolver.resolve(entry, parts, CREATE)!;
  }

  markWritten(rel: string): void {
    for (let p = rel; p !== "" && !this.written.has(p); p = p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "") {
      this.written.add(p);
    }
  }

  wroteHere(rel: string): boolean {
    return this.written.has(rel);
  }

  /** Removes whatever is at `path` (a directory with its contents), never following a symlink. */
  async remove(path: string, st?: Stats | null): Promise<void> {
    const old = st === undefined ? lstatOrNull(path) : st;
    if (!old) return;
    this.opts.layout?.removing(path.slice(this.root.length + 1));
    if (old.isDirectory()) {
      await rm(path, { recursive: true, force: true }); // rm does not follow symlinks inside
      this.resolver.forget();
    } else {
      unlinkSync(path);
      if (old.isSymbolicLink()) this.resolver.forget();
    }
  }

  /**
   * A regular file: made now, its data to come (see EntryData); its metadata is applied and it
   * is closed once the data is all written.
   */
  async file(entry: string, parts: string[], meta: EntryMeta, size: number, sparse?: SparseInfo): Promise<EntryData> {
    const r = this.resolve(entry, parts);
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    let fd: number;
    try {
      fd = openSync(r.path, flags, 0o600); // the usual case, a new name: no lstat needed
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      await this.remove(r.path);
      fd = openSync(r.path, flags, 0o600);
    }
    let data: FileData;
    try {
      data = fileData(fd, size, this.slots, sparse);
    } catch (e) {
      closeSync(fd);
      throw e;
    }
    this.open = { fd, data };
    this.markWritten(r.rel);
    return {
      // a sparse file's data (its map, its packed regions) is not the file's content
      layoutPath: sparse ? undefined : r.rel,
      data: (piece) => data.data(piece),
      end: async () => {
        await data.end();
        applyFileMeta(fd, r.path, meta);
        this.open = undefined;
        closeSync(fd);
        this.size += size;
      },
    };
  }

  /**
   * After a failure: closes the file whose data was being written, once the writes under way
   * are done (closed earlier, its descriptor's number could go to another file meanwhile).
   */
  async closeOpenFile(): Promise<void> {
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    await open.data.drain().catch(() => undefined);
    closeSync(open.fd);
  }

  async directory(entry: string, parts: string[], meta: EntryMeta): Promise<void> {
    let path = this.root;
    let rel = "";
    if (parts.length > 0) {
      const r = this.resolve(entry, parts);
      const st = lstatOrNull(r.path);
      if (!st?.isDirectory()) {
        await this.remove(r.path, st);
        mkdirSync(r.path, 0o700);
      }
      ({ path, rel } = r);
      this.markWritten(rel);
    }
    applyDirMeta(path, meta);
    this.dirTimes.push({ rel, ino: lstatSync(path).ino, meta });
  }

  async symlink(entry: string, parts: string[], meta: EntryMeta, target: string): Promise<void> {
    if (!target) throw new LayerEntryError(entry, "symlink without a target");
    const r = this.resolve(entry, parts);
    await this.remove(r.path);
    symlinkSync(target, r.path);
    applySymlinkMeta(r.path, meta);
    this.markWritten(r.rel);
  }

  /** A hard link: its target must be a regular file in the layer, reached without symlinks. */
  async hardlink(entry: string, parts: string[], linkname: string): Promise<void> {
    let targetParts: string[];
    try {
      targetParts = cleanEntryName(linkname, this.opts.clampDotDot);
    } catch {
      throw new LayerEntryError(entry, `hard link target "${linkname}" leaves the layer directory`);
    }
    if (targetParts.length === 0) throw new LayerEntryError(entry, "hard link to the layer directory itself");
    const t = this.resolver.resolve(entry, targetParts, { create: false, followSymlinks: false });
    const tst = t && lstatOrNull(t.path);
    if (!t || !tst) throw new LayerEntryError(entry, `hard link target "${linkname}" is not in the layer`);
    if (!tst.isFile()) throw new LayerEntryError(entry, `hard link target "${linkname}" is not a regular file`);
    const r = this.resolve(entry, parts);
    const st = lstatOrNull(r.path);
    if (st && st.ino === tst.ino && st.dev === tst.dev) return; // already that file
    await this.remove(r.path, st);
    linkSync(t.path, r.path);
    this.markWritten(r.rel);
  }

  /**
   * A device node or fifo (a whiteout too): queued, made with its neighbours by one mknod run.
   * `batchKey` is the entry's parent as named in the tar.
   */
  async node(entry: string, parts: string[], batchKey: string, node: Omit<NodeRequest, "path">, meta: EntryMeta): Promise<void> {
    if (!this.nodes.accepts(batchKey)) await this.flushNodes();
    const r = this.resolve(entry, parts);
    if (!this.nodes.has(r.path)) await this.remove(r.path);
    this.nodes.add(batchKey, { ...node, path: r.path }, meta);
    this.markWritten(r.rel);
  }

  /** Whether a node whose parent is named `batchKey` can join the pending batch. */
  acceptsNode(batchKey: string): boolean {
    return this.nodes.accepts(batchKey);
  }

  async flushNodes(): Promise<void> {
    await this.nodes.flush(async (node, meta) => applyNodeMeta(node.path, meta));
  }

  /** Notes the whiteout file at `rel` that names `target` (both resolved, relative). */
  keepWhiteout(rel: string, target: string): void {
    this.keptWhiteouts.push({ rel, target });
  }

  /**
   * Ends the layer: pending nodes, kept whiteouts of paths this layer wrote after them, then
   * directory times (for directories still there).
   */
  async finish(): Promise<void> {
    await this.flushNodes();
    this.resolver.forget();
    for (const { rel, target } of this.keptWhiteouts) {
      if (!this.wroteHere(target)) continue;
      // resolved again: a later entry may have replaced a directory on the way with a symlink
      const r = this.resolver.resolve(rel, rel.split("/"), { create: false, followSymlinks: true });
      if (r && lstatOrNull(r.path)?.isFile()) unlinkSync(r.path);
    }
    for (const { rel, ino, meta } of this.dirTimes.reverse()) {
      const parts = rel === "" ? [] : rel.split("/");
      let path = this.root;
      if (parts.length > 0) {
        const r = this.resolver.resolve(rel, parts, { create: false, followSymlinks: true });
        if (!r) continue;
        path = r.path;
      }
      applyDirTimes(path, ino, meta);
    }
  }
}
