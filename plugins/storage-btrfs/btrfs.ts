/**
 * The btrfs storage driver: every layer is a btrfs subvolume holding the whole tree of its
 * chain. A base layer is a new subvolume; a child layer is a writable snapshot of its parent's
 * subvolume, with its own changes then made in it. Seeing a chain is a bind mount of its last
 * subvolume. A layer's changes are found by comparing its tree with its parent's (the shared
 * tree diff of core/archive), as Docker's btrfs driver does.
 *
 * Layout under `home` (`<data-root>/btrfs`):
 *   subvolumes/<id>         the layer's subvolume
 *   layers/<id>/parent      the parent's id (absent for a base layer)
 *   layers/<id>/writable    present for a writable (container) layer
 *   layers/<id>/quota       the qgroup limit of a writable layer with a size, bytes
 *   layers/<id>/.incomplete present while `create`, `applyDiff` or `remove` runs
 *
 * `layers/<id>` is made first and removed last, so a layer exists exactly while it has one, and
 * a layer being made or removed is marked incomplete; `cleanup()` deletes what a crash left:
 * incomplete layers, and subvolumes without a layer folder. Deleting a subvolume takes it out of
 * the tree at once (btrfs frees its space in the background), so no half-deleted tree is seen.
 * Every btrfs operation is a run of the `btrfs` command (about 0.1 s here): a layer costs one to
 * make and one to remove.
 */
import { existsSync, lstatSync } from "node:fs";
import { mkdir, readdir, rm, unlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Readable } from "node:stream";
import type { CreateOptions, LayerUsage, MountSpec, StorageCapability, StorageContext, StorageDriver } from "../../core/contracts/storage.js";
import { backingFilesystem } from "../../core/storage/backing-fs.js";
import { readOptional } from "../../core/storage/read-optional.js";
import { showBytes } from "../../core/options/value-types-structured.js";
import * as progs from "./btrfs-progs.js";
import { driverOptionsOf, layerQuota, type BtrfsOptions } from "./options.js";
import { errors } from "../../core/errors.js";

/** The tar code is loaded on first use, not at daemon start. */
const archive = () => import("../../core/archive/index.js");

const INCOMPLETE = ".incomplete";
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export async function createBtrfsDriver(ctx: StorageContext): Promise<StorageDriver> {
  // Its diffs come from comparing trees (packChanges), which keeps the owners it finds.
  if (ctx.idMap) throw errors.storageDriverNoUserns("btrfs");
  const driver = new BtrfsDriver(ctx);
  await driver.init();
  return driver;
}

export class BtrfsDriver implements StorageDriver {
  readonly name = "btrfs";
  // No parallel-apply: a child is a snapshot of its parent, so the parent must be whole first.
  capabilities: readonly StorageCapability[] = [];
  readonly home: string;
  private readonly options: BtrfsOptions;
  private quotaOn = false;
  private enablingQuota?: Promise<void>;
  private version = "";

  constructor(ctx: StorageContext) {
    this.home = resolve(ctx.home);
    this.options = driverOptionsOf(ctx.options);
  }

  /** Checks the filesystem and the btrfs command, makes the folders, turns quota on for `btrfs.min_space`. */
  async init(): Promise<void> {
    const fs = await backingFilesystem(this.home);
    if (fs.name !== "btrfs") throw new Error(`btrfs: ${this.home} is on ${fs.name}, not btrfs (the data root must be on a btrfs filesystem)`);
    this.version = await progs.progsVersion();
    for (const dir of ["subvolumes", "layers"]) await mkdir(join(this.home, dir), { recursive: true, mode: 0o700 });
    this.quotaOn = await progs.quotaEnabled(this.home);
    // As Docker does: a minimum size means container sizes are expected, so quota is turned on now.
    if (this.options.minSpace !== undefined) await this.ensureQuota();
    if (this.quotaOn) this.capabilities = ["quota"];
  }

  /** Turns quota groups on for the filesystem, once (two containers created at once wait for the same). */
  private ensureQuota(): Promise<void> {
    if (this.quotaOn) return Promise.resolve();
    this.enablingQuota ??= progs.enableQuota(this.home).then(
      () => {
        this.quotaOn = true;
        this.capabilities = ["quota"];
      },
      (err: unknown) => {
        this.enablingQuota = undefined;
        throw err;
      },
    );
    return this.enablingQuota;
  }

  async status(): Promise<[string, string][]> {
    const lines: [string, string][] = [
      ["Build Version", this.version],
      ["Backing Filesystem", "btrfs"],
      ["Quota", this.quotaOn ? "enabled" : "disabled"],
    ];
    if (this.options.minSpace !== undefined) lines.push(["Min Space", showBytes(this.options.minSpace)]);
    return lines;
  }

  // --- paths -------------------------------------------------------------------------------------

  private check(id: string): string {
    if (!ID_RE.test(id)) throw new Error(`btrfs: invalid layer id ${JSON.stringify(id)}`);
    return id;
  }

  private subvolume(id: string): string {
    return join(this.home, "subvolumes", this.check(id));
  }

  private meta(id: string): string {
    return join(this.home, "layers", this.check(id));
  }

  /** Whether `id` is a whole layer: made, not half made. */
  private whole(id: string): boolean {
    return existsSync(this.subvolume(id)) && existsSync(this.meta(id)) && !existsSync(join(this.meta(id), INCOMPLETE));
  }

  /** The subvolume of a whole layer; throws otherwise. */
  private complete(id: string): string {
    if (!existsSync(this.meta(id))) throw new Error(`btrfs: layer ${id} does not exist`);
    if (!this.whole(id)) throw new Error(`btrfs: layer ${id} is incomplete`);
    return this.subvolume(id);
  }

  // --- layers ------------------------------------------------------------------------------------

