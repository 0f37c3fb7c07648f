/**
 * The overlay2 storage driver: every layer is a directory of its own files (`diff`), and a
 * chain is seen through a kernel overlay mount that stacks the diffs of the layer and its
 * ancestors. The layout (link, lower, parent, work, `l/`, removal, cleanup, the mount options'
 * absolute and relative forms) is the shared overlay layout, core/storage/overlay-layout.ts.
 * What is overlay2's own:
 *   <id>/diff         overlay whiteouts (0:0 character devices, `trusted.overlay.opaque=y`)
 *                     stand for deletions
 *   <id>/quota        `{"project": n, "bytes": n}`: the xfs project quota of a writable layer
 *   mounts            type `overlay`, with `index`, `redirect_dir` and `metacopy` turned off
 *                     where the kernel knows them (the native diff cannot read what they make)
 */
import { existsSync } from "node:fs";
import { statfs, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import type { ApplyDiffOptions, CreateOptions, MountSpec, StorageCapability, StorageContext, StorageDriver } from "../../core/contracts/storage.js";
import { errors } from "../../core/errors.js";
import { showBytes } from "../../core/options/value-types-structured.js";
import { layerSize, layerSizeOption } from "../../core/storage/options.js";
import { existingAncestor, filesystemName, mountOf } from "../../core/storage/backing-fs.js";
import { clearProject, freeProject, limitProject, xfsQuotaMount } from "../../core/storage/xfs-quota.js";
import { OverlayLayout, type LayerSetup } from "../../core/storage/overlay-layout.js";
import { readOptional } from "../../core/storage/read-optional.js";

export { MAX_DEPTH, MOUNT_OPTIONS_MAX, shortId } from "../../core/storage/overlay-layout.js";
export { mountOf };

/** The tar code (tar-stream, the xattr binding) is loaded on first use, not at daemon start. */
const archive = () => import("../../core/archive/index.js");

/** Backing filesystems overlay cannot keep an upper directory on. */
const UNSUITABLE = new Set(["overlayfs", "aufs", "ecryptfs", "zfs"]);

export async function createOverlay2Driver(ctx: StorageContext): Promise<StorageDriver> {
  const driver = new Overlay2Driver(ctx);
  await driver.init();
  return driver;
}

interface QuotaSetup {
  /** The xfs mount point that holds `home`, for xfs_quota. */
  mountPoint: string;
  /** Default size of writable layers (`overlay2.size`), bytes. */
  defaultBytes?: number;
}

export class Overlay2Driver extends OverlayLayout implements StorageDriver {
  readonly name = "overlay2";
  // parallel-apply: a layer's diff goes into its own `diff` folder and nowhere else
  capabilities: readonly StorageCapability[] = ["native-diff", "parallel-apply"];
  private backingFs = "unknown";
  private quota?: QuotaSetup;
  /** Mount options every overlay mount carries: features turned off that native diffs cannot show. */
  private extraOptions: string[] = [];

  constructor(private readonly ctx: StorageContext) {
    super(ctx.home, ctx.idMap);
  }

  /** Makes the folders and finds what the backing filesystem can do (the host read the options: manifest.ts). */
  async init(): Promise<void> {
    // Judged where home is (or will be): a driver that refuses to start leaves no folder behind.
    const probe = await existingAncestor(this.home);
    const st = await statfs(probe);
    this.backingFs = filesystemName(st.type);
    if (UNSUITABLE.has(this.backingFs)) {
      throw new Error(`overlay2: ${this.home} is on ${this.backingFs}, which overlay cannot use for its upper directories`);
    }
    // Only what the kernel knows may be turned off explicitly (an unknown option fails the mount).
    for (const [param, option] of [["index", "index=off"], ["redirect_dir", "redirect_dir=off"], ["metacopy", "metacopy=off"]]) {
      if (existsSync(`/sys/module/overlay/parameters/${param}`)) this.extraOptions.push(option);
    }

    const quotaMount = await xfsQuotaMount(probe, this.backingFs);
    // a number of bytes above 0: the manifest declares it a `size`
    const bytes = this.ctx.options["overlay2.size"] as number | undefined;
    if (bytes !== undefined) {
      if (typeof quotaMount === "string") {
        throw new Error(`overlay2.size is only supported on xfs mounted with the pquota option; ${this.home} is on ${quotaMount}`);
      }
      const fsBytes = Number(st.blocks) * Number(st.bsize);
      if (bytes >= fsBytes) {
        throw new Error(`overlay2: overlay2.size ${showBytes(bytes)} is not below the size of the backing filesystem (${showBytes(fsBytes)})`);
      }
      this.quota = { mountPoint: quotaMount.mountPoint, defaultBytes: bytes };
    } else if (typeof quotaMount !== "string") {
      this.quota = { mountPoint: quotaMount.mountPoint };
    }
    if (this.quota) this.capabilities = [...this.capabilities, "quota"];
    await this.makeHome();
  }

  async status(): Promise<[string, string][]> {
    return [
      ["Backing Filesystem", this.backingFs],
      ["Supports d_type", "true"],
      ["Using metacopy", "false"],
      ["Native Overlay Diff", "true"],
      ["userxattr", "false"],
    ];
  }

  // --- quota -------------------------------------------------------------------------------------

  /** The quota a new layer gets, as the step that sets it; throws for options it cannot honour. */
  protected layerSetup(id: string, opts: CreateOptions): LayerSetup | undefined {
    const bytes = this.layerQuota(id, opts);
    return bytes === undefined ? undefined : (dir) => this.setQuota(dir, bytes);
  }

  /** The quota a new layer gets, in bytes, or undefined; throws (400s: the caller's options) for options it cannot honour. */
  private layerQuota(id: string, opts: CreateOptions): number | undefined {
    const size = layerSizeOption("overlay2", opts);
    if (size !== undefined) {
      if (!opts.writable) throw errors.storageLayerSizeUnsupported("overlay2", `applies to writable layers only (layer ${id})`);
      if (!this.quota) {
        throw errors.storageLayerSizeUnsupported("overlay2", `is only supported on xfs mounted with the pquota option; ${this.home} is on ${this.backingFs}`);
      }
      return layerSize("overlay2", size);
    }
    return opts.writable ? this.quota?.defaultBytes : undefined;
  }

  /** Gives the layer's diff a project of its own (inherited by what is made in it) and limits it. */
  private async setQuota(dir: string, bytes: number): Promise<void> {
    const project = await this.allocateProject();
    const diff = join(dir, "diff");
    await writeFile(join(dir, "quota"), JSON.stringify({ project, bytes }));
    await limitProject(this.quota!.mountPoint, diff, project, bytes);
  }

  /** A project id no layer of this driver uses. */
  private async allocateProject(): Promise<number> {
    const used = new Set<number>();
    for (const entry of await this.layerIds()) {
      const text = await readOptional(join(this.home, entry, "quota"));
      if (text) used.add((JSON.parse(text) as { project: number }).project);
    }
    return freeProject(used);
  }

  /** Clears a removed layer's limit. */
  protected override async releaseLayer(dir: string): Promise<void> {
    if (!this.quota) return;
    const text = await readOptional(join(dir, "quota"));
    if (!text) return;
    const { project } = JSON.parse(text) as { project: number };
    await clearProject(this.quota.mountPoint, project);
  }

  // --- contents ----------------------------------------------------------------------------------

  async applyDiff(id: string, tar: Readable, opts: ApplyDiffOptions = {}): Promise<number> {
    // Device nodes are let through as Docker does for root: the devices cgroup guards their use.
    const { applyLayer } = await archive();
    await this.filling(id, (diff) => applyLayer(tar, diff, { whiteouts: "overlay", allowDevices: true, idMap: this.ctx.idMap, layout: opts.layout }));
    return (await this.usage(id)).size;
  }

  diffDir(id: string): string {
    return join(this.dir(id), "diff");
  }

  async mounts(id: string): Promise<MountSpec[]> {
    return this.chainMounts(id, { type: "overlay", source: "overlay", options: this.extraOptions });
  }

  async diff(id: string): Promise<Readable> {
    const dir = await this.complete(id);
    const { packLayer } = await archive();
    return packLayer(join(dir, "diff"), { whiteouts: "overlay", idMap: this.ctx.idMap });
  }
}
