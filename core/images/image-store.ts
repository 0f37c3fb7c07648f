/**
 * The image store: images by ID (the digest of their configuration), the references that name
 * them, and their layers (through the layer store and the storage driver). Layout under
 * `<data-root>/image/`:
 *   blobs/sha256/<hex>     configs and uncompressed layer tars
 *   layers/<chain>.json    whole layers (see layer-store.ts)
 *   images/<id>.json       whole images: written last, so an image is listed only when whole
 *   references.json        name -> image ID, rewritten atomically
 *   retained.json          image ID -> chain, of images removed with force while stopped
 *                          containers rest on them: their layers stay until no container does
 * Mutations run one at a time. `open()` cleans what a crash left: temporary files, layers and
 * blobs no whole image uses, references to images that are not whole. The records, the
 * references and the parsed configs are kept in memory too, each changed only after its write
 * is on disk: a list or a lookup reads no file, and costs no more per image with 1,000 images
 * than with 10.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { StorageDriver } from "../contracts/storage.js";
import { errors } from "../errors.js";
import { PRIVATE_DIR } from "../state-modes.js";
import { removeTempFiles, writeJsonDurably } from "../fs/durable-file.js";
import { killPoint } from "../kill-points.js";
import { BlobStore } from "./blob-store.js";
import { DistributionMetadata } from "./distribution.js";
import { parseImageConfig, type HistoryEntry, type ImageConfig } from "./image-config.js";
import { chainIdOf, keptBlobOf, LayerStore, type LayerRecord } from "./layer-store.js";
import { familiarName, formatReference, parseReference, repositoryOf } from "./reference.js";
import { ReferenceIndex } from "./reference-index.js";

export interface ImageRecord {
  id: string;
  /** Chain IDs of its layers, base first. */
  chain: string[];
  /** When this store got the image (RFC 3339). */
  stored: string;
  lastTagTime?: string;
  /** The image a commit was made from (Docker's parent link), by ID. */
  parent?: string;
}

export interface Image extends ImageRecord {
  config: ImageConfig;
  /** Full references (`docker.io/library/busybox:latest`). */
  references: string[];
  size: number;
}

export type DeleteEntry = { Untagged: string } | { Deleted: string };

/** Containers using an image, one of each kind (Docker's conflicts name one): full IDs. */
export interface ImageUsers {
  running?: string;
  stopped?: string;
}

export interface LayerProgress {
  diffId: string;
  existed: boolean;
}

const hex = (id: string) => id.slice("sha256:".length);

export class ImageStore {
  readonly blobs: BlobStore;
  readonly layers: LayerStore;
  readonly distribution: DistributionMetadata;
  private readonly imagesDir: string;
  private readonly refsFile: string;
  private refs = new ReferenceIndex();
  /** The whole images' records, by ID: what `images/<hex>.json` holds (filled at the open). */
  private readonly recs = new Map<string, ImageRecord>();
  /**
   * Config blobs by image ID, as read once (a config is the blob its ID is the digest of: it
   * never changes). Parsed at each use: every caller gets a config of its own to keep or change.
   */
  private readonly configs = new Map<string, Buffer>();
  /** Layers a pull or push is using, by chain ID (with a count): clean-ups leave them alone. */
  private readonly held = new Map<string, number>();
  /**
   * The chains of images removed while stopped containers' layers rest on them, by image ID
   * (`retained.json`): kept from clean-ups until `usersOf` says no container uses the image.
   */
  private retained = new Map<string, string[]>();
  private readonly retainedFile: string;
  /** Who uses an image (set once the containers are known; until then every retained chain stays). */
  private usersOf?: (id: string) => ImageUsers;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(readonly root: string, readonly tmpDir: string, readonly driver: StorageDriver) {
    this.blobs = new BlobStore(root, tmpDir);
    this.layers = new LayerStore(root, this.blobs, driver);
    this.distribution = new DistributionMetadata(root);
    this.imagesDir = join(root, "images");
    this.refsFile = join(root, "references.json");
    this.retainedFile = join(root, "retained.json");
    mkdirSync(this.imagesDir, { recursive: true, mode: PRIVATE_DIR });
    // what writes a crash interrupted left (records, and references.json beside them)
    removeTempFiles(this.imagesDir);
    removeTempFiles(root);
  }

