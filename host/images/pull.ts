/**
 * `POST /images/create?fromImage=`: a pull. The manifest is resolved first (an index narrowed
 * to one platform), so that a missing image or a refused login is an HTTP error; from the
 * first progress line on, failures are lines of the stream. Layers download in parallel
 * (`max-concurrent-downloads`), digested as they arrive, resumed with a range request after a
 * broken connection (`max-download-attempts`). Each is decompressed, digested again and applied
 * by the storage driver in one pass: while it downloads when the driver can apply a chain's
 * layers at once (`parallel-apply`), otherwise base first, from temporary files. A download is
 * written to a file only when it is read back from one, or kept as the layer's blob (a driver
 * without `diffDir`; with one, the layer store keeps the tar's layout instead). The image is stored only when every layer is whole and the
 * client has read the stream so far; a failure or a client that goes away leaves no image and
 * no layer of this pull behind.
 */
import { createHash } from "node:crypto";
import { open, rm } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { chunksOf, createDecompressor, pump, type Decoder } from "../../core/archive/index.js";
import { errors, EngineError } from "../../core/errors.js";
import type { ImageStore } from "../../core/images/image-store.js";
import { chainIdOf, type ChainItem } from "../../core/images/layer-store.js";
import { familiarName, formatReference, repositoryOf, type Reference } from "../../core/images/reference.js";
import type { Credentials } from "../registry/auth.js";
import type { RegistrySession } from "../registry/client.js";
import { choosePlatform, MANIFEST_ACCEPT, parseManifest, sha256, type Descriptor, type ImageManifest, type Platform } from "../registry/manifests.js";
import type { RegistryService } from "../registry/registry.js";
import { bytesMessage, status, statusOnly, shortId, throttled, type Emit } from "./progress.js";

export interface PullLimits {
  downloads: number;
  attempts: number;
  disablePigz: boolean;
}

export interface PullDeps {
  store: ImageStore;
  registry: RegistryService;
  limits: () => PullLimits;
  /** Told the size of each piece of a layer blob as it arrives from the registry (for metrics). */
  received?: (bytes: number) => void;
}

export interface PullOptions {
  reference: Reference;
  /** No tag and no digest was given: every tag of the repository. */
  allTags: boolean;
  credentials?: Credentials;
  platform: Platform;
  signal: AbortSignal;
  emit: Emit;
  /** Resolves once the client has read every line so far (a pull completes only then). */
  drained: () => Promise<void>;
}

interface Resolved {
  /** The digest of what the reference names (an index, or the image manifest). */
  digest: string;
  manifest: ImageManifest;
  configBytes: Buffer;
}

const MAX_CONFIG = 16 * 1024 * 1024;

export async function pullImage(deps: PullDeps, opts: PullOptions): Promise<void> {
  const { reference: ref } = opts;
  const limits = deps.limits(); // read once: a reload changes the next pull
  if (!opts.allTags) {
    const target = ref.digest ?? ref.tag!;
    const { session, value } = await deps.registry.open(ref.domain, ref.path, "pull", opts.credentials, opts.signal, (s) => resolve(s, ref, target, opts.platform));
    const { upToDate } = await pullResolved(deps, opts, limits, session, target, value);
    opts.emit(status(undefined, `Digest: ${value.digest}`));
    opts.emit(status(undefined, `Status: ${upToDate ? "Image is up to date" : "Downloaded newer image"} for ${familiarName(formatReference(ref))}`));
    return;
  }
  const { session, value: tags } = await deps.registry.open(ref.domain, ref.path, "pull", opts.credentials, opts.signal, (s) => s.tags());
  let anyNew = false;
  for (const tag of tags.sort()) {
    const tagged = { ...ref, tag, digest: undefined };
    const value = await resolve(session, tagged, tag, opts.platform);
    const { upToDate } = await pullResolved(deps, { ...opts, reference: tagged }, limits, session, tag, value);
    opts.emit(status(undefined, `Digest: ${value.digest}`));
    anyNew ||= !upToDate;
  }
  opts.emit(status(undefined, `Status: ${anyNew ? "Downloaded newer image" : "Image is up to date"} for ${familiarName(repositoryOf(ref))}`));
}

