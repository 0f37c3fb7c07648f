/**
 * Layers of images, by chain ID: the layer's own content is the storage driver's layer named
 * by the chain ID's hex, its uncompressed tar is a blob named by its diff ID (or, for a pulled
 * layer, `layers/<chain hex>.layout`, from which the driver's files make the tar again, or the
 * compressed blob it came as), and `layers/<chain hex>.json` records that all is whole. That
 * record is written last, so a layer without one is a leftover of a crash, removed at the next
 * start. Records and pending marks are written atomically and flushed, off the event loop
 * (core/fs/durable-file.ts): a pending mark is on disk before the driver layer it names is made.
 *
 *   chainID(L0) = diffID(L0);  chainID(Ln) = sha256(chainID(Ln-1) + " " + diffID(Ln))
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Transform, Writable, type Readable } from "node:stream";
import { finished, pipeline } from "node:stream/promises";
import { directOutlet } from "../archive/outlet.js";
import { LayoutRecorder, tarFromLayout } from "../archive/tar-layout.js";
import type { StorageDriver } from "../contracts/storage.js";
import { errors } from "../errors.js";
import { PRIVATE_DIR, PRIVATE_FILE } from "../state-modes.js";
import { removeTempFiles, syncDir, syncFile, writeFileDurably, writeJsonDurably } from "../fs/durable-file.js";
import { killPoint } from "../kill-points.js";
import type { BlobStore } from "./blob-store.js";
import { digestOfFile } from "./blob-store.js";

export interface LayerRecord {
  chainId: string;
  diffId: string;
  parent?: string;
  /** Bytes of the files the layer holds, as the driver applied them. */
  size: number;
  /**
   * A pulled layer keeps no uncompressed tar. With a driver that shows its files (`diffDir`) it
   * keeps the tar's layout (`layout`, core/archive/tar-layout.ts), as Docker keeps tar-split
   * data, and its tar is made again from the files; otherwise it keeps the blob it was
   * downloaded as (gzip or zstd, `compressed`), and a push of it sends the same bytes. A pull
   * records where registries hold its blob either way (distribution.ts). `tarSize` is the
   * uncompressed tar's length (a save needs it before it streams).
   */
  compressed?: { digest: string; mediaType: string; size: number };
  layout?: true;
  tarSize?: number;
}

/** A layer's kept blob, compressed or not (none for a layer kept as a layout): what pruning keeps. */
export const keptBlobOf = (l: LayerRecord): string | undefined => (l.compressed ? l.compressed.digest : l.layout ? undefined : l.diffId);

/** One layer of `registerChain`: its tar as it streams, what its digest must be, the blob to keep. */
export interface ChainItem {
  tar: Readable;
  diffId: string;
  compressed?: CompressedSource;
}

/**
 * The blob a layer was downloaded as (see LayerRecord.compressed): kept in place of the tar
 * from `file` when the layer cannot be kept as a layout; `file` is absent when the download
 * was not written to a file (the driver keeps layouts).
 */
export interface CompressedSource {
  file?: string;
  digest: string;
  mediaType: string;
  size: number;
}

interface Filled {
  size: number;
  tarSize: number;
  /** The layout file, made whole and flushed, to rename into place with the record. */
  layout?: string;
  /** The compressed blob is kept (no layout). */
  keptCompressed: boolean;
}

export function chainIdOf(parent: string | undefined, diffId: string): string {
  return parent ? `sha256:${createHash("sha256").update(`${parent} ${diffId}`).digest("hex")}` : diffId;
}

const hex = (digest: string) => digest.slice("sha256:".length);

export class LayerStore {
  private readonly dir: string;
  /** Registrations under way, by chain ID: a second one for the same layer waits for the first. */
  private readonly registering = new Map<string, Promise<unknown>>();
  /** Blobs (diff IDs, compressed digests) of the registrations under way: not orphans yet. */
  readonly registeringDiffIds = new Set<string>();
  /**
   * Removals under way, by chain ID. From the moment one starts, the layer is gone for anyone
   * who would build on it (`present`, `registerChain`): a pull downloads it again once it has
   * gone, rather than trusting a record about to go.
   */
  private readonly removing = new Map<string, Promise<void>>();
  /**
   * Records read from disk, by chain ID: a record never changes once written, and goes from
   * here when its file goes (`removeNow`). An image's size is the sum of its layers', and a list
   * of images asks for every one.
   */
  private readonly known = new Map<string, LayerRecord>();