  static async open(root: string, tmpDir: string, driver: StorageDriver): Promise<ImageStore> {
    const store = new ImageStore(root, tmpDir, driver);
    await store.recover();
    return store;
  }

  /** Tells the store which containers use an image: its removals follow Docker's conflicts by it. */
  setUsers(usersOf: (id: string) => ImageUsers): void {
    this.usersOf = usersOf;
  }

  /** Runs mutations one after another. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  // --- reading -------------------------------------------------------------------------------

  /** The IDs of an image's ancestors (its parent, the parent's...), nearest first: what a removal may take along. */
  ancestors(image: ImageRecord): string[] {
    const out: string[] = [];
    for (let up = image.parent ? this.record(image.parent) : undefined; up && !out.includes(up.id); up = up.parent ? this.record(up.parent) : undefined) out.push(up.id);
    return out;
  }

  private record(id: string): ImageRecord | undefined {
    return this.recs.get(id);
  }

  private records(): ImageRecord[] {
    return [...this.recs.values()];
  }

  /** The records on disk, at the open. */
  private readRecords(): ImageRecord[] {
    const out: ImageRecord[] = [];
    for (const f of readdirSync(this.imagesDir)) {
      if (!/^[a-f0-9]{64}\.json$/.test(f)) continue;
      try {
        out.push(JSON.parse(readFileSync(join(this.imagesDir, f), "utf8")) as ImageRecord);
      } catch {
        // not whole: not an image
      }
    }
    return out;
  }

  /** Writes the record, then keeps it: listed once it is on disk. */
  private async writeRecord(rec: ImageRecord): Promise<void> {
    await writeJsonDurably(join(this.imagesDir, `${hex(rec.id)}.json`), rec);
    this.recs.set(rec.id, rec);
  }

  private removeRecord(id: string): void {
    rmSync(join(this.imagesDir, `${hex(id)}.json`), { force: true });
    this.recs.delete(id);
    this.configs.delete(id);
  }

  private image(rec: ImageRecord): Image {
    let bytes = this.configs.get(rec.id);
    if (!bytes) this.configs.set(rec.id, (bytes = this.blobs.read(rec.id)));
    const config = parseImageConfig(bytes, rec.id);
    const size = rec.chain.reduce((sum, c) => sum + (this.layers.get(c)?.size ?? 0), 0);
    return { ...rec, config, references: this.referencesOf(rec.id), size };
  }

  referencesOf(id: string): string[] {
    return this.refs.namesOf(id);
  }

  list(): Image[] {
    return this.records().map((r) => this.image(r));
  }

  count(): number {
    return this.recs.size;
  }

  /**
   * Finds an image by reference (`busybox`, `busybox:1`, `x@sha256:..`), full ID
   * (`sha256:<hex>` or bare hex) or unique ID prefix; 404 `No such image: <name>` otherwise.
   */
  resolve(name: string): Image {
    return this.lookup(name).image;
  }

  /** The ID of the image a name or ID names now, if one does (no config read: for lists). */
  idNamed(name: string): string | undefined {
    try {
      const byId = this.findById(name);
      if (byId) return byId.id;
      const id = this.refs.get(formatReference(parseReference(name)));
      return id && this.record(id) ? id : undefined;
    } catch {
      return undefined; // not a name, or an ambiguous ID prefix
    }
  }