/** The image manifest and config a tag or digest names, for this platform, verified. */
async function resolve(session: RegistrySession, ref: Reference, target: string, platform: Platform): Promise<Resolved> {
  const name = familiarName(formatReference(ref));
  const repo = familiarName(repositoryOf(ref));
  let top;
  try {
    top = await session.manifest(target, MANIFEST_ACCEPT);
  } catch (err) {
    // named as Docker's puller names it: the request it did not send (a HEAD for a tag)
    if (err instanceof EngineError && err.code === errors.registryNoBasicCredentials.code) {
      throw errors.registryNoBasicCredentials(`${target.includes(":") ? "Get" : "Head"} "${session.url(`/manifests/${target}`)}": `);
    }
    if (err instanceof EngineError && err.statusCode === 401) throw errors.registryAccessDenied(repo, err.message);
    if (err instanceof EngineError && err.statusCode === 404 && /name unknown|denied/i.test(err.message)) throw errors.registryAccessDenied(repo, err.message.replace(/^.*? not found: /, ""));
    if (err instanceof EngineError && err.statusCode === 404) throw errors.registryNotFound(`manifest for ${name}`, err.message.replace(/^.*? not found: /, ""));
    throw err;
  }
  const digest = sha256(top.body);
  if (ref.digest && digest !== ref.digest) throw errors.imageDigestMismatch(`manifest for ${name}`, ref.digest, digest);
  let parsed = parseManifest(top.body, top.mediaType, name);
  if (parsed.kind === "index") {
    const chosen = choosePlatform(parsed.manifests, platform);
    const inner = await session.manifest(chosen.digest, MANIFEST_ACCEPT);
    const innerDigest = sha256(inner.body);
    if (innerDigest !== chosen.digest) throw errors.imageDigestMismatch(`manifest for ${name}`, chosen.digest, innerDigest);
    parsed = parseManifest(inner.body, inner.mediaType, name);
    if (parsed.kind !== "image") throw errors.registryUnsupportedManifest(name, "an index inside an index");
  }
  const manifest = parsed.manifest;
  if (manifest.config.size > MAX_CONFIG) throw errors.registryError(`config of ${name}`, `${manifest.config.size} bytes is too large`);
  const res = await session.blob(manifest.config.digest);
  const configBytes = Buffer.from(await res.body.arrayBuffer());
  const configDigest = sha256(configBytes);
  if (configDigest !== manifest.config.digest) throw errors.imageDigestMismatch(`config of ${name}`, manifest.config.digest, configDigest);
  return { digest, manifest, configBytes };
}

/** Downloads and stores what `resolve` found; names it. */
async function pullResolved(deps: PullDeps, opts: PullOptions, limits: PullLimits, session: RegistrySession, target: string, r: Resolved) {
  const { store } = deps;
  const ref = opts.reference;
  opts.emit(statusOnly(target, `Pulling from ${ref.path}`));
  const config = JSON.parse(r.configBytes.toString("utf8")) as { rootfs?: { diff_ids?: string[] } };
  const diffIds = config.rootfs?.diff_ids ?? [];
  if (diffIds.length !== r.manifest.layers.length) {
    throw errors.registryError(`image ${familiarName(formatReference(ref))}`, `the config lists ${diffIds.length} layers, the manifest ${r.manifest.layers.length}`);
  }
  const chain: string[] = [];
  for (const diffId of diffIds) chain.push(chainIdOf(chain.at(-1), diffId));
  const references = ref.digest ? [formatReference({ ...ref, tag: undefined })] : [formatReference(ref), formatReference({ ...ref, tag: undefined, digest: r.digest })];
  const imageId = sha256(r.configBytes);
  const release = store.hold(chain);
  try {
    if (!store.byId(imageId)) await fetchLayers(deps, opts, limits, session, r.manifest.layers, diffIds, chain);
    await opts.drained();
    if (opts.signal.aborted) throw opts.signal.reason;
    const { image, before } = await store.createFromLayers(r.configBytes, chain, references);
    return { image, upToDate: before[0] === image.id };
  } catch (err) {
    release();
    // layers this pull stored for an image it did not make go again
    await store.pruneUnused().catch(() => undefined);
    throw err;
  } finally {
    release();
  }
}

interface LayerJob {
  desc: Descriptor;
  id: string;
  diffId: string;
  parent?: string;
  chainId: string;
  registry: string;
  repository: string;
}