  constructor(root: string, private readonly blobs: BlobStore, readonly driver: StorageDriver) {
    this.dir = join(root, "layers");
    mkdirSync(this.dir, { recursive: true, mode: PRIVATE_DIR });
    removeTempFiles(this.dir);
  }

  /** Whether pulled layers are kept as layouts (the driver shows its files). */
  get keepsLayouts(): boolean {
    return typeof this.driver.diffDir === "function";
  }

  get(chainId: string): LayerRecord | undefined {
    let rec = this.known.get(chainId);
    if (!rec) {
      try {
        rec = JSON.parse(readFileSync(join(this.dir, `${hex(chainId)}.json`), "utf8")) as LayerRecord;
      } catch {
        return undefined;
      }
      this.known.set(chainId, rec);
    }
    return { ...rec }; // the caller's own
  }

  /**
   * The layer, whole and not being removed: one to build on instead of making it again. A
   * caller keeps it from removal from before it asks until it is done with it (the image
   * store's `hold`); a removal that began before it asked makes it absent here.
   */
  async present(chainId: string): Promise<LayerRecord | undefined> {
    if (this.removing.has(chainId)) return undefined;
    const layer = this.get(chainId);
    return layer && (await this.driver.exists(hex(chainId))) && !this.removing.has(chainId) ? layer : undefined;
  }

  /**
   * Makes sure the layer `tarFile` (uncompressed) on `parent` exists; resolves with its record
   * and whether it was there already. `expectedDiffId` (from an image config) must match. The
   * file is moved into the blob store (the caller's copy is gone afterwards).
   */
  async register(parent: string | undefined, tarFile: string, expectedDiffId?: string): Promise<{ layer: LayerRecord; existed: boolean }> {
    // A layer the store has is not read again (an archive may name one tar for several images).
    if (expectedDiffId) {
      const have = this.get(chainIdOf(parent, expectedDiffId));
      if (have && (await this.driver.exists(hex(have.chainId)))) return { layer: have, existed: true };
    }
    const { digest } = await digestOfFile(tarFile);
    if (expectedDiffId && expectedDiffId !== digest) throw errors.imageDigestMismatch("layer", expectedDiffId, digest);
    const chainId = chainIdOf(parent, digest);
    const known = this.get(chainId);
    if (known && (await this.driver.exists(hex(chainId)))) return { layer: known, existed: true };
    const id = hex(chainId);
    await this.driver.remove(id); // a leftover without its record
    // From here until the record is written, a crash leaves a driver layer no record names:
    // the pending mark says which, for recoverPending().
    await this.markPending(id);
    killPoint("layer.pending-marked");
    await this.driver.create(id, parent ? hex(parent) : undefined);
    killPoint("layer.created");
    try {
      const size = await this.driver.applyDiff(id, createReadStream(tarFile));
      killPoint("layer.applied");
      if (!this.blobs.has(digest)) await this.blobs.adopt(tarFile, digest);
      killPoint("layer.blob-kept");
      const layer: LayerRecord = { chainId, diffId: digest, ...(parent ? { parent } : {}), size };
      await writeJsonDurably(join(this.dir, `${id}.json`), layer);
      killPoint("layer.recorded");
      rmSync(this.pendingPath(id), { force: true });
      return { layer, existed: false };
    } catch (err) {
      await this.driver.remove(id).catch(() => undefined);
      rmSync(this.pendingPath(id), { force: true });
      throw err;
    }
  }

  /**
   * Like `register`, from a stream of the uncompressed tar (a download being decompressed): the
   * tar is applied by the driver, kept as a blob and digested in one pass. `diffId` is what the
   * image config says the tar's digest is; a stream that does not match leaves nothing behind.
   */
  async registerStream(parent: string | undefined, tar: Readable, diffId: string, compressed?: CompressedSource): Promise<{ layer: LayerRecord; existed: boolean }> {
    const [result] = await this.registerChain(parent, [{ tar, diffId, compressed }]);
    return result;
  }

