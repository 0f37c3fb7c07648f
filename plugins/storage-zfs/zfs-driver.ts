/**
 * The zfs storage driver: every layer is a ZFS filesystem dataset `<zfs.fsname>/<id>` with
 * `mountpoint=legacy` (ZFS never mounts it by itself; whoever uses it mounts it with
 * `mount -t zfs`). A base layer is made with `zfs create`; a child is a clone of a snapshot of
 * its parent (`zfs snapshot <parent>@<id>`, `zfs clone`), the snapshot then marked for deferred
 * destruction (`zfs destroy -d`) so that ZFS removes it with the last clone, as Docker's driver
 * does. Removal is `zfs destroy -r`, which ZFS refuses while a clone depends on the dataset:
 * a parent with children is never removed. A container's `size` is the dataset's `quota`.
 *
 * Layout under `home` (`<data-root>/zfs`):
 *   incomplete/<id>   present from the start of `create` until the layer is made, and during
 *                     `applyDiff`; holds the parent's id. `cleanup()` destroys what it names.
 *   mnt/<id>-<rand>/  where the driver mounts a dataset for its own work (applying a tar,
 *                     computing a diff or usage), unmounted when done.
 * In ZFS: the user property `com.engine:layer` (`image` or `container`) on every dataset it made.
 *
 * Diffs are naive (Docker's NaiveDiffDriver): the layer's tree is compared with its parent's.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, realpath, rm, unlink, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { Readable } from "node:stream";
import type { CreateOptions, LayerUsage, MountSpec, StorageCapability, StorageContext, StorageDriver } from "../../core/contracts/storage.js";
import { mountOf, readMountinfo } from "../../core/mountinfo.js";
import { layerSize, layerSizeOption } from "../../core/storage/options.js";
import { OwnMounts, type MountFunction } from "./own-mounts.js";
import { saysMissing, ZfsCommand, ZfsCommandError } from "./zfs-command.js";
import { errors } from "../../core/errors.js";

/** The tar code is loaded on first use, not at daemon start. */
const archive = () => import("../../core/archive/index.js");

/** Ways in that only the tests use: the fake zfs command, and how its datasets are mounted. */
export interface ZfsDriverHooks {
  zfsCommand?: string;
  zpoolCommand?: string;
  /** Mounts one of the driver's mount specifications at `target` (default: `mount -t zfs`). */
  mount?: MountFunction;
  /** The text of /proc/self/mountinfo, where the default `zfs.fsname` is looked up. */
  mountinfo?: string;
}

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const LAYER_PROPERTY = "com.engine:layer";
const INCOMPLETE = "incomplete";
const MOUNTS = "mnt";

interface Layer {
  parent?: string;
  writable: boolean;
}

export async function createZfsDriver(ctx: StorageContext, hooks: ZfsDriverHooks = {}): Promise<ZfsDriver> {
  // Its diffs come from comparing trees (packChanges), which keeps the owners it finds.
  if (ctx.idMap) throw errors.storageDriverNoUserns("zfs");
  const driver = new ZfsDriver(ctx, hooks);
  await driver.init();
  return driver;
}

export class ZfsDriver implements StorageDriver {
  readonly name = "zfs";
  readonly capabilities: readonly StorageCapability[] = ["quota"];
  readonly home: string;
  /** The dataset the layers are made under. */
  fsname = "";
  private readonly cmd: ZfsCommand;
  private readonly layers = new Map<string, Layer>();
  private readonly own: OwnMounts;

  constructor(
    private readonly ctx: StorageContext,
    private readonly hooks: ZfsDriverHooks,
  ) {
    this.home = resolve(ctx.home);
    this.cmd = new ZfsCommand(hooks.zfsCommand, hooks.zpoolCommand);
    this.own = new OwnMounts(join(this.home, MOUNTS), hooks.mount);
  }

  /** Checks the dataset the options name (the host checked their keys: manifest.ts), finds it, and learns the layers already in it. */
  async init(): Promise<void> {
    this.fsname = (this.ctx.options["zfs.fsname"] as string | undefined) ?? (await this.datasetOfDataRoot());
    if (!this.fsname || this.fsname.startsWith("/") || this.fsname.includes("@")) {
      throw new Error(`zfs: invalid zfs.fsname ${JSON.stringify(this.fsname)}: expected a filesystem dataset such as tank/engine`);
    }
    let rows;
    try {
      rows = await this.cmd.list(this.fsname, ["name", "origin", LAYER_PROPERTY], { type: "filesystem", depth: 1 });
    } catch (err) {
      throw new Error(`zfs: cannot find root filesystem ${this.fsname}: ${(err as Error).message}`);
    }
    for (const row of rows.slice(1)) this.remember(row);
    await mkdir(join(this.home, INCOMPLETE), { recursive: true, mode: 0o700 });
    await this.own.init();
  }