async function fetchLayers(
  deps: PullDeps,
  opts: PullOptions,
  limits: PullLimits,
  session: RegistrySession,
  layers: readonly Descriptor[],
  diffIds: readonly string[],
  chain: readonly string[],
): Promise<void> {
  const { store } = deps;
  const jobs: LayerJob[] = [];
  for (const [i, desc] of layers.entries()) {
    const id = shortId(desc.digest);
    // (held since before this look: a layer present now stays, one being removed is fetched again)
    const have = jobs.length === 0 && (await store.layers.present(chain[i]));
    if (have) {
      opts.emit(status(id, "Already exists"));
      continue;
    }
    jobs.push({ desc, id, diffId: diffIds[i], parent: chain[i - 1], chainId: chain[i], registry: opts.reference.domain, repository: opts.reference.path });
  }
  for (const job of jobs) opts.emit(status(job.id, "Pulling fs layer"));
  if (jobs.length === 0) return;

  const abort = new AbortController();
  const onAbort = () => abort.abort(opts.signal.reason);
  opts.signal.addEventListener("abort", onAbort, { once: true });
  const slots = new Slots(Math.max(1, limits.downloads));
  const files = new Map<string, Promise<string | undefined>>(); // by blob digest: a blob listed twice downloads once
  const temps = new Map<string, string>(); // by blob digest
  // A layer is extracted while it downloads (fed from the download) when its extraction can run
  // then: every layer's with a driver that applies a chain's layers at once (`parallel-apply`),
  // only the first's otherwise. The others, and a blob listed twice, are extracted from the
  // downloaded file afterwards. A layer extracted while it downloads is not written to a file
  // at all when the store keeps layers as layouts (and a blob listed twice is): as Docker, a
  // pull keeps no compressed blob, only where registries hold it (distribution.ts).
  const parallel = store.layers.driver.capabilities.includes("parallel-apply");
  const digests = jobs.map((j) => j.desc.digest);
  const listedTwice = new Set(digests.filter((d, i) => digests.indexOf(d) !== i));
  const downloads: Promise<string | undefined>[] = [];
  const layerArgs: { item: ChainItem; registered: () => void }[] = [];
  for (const [i, job] of jobs.entries()) {
    const input = new LayerInput(job, limits.disablePigz, opts.emit, abort.signal);
    let file = files.get(job.desc.digest);
    if (!file) {
      const live = parallel || i === 0;
      const path = !live || !store.layers.keepsLayouts || listedTwice.has(job.desc.digest) ? store.blobs.tempPath("pull") : undefined;
      if (path) temps.set(job.desc.digest, path);
      file = slots.run(
        () => opts.emit(status(job.id, "Waiting")),
        async () => {
          await download(session, job, path, limits.attempts, opts.emit, abort.signal, live ? input : undefined, deps.received);
          return path;
        },
      );
      file.catch(() => abort.abort()); // one failure stops the rest
      files.set(job.desc.digest, file);
      if (!live) input.feedFrom(readDownloaded(store, job.desc.digest, file));
    } else {
      input.feedFrom(readDownloaded(store, job.desc.digest, file));
    }
    downloads.push(file);
    layerArgs.push(layerItem(store, job, temps.get(job.desc.digest), input));
  }
  try {
    try {
      await store.layers.registerChain(
        jobs[0].parent,
        layerArgs.map((l) => l.item),
        (i) => layerArgs[i].registered(),
      );
    } catch (err) {
      // A layer that fails to extract while it downloads was most often corrupted on the way:
      // its digest, checked at the end of the download, says so better than the tar reader. So
      // the downloads under way finish (those waiting for a slot do not start) before the rest
      // is cancelled, unless the pull itself was cancelled.
      if (!isAbort(err) && !abort.signal.aborted) {
        slots.close();
        await Promise.allSettled(downloads);
      }
      abort.abort();
      // the first real failure explains; the rest are its consequences (cancelled downloads)
      const settled = await Promise.allSettled(downloads);
      const reasons = [...settled.flatMap((r) => (r.status === "rejected" ? [r.reason] : [])), err];
      throw reasons.find((e) => !isAbort(e)) ?? err;
    }
  } finally {
    opts.signal.removeEventListener("abort", onAbort);
    await Promise.allSettled(downloads); // (done already, unless another pull made the layers)
    await Promise.all([...temps.values()].map((t) => rm(t, { force: true })));
  }
}