  /** Like resolve, and says which reference matched (undefined when the name was an ID). */
  lookup(name: string): { image: Image; reference?: string } {
    const byId = this.findById(name);
    if (byId) return { image: this.image(byId) };
    // what is no ID and no reference is the client's error (400), as Docker's look-up says it
    const ref = formatReference(parseReference(name));
    const id = this.refs.get(ref);
    const rec = id ? this.record(id) : undefined;
    // Docker names the missing image the way it read it: `busybox` is `busybox:latest`.
    if (!rec) throw errors.imageNotFound(familiarName(ref));
    return { image: this.image(rec), reference: ref };
  }

  private findById(name: string): ImageRecord | undefined {
    const m = /^(?:sha256:)?([a-f0-9]{1,64})$/.exec(name);
    if (!m) return undefined;
    if (m[1].length === 64) return this.record(`sha256:${m[1]}`);
    // A bare word of hex digits could also be a repository name ("abc"): names win.
    if (!name.startsWith("sha256:") && this.refs.has(formatReference(parseReference(name)))) return undefined;
    const matches = this.records().filter((r) => hex(r.id).startsWith(m[1]));
    if (matches.length > 1) throw errors.imageAmbiguous(name);
    return matches[0];
  }

  // --- writing -------------------------------------------------------------------------------

  /**
   * Stores an image from its configuration bytes and its layers' uncompressed tars (files),
   * base first, then names it. Every layer's digest must match the configuration's diff IDs.
   */
  create(configBytes: Buffer, layerTars: readonly string[], tags: readonly string[], onLayer?: (p: LayerProgress) => void): Promise<Image> {
    return this.exclusive(async () => {
      const config = parseImageConfig(configBytes, "image config");
      if (config.rootfs.diff_ids.length !== layerTars.length) {
        throw errors.imageInvalidArchive(`the config lists ${config.rootfs.diff_ids.length} layers, the archive has ${layerTars.length}`);
      }
      const refs = tags.map((t) => formatReference(parseReference(t)));
      let parent: string | undefined;
      const chain: string[] = [];
      for (const [i, file] of layerTars.entries()) {
        const { layer, existed } = await this.layers.register(parent, file, config.rootfs.diff_ids[i]);
        onLayer?.({ diffId: layer.diffId, existed });
        parent = layer.chainId;
        chain.push(layer.chainId);
      }
      const { digest: id } = await this.blobs.putBuffer(configBytes);
      killPoint("image.config-stored");
      const now = new Date().toISOString();
      await this.writeRecord(this.record(id) ?? { id, chain, stored: now });
      killPoint("image.recorded");
      for (const ref of refs) this.refs.set(ref, id);
      if (refs.length) await this.saveRefs(id, now);
      killPoint("image.stored");
      return this.image(this.record(id)!);
    });
  }

  /** Whether the store has the image with this ID (`sha256:<hex>`) whole. */
  has(id: string): boolean {
    return this.recs.has(id);
  }

  /** The image with this ID (`sha256:<hex>`), if the store has it whole. */
  byId(id: string): Image | undefined {
    const rec = this.record(id);
    return rec ? this.image(rec) : undefined;
  }

  /** The image a full reference names, if any. */
  idOf(reference: string): string | undefined {
    return this.refs.get(reference);
  }

  /** Keeps layers from clean-ups until the returned function is called. */
  hold(chainIds: readonly string[]): () => void {
    for (const c of chainIds) this.held.set(c, (this.held.get(c) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const c of chainIds) {
        const n = (this.held.get(c) ?? 1) - 1;
        if (n > 0) this.held.set(c, n);
        else this.held.delete(c);
      }
    };
  }