  /**
   * Registers a run of layers, each on the one before it (the first on `parent`), from streams
   * of their uncompressed tars. With a driver that has `parallel-apply`, the driver layers are
   * created in order first and the tars then applied at once (a pull extracts every layer as it
   * downloads); otherwise one after the other. Records are written in chain order, so a layer
   * never has a record before its parent; `onRegistered` hears of each as it is written.
   * Layers the store has already (another pull made them) are not applied again: their streams
   * are destroyed. On a failure, the layers after the last recorded one are removed, children
   * first, and every stream is destroyed.
   */
  async registerChain(
    parent: string | undefined,
    items: readonly ChainItem[],
    onRegistered?: (index: number, layer: LayerRecord, existed: boolean) => void,
  ): Promise<{ layer: LayerRecord; existed: boolean }[]> {
    const chainIds: string[] = [];
    for (const item of items) chainIds.push(chainIdOf(chainIds.at(-1) ?? parent, item.diffId));
    // A stream may fail (an aborted download) while this waits below, before the pipeline that
    // reads it listens: the error must not go unheard (pipeline sees it as `errored`).
    for (const item of items) item.tar.on("error", () => undefined);
    const results: { layer: LayerRecord; existed: boolean }[] = [];
    // Another registration of some of these layers (a second pull of the same image) is waited
    // for; the layers it made are not made again. So is a removal of some of them (a clean-up
    // that found them unused): they are made again once gone. The check and the claim below
    // happen with no wait in between, so no two registrations of one layer ever run at once,
    // nor one next to its removal.
    for (let turns = 0; ; turns++) {
      if (turns > 1000 + items.length) throw new Error("layer store: the layers of this chain stay busy with other registrations");
      // The parent is the caller's to keep (held before it found it present): one on its way
      // out, or gone, is a fault of the caller's, not a layer to build on.
      if (parent && (this.removing.has(parent) || !this.recordExists(parent))) throw errors.imageLayerMissing(parent);
      const busy = chainIds.slice(results.length).flatMap((c) => [this.registering.get(c), this.removing.get(c)].filter((p) => p !== undefined));
      if (busy.length > 0) {
        await Promise.allSettled(busy);
        continue;
      }
      const have = results.length < items.length ? this.get(chainIds[results.length]) : undefined;
      if (have && (await this.driver.exists(hex(have.chainId))) && !this.removing.has(have.chainId)) {
        items[results.length].tar.destroy();
        results.push({ layer: have, existed: true });
        onRegistered?.(results.length - 1, have, true);
        continue;
      }
      if (chainIds.slice(results.length).some((c) => this.registering.has(c) || this.removing.has(c))) continue;
      break;
    }
    const first = results.length;
    if (first === items.length) return results;
    const work = this.applyChain(first === 0 ? parent : chainIds[first - 1], items.slice(first), chainIds.slice(first), (i, layer) => {
      results.push({ layer, existed: false });
      onRegistered?.(first + i, layer, false);
    });
    const blobs = items.slice(first).flatMap((item) => [item.diffId, ...(item.compressed ? [item.compressed.digest] : [])]);
    for (const c of chainIds.slice(first)) this.registering.set(c, work);
    for (const b of blobs) this.registeringDiffIds.add(b);
    try {
      await work;
      return results;
    } finally {
      for (const c of chainIds.slice(first)) this.registering.delete(c);
      for (const b of blobs) this.registeringDiffIds.delete(b);
    }
  }