  /** The ZFS filesystem mounted where the data root is (Docker's default for zfs.fsname). */
  private async datasetOfDataRoot(): Promise<string> {
    const dataRoot = dirname(this.home);
    const path = await realpath(dataRoot).catch(() => dataRoot);
    const mount = mountOf(path, this.hooks.mountinfo ?? readMountinfo());
    if (!mount || mount.fsType !== "zfs") {
      throw new Error(
        `zfs: the data root ${dataRoot} is on ${mount?.fsType ?? "an unknown filesystem"}, not on a ZFS filesystem; ` +
          `put it on one, or name the dataset to use with --storage-opt zfs.fsname=<pool>/<dataset>`,
      );
    }
    return mount.source;
  }

  private remember(row: Record<string, string>): void {
    const id = row.name.slice(this.fsname.length + 1);
    const origin = /^(.*)@[^@]*$/.exec(row.origin)?.[1];
    const parent = origin?.startsWith(`${this.fsname}/`) ? origin.slice(this.fsname.length + 1) : undefined;
    this.layers.set(id, { parent, writable: row[LAYER_PROPERTY] === "container" });
  }

  async status(): Promise<[string, string][]> {
    const pool = this.fsname.split("/")[0];
    const health = await this.cmd.zpool(["list", "-H", "-o", "health", pool]).then(
      (out) => out.trim(),
      () => "not available",
    );
    const [row] = await this.cmd.list(this.fsname, ["used", "available", "quota", "compression"]).catch(() => [{} as Record<string, string>]);
    return [
      ["Zpool", pool],
      ["Zpool Health", health],
      ["Parent Dataset", this.fsname],
      ["Space Used By Parent", row.used ?? "unknown"],
      ["Space Available", row.available ?? "unknown"],
      ["Parent Quota", !row.quota || row.quota === "0" || row.quota === "-" ? "no" : row.quota],
      ["Compression", row.compression ?? "unknown"],
    ];
  }

  // --- names and markers -------------------------------------------------------------------------

  private dataset(id: string): string {
    if (!ID_RE.test(id)) throw new Error(`zfs: invalid layer id ${JSON.stringify(id)}`);
    return `${this.fsname}/${id}`;
  }

  private marker(id: string): string {
    return join(this.home, INCOMPLETE, id);
  }

  /** The layer, or an error unless it is whole (exists, not half made). */
  private complete(id: string): Layer {
    this.dataset(id);
    const layer = this.layers.get(id);
    if (!layer) throw new Error(`zfs: layer ${id} does not exist`);
    if (existsSync(this.marker(id))) throw new Error(`zfs: layer ${id} is incomplete`);
    return layer;
  }

  // --- layers ------------------------------------------------------------------------------------

  async exists(id: string): Promise<boolean> {
    this.dataset(id);
    return this.layers.has(id);
  }

  async parent(id: string): Promise<string | undefined> {
    this.dataset(id);
    const layer = this.layers.get(id);
    if (!layer) throw new Error(`zfs: layer ${id} does not exist`);
    return layer.parent;
  }

  async create(id: string, parent: string | undefined, opts: CreateOptions = {}): Promise<void> {
    const name = this.dataset(id);
    if (this.layers.has(id)) throw new Error(`zfs: layer ${id} already exists`);
    if (parent !== undefined) {
      this.dataset(parent);
      if (!this.layers.has(parent) || existsSync(this.marker(parent))) {
        throw new Error(`zfs: cannot create layer ${id}: parent layer ${parent} does not exist`);
      }
    }
    const quota = this.layerQuota(id, opts);
    const writable = !!opts.writable;
    const props = ["-o", "mountpoint=legacy", "-o", `${LAYER_PROPERTY}=${writable ? "container" : "image"}`];
    await writeFile(this.marker(id), parent ?? "", { flag: "wx" }).catch((err: NodeJS.ErrnoException) => {
      throw err.code === "EEXIST" ? new Error(`zfs: layer ${id} is being made already`) : err;
    });
    let made = false;
    try {
      if (parent === undefined) {
        await this.cmd.zfs(["create", ...props, name]);
        made = true;
      } else {
        const snapshot = `${this.dataset(parent)}@${id}`;
        await this.cmd.zfs(["snapshot", snapshot]);
        try {
          await this.cmd.zfs(["clone", ...props, snapshot, name]);
          made = true;
        } finally {
          // Marked for deferred destruction: ZFS destroys it with its last clone (at once when the clone failed).
          await this.cmd.zfs(["destroy", "-d", snapshot]);
        }
      }
      this.layers.set(id, { parent, writable });
      if (quota !== undefined) await this.cmd.zfs(["set", `quota=${quota}`, name]);
      await unlink(this.marker(id));
    } catch (err) {
      this.layers.delete(id);
      // Only what this call made is destroyed (a dataset that was there already is not ours);
      // when that fails too, the marker stays and cleanup() finishes it.
      if (made) await this.destroyHalfMade(id, parent).catch(() => {});
      else await rm(this.marker(id), { force: true });
      throw new Error(`zfs: cannot create layer ${id}: ${(err as Error).message}`);
    }
  }