  /**
   * Stores an image whose layers are registered already (a pull): its config, its record, and
   * its references (full form). Resolves with the image and what each reference named before.
   */
  createFromLayers(configBytes: Buffer, chain: readonly string[], references: readonly string[]): Promise<{ image: Image; before: (string | undefined)[] }> {
    return this.exclusive(async () => {
      const config = parseImageConfig(configBytes, "image config");
      if (config.rootfs.diff_ids.length !== chain.length) throw errors.imageInvalidArchive(`the config lists ${config.rootfs.diff_ids.length} layers, the manifest ${chain.length}`);
      for (const c of chain) if (!this.layers.recordExists(c)) throw errors.imageLayerMissing(c);
      const { digest: id } = await this.blobs.putBuffer(configBytes);
      killPoint("image.config-stored");
      const now = new Date().toISOString();
      const existing = this.record(id);
      if (!existing) await this.writeRecord({ id, chain: [...chain], stored: now });
      killPoint("image.recorded");
      const before = references.map((r) => this.refs.get(r));
      for (const ref of references) this.refs.set(ref, id);
      if (references.length) await this.saveRefs(id, now);
      killPoint("image.stored");
      return { image: this.image(this.record(id)!), before };
    });
  }

  /**
   * Stores a committed image: its new layer (an uncompressed tar file, moved into the store;
   * undefined for a commit whose layer is empty) on `parent`'s chain, its config, its record
   * linked to the parent, and its names (full form).
   */
  commit(configBytes: Buffer, parent: Image | undefined, layerTar: string | undefined, references: readonly string[]): Promise<Image> {
    return this.exclusive(async () => {
      const config = parseImageConfig(configBytes, "image config");
      const chain = [...(parent?.chain ?? [])];
      if (layerTar) {
        const { layer } = await this.layers.register(chain.at(-1), layerTar, config.rootfs.diff_ids.at(-1));
        chain.push(layer.chainId);
      }
      if (config.rootfs.diff_ids.length !== chain.length) throw errors.imageInvalidArchive(`the config lists ${config.rootfs.diff_ids.length} layers, the commit has ${chain.length}`);
      const { digest: id } = await this.blobs.putBuffer(configBytes);
      killPoint("image.config-stored");
      const now = new Date().toISOString();
      if (!this.record(id)) await this.writeRecord({ id, chain, stored: now, ...(parent ? { parent: parent.id } : {}) });
      killPoint("image.recorded");
      for (const ref of references) this.refs.set(ref, id);
      if (references.length) await this.saveRefs(id, now);
      killPoint("image.stored");
      return this.image(this.record(id)!);
    });
  }

  /**
   * Links an image to its parent (a load's `Parent`, as Docker's loader sets it): both must be
   * in the store, the parent's history the child's but its last entry.
   */
  setParent(id: string, parentId: string): Promise<void> {
    return this.exclusive(async () => {
      const rec = this.record(id);
      const parent = this.byId(parentId);
      if (!rec || !parent) throw errors.imageNotFound(rec ? parentId : id);
      if (!historyExtends(this.image(rec).config.history ?? [], parent.config.history ?? [])) throw errors.imageInvalidParent(parentId, id);
      if (rec.parent !== parentId) await this.writeRecord({ ...rec, parent: parentId });
    });
  }

  /** The images committed from this one. */
  children(id: string): string[] {
    return this.records().filter((r) => r.parent === id).map((r) => r.id);
  }

  /** The images committed from `id`, or with no parent at all when `id` is undefined (a build's steps on `scratch`). */
  childrenOf(id: string | undefined): string[] {
    return id === undefined ? this.records().filter((r) => !r.parent).map((r) => r.id) : this.children(id);
  }

  /** Removes layers and blobs no image uses (after a pull that failed half way). */
  pruneUnused(): Promise<void> {
    return this.exclusive(async () => {
      await this.pruneLayers();
      this.pruneBlobs();
    });
  }

  /** Names an image; the name moves off any image it named before. */
  tag(name: string, reference: string): Promise<void> {
    return this.exclusive(async () => {
      const image = this.resolve(name);
      const ref = formatReference(parseReference(reference));
      this.refs.set(ref, image.id);
      await this.saveRefs(image.id, new Date().toISOString());
    });
  }