  private async applyChain(parent: string | undefined, items: readonly ChainItem[], chainIds: readonly string[], recorded: (index: number, layer: LayerRecord) => void): Promise<void> {
    const parallel = this.driver.capabilities.includes("parallel-apply");
    const made: string[] = []; // driver layers this made, in chain order
    let committed = 0;
    const filled: Promise<Filled>[] = [];
    const parentOf = (i: number) => (i === 0 ? parent : chainIds[i - 1]);
    try {
      const fill = async (i: number) => {
        if (!parallel) await this.prepare(parentOf(i), chainIds[i], made);
        return this.fill(chainIds[i], items[i]);
      };
      if (parallel) for (let i = 0; i < items.length; i++) await this.prepare(parentOf(i), chainIds[i], made);
      for (let i = 0; i < items.length; i++) {
        filled.push(parallel || i === 0 ? fill(i) : filled[i - 1].then(() => fill(i)));
        filled[i].catch(() => undefined); // awaited in order below; a later one may fail first
      }
      for (let i = 0; i < items.length; i++) {
        const layer = await this.commit(parentOf(i), chainIds[i], items[i], await filled[i]);
        committed++;
        recorded(i, layer);
      }
    } catch (err) {
      for (const item of items) item.tar.destroy();
      const settled = await Promise.allSettled(filled); // nothing may still write into a layer that goes
      // layouts of layers that will not be recorded
      for (const r of settled.slice(committed)) if (r.status === "fulfilled" && r.value.layout) rmSync(r.value.layout, { force: true });
      // children before parents: a driver refuses to remove a parent that has children
      for (const chainId of made.slice(committed).reverse()) {
        await this.driver.remove(hex(chainId)).catch(() => undefined);
        rmSync(this.pendingPath(hex(chainId)), { force: true });
      }
      throw err;
    }
  }

  /** Makes the empty driver layer, marked pending until its record is written. */
  private async prepare(parent: string | undefined, chainId: string, made: string[]): Promise<void> {
    const id = hex(chainId);
    await this.driver.remove(id); // a leftover without its record
    // From here until the record is written, a crash leaves a driver layer no record names:
    // the pending mark says which, for recoverPending().
    await this.markPending(id);
    killPoint("layer.pending-marked");
    made.push(chainId);
    await this.driver.create(id, parent ? hex(parent) : undefined);
    killPoint("layer.created");
  }

  /** Applies the tar to the layer, digests it and keeps its blob (the tar, or the compressed one it came from). */
  private async fill(chainId: string, { tar, diffId, compressed }: ChainItem): Promise<Filled> {
    const id = hex(chainId);
    const tmp = this.blobs.tempPath("layer");
    const keepTar = !compressed;
    let tarSize = 0;
    const hash = createHash("sha256");
    const file = keepTar ? createWriteStream(tmp, { mode: PRIVATE_FILE }) : undefined;
    // One pass: the tar is digested on its way to the driver and, when it is the blob to keep,
    // written to the blob file too (the slower of the two readers sets the pace). A decoder's
    // output is digested by a tap, with no stream stage between it and the driver (whose reader
    // may then take its chunks directly: see core/archive/outlet.ts); any other tar through a
    // Transform.
    const hashing = (chunk: Buffer) => {
      hash.update(chunk);
      tarSize += chunk.length;
    };
    const outlet = file ? undefined : directOutlet(tar);
    outlet?.tap(hashing);
    let toDriver: Readable;
    let fanOut: Writable | undefined;
    if (outlet) {
      toDriver = tar;
    } else if (!file) {
      toDriver = fanOut = new Transform({
        highWaterMark: 1 << 20,
        transform(chunk: Buffer, _enc, done) {
          hashing(chunk);
          done(null, chunk);
        },
      });
    } else {
      const driverSide = (toDriver = new PassThrough({ highWaterMark: 1 << 20 }));
      fanOut = new Writable({
        highWaterMark: 1 << 20,
        write(chunk: Buffer, _enc, done) {
          hashing(chunk);
          let waiting = 2;
          const one = () => --waiting === 0 && done();
          if (file.write(chunk)) one();
          else file.once("drain", one);
          if (driverSide.write(chunk)) one();
          else driverSide.once("drain", one);
        },
        final(done) {
          driverSide.end();
          file.end();
          finished(file).then(() => done(), done);
        },
      });
    }
    // failures surface through the two promises below; a stream destroyed after its reader
    // has gone (the other side failed first) must not make an uncaught error of it
    for (const s of [toDriver, fanOut, file] as (NodeJS.EventEmitter | undefined)[]) s?.on("error", () => undefined);
    // a pulled layer's layout, when the driver shows its files: its tar is made again from them
    // written beside the records, not in the temporary folder (ENGINE_TMPDIR may be another
    // filesystem, and the layout is renamed into place)
    const layoutFile = compressed && this.keepsLayouts ? join(this.dir, `.${hex(chainId)}.layout-${randomBytes(6).toString("hex")}`) : undefined;
    const layout = layoutFile ? new LayoutRecorder(layoutFile) : undefined;
    let kept = false;
    try {
      // every byte has gone through the digest once the tar is read to its end
      const feeding = fanOut ? pipeline(tar, fanOut) : outlet!.done;
      const applying = this.driver.applyDiff(id, toDriver, layout ? { layout } : undefined);
      const [, size] = await Promise.all([
        feeding.catch((e) => {
          toDriver.destroy(e);
          throw e;
        }),
        applying.catch((e) => {
          tar.destroy(e);
          fanOut?.destroy(e);
          throw e;
        }),
      ]);
      const digest = `sha256:${hash.digest("hex")}`;
      if (digest !== diffId) throw errors.imageDigestMismatch("layer", diffId, digest);
      killPoint("layer.applied");
      if (keepTar && !this.blobs.has(digest)) await this.blobs.adopt(tmp, digest);
      if (layout && (await layout.finish()).complete) {
        await syncFile(layoutFile!);
        kept = true;
        return { size, tarSize, layout: layoutFile, keptCompressed: false };
      }
      // no layout (or one a later entry of the tar made incomplete): the downloaded blob, if it was kept
      const keptCompressed = !!compressed?.file;
      if (compressed?.file && !this.blobs.has(compressed.digest)) await this.blobs.adopt(compressed.file, compressed.digest);
      return { size, tarSize, keptCompressed };
    } catch (err) {
      tar.destroy();
      throw err;
    } finally {
      if (layout && !kept) {
        await layout.abort();
        rmSync(layoutFile!, { force: true });
      }
      if (file) {
        // the file is opened asynchronously: removed before it is, it would be made afterwards
        file.destroy();
        if (!file.closed) await new Promise<void>((resolve) => file.once("close", () => resolve()));
        rmSync(tmp, { force: true });
      }
    }
  }

