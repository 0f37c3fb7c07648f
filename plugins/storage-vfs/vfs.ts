/**
 * The vfs storage driver: every layer is a plain directory holding the whole tree of its chain,
 * where Docker's vfs keeps it (`<data-root>/vfs/dir/<id>`). A base layer starts empty; a child
 * layer starts as a full copy of its parent's directory, its own changes then made in it. Seeing
 * a chain is a bind mount of its last directory; a layer's changes are found by comparing its
 * tree with its parent's, as Docker's vfs does through its naive diff. Records, lifecycle,
 * mounts and diffs are those of every whole-tree driver (core/storage/whole-tree.ts, with btrfs).
 * No copy-on-write anywhere: every layer costs the whole size of its chain, and making one costs
 * a copy of its parent's. That is the price of needing nothing of the kernel or the filesystem.
 */
import { chown, mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { CreateOptions, StorageCapability, StorageContext, StorageDriver } from "../../core/contracts/storage.js";
import { errors } from "../../core/errors.js";
import { execFileAsync as run } from "../../core/exec-file.js";
import { layerSizeOption } from "../../core/storage/options.js";
import { WholeTreeLayers, type TreeSetup } from "../../core/storage/whole-tree.js";
import { rootOwner } from "../../core/userns/id-map.js";

export async function createVfsDriver(ctx: StorageContext): Promise<StorageDriver> {
  const driver = new VfsDriver(ctx);
  await driver.init();
  return driver;
}

/**
 * Copies the tree `from` to `to` (which must not exist) with coreutils' `cp`, because a layer's
 * copy must be the parent's tree exactly, and cp is the real copier that does all of it: owners,
 * modes, times to the nanosecond (the tree diff compares mtimes), every extended attribute
 * (`security.capability`, `trusted.*` as root; `-a` skips silently only those the filesystem
 * cannot hold, and both trees are on one filesystem), hard links kept as links within the tree,
 * device nodes, fifos and sockets, holes of sparse files (`--sparse=auto`), and shared extents
 * where the filesystem can (`--reflink=auto`: btrfs, xfs; a plain copy elsewhere). Node has no
 * mknod nor extent cloning of its own, and a walk of our own would be slower at the rest.
 * `-T`: `to` is the copy itself, never a folder to copy into.
 */
async function copyTree(from: string, to: string): Promise<void> {
  try {
    await run("cp", ["-aT", "--reflink=auto", "--sparse=auto", "--", from, to], { maxBuffer: 1 << 20 });
  } catch (err) {
    const why = ((err as { stderr?: string }).stderr || (err as Error).message).trim();
    throw new Error(`vfs: cannot copy ${from} to ${to}: ${why}`);
  }
}

export class VfsDriver extends WholeTreeLayers implements StorageDriver {
  readonly name = "vfs";
  // No parallel-apply: a child starts as a copy of its parent, so the parent must be whole
  // first. No native-diff: changes come from comparing trees. No quota (see README.md).
  readonly capabilities: readonly StorageCapability[] = [];

  constructor(ctx: StorageContext) {
    // not `snapshot`: a copy has new inode numbers and ctimes everywhere, which say nothing
    super(ctx.home, "dir", false, ctx.idMap);
  }

  /** Makes the folders: the home and `dir/` 0710 as Docker makes them (others may pass, never list). */
  async init(): Promise<void> {
    await mkdir(this.home, { recursive: true, mode: 0o710 });
    await this.makeHome(0o710);
    if (this.idMap) {
      // the remapped root passes through to the trees it owns (Docker gives the folders its group)
      const { gid } = rootOwner(this.idMap);
      for (const dir of [this.home, join(this.home, "dir")]) await chown(dir, 0, gid);
    }
  }

  /** Docker's vfs has no status: `/info` shows `DriverStatus: null`. */
  async status(): Promise<null> {
    return null;
  }

  protected async layerSetup(_id: string, opts: CreateOptions): Promise<TreeSetup | undefined> {
    // Docker's vfs answers 501 here; the catalogue's 400 for a layer option a driver cannot honour, with Docker's words.
    if (layerSizeOption("vfs", opts) !== undefined) {
      throw errors.storageLayerSizeUnsupported("vfs", "is not supported: the vfs storage driver keeps no quota (Filesystem does not support, or has not enabled quotas)");
    }
    return undefined;
  }

  /** A base layer's empty root: 0755, the remapped root's under `--userns-remap` (a container's root owns its `/`); a child's, a copy. */
  protected async makeTree(tree: string, parentTree: string | undefined): Promise<void> {
    if (parentTree !== undefined) return copyTree(parentTree, tree);
    await mkdir(tree, { mode: 0o755 });
    if (this.idMap) {
      const { uid, gid } = rootOwner(this.idMap);
      await chown(tree, uid, gid);
    }
  }

  protected async deleteTree(tree: string): Promise<void> {
    await rm(tree, { recursive: true, force: true });
  }
}