  /**
   * Removes a name, or an image with its names, by Docker's rules (moby's image_delete.go): a
   * parent of other images and an image a running container uses are never removed (their
   * names may go); one a stopped container uses, or named in several repositories, only with
   * `force`. An image removed from under stopped containers leaves its layers to them.
   */
  delete(name: string, opts: { force: boolean; noprune: boolean }): Promise<DeleteEntry[]> {
    return this.exclusive(async () => {
      const { image, reference } = this.lookup(name);
      const short = hex(image.id).slice(0, 12);
      const users = this.usersOf?.(image.id) ?? {};
      const conflict = (hard: boolean, why: string) => errors.imageConflict(`unable to delete ${short} (${hard ? "cannot be forced" : "must be forced"}) - ${why}`);
      const hasChildren = this.children(image.id).length > 0;
      const out: DeleteEntry[] = [];
      const untag = async (names: string[]): Promise<void> => {
        for (const r of names) this.refs.delete(r);
        await this.saveRefs();
        out.push(...names.map((r) => ({ Untagged: familiarName(r) })));
      };
      if (reference) {
        // A removal by name takes the name, and with a repository's last tag the digest names
        // of that repository (a pull by tag names the image both ways; Docker's `rmi busybox`
        // after `pull busybox` removes the image, not just the tag).
        const user = users.running ?? users.stopped;
        if (!opts.force && user && isSingleReference(image.references)) {
          throw errors.imageConflict(`unable to remove repository reference "${name}" (must force) - container ${user.slice(0, 12)} is using its referenced image ${short}`);
        }
        const going = [reference, ...digestNamesGoingWith(reference, image.references)];
        await untag(going);
        // Named still, a parent of other images, or used by a container (running; stopped and
        // not forced): the names were all that went.
        if (image.references.some((r) => !going.includes(r)) || hasChildren || users.running || (users.stopped && !opts.force)) return out;
      } else {
        if (hasChildren) throw conflict(true, "image has dependent child images");
        if (users.running) throw conflict(true, `image is being used by running container ${users.running.slice(0, 12)}`);
        if (!opts.force && !isSingleReference(image.references) && image.references.length > 0) throw conflict(false, "image is referenced in multiple repositories");
        if (!opts.force && users.stopped) throw conflict(false, `image is being used by stopped container ${users.stopped.slice(0, 12)}`);
        await untag(image.references);
      }
      if (users.stopped) await this.retain(image);
      this.removeRecord(image.id);
      out.push({ Deleted: image.id });
      if (!opts.noprune) {
        for (const layer of await this.pruneLayers()) out.push({ Deleted: layer });
        // Docker's prune of parents: a build's intermediate images go with the last image made
        // from them, each with the layers it alone held
        for (let up = image.parent ? this.record(image.parent) : undefined; up && this.releasable(up); up = up.parent ? this.record(up.parent) : undefined) {
          this.removeRecord(up.id);
          out.push({ Deleted: up.id });
          for (const layer of await this.pruneLayers()) out.push({ Deleted: layer });
        }
        this.pruneBlobs();
      }
      return out;
    });
  }

  /**
   * Removes images of the build cache (host/build/cache-prune.ts): each one that nothing names and
   * that `removable` still allows when its turn comes, even when images were made from it. Those
   * keep their link to a parent that is gone, which inspect and history show as Docker shows a
   * parent it no longer has (no `Parent`, `<missing>` lines); their layers are theirs and stay.
   * Resolves with the images removed and the layers that went with them (no image uses them).
   */
  removeUnnamed(ids: readonly string[], removable: (id: string) => boolean): Promise<{ images: string[]; layers: LayerRecord[] }> {
    return this.exclusive(async () => {
      const images: string[] = [];
      for (const id of ids) {
        if (!this.record(id) || this.referencesOf(id).length > 0 || !removable(id)) continue;
        this.removeRecord(id);
        images.push(id);
      }
      if (images.length === 0) return { images, layers: [] };
      const before = new Map(this.layers.list().map((l) => [l.chainId, l]));
      const layers = (await this.pruneLayers()).map((c) => before.get(c)).filter((l): l is LayerRecord => l !== undefined);
      this.pruneBlobs();
      return { images, layers };
    });
  }