  /** Writes the record of a filled layer (its layout first): from here on it is whole. */
  private async commit(parent: string | undefined, chainId: string, { diffId, compressed }: ChainItem, filled: Filled): Promise<LayerRecord> {
    const { size, tarSize } = filled;
    const layer: LayerRecord = {
      chainId,
      diffId,
      ...(parent ? { parent } : {}),
      size,
      // a pulled layer (no tar blob of its own) records the tar's length, and what it keeps instead
      ...(compressed ? { tarSize } : {}),
      ...(filled.layout ? { layout: true as const } : {}),
      ...(compressed && filled.keptCompressed ? { compressed: { digest: compressed.digest, mediaType: compressed.mediaType, size: compressed.size } } : {}),
    };
    if (filled.layout) {
      renameSync(filled.layout, this.layoutPath(hex(chainId)));
      await syncDir(this.dir);
      killPoint("layer.layout-renamed");
    }
    await writeJsonDurably(join(this.dir, `${hex(chainId)}.json`), layer);
    killPoint("layer.recorded");
    rmSync(this.pendingPath(hex(chainId)), { force: true });
    return layer;
  }

  /**
   * The layer's uncompressed tar: its blob, made again from its files and layout (checked
   * against its diff ID as it streams), or its compressed blob decompressed on the way.
   */
  async openTar(layer: LayerRecord, opts: { disablePigz: boolean }): Promise<{ size: number; stream: Readable }> {
    this.assertExportable(layer);
    if (this.blobs.has(layer.diffId)) return { size: this.blobs.size(layer.diffId), stream: this.blobs.open(layer.diffId) };
    if (layer.layout && layer.tarSize !== undefined && this.driver.diffDir) {
      return { size: layer.tarSize, stream: tarFromLayout(this.layoutPath(hex(layer.chainId)), this.driver.diffDir(hex(layer.chainId)), layer.diffId) };
    }
    if (!layer.compressed || layer.tarSize === undefined) throw errors.imageNotFound(`layer ${layer.diffId}`);
    const { decompress } = await import("../archive/decompress.js");
    return { size: layer.tarSize, stream: decompress(this.blobs.open(layer.compressed.digest), opts) };
  }

