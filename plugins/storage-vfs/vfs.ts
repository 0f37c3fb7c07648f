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
import { chown, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { CreateOptions, StorageCapability, StorageContext, StorageDriver } from "../../core/contracts/storage.js";
import { errors } from "../../core/errors.js";
import { execFileAsync as run } from "../../core/exec-file.js";
import { backingFilesystem } from "../../core/storage/backing-fs.js";
import { layerSize, layerSizeOption } from "../../core/storage/options.js";
import { readOptional } from "../../core/storage/read-optional.js";
import { WholeTreeLayers, type TreeSetup } from "../../core/storage/whole-tree.js";
import { clearProject, freeProject, limitProject, xfsQuotaMount } from "../../core/storage/xfs-quota.js";
import { rootOwner } from "../../core/userns/id-map.js";

/** Docker's words where a size is asked of a filesystem without project quota (its quota.ErrQuotaNotSupported). */
const NO_QUOTA = "Filesystem does not support, or has not enabled quotas";

export async function createVfsDriver(ctx: StorageContext): Promise<StorageDriver> {
  const driver = new VfsDriver(ctx);
  await driver.init();
  return driver;
}

/**
 * Copies the tree `from` onto the directory `to` with coreutils' `cp`, because a layer's
 * copy must be the parent's tree exactly, and cp is the real copier that does all of it: owners,
 * modes, times to the nanosecond (the tree diff compares mtimes), every extended attribute
 * (`security.capability`, `trusted.*` as root; `-a` skips silently only those the filesystem
 * cannot hold, and both trees are on one filesystem), hard links kept as links within the tree,
 * device nodes, fifos and sockets, holes of sparse files (`--sparse=auto`), and shared extents
 * where the filesystem can (`--reflink=auto`: btrfs, xfs; a plain copy elsewhere). Node has no
 * mknod nor extent cloning of its own, and a walk of our own would be slower at the rest.
 * `-T`: `to` is the copy itself (its own attributes set from `from`'s), never a folder to copy into.
 */
async function copyTree(from: string, to: string): Promise<void> {
  try {
    await run("cp", ["-aT", "--reflink=auto", "--sparse=auto", "--", from, to], { maxBuffer: 1 << 20 });
  } catch (err) {
    const why = ((err as { stderr?: string }).stderr || (err as Error).message).trim();
    throw new Error(`vfs: cannot copy ${from} to ${to}: ${why}`);
  }
}

interface QuotaSetup {
  /** The xfs mount point that holds `home`, for xfs_quota. */
  mountPoint: string;
  /** Default size of writable layers (`vfs.size`), bytes. */
  defaultBytes?: number;
}

export class VfsDriver extends WholeTreeLayers implements StorageDriver {
  readonly name = "vfs";
  // No parallel-apply: a child starts as a copy of its parent, so the parent must be whole
  // first. No native-diff: changes come from comparing trees. `quota` on xfs with pquota.
  capabilities: readonly StorageCapability[] = [];
  private quota?: QuotaSetup;
  /** Why there is no quota (`extfs`, `xfs without pquota`), for messages. */
  private noQuota = "";

  constructor(private readonly ctx: StorageContext) {
    // not `snapshot`: a copy has new inode numbers and ctimes everywhere, which say nothing
    super(ctx.home, "dir", false, ctx.idMap);
  }

  /**
   * Finds whether the data root's filesystem has project quota (the host read the options:
   * manifest.ts), then makes the folders: the home and `dir/` 0710 as Docker makes them.
   */
  async init(): Promise<void> {
    // Judged where home is (or will be): a driver that refuses to start leaves no folder behind.
    const fs = await backingFilesystem(this.home);
    const quotaMount = await xfsQuotaMount(fs.probe, fs.name);
    const bytes = this.ctx.options["vfs.size"] as number | undefined;
    if (typeof quotaMount === "string") {
      this.noQuota = quotaMount;
      if (bytes !== undefined) throw new Error(`vfs.size is only supported on xfs mounted with the pquota option; ${this.home} is on ${quotaMount} (${NO_QUOTA})`);
    } else {
      this.quota = { mountPoint: quotaMount.mountPoint, ...(bytes !== undefined ? { defaultBytes: bytes } : {}) };
      this.capabilities = ["quota"];
    }
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

  // --- quota -------------------------------------------------------------------------------------

  /** The quota a new layer gets (judged before anything is made), as the step that sets it. */
  protected async layerSetup(id: string, opts: CreateOptions): Promise<TreeSetup | undefined> {
    const bytes = this.layerQuota(id, opts);
    return bytes === undefined ? undefined : (tree, record) => this.setQuota(tree, record, bytes);
  }

  /** A writable layer's size in bytes: its own `size`, else `vfs.size`; throws (400s) for options it cannot honour. */
  private layerQuota(id: string, opts: CreateOptions): number | undefined {
    const size = layerSizeOption("vfs", opts);
    if (size !== undefined) {
      if (!opts.writable) throw errors.storageLayerSizeUnsupported("vfs", `applies to writable layers only (layer ${id})`);
      if (!this.quota) {
        // Docker's vfs answers 501 here; the catalogue's 400 for a layer option a driver cannot honour, with Docker's words.
        throw errors.storageLayerSizeUnsupported("vfs", `is only supported on xfs mounted with the pquota option; ${this.home} is on ${this.noQuota} (${NO_QUOTA})`);
      }
      return layerSize("vfs", size);
    }
    return opts.writable ? this.quota?.defaultBytes : undefined;
  }

  /** Gives the layer's directory a project of its own (inherited by what is made in it) and limits it; recorded first, so removal finds it. */
  private async setQuota(tree: string, record: string, bytes: number): Promise<void> {
    const used = new Set<number>();
    for (const id of await this.layerIds()) {
      const text = await readOptional(join(this.record(id), "quota"));
      if (text) used.add((JSON.parse(text) as { project: number }).project);
    }
    const project = freeProject(used);
    await writeFile(join(record, "quota"), JSON.stringify({ project, bytes }));
    await limitProject(this.quota!.mountPoint, tree, project, bytes);
  }

  /** Clears a removed layer's limit. */
  protected override async releaseLayer(record: string): Promise<void> {
    const text = this.quota && (await readOptional(join(record, "quota")));
    if (text) await clearProject(this.quota!.mountPoint, (JSON.parse(text) as { project: number }).project);
  }

  // --- trees -------------------------------------------------------------------------------------

  /**
   * The layer's directory: 0755, the remapped root's under `--userns-remap` (a container's root
   * owns its `/`), its quota set while it is empty so that the parent's files copied into it
   * count (a container's size is its whole filesystem, as with Docker's vfs), then the parent's
   * tree copied in, the directory's own owner, mode and times with it.
   */
  protected async makeTree(tree: string, parentTree: string | undefined, setup: () => Promise<void>): Promise<void> {
    await mkdir(tree, { mode: 0o755 });
    if (this.idMap) {
      const { uid, gid } = rootOwner(this.idMap);
      await chown(tree, uid, gid);
    }
    await setup();
    if (parentTree !== undefined) await copyTree(parentTree, tree);
  }

  protected async deleteTree(tree: string): Promise<void> {
    await rm(tree, { recursive: true, force: true });
  }
}