  /** A parent that nothing names, nothing else was made from, and no container uses. */
  private releasable(rec: ImageRecord): boolean {
    const users = this.usersOf?.(rec.id);
    return this.referencesOf(rec.id).length === 0 && this.children(rec.id).length === 0 && !users?.running && !users?.stopped;
  }

  /**
   * A container was made on `image` (its record saved): when the image was removed meanwhile
   * (a removal between the create's look-up and its record, while the create held the layers),
   * its chain is kept for the container as a removal with stopped containers keeps it, so that
   * later clean-ups leave the layers under the container's alone.
   */
  keepForNewContainer(image: ImageRecord): Promise<void> {
    return this.exclusive(async () => {
      if (this.record(image.id) || this.retained.has(image.id)) return;
      await this.retain(image);
    });
  }

  /** Keeps a removed image's chain for the stopped containers on it (on disk before the record goes). */
  private async retain(image: ImageRecord): Promise<void> {
    const next = new Map(this.retained).set(image.id, image.chain);
    await writeJsonDurably(this.retainedFile, Object.fromEntries(next));
    this.retained = next;
  }

  /** Whether a removed image's layers are kept for containers (the removal of one of them may free them). */
  isRetained(id: string): boolean {
    return this.retained.has(id);
  }

  /** Lets go of the chains no container uses any more (none while the users are not known). */
  private async releaseRetained(): Promise<void> {
    const usersOf = this.usersOf;
    if (!usersOf || this.retained.size === 0) return;
    const next = new Map([...this.retained].filter(([id]) => {
      const u = usersOf(id);
      return Boolean(u.running || u.stopped);
    }));
    if (next.size === this.retained.size) return;
    await writeJsonDurably(this.retainedFile, Object.fromEntries(next));
    this.retained = next;
  }

  /** The references, and the tag time of the image just tagged, written together. */
  private async saveRefs(taggedId?: string, when?: string): Promise<void> {
    const rec = taggedId && when ? this.record(taggedId) : undefined;
    await Promise.all([
      writeJsonDurably(this.refsFile, Object.fromEntries(this.refs.entries())),
      rec && this.writeRecord({ ...rec, lastTagTime: when }),
    ]);
  }

  // --- clean-up ------------------------------------------------------------------------------

  /**
   * Layers no whole image uses and nobody holds are removed, topmost first; resolves with their
   * chain IDs. A layer's hold is looked at on its turn, with no wait between that look and the
   * start of its removal (from which a pull no longer finds it: LayerStore.remove): a pull that
   * took a layer while the layers above it went keeps it, and the layers under it.
   */
  private async pruneLayers(): Promise<string[]> {
    await this.releaseRetained();
    const used = new Set([...this.records().flatMap((r) => r.chain), ...[...this.retained.values()].flat()]);
    const removed: string[] = [];
    const kept = new Set<string>(); // parents of layers that stay
    const layers = this.layers.list().filter((l) => !used.has(l.chainId));
    // Children before parents: a layer whose chain is longer goes first. Each layer's depth is
    // found once (not at each comparison of the sort, walking its chain every time).
    const depths = new Map<string, number>();
    const depth = (l: LayerRecord): number => {
      let d = depths.get(l.chainId);
      if (d === undefined) {
        const parent = l.parent ? this.layers.get(l.parent) : undefined;
        d = l.parent ? 1 + (parent ? depth(parent) : 0) : 0;
        depths.set(l.chainId, d);
      }
      return d;
    };
    for (const layer of layers.sort((a, b) => depth(b) - depth(a))) {
      if (this.held.has(layer.chainId) || kept.has(layer.chainId)) {
        if (layer.parent) kept.add(layer.parent);
        continue;
      }
      await this.layers.remove(layer.chainId);
      removed.push(layer.chainId);
    }
    return removed;
  }