  /** Throws unless `openTar` can give the layer's tar (to answer before a stream starts). */
  assertExportable(layer: LayerRecord): void {
    if (layer.layout || layer.compressed || this.blobs.has(layer.diffId) || layer.tarSize === undefined) return;
    // a pulled layer kept neither as a layout nor as its blob: a later entry of its tar replaced a file
    throw errors.imageLayerUnexportable(layer.diffId, "a later entry of its tar replaced an earlier one's file, whose data is gone (Docker cannot export such a layer either)");
  }

  private pendingPath(id: string): string {
    return join(this.dir, `${id}.pending`);
  }

  /**
   * Marks the driver layer `id` pending, durably: a power cut after the driver made it (or
   * after its record went) still finds the mark at the next start.
   */
  private markPending(id: string): Promise<void> {
    return writeFileDurably(this.pendingPath(id), "");
  }

  private layoutPath(id: string): string {
    return join(this.dir, `${id}.layout`);
  }

  /**
   * After a crash: the driver layers of registrations and removals that did not finish go. A
   * chain of them goes child first: a driver refuses to remove a parent, so each pass removes
   * what it can, until a pass removes nothing more (what is left then, a parent of a whole
   * layer, is tried again at the next start).
   */
  async recoverPending(): Promise<void> {
    for (const f of readdirSync(this.dir)) {
      // a layout renamed into place just before a crash, its record never written, or one still
      // being written
      const layout = /^([a-f0-9]{64})\.layout$/.exec(f);
      if ((layout && !this.recordExists(`sha256:${layout[1]}`)) || /^\.[a-f0-9]{64}\.layout-/.test(f)) rmSync(join(this.dir, f), { force: true });
    }
    let pending = readdirSync(this.dir).flatMap((f) => /^([a-f0-9]{64})\.pending$/.exec(f)?.[1] ?? []);
    for (let removed = true; removed && pending.length > 0; ) {
      removed = false;
      for (const id of pending) {
        try {
          if (!this.recordExists(`sha256:${id}`)) await this.driver.remove(id);
          rmSync(this.pendingPath(id), { force: true });
          removed = true;
        } catch {
          // still a parent: its child goes first, in this pass or the next
        }
      }
      pending = pending.filter((id) => existsSync(this.pendingPath(id)));
    }
  }

  list(): LayerRecord[] {
    return readdirSync(this.dir)
      .filter((f) => /^[a-f0-9]{64}\.json$/.test(f))
      .map((f) => this.get(`sha256:${f.slice(0, 64)}`))
      .filter((l): l is LayerRecord => l !== undefined);
  }

  /**
   * Removes a layer (its record first, so that a crash half way leaves a leftover, not a lie; the
   * pending mark has it removed at the next start). From the call on, with no wait before, the
   * layer is absent for `present` and `registerChain`, which wait for the removal to end.
   */
  remove(chainId: string): Promise<void> {
    const under = this.removing.get(chainId);
    if (under) return under;
    const removal = this.removeNow(chainId).finally(() => this.removing.delete(chainId));
    this.removing.set(chainId, removal);
    return removal;
  }

  private async removeNow(chainId: string): Promise<void> {
    await this.markPending(hex(chainId));
    this.known.delete(chainId);
    rmSync(join(this.dir, `${hex(chainId)}.json`), { force: true });
    rmSync(this.layoutPath(hex(chainId)), { force: true });
    // the record's removal on disk before the layer's: never a record without its layer
    await syncDir(this.dir);
    killPoint("layer.record-removed");
    await this.driver.remove(hex(chainId));
    rmSync(this.pendingPath(hex(chainId)), { force: true });
  }

  /** Record files of layers, for the crash clean-up. */
  recordExists(chainId: string): boolean {
    return existsSync(join(this.dir, `${hex(chainId)}.json`));
  }
}
