/**
 * What the storage drivers that keep every layer as the whole tree of its chain share (btrfs: a
 * subvolume, a child a snapshot of its parent's; vfs: a plain directory, a child a copy of its
 * parent's): the layer records, the lifecycle, the bind mount of a layer's tree, and its changes
 * found by comparing its tree with its parent's (core/archive's tree diff, Docker's naive diff).
 * A driver says how a tree is made and deleted, and where trees live.
 *
 * Layout under `home`:
 *   <trees>/<id>             the layer's tree (`subvolumes/`, `dir/`: the driver's choice)
 *   layers/<id>/parent       the parent's id (absent for a base layer)
 *   layers/<id>/writable     present for a writable (container) layer
 *   layers/<id>/.incomplete  present while `create`, `applyDiff` or `remove` runs
 *
 * `layers/<id>` is made first and removed last, so a layer exists exactly while it has one, and
 * one being made or removed is marked incomplete; `cleanup()` deletes what a crash left:
 * incomplete layers, layer folders without a tree, and trees without a layer folder.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, rm, unlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Readable } from "node:stream";
import type { CreateOptions, LayerUsage, MountSpec } from "../contracts/storage.js";
import type { IdMap } from "../userns/id-map.js";
import { readOptional } from "./read-optional.js";

/** The tar code is loaded on first use, not at daemon start. */
const archive = () => import("../archive/index.js");

const INCOMPLETE = ".incomplete";
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** A step run on a new layer's tree (a quota): given the tree and the layer's record folder. */
export type TreeSetup = (tree: string, record: string) => Promise<void>;

export abstract class WholeTreeLayers {
  abstract readonly name: string;
  readonly home: string;

  /**
   * `trees`: the folder under `home` that holds the trees. `snapshot`: a child's tree keeps its
   * parent's inode numbers and ctimes until a file changes (see treeChanges).
   */
  protected constructor(
    home: string,
    private readonly trees: string,
    private readonly snapshot: boolean,
    protected readonly idMap?: IdMap,
  ) {
    this.home = resolve(home);
  }

  /**
   * Makes the tree of a new layer at `tree`: empty, or from its parent's tree; runs `setup`
   * (the layer's, when it has one) once the tree is there, before or after it is filled as the
   * driver needs (a quota that the copied files must count in goes before).
   */
  protected abstract makeTree(tree: string, parentTree: string | undefined, setup: () => Promise<void>): Promise<void>;

  /** Deletes a tree (whole or half made, or a leftover); `tree` exists. */
  protected abstract deleteTree(tree: string): Promise<void>;

  /**
   * Judges a new layer's options before anything is made (throws a 400 from the catalogue for
   * one it cannot honour); resolves with a step to run once its tree is made, if any.
   */
  protected abstract layerSetup(id: string, opts: CreateOptions): Promise<TreeSetup | undefined>;

  /** Makes the folders the records and trees live in. */
  protected async makeHome(treesMode: number): Promise<void> {
    await mkdir(join(this.home, this.trees), { recursive: true, mode: treesMode });
    await mkdir(join(this.home, "layers"), { recursive: true, mode: 0o700 });
  }

  // --- paths -------------------------------------------------------------------------------------

  private check(id: string): string {
    if (!ID_RE.test(id)) throw new Error(`${this.name}: invalid layer id ${JSON.stringify(id)}`);
    return id;
  }

  /** The layer's tree. */
  protected tree(id: string): string {
    return join(this.home, this.trees, this.check(id));
  }

  /** The layer's record folder. */
  protected record(id: string): string {
    return join(this.home, "layers", this.check(id));
  }

  /** Whether `id` is a whole layer: made, not half made. */
  private whole(id: string): boolean {
    return existsSync(this.tree(id)) && existsSync(this.record(id)) && !existsSync(join(this.record(id), INCOMPLETE));
  }

  /** The tree of a whole layer; throws otherwise. */
  protected complete(id: string): string {
    if (!existsSync(this.record(id))) throw new Error(`${this.name}: layer ${id} does not exist`);
    if (!this.whole(id)) throw new Error(`${this.name}: layer ${id} is incomplete`);
    return this.tree(id);
  }

  // --- layers ------------------------------------------------------------------------------------

  async exists(id: string): Promise<boolean> {
    return existsSync(this.record(id));
  }

  async parent(id: string): Promise<string | undefined> {
    if (!existsSync(this.record(id))) throw new Error(`${this.name}: layer ${id} does not exist`);
    return (await readOptional(join(this.record(id), "parent"))) || undefined;
  }