  private pruneBlobs(): void {
    const keep = new Set<string>();
    for (const rec of this.records()) keep.add(rec.id);
    for (const layer of this.layers.list()) {
      const kept = keptBlobOf(layer);
      if (kept) keep.add(kept);
    }
    for (const diffId of this.layers.registeringDiffIds) keep.add(diffId);
    for (const blob of this.blobs.list()) if (!keep.has(blob)) this.blobs.remove(blob);
  }

  private async recover(): Promise<void> {
    rmSync(this.tmpDir, { recursive: true, force: true });
    mkdirSync(this.tmpDir, { recursive: true, mode: PRIVATE_DIR });
    await this.driver.cleanup();
    await this.layers.recoverPending();
    // Images whose layers or config are not whole are not images.
    for (const rec of this.readRecords()) {
      if (!this.blobs.has(rec.id) || rec.chain.some((c) => !this.layers.recordExists(c))) {
        rmSync(join(this.imagesDir, `${hex(rec.id)}.json`), { force: true });
      } else {
        this.recs.set(rec.id, rec);
      }
    }
    try {
      this.retained = new Map(Object.entries(JSON.parse(readFileSync(this.retainedFile, "utf8")) as Record<string, string[]>));
    } catch {
      this.retained = new Map(); // none yet
    }
    try {
      const saved = JSON.parse(readFileSync(this.refsFile, "utf8")) as Record<string, string>;
      this.refs = new ReferenceIndex(Object.entries(saved).filter(([, id]) => this.record(id) !== undefined));
    } catch {
      this.refs = new ReferenceIndex();
    }
    await this.pruneLayers();
    this.pruneBlobs();
  }
}

export { chainIdOf };

/**
 * The digest names (`repo@sha256:...`) of `tag`'s repository that go when `tag` does: all of
 * them once no other tag of that repository names the image (Docker's rule), none for a name
 * that is itself a digest name.
 */
/**
 * Docker's "single reference": the image's names are one tag (with any digest names of its
 * repository) or digest names of one repository alone; the removal by ID of such an image
 * takes its names without asking for force.
 */
function isSingleReference(names: readonly string[]): boolean {
  if (names.length <= 1) return names.length === 1;
  const tags = names.filter((r) => !parseReference(r).digest);
  if (tags.length > 1) return false;
  const digestRepos = new Set(names.filter((r) => parseReference(r).digest).map((r) => repositoryOf(parseReference(r))));
  const single = tags[0] ?? names[0];
  return digestRepos.size === 1 && digestRepos.has(repositoryOf(parseReference(single)));
}

function digestNamesGoingWith(tag: string, names: readonly string[]): string[] {
  const parsed = parseReference(tag);
  if (parsed.digest) return [];
  const repo = repositoryOf(parsed);
  const sameRepo = names.filter((r) => r !== tag && repositoryOf(parseReference(r)) === repo);
  if (sameRepo.some((r) => !parseReference(r).digest)) return [];
  return sameRepo;
}

/**
 * Whether a child's history is its parent's with one entry more (Docker's checkValidParent):
 * the same entries, times compared as instants; two images without history pass.
 */
function historyExtends(child: readonly HistoryEntry[], parent: readonly HistoryEntry[]): boolean {
  if (child.length === 0 && parent.length === 0) return true;
  if (child.length - parent.length !== 1) return false;
  const same = (a: HistoryEntry, b: HistoryEntry) =>
    (a.created === undefined) === (b.created === undefined) &&
    (a.created === undefined || Date.parse(a.created) === Date.parse(b.created!)) &&
    (a.created_by ?? "") === (b.created_by ?? "") &&
    (a.author ?? "") === (b.author ?? "") &&
    (a.comment ?? "") === (b.comment ?? "") &&
    (a.empty_layer ?? false) === (b.empty_layer ?? false);
  return parent.every((entry, i) => same(entry, child[i]));
}