  async exists(id: string): Promise<boolean> {
    return existsSync(this.meta(id));
  }

  async parent(id: string): Promise<string | undefined> {
    if (!existsSync(this.meta(id))) throw new Error(`btrfs: layer ${id} does not exist`);
    return (await readOptional(join(this.meta(id), "parent"))) || undefined;
  }

  async create(id: string, parent: string | undefined, opts: CreateOptions = {}): Promise<void> {
    const meta = this.meta(id);
    // The caller's options are judged before anything is made.
    const quota = layerQuota(this.options, id, opts.writable === true, opts.storageOpts);
    if (parent !== undefined && !this.whole(parent)) throw new Error(`btrfs: cannot create layer ${id}: parent layer ${parent} does not exist`);
    if (quota !== undefined) await this.ensureQuota();
    try {
      await mkdir(meta, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new Error(`btrfs: layer ${id} already exists`);
      throw err;
    }
    const subvolume = this.subvolume(id);
    try {
      await writeFile(join(meta, INCOMPLETE), "");
      if (parent !== undefined) await writeFile(join(meta, "parent"), parent);
      if (opts.writable) await writeFile(join(meta, "writable"), "");
      if (parent === undefined) await progs.createSubvolume(subvolume);
      else await progs.snapshotSubvolume(this.subvolume(parent), subvolume);
      if (quota !== undefined) {
        await progs.limitSubvolume(subvolume, quota);
        await writeFile(join(meta, "quota"), String(quota));
      }
      await unlink(join(meta, INCOMPLETE));
    } catch (err) {
      await this.removeLayer(id).catch(() => {});
      throw err;
    }
  }

  async applyDiff(id: string, tar: Readable): Promise<number> {
    const subvolume = this.complete(id);
    const meta = this.meta(id);
    await writeFile(join(meta, INCOMPLETE), "");
    const { applyLayer } = await archive();
    // The subvolume holds the parent's whole tree: a whiteout deletes what it names.
    // the tar's file bytes, as Docker's naive-diff drivers (btrfs among them) count an applied layer
    const { size } = await applyLayer(tar, subvolume, { whiteouts: "remove", allowDevices: true });
    await unlink(join(meta, INCOMPLETE));
    return size;
  }

  async mounts(id: string): Promise<MountSpec[]> {
    const subvolume = this.complete(id);
    const writable = existsSync(join(this.meta(id), "writable"));
    return [{ type: "bind", source: subvolume, options: writable ? ["bind"] : ["bind", "ro"] }];
  }

  /** The layer's changes against its parent's tree (everything, for a base layer). */
  private async changes(id: string) {
    const subvolume = this.complete(id);
    const parent = await this.parent(id);
    const { treeChanges } = await archive();
    // A snapshot keeps the parent's inode numbers and ctimes until a file changes.
    return { subvolume, changes: await treeChanges(subvolume, parent && this.subvolume(parent), { snapshot: true }) };
  }

  async diff(id: string): Promise<Readable> {
    const { subvolume, changes } = await this.changes(id);
    const { packChanges } = await archive();
    return packChanges(subvolume, changes);
  }

  async usage(id: string): Promise<LayerUsage> {
    const { subvolume, changes } = await this.changes(id);
    const { changesUsage } = await archive();
    return changesUsage(subvolume, changes);
  }

  async remove(id: string): Promise<void> {
    const meta = this.meta(id);
    if (!existsSync(meta)) return;
    // A writable layer (a container's) is never a parent: no need to read every layer's parent.
    const children = existsSync(join(meta, "writable")) ? [] : await this.children(id);
    if (children.length > 0) {
      throw new Error(`btrfs: cannot remove layer ${id}: layers ${children.join(", ")} use it as their parent`);
    }
    await this.removeLayer(id);
  }

  /** Ids of the layers whose parent is `id`. */
  private async children(id: string): Promise<string[]> {
    const out: string[] = [];
    for (const entry of await readdir(join(this.home, "layers"))) {
      if (entry !== id && (await readOptional(join(this.home, "layers", entry, "parent"))) === id) out.push(entry);
    }
    return out;
  }

  /**
   * Removes a layer's subvolume (with any nested in it), then its folder. It is marked
   * incomplete first: a crash between the nested subvolumes and its own leaves it for cleanup.
   */
  private async removeLayer(id: string): Promise<void> {
    const meta = this.meta(id);
    if (existsSync(meta)) await writeFile(join(meta, INCOMPLETE), "");
    const subvolume = this.subvolume(id);
    if (existsSync(subvolume)) await this.deleteLeftover(subvolume);
    await rm(meta, { recursive: true, force: true });
  }

  async cleanup(): Promise<void> {
    const layers = new Set(await readdir(join(this.home, "layers")));
    for (const id of layers) {
      if (!ID_RE.test(id)) continue;
      if (existsSync(join(this.meta(id), INCOMPLETE)) || !existsSync(this.subvolume(id))) await this.removeLayer(id);
    }
    // A subvolume is made after its layer's folder and deleted before it: one without a folder is a leftover.
    for (const entry of await readdir(join(this.home, "subvolumes"))) {
      if (!layers.has(entry)) await this.deleteLeftover(join(this.home, "subvolumes", entry));
    }
    if (this.quotaOn) await progs.clearStaleQgroups(this.home).catch(() => {});
  }

  /** Deletes a subvolume with those nested in it (or a plain folder, which a subvolume never is). */
  private async deleteLeftover(path: string): Promise<void> {
    // Every subvolume's root directory is inode 256 (BTRFS_FIRST_FREE_OBJECTID).
    if (lstatSync(path).ino === 256) await progs.deleteSubvolumeTree(path);
    else await rm(path, { recursive: true, force: true });
  }
}