  async create(id: string, parent: string | undefined, opts: CreateOptions = {}): Promise<void> {
    const setup = await this.layerSetup(id, opts);
    if (parent !== undefined && !this.whole(parent)) throw new Error(`${this.name}: cannot create layer ${id}: parent layer ${parent} does not exist`);
    const record = this.record(id);
    try {
      await mkdir(record, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") throw new Error(`${this.name}: layer ${id} already exists`);
      throw err;
    }
    const tree = this.tree(id);
    try {
      await writeFile(join(record, INCOMPLETE), "");
      if (parent !== undefined) await writeFile(join(record, "parent"), parent);
      if (opts.writable) await writeFile(join(record, "writable"), "");
      // a tree a crash left under this id (its record gone) is not this layer's
      if (existsSync(tree)) await this.deleteTree(tree);
      await this.makeTree(tree, parent === undefined ? undefined : this.tree(parent), async () => setup?.(tree, record));
      await unlink(join(record, INCOMPLETE));
    } catch (err) {
      await this.removeLayer(id).catch(() => {});
      throw err;
    }
  }

  async applyDiff(id: string, tar: Readable): Promise<number> {
    const tree = this.complete(id);
    const record = this.record(id);
    await writeFile(join(record, INCOMPLETE), "");
    const { applyLayer } = await archive();
    // The tree holds the parent's whole tree: a whiteout deletes what it names. Resolves with
    // the tar's file bytes, as Docker's naive-diff drivers count an applied layer. Device nodes
    // are let through as Docker does for root: the devices cgroup guards their use.
    const { size } = await applyLayer(tar, tree, { whiteouts: "remove", allowDevices: true, idMap: this.idMap });
    await unlink(join(record, INCOMPLETE));
    return size;
  }

  /** The layer's tree bound: read-only for an image layer, writable for a container's. */
  async mounts(id: string): Promise<MountSpec[]> {
    const tree = this.complete(id);
    const writable = existsSync(join(this.record(id), "writable"));
    return [{ type: "bind", source: tree, options: writable ? ["bind"] : ["bind", "ro"] }];
  }

  /** The layer's changes against its parent's tree (everything, for a base layer). */
  private async changes(id: string) {
    const tree = this.complete(id);
    const parent = await this.parent(id);
    const { treeChanges } = await archive();
    return { tree, changes: await treeChanges(tree, parent && this.tree(parent), { snapshot: this.snapshot }) };
  }

  async diff(id: string): Promise<Readable> {
    const { tree, changes } = await this.changes(id);
    const { packChanges } = await archive();
    return packChanges(tree, changes, this.idMap);
  }

  async usage(id: string): Promise<LayerUsage> {
    const { tree, changes } = await this.changes(id);
    const { changesUsage } = await archive();
    return changesUsage(tree, changes);
  }

  async remove(id: string): Promise<void> {
    const record = this.record(id);
    if (!existsSync(record)) return;
    // A writable layer (a container's) is never a parent: no need to read every layer's parent.
    const children = existsSync(join(record, "writable")) ? [] : await this.children(id);
    if (children.length > 0) {
      throw new Error(`${this.name}: cannot remove layer ${id}: layers ${children.join(", ")} use it as their parent`);
    }
    await this.removeLayer(id);
  }

  /** The ids of the layers that have a record. */
  protected async layerIds(): Promise<string[]> {
    return (await readdir(join(this.home, "layers"))).filter((entry) => ID_RE.test(entry));
  }

  /** Ids of the layers whose parent is `id`. */
  private async children(id: string): Promise<string[]> {
    const out: string[] = [];
    for (const entry of await readdir(join(this.home, "layers"))) {
      if (entry !== id && (await readOptional(join(this.home, "layers", entry, "parent"))) === id) out.push(entry);
    }
    return out;
  }

  /** Releases what the driver keeps for a layer outside its tree (a quota), before the tree goes. */
  protected async releaseLayer(_record: string): Promise<void> {}

  /** Removes a layer's tree, then its record; marked incomplete first, so a crash half way leaves it for cleanup. */
  protected async removeLayer(id: string): Promise<void> {
    const record = this.record(id);
    if (existsSync(record)) {
      await writeFile(join(record, INCOMPLETE), "");
      await this.releaseLayer(record);
    }
    const tree = this.tree(id);
    if (existsSync(tree)) await this.deleteTree(tree);
    await rm(record, { recursive: true, force: true });
  }

  async cleanup(): Promise<void> {
    const layers = new Set(await readdir(join(this.home, "layers")));
    for (const id of layers) {
      if (!ID_RE.test(id)) continue;
      if (existsSync(join(this.record(id), INCOMPLETE)) || !existsSync(this.tree(id))) await this.removeLayer(id);
    }
    // A tree is made after its layer's record and deleted before it: one without a record is a leftover.
    for (const entry of await readdir(join(this.home, this.trees))) {
      if (!layers.has(entry)) await this.deleteTree(join(this.home, this.trees, entry));
    }
  }
}