  /** The quota a new layer gets, in bytes, or undefined; throws for options it cannot honour. */
  private layerQuota(id: string, opts: CreateOptions): number | undefined {
    const size = layerSizeOption("zfs", opts);
    if (size === undefined) return undefined;
    if (!opts.writable) throw new Error(`zfs: the size option applies to writable layers only (layer ${id})`);
    return layerSize("zfs", size);
  }

  /** Destroys what a failed or interrupted `create` made, then its marker. */
  private async destroyHalfMade(id: string, parent: string | undefined): Promise<void> {
    await this.destroy(this.dataset(id), ["-r"]);
    // The snapshot outlives a crash between `snapshot` and `destroy -d`; once its clone is gone, it goes.
    if (parent) await this.destroy(`${this.dataset(parent)}@${id}`, []);
    await rm(this.marker(id), { force: true });
  }

  /** `zfs destroy`; a dataset that is not there is fine. */
  private async destroy(name: string, flags: string[]): Promise<void> {
    try {
      await this.cmd.zfs(["destroy", ...flags, name]);
    } catch (err) {
      if (!saysMissing(err)) throw err;
    }
  }

  async applyDiff(id: string, tar: Readable): Promise<number> {
    const layer = this.complete(id);
    await writeFile(this.marker(id), layer.parent ?? "");
    const { applyLayer } = await archive();
    // Writable while it is filled, whatever it is: no one else has mounted a layer being made.
    const spec = { ...this.spec(id, layer), options: [] };
    const { size } = await this.own.with(id, spec, (root) => applyLayer(tar, root, { whiteouts: "remove", allowDevices: true }));
    await unlink(this.marker(id));
    return size;
  }

  async mounts(id: string): Promise<MountSpec[]> {
    const layer = this.complete(id);
    return [this.spec(id, layer)];
  }

  private spec(id: string, layer: Layer): MountSpec {
    return { type: "zfs", source: this.dataset(id), options: layer.writable ? [] : ["ro"] };
  }

  async diff(id: string): Promise<Readable> {
    const layer = this.complete(id);
    const { packChanges, treeChanges } = await archive();
    const mounted = await this.mountChain(id, layer);
    let changes;
    try {
      changes = await treeChanges(mounted.root, mounted.parentRoot);
    } catch (err) {
      await mounted.release();
      throw err;
    }
    const tar = packChanges(mounted.root, changes);
    // Unmounted before the reader sees the end (or as soon as it stops reading): nothing stays mounted.
    async function* thenRelease(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of tar) yield chunk as Buffer;
      } finally {
        tar.destroy();
        await mounted.release();
      }
    }
    return Readable.from(thenRelease(), { objectMode: false });
  }

  async usage(id: string): Promise<LayerUsage> {
    this.dataset(id);
    const layer = this.layers.get(id);
    if (!layer) throw new Error(`zfs: layer ${id} does not exist`);
    const { changesUsage, treeChanges } = await archive();
    const mounted = await this.mountChain(id, layer);
    try {
      return changesUsage(mounted.root, await treeChanges(mounted.root, mounted.parentRoot));
    } finally {
      await mounted.release();
    }
  }

  async remove(id: string): Promise<void> {
    const name = this.dataset(id);
    try {
      await this.destroy(name, ["-r"]);
    } catch (err) {
      throw new Error(`zfs: cannot remove layer ${id}: ${(err as Error).message}`);
    }
    this.layers.delete(id);
    await rm(this.marker(id), { force: true });
  }

  async cleanup(): Promise<void> {
    await this.own.cleanup();
    for (const id of await readdir(join(this.home, INCOMPLETE))) {
      if (!ID_RE.test(id)) continue;
      const parent = (await readFile(this.marker(id), "utf8")) || undefined;
      await this.destroyHalfMade(id, parent);
      this.layers.delete(id);
    }
  }

  /** Mounts the layer (as its specification says) and its parent (read-only) aside, for a diff. */
  private async mountChain(id: string, layer: Layer): Promise<{ root: string; parentRoot?: string; release: () => Promise<void> }> {
    const root = await this.own.mountAside(id, this.spec(id, layer));
    if (layer.parent === undefined) return { root, release: () => this.own.unmount(root) };
    try {
      const parentRoot = await this.own.mountAside(layer.parent, this.spec(layer.parent, { writable: false }));
      return { root, parentRoot, release: () => Promise.all([this.own.unmount(root), this.own.unmount(parentRoot)]).then(() => {}) };
    } catch (err) {
      await this.own.unmount(root);
      throw err;
    }
  }
}

export { ZfsCommandError };
