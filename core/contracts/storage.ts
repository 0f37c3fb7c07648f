/**
 * The storage contract: how image layers and container filesystems are kept on disk.
 *
 * Vocabulary
 * - layer: a directory tree identified by an id the caller chooses (the image store uses the
 *   layer's chain ID without `sha256:`; a container's writable layer uses the container id).
 *   A layer has at most one parent; a layer and its ancestors form a chain, the root file
 *   system seen through the layer.
 * - diff: the changes a layer makes to its parent, as an uncompressed tar in the OCI form:
 *   a deleted path is a `.wh.<name>` file, a directory whose old contents are hidden carries a
 *   `.wh..wh..opq` file. How the driver keeps whiteouts on disk is its own affair (overlay2
 *   keeps them as 0:0 character devices and `trusted.overlay.opaque` attributes).
 * - mount specification: what to mount to see a chain (type, source, options), returned to the
 *   caller; the driver does not mount for it. Read-only for image layers; a writable layer's
 *   specification has its own directory on top.
 * - options: namespaced (`overlay2.size`), declared with their types in the plugin's manifest;
 *   the host refuses unknown ones and bad values before the driver is made (StorageContext).
 *
 * Lifecycle of a layer
 *   create(id, parent) -> applyDiff(id, tar) (image layers, once) -> mounts(id) (as often as
 *   needed) -> diff(id) (commit, save) -> remove(id) (safe twice; never removes a parent that
 *   still has children). A layer is marked incomplete from the start of `create` until it is
 *   made, and again during `applyDiff` until the whole tar is applied: an incomplete layer is
 *   never a parent nor mounted. The caller removes a layer that failed half way, and
 *   `cleanup()` at start removes what a crash left (incomplete layers, the driver's temporary
 *   state).
 *
 * Optional abilities are declared in `capabilities`, never guessed: `quota` (a per-layer size
 * limit), `native-diff` (the driver computes diffs from its own format, without comparing trees),
 * `parallel-apply` (applying a diff reads and writes nothing of the parent's, so the layers of
 * a chain may all be created first, in order, and their diffs then applied at the same time; a
 * pull extracts every layer as it downloads). Without `parallel-apply`, a layer is created only
 * once its parent's diff is applied (a snapshot driver copies the parent's files).
 *
 * User namespaces (`--userns-remap`): the context's `idMap` says which host ids the ids of the
 * diffs stand for. A driver given one extracts with the owners moved to the host ids
 * (`applyLayer`'s `idMap`), packs its diffs with them moved back (`packLayer`'s `idMap`), and
 * gives the directories it makes for a layer's content (overlay2's `diff` and `work`) to the
 * remapped root, so that a container's root owns its root filesystem. Tars go in and come out
 * with container ids whatever the map: images stay portable.
 */
import type { Readable } from "node:stream";
import type { LayoutRecorder } from "../archive/tar-layout.js";
import type { IdMap } from "../userns/id-map.js";
import type { PluginOptionValues } from "../options/plugin-options.js";

export type StorageCapability = "quota" | "native-diff" | "parallel-apply";

export interface MountSpec {
  type: string;
  source: string;
  options: string[];
  /**
   * When set, the paths in `options` are relative to this folder and the caller mounts from it
   * (mount(8) run there, or chdir before mount(2)): a deep overlay chain's options fit in one
   * page of mount data only with short relative paths.
   */
  cwd?: string;
}

export interface LayerUsage {
  /**
   * Bytes this layer itself holds (not its parents'), as Docker counts a layer's size: every
   * entry but directories (a symlink counts its target's length), each inode once.
   */
  size: number;
  inodes: number;
}

export interface ApplyDiffOptions {
  /** Records the tar's layout (core/archive/tar-layout.ts) while it is applied. */
  layout?: LayoutRecorder;
}

export interface CreateOptions {
  /** A writable layer (a container's) rather than an image layer. */
  writable?: boolean;
  /**
   * Per-layer options, such as `size` for a quota, already namespace-free: a container's
   * `HostConfig.StorageOpt`. What the driver cannot honour it refuses before it makes anything,
   * with a 400 from the catalogue (`ENGINE_ERR_STORAGE_LAYER_*`) that names the option.
   */
  storageOpts?: Record<string, string>;
}

export interface StorageDriver {
  /** The name operators select it by (`overlay2`). */
  readonly name: string;
  readonly capabilities: readonly StorageCapability[];
  /**
   * Lines for `/info`'s DriverStatus: `[["Backing Filesystem", "extfs"], ...]`. `null` where
   * Docker's driver has no status at all and shows `null` (vfs), `[]` where it shows an empty list.
   */
  status(): Promise<[string, string][] | null>;
  /** Removes what a crash left behind; called once before the driver is used. */
  cleanup(): Promise<void>;
  exists(id: string): Promise<boolean>;
  /** Creates an empty layer on `parent`. Throws if `id` exists or `parent` does not. */
  create(id: string, parent: string | undefined, opts?: CreateOptions): Promise<void>;
  /**
   * Extracts an uncompressed layer tar (OCI form) into a freshly created layer; resolves with
   * the bytes it holds. A driver that implements `diffDir` passes `opts.layout` on to
   * core/archive's `applyLayer`.
   */
  applyDiff(id: string, tar: Readable, opts?: ApplyDiffOptions): Promise<number>;
  /**
   * Optional: the folder that holds the layer's own files as its diff was applied, regular
   * files at their names in the tar (overlay2's `diff`). With it (and the layout recorded while
   * the diff was applied) the image store makes a layer's tar again from its files, byte for
   * byte, instead of keeping a pulled layer's compressed blob. The folder is read, never
   * written, by the caller.
   */
  diffDir?(id: string): string;
  /** What to mount to see the chain that ends in `id`. */
  mounts(id: string): Promise<MountSpec[]>;
  /** The layer's changes against its parent, as an uncompressed tar in the OCI form. */
  diff(id: string): Promise<Readable>;
  usage(id: string): Promise<LayerUsage>;
  /**
   * What `docker inspect` shows of the layer `id` as `GraphDriver.Data` (Docker's GetMetadata):
   * the driver's own folders, by Docker's names where it has them (`UpperDir`, `WorkDir`,
   * `LowerDir`: the parents' folders, nearest first, joined by `:`). Optional: without it the
   * field is `null`. The daemon adds `MergedDir` for a container (where its root is mounted).
   */
  metadata?(id: string): Promise<Record<string, string>>;
  /** The parent of a layer, or undefined for a base layer. */
  parent(id: string): Promise<string | undefined>;
  /** Removes a layer; removing one that does not exist is not an error. */
  remove(id: string): Promise<void>;
}

/** What a storage plugin's factory is given. */
export interface StorageContext {
  /** `<data-root>/<driver name>`: the driver's own folder. */
  home: string;
  /**
   * The driver's options from `--storage-opt`, namespace included (`overlay2.size`): checked
   * against the plugin's manifest and read by their declared types (a `size` is a number of
   * bytes), defaults filled (see core/contracts/plugin.ts). A driver refuses only what a type
   * cannot say (a value its backing filesystem cannot honour).
   */
  options: PluginOptionValues;
  /** The daemon's user namespace map (`--userns-remap`); absent when it remaps nothing. */
  idMap?: IdMap;
}
