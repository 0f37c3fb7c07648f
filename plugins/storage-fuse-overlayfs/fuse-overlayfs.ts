/**
 * The fuse-overlayfs storage driver: overlay2's layout (core/storage/overlay-layout.ts), each
 * chain mounted by fuse-overlayfs, a FUSE program, rather than by the kernel's overlay. It is for
 * hosts where the kernel's overlay is not allowed (no overlay module, a data root on overlayfs,
 * as in a container) and for set-ups without privilege.
 *
 * What differs from overlay2:
 * - Mounts have type `fuse.fuse-overlayfs`: mount(8) runs fuse-overlayfs through `mount.fuse3`
 *   with the same `lowerdir`, `upperdir` and `workdir` options; fuse-overlayfs serves the mount
 *   from a process of its own until it is unmounted (umount or `fusermount3 -u`).
 * - Image layers keep whiteouts in the OCI form: `.wh.NAME` and `.wh..wh..opq` are empty files in
 *   `diff`, which fuse-overlayfs reads as deletions and opaque directories. That needs neither
 *   mknod nor `trusted.*` attributes, which overlayfs (as a data root) and unprivileged users
 *   refuse.
 * - A writable layer's `diff` is written by fuse-overlayfs: 0:0 devices where it may mknod,
 *   `.wh.` files where not, an attribute and a `.wh..wh..opq` file for an opaque directory; the
 *   diff reads both forms ("mixed").
 * - No options, no quota: a per-layer `size` is refused. `status()` has no lines, as Docker's
 *   fuse-overlayfs driver has none.
 */
import { join } from "node:path";
import type { Readable } from "node:stream";
import type { CreateOptions, MountSpec, StorageCapability, StorageContext, StorageDriver } from "../../core/contracts/storage.js";
import { OverlayLayout, type LayerSetup, type OverlayMountKind } from "../../core/storage/overlay-layout.js";
import { errors } from "../../core/errors.js";

/** The tar code is loaded on first use, not at daemon start. */
const archive = () => import("../../core/archive/index.js");

/** How a chain is mounted: mount(8) hands `fuse.<program>` to mount.fuse3, which runs the program. */
const FUSE_OVERLAYFS_MOUNT: OverlayMountKind = { type: "fuse.fuse-overlayfs", source: "fuse-overlayfs", options: [] };

export async function createFuseOverlayfsDriver(ctx: StorageContext): Promise<StorageDriver> {
  const driver = new FuseOverlayfsDriver(ctx);
  await driver.init();
  return driver;
}

class FuseOverlayfsDriver extends OverlayLayout implements StorageDriver {
  readonly name = "fuse-overlayfs";
  // parallel-apply: a layer's diff goes into its own `diff` folder and nowhere else
  readonly capabilities: readonly StorageCapability[] = ["native-diff", "parallel-apply"];

  constructor(private readonly ctx: StorageContext) {
    super(ctx.home, ctx.idMap);
  }

  /** Makes the folders (it has no options: its manifest declares none, so the host refuses any). */
  async init(): Promise<void> {
    await this.makeHome();
  }

  async status(): Promise<[string, string][]> {
    return [];
  }

  protected layerSetup(_id: string, opts: CreateOptions): LayerSetup | undefined {
    const [key] = Object.keys(opts.storageOpts ?? {});
    if (key?.toLowerCase() === "size") {
      throw errors.storageLayerSizeUnsupported("fuse-overlayfs", "is not supported: fuse-overlayfs has no quota, a layer's size cannot be limited");
    }
    if (key !== undefined) throw errors.storageLayerOptionUnknown("fuse-overlayfs", key);
    return undefined;
  }

  async applyDiff(id: string, tar: Readable): Promise<number> {
    // Device nodes are let through as Docker does for root: the devices cgroup guards their use.
    const { applyLayer } = await archive();
    await this.filling(id, (diff) => applyLayer(tar, diff, { whiteouts: "oci", allowDevices: true, idMap: this.ctx.idMap }));
    return (await this.usage(id)).size;
  }

  async mounts(id: string): Promise<MountSpec[]> {
    return this.chainMounts(id, FUSE_OVERLAYFS_MOUNT);
  }

  async diff(id: string): Promise<Readable> {
    const dir = await this.complete(id);
    const { packLayer } = await archive();
    return packLayer(join(dir, "diff"), { whiteouts: "mixed", idMap: this.ctx.idMap });
  }
}
