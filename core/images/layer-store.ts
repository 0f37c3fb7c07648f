/**
 * Layers of images, by chain ID: the layer's own content is the storage driver's layer named
 * by the chain ID's hex, its uncompressed tar is a blob named by its diff ID, and
 * `layers/<chain hex>.json` records that both are whole. That record is written last, so a
 * layer without one is a leftover of a crash, removed at the next start.
 *
 *   chainID(L0) = diffID(L0);  chainID(Ln) = sha256(chainID(Ln-1) + " " + diffID(Ln))
 */
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Writable, type Readable } from "node:stream";
import { finished, pipeline } from "node:stream/promises";
import type { StorageDriver } from "../contracts/storage.js";
import { errors } from "../errors.js";
import { writeJsonAtomic } from "./atomic-file.js";
import type { BlobStore } from "./blob-store.js";
import { digestOfFile } from "./blob-store.js";

export interface LayerRecord {
  chainId: string;
  diffId: string;
  parent?: string;
  /** Bytes of the files the layer holds, as the driver applied them. */
  size: number;
  /**
   * A pulled layer keeps the blob it was downloaded as (gzip or zstd) instead of its
   * uncompressed tar: no second copy written at pull time, and a push of it sends the same
   * bytes. `tarSize` is the uncompressed tar's length (a save needs it before it streams).
   */
  compressed?: { digest: string; mediaType: string; size: number };
  tarSize?: number;
}

/** A layer's kept blob, compressed or not: what pruning keeps. */
export const keptBlobOf = (l: LayerRecord) => l.compressed?.digest ?? l.diffId;

/** A downloaded blob to keep in place of the tar (see LayerRecord.compressed). */
export interface CompressedSource {
  file: string;
  digest: string;
  mediaType: string;
  size: number;
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

  constructor(root: string, private readonly blobs: BlobStore, readonly driver: StorageDriver) {
    this.dir = join(root, "layers");
    mkdirSync(this.dir, { recursive: true });
  }