const isAbort = (err: unknown) => (err as Error)?.name === "AbortError";

/**
 * One blob, digested on the way, into a file at `path` (when given) and into `live`'s
 * decompressor (when given), resumed from where it broke when the registry allows; `received`
 * counts the bytes as they arrive (the metrics).
 */
async function download(
  session: RegistrySession,
  job: LayerJob,
  path: string | undefined,
  attempts: number,
  emit: Emit,
  signal: AbortSignal,
  live?: LayerInput,
  received?: (bytes: number) => void,
): Promise<void> {
  const { desc, id } = job;
  const feed = live;
  const file = path ? await open(path, "w", 0o600) : undefined;
  try {
    let hash = createHash("sha256");
    let offset = 0;
    const report = throttled((n) => emit(bytesMessage(id, "Downloading", n, desc.size)));
    feed?.starting();
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await session.blob(desc.digest, offset);
        if (offset > 0 && res.statusCode === 200) {
          // the registry ignored the range: start again (the feed skips what it has had)
          hash = createHash("sha256");
          offset = 0;
          await file?.truncate(0);
        }
        // written in batches of about 512 KiB: the registry's 64 KiB chunks cost a write each
        // otherwise, and writes of 1 MiB or more cost the kernel three times as much (see
        // core/archive/file-writer.ts)
        let batch: Buffer[] = [];
        let batched = 0;
        const flush = async () => {
          if (batched === 0) return;
          const data = batch;
          const at = offset - batched;
          batch = [];
          batched = 0;
          await file?.writev(data, at);
        };
        try {
          for await (const chunk of chunksOf(res.body)) {
            hash.update(chunk);
            received?.(chunk.length);
            const wait = feed?.push(chunk, offset);
            if (wait) await wait;
            offset += chunk.length;
            if (file) {
              batch.push(chunk);
              batched += chunk.length;
              if (batched >= 512 * 1024) await flush();
            }
            report(offset);
          }
        } finally {
          await flush(); // what arrived before a break is kept: the retry resumes after it
        }
        if (desc.size && offset !== desc.size) throw new Error(`the registry sent ${offset} bytes of ${desc.size}`);
        report(offset, true);
        break;
      } catch (err) {
        if (signal.aborted) throw signal.reason ?? err;
        if (err instanceof EngineError && (err.statusCode === 401 || err.statusCode === 404)) throw err;
        if (offset > desc.size) {
          hash = createHash("sha256");
          offset = 0;
          await file?.truncate(0);
        }
        if (attempt >= attempts) throw errors.registryDownloadFailed(desc.digest, attempt, (err as Error).message);
        const delay = Math.min(2 ** (attempt - 1), 10);
        emit(statusOnly(id, `Retrying in ${delay} second${delay === 1 ? "" : "s"}`));
        await sleep(delay * 1000, undefined, { signal });
      }
    }
    emit(status(id, "Verifying Checksum"));
    const digest = `sha256:${hash.digest("hex")}`;
    if (digest !== desc.digest) throw errors.imageDigestMismatch(`blob ${desc.digest}`, desc.digest, digest);
    emit(status(id, "Download complete"));
    // only a verified blob may end the live extraction's input (its end registers the layer)
    feed?.end();
  } catch (err) {
    feed?.fail(err as Error);
    throw err;
  } finally {
    await file?.close();
  }
}

/** A layer's blob for the layer store: its tar (the decompressor's output), the blob to keep. */
function layerItem(store: ImageStore, job: LayerJob, file: string | undefined, input: LayerInput): { item: ChainItem; registered: () => void } {
  // the store keeps the layer's layout, or the blob from this file (unless it has it already: a
  // blob listed twice), and where the registry holds the blob
  const compressed = { file, digest: job.desc.digest, mediaType: job.desc.mediaType, size: job.desc.size };
  return {
    item: { tar: input.decoder.output, diffId: job.diffId, compressed },
    registered: () => {
      // a hint for pushes, written in the background (it never rejects)
      void store.distribution.add(job.diffId, { digest: job.desc.digest, size: job.desc.size, mediaType: job.desc.mediaType, registry: job.registry, repository: job.repository });
      input.finished();
    },
  };
}

/**
 * A downloaded blob, read once its download is over: from the temporary file, or from the store
 * if a layer of the same blob has kept it meanwhile (the kept blob is the file, renamed).
 */
