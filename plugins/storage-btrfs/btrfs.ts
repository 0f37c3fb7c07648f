/**
 * The btrfs storage driver: every layer is a btrfs subvolume holding the whole tree of its
 * chain. A base layer is a new subvolume; a child layer is a writable snapshot of its parent's
 * subvolume, with its own changes then made in it. Seeing a chain is a bind mount of its last
 * subvolume. A layer's changes are found by comparing its tree with its parent's (the shared
 * tree diff of core/archive), as Docker's btrfs driver does. Records, lifecycle, mounts and
 * diffs are those of every whole-tree driver (core/storage/whole-tree.ts, with vfs).
 *
 * Layout under `home` (`<data-root>/btrfs`), besides whole-tree.ts's `layers/<id>/`:
 *   subvolumes/<id>         the layer's subvolume
 *   layers/<id>/quota       the qgroup limit of a writable layer with a size, bytes
 *
 * Deleting a subvolume takes it out of the tree at once (btrfs frees its space in the
 * background), so no half-deleted tree is seen. Every btrfs operation is a run of the `btrfs`
 * command (about 0.1 s here): a layer costs one to make and one to remove.
 */
import { lstatSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CreateOptions, StorageCapability, StorageContext, StorageDriver } from "../../core/contracts/storage.js";
import { backingFilesystem } from "../../core/storage/backing-fs.js";
import { WholeTreeLayers, type TreeSetup } from "../../core/storage/whole-tree.js";
import { showBytes } from "../../core/options/value-types-structured.js";
import * as progs from "./btrfs-progs.js";
import { driverOptionsOf, layerQuota, type BtrfsOptions } from "./options.js";
import { errors } from "../../core/errors.js";

export async function createBtrfsDriver(ctx: StorageContext): Promise<StorageDriver> {
  // Its subvolumes are made as root's: nothing gives a base layer's root to a remapped root.
  if (ctx.idMap) throw errors.storageDriverNoUserns("btrfs");
  const driver = new BtrfsDriver(ctx);
  await driver.init();
  return driver;
}

export class BtrfsDriver extends WholeTreeLayers implements StorageDriver {
  readonly name = "btrfs";
  // No parallel-apply: a child is a snapshot of its parent, so the parent must be whole first.
  capabilities: readonly StorageCapability[] = [];
  private readonly options: BtrfsOptions;
  private quotaOn = false;
  private enablingQuota?: Promise<void>;
  private version = "";

  constructor(ctx: StorageContext) {
    // a snapshot keeps the parent's inode numbers and ctimes until a file changes
    super(ctx.home, "subvolumes", true);
    this.options = driverOptionsOf(ctx.options);
  }

  /** Checks the filesystem and the btrfs command, makes the folders, turns quota on for `btrfs.min_space`. */
  async init(): Promise<void> {
    const fs = await backingFilesystem(this.home);
    if (fs.name !== "btrfs") throw new Error(`btrfs: ${this.home} is on ${fs.name}, not btrfs (the data root must be on a btrfs filesystem)`);
    this.version = await progs.progsVersion();
    await this.makeHome(0o700);
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

  // --- trees ------------------------------------------------------------------------------------

  /** The quota a new layer gets (judged before anything is made), as the step that sets it. */
  protected async layerSetup(id: string, opts: CreateOptions): Promise<TreeSetup | undefined> {
    const quota = layerQuota(this.options, id, opts.writable === true, opts.storageOpts);
    if (quota === undefined) return undefined;
    await this.ensureQuota();
    return async (subvolume, record) => {
      await progs.limitSubvolume(subvolume, quota);
      await writeFile(join(record, "quota"), String(quota));
    };
  }

  /** A new subvolume or a snapshot, then its quota group limited (a qgroup is made with its subvolume). */
  protected async makeTree(subvolume: string, parent: string | undefined, setup: () => Promise<void>): Promise<void> {
    if (parent === undefined) await progs.createSubvolume(subvolume);
    else await progs.snapshotSubvolume(parent, subvolume);
    await setup();
  }

  /** Deletes a subvolume with those nested in it (or a plain folder, which a subvolume never is). */
  protected async deleteTree(path: string): Promise<void> {
    // Every subvolume's root directory is inode 256 (BTRFS_FIRST_FREE_OBJECTID).
    if (lstatSync(path).ino === 256) await progs.deleteSubvolumeTree(path);
    else await rm(path, { recursive: true, force: true });
  }

  override async cleanup(): Promise<void> {
    await super.cleanup();
    if (this.quotaOn) await progs.clearStaleQgroups(this.home).catch(() => {});
  }
}