  get(chainId: string): LayerRecord | undefined {
    try {
      return JSON.parse(readFileSync(join(this.dir, `${hex(chainId)}.json`), "utf8")) as LayerRecord;
    } catch {
      return undefined;
    }
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
    writeFileSync(this.pendingPath(id), "");
    await this.driver.create(id, parent ? hex(parent) : undefined);
    try {
      const size = await this.driver.applyDiff(id, createReadStream(tarFile));
      if (!this.blobs.has(digest)) await this.blobs.adopt(tarFile, digest);
      const layer: LayerRecord = { chainId, diffId: digest, ...(parent ? { parent } : {}), size };
      writeJsonAtomic(join(this.dir, `${id}.json`), layer);
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
    const chainId = chainIdOf(parent, diffId);
    // The stream may fail (an aborted download) while this waits below, before the pipeline
    // that reads it listens: the error must not go unheard (pipeline sees it as `errored`).
    tar.on("error", () => undefined);
    for (let waits = 0; this.registering.has(chainId) && waits < 1000; waits++) await this.registering.get(chainId)!.catch(() => undefined);
    const have = this.get(chainId);
    if (have && (await this.driver.exists(hex(chainId)))) {
      tar.destroy();
      return { layer: have, existed: true };
    }
    const work = this.applyStream(parent, chainId, tar, diffId, compressed);
    this.registering.set(chainId, work);
    const blobs = [diffId, ...(compressed ? [compressed.digest] : [])];
    for (const b of blobs) this.registeringDiffIds.add(b);
    try {
      return await work;
    } finally {
      this.registering.delete(chainId);
      for (const b of blobs) this.registeringDiffIds.delete(b);
    }
  }

  private async applyStream(parent: string | undefined, chainId: string, tar: Readable, diffId: string, compressed?: CompressedSource): Promise<{ layer: LayerRecord; existed: boolean }> {
    const id = hex(chainId);
    const tmp = this.blobs.tempPath("layer");
    const keepTar = !compressed;
    let tarSize = 0;
    await this.driver.remove(id); // a leftover without its record
    writeFileSync(this.pendingPath(id), "");
    const hash = createHash("sha256");
    const file = createWriteStream(tmp, { mode: 0o600 });
    const toDriver = new PassThrough({ highWaterMark: 1 << 20 });
    // one pass, two readers: the blob file and the driver; the slower one sets the pace
    const fanOut = new Writable({
      highWaterMark: 1 << 20,
      write(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        tarSize += chunk.length;
        let waiting = 2;
        const one = () => --waiting === 0 && done();
        if (!keepTar || file.write(chunk)) one();
        else file.once("drain", one);
        if (toDriver.write(chunk)) one();
        else toDriver.once("drain", one);
      },
      final(done) {
        toDriver.end();
        file.end();
        finished(file).then(() => done(), done);
      },
    });
    // failures surface through the two promises below; a stream destroyed after its reader
    // has gone (the other side failed first) must not make an uncaught error of it
    for (const s of [toDriver, fanOut, file]) s.on("error", () => undefined);
    try {
      await this.driver.create(id, parent ? hex(parent) : undefined);
      const feeding = pipeline(tar, fanOut);
      const applying = this.driver.applyDiff(id, toDriver);
      const [, size] = await Promise.all([
        feeding.catch((e) => {
          toDriver.destroy(e);
          throw e;
        }),
        applying.catch((e) => {
          tar.destroy(e);
          fanOut.destroy(e);
          throw e;
        }),
      ]);
      const digest = `sha256:${hash.digest("hex")}`;
      if (digest !== diffId) throw errors.imageDigestMismatch("layer", diffId, digest);
      if (keepTar && !this.blobs.has(digest)) await this.blobs.adopt(tmp, digest);
      if (compressed && !this.blobs.has(compressed.digest)) await this.blobs.adopt(compressed.file, compressed.digest);
      const layer: LayerRecord = {
        chainId,
        diffId: digest,
        ...(parent ? { parent } : {}),
        size,
        ...(compressed ? { compressed: { digest: compressed.digest, mediaType: compressed.mediaType, size: compressed.size }, tarSize } : {}),
      };
      writeJsonAtomic(join(this.dir, `${id}.json`), layer);
      rmSync(this.pendingPath(id), { force: true });
      return { layer, existed: false };
    } catch (err) {
      tar.destroy();
      file.destroy();
      await this.driver.remove(id).catch(() => undefined);
      rmSync(this.pendingPath(id), { force: true });
      throw err;
    } finally {
      rmSync(tmp, { force: true });
    }
  }

  /** The layer's uncompressed tar: its blob, or its compressed blob decompressed on the way. */
  async openTar(layer: LayerRecord): Promise<{ size: number; stream: Readable }> {
    if (this.blobs.has(layer.diffId)) return { size: this.blobs.size(layer.diffId), stream: this.blobs.open(layer.diffId) };
    if (!layer.compressed || layer.tarSize === undefined) throw errors.imageNotFound(`layer ${layer.diffId}`);
    const { decompress } = await import("../archive/decompress.js");
    return { size: layer.tarSize, stream: decompress(this.blobs.open(layer.compressed.digest)) };
  }

  private pendingPath(id: string): string {
    return join(this.dir, `${id}.pending`);
  }

  /** After a crash: the driver layers of registrations and removals that did not finish go. */
  async recoverPending(): Promise<void> {
    for (const f of readdirSync(this.dir)) {
      const m = /^([a-f0-9]{64})\.pending$/.exec(f);
      if (!m) continue;
      try {
        if (!this.recordExists(`sha256:${m[1]}`)) await this.driver.remove(m[1]);
        rmSync(join(this.dir, f), { force: true });
      } catch {
        // still a parent (its children go first, with their own marks): tried again at the next start
      }
    }
  }

  list(): LayerRecord[] {
    return readdirSync(this.dir)
      .filter((f) => /^[a-f0-9]{64}\.json$/.test(f))
      .map((f) => this.get(`sha256:${f.slice(0, 64)}`))
      .filter((l): l is LayerRecord => l !== undefined);
  }

  /** Removes a layer (its record first, so that a crash half way leaves a leftover, not a lie; the pending mark has it removed at the next start). */
  async remove(chainId: string): Promise<void> {
    writeFileSync(this.pendingPath(hex(chainId)), "");
    rmSync(join(this.dir, `${hex(chainId)}.json`), { force: true });
    await this.driver.remove(hex(chainId));
    rmSync(this.pendingPath(hex(chainId)), { force: true });
  }

  /** Record files of layers, for the crash clean-up. */
  recordExists(chainId: string): boolean {
    return existsSync(join(this.dir, `${hex(chainId)}.json`));
  }
}