async function* readDownloaded(store: ImageStore, digest: string, download: Promise<string | undefined>): AsyncGenerator<Buffer> {
  const file = await download;
  if (!file) throw new Error(`blob ${digest} was not kept in a file`); // (a blob read back is always written to one)
  let handle;
  try {
    handle = await open(file, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    handle = await open(store.blobs.path(digest), "r");
  }
  yield* chunksOf(handle.createReadStream({ highWaterMark: 1 << 20 }));
}

/**
 * A layer's compressed bytes going into its decompressor: pushed by its download as they
 * arrive (`push`, with the decompressor's backpressure), or read from the downloaded file
 * (`feedFrom`). A download that starts over, or resumes, sends bytes the decompressor has had:
 * those are skipped. What goes in is checked in the end by the layer's diff ID (the digest of
 * the uncompressed tar), so a registry that sends other bytes the second time fails the layer
 * rather than corrupting it. Reports `Extracting` by the bytes that went in; `Pull complete`.
 */
class LayerInput {
  readonly decoder: Decoder;
  /** The input is whole (the blob verified): the end lets the layer be registered. */
  ended = false;
  private fed = 0;
  private readonly report: (n: number, force?: boolean) => void;

  constructor(
    private readonly job: LayerJob,
    disablePigz: boolean,
    private readonly emit: Emit,
    signal: AbortSignal,
  ) {
    this.decoder = createDecompressor({ disablePigz });
    // fed live, the layer is reported as extracting from when its download is complete, as Docker does
    this.report = throttled((n) => this.ended && emit(bytesMessage(job.id, "Extracting", n, job.desc.size)));
    // a cancelled pull stops the extraction, whether or not its input is whole
    const stop = () => this.decoder.fail(signal.reason instanceof Error ? signal.reason : new Error("the pull was cancelled"));
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
    this.decoder.output.once("close", () => signal.removeEventListener("abort", stop));
  }

  /** Its download starts: a gzip layer's unpigz starts now too, while the registry is asked for the blob. */
  starting(): void {
    if (/gzip$/.test(this.job.desc.mediaType)) this.decoder.expect?.("gzip");
  }

  /** `chunk` is the blob's bytes from `offset` on. Resolves when more may be pushed. */
  push(chunk: Buffer, offset: number): Promise<void> | undefined {
    if (this.decoder.output.destroyed) return undefined;
    const skip = this.fed - offset;
    if (skip >= chunk.length) return undefined;
    if (skip < 0) {
      this.fail(new Error(`the download skipped bytes ${this.fed} to ${offset}`));
      return undefined;
    }
    const data = skip > 0 ? chunk.subarray(skip) : chunk;
    this.fed += data.length;
    this.report(this.fed);
    return this.decoder.write(data);
  }

  /** Only once the whole blob is verified: the end lets the layer be registered. */
  end(): void {
    this.ended = true;
    this.report(this.fed);
    this.decoder.end();
  }

  fail(err: Error): void {
    if (!this.ended) this.decoder.fail(err);
  }

  /** Feeds the decompressor from a downloaded file (a layer not extracted while it downloads). */
  feedFrom(chunks: AsyncIterable<Buffer>): void {
    this.ended = true;
    void pump(
      (async function* (input: LayerInput) {
        for await (const chunk of chunks) {
          input.fed += chunk.length;
          input.report(input.fed);
          yield chunk;
        }
      })(this),
      this.decoder,
    );
  }

  /** The layer is registered. */
  finished(): void {
    this.report(this.fed, true);
    this.emit(status(this.job.id, "Pull complete"));
  }
}

/** At most `n` at once, in the order asked; `onWait` when one has to queue. */
class Slots {
  private active = 0;
  private closed = false;
  private readonly queue: (() => void)[] = [];
  constructor(private readonly n: number) {}

  /** What waits for a slot fails (as cancelled) instead of starting. */
  close(): void {
    this.closed = true;
    for (const next of this.queue.splice(0)) next();
  }

  async run<T>(onWait: () => void, work: () => Promise<T>): Promise<T> {
    if (this.active >= this.n) {
      onWait();
      await new Promise<void>((r) => this.queue.push(r));
      if (this.closed) throw Object.assign(new Error("the pull was cancelled"), { name: "AbortError" });
    } else {
      this.active++;
    }
    try {
      return await work();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    }
  }
}
