/**
 * `POST /images/create?fromImage=`: a pull. The manifest is resolved first (an index narrowed
 * to one platform), so that a missing image or a refused login is an HTTP error; from the
 * first progress line on, failures are lines of the stream. Layers download in parallel
 * (`max-concurrent-downloads`) to temporary files, digested as they arrive, resumed with a
 * range request after a broken connection (`max-download-attempts`); each is then
 * decompressed, digested again and applied by the storage driver in one pass, base first. The
 * image is stored only when every layer is whole and the client has read the stream so far;
 * a failure or a client that goes away leaves no image and no layer of this pull behind.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, rm } from "node:fs/promises";
import { PassThrough, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { decompress } from "../../core/archive/index.js";
import { errors, EngineError } from "../../core/errors.js";
import type { ImageStore } from "../../core/images/image-store.js";
import { chainIdOf } from "../../core/images/layer-store.js";
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
    const have = store.layers.get(chain[i]) && (await store.layers.driver.exists(chain[i].slice(7)));
    if (have && jobs.length === 0) {
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
  const files = new Map<string, Promise<string>>(); // by blob digest: a blob listed twice downloads once
  const temps: string[] = [];
  const paths = new Map<string, string>(); // by blob digest: a blob listed twice downloads once
  const downloadOf = (job: LayerJob, live?: LiveFeed) => {
    let file = files.get(job.desc.digest);
    if (!file) {
      const path = store.blobs.tempPath("pull");
      paths.set(job.desc.digest, path);
      temps.push(path);
      file = slots.run(
        () => opts.emit(status(job.id, "Waiting")),
        async () => {
          await download(session, job, path, limits.attempts, opts.emit, abort.signal, live);
          return path;
        },
      );
      files.set(job.desc.digest, file);
    } else {
      live?.fail();
    }
    return file;
  };
  // The first layer to fetch sits on layers the store has: it is extracted while it
  // downloads (fed from the download), instead of after. If the download has to start over,
  // that extraction is dropped and the layer is extracted from the finished file as the others.
  const live = new LiveFeed();
  try {
    const downloads = jobs.map((job, i) => downloadOf(job, i === 0 ? live : undefined));
    for (const d of downloads) d.catch(() => abort.abort()); // one failure stops the rest
    const args = (job: LayerJob) => ({ store, job, disablePigz: limits.disablePigz, emit: opts.emit, signal: abort.signal });
    let extracted: Promise<void> = (async () => {
      try {
        await extract({ ...args(jobs[0]), live, file: paths.get(jobs[0].desc.digest)! });
      } catch (err) {
        if (!live.broken) throw err;
        const file = await downloads[0]; // a download that failed for good explains better
        if (abort.signal.aborted) throw err;
        await extract({ ...args(jobs[0]), file });
      }
    })();
    for (const [i, job] of jobs.entries()) {
      if (i === 0) continue;
      const previous = extracted;
      extracted = Promise.all([downloads[i], previous]).then(([file]) => extract({ ...args(job), file }));
    }
    try {
      await extracted;
    } catch (err) {
      abort.abort();
      // the first real failure explains; the rest are its consequences (cancelled downloads)
      const settled = await Promise.allSettled(downloads);
      const reasons = [err, ...settled.flatMap((r) => (r.status === "rejected" ? [r.reason] : []))];
      throw reasons.find((e) => !isAbort(e)) ?? err;
    }
  } finally {
    opts.signal.removeEventListener("abort", onAbort);
    await Promise.all(temps.map((t) => rm(t, { force: true })));
  }
}

const isAbort = (err: unknown) => (err as Error)?.name === "AbortError";

/** One blob to a file: digested on the way, resumed from where it broke when the registry allows. */
async function download(session: RegistrySession, job: LayerJob, path: string, attempts: number, emit: Emit, signal: AbortSignal, live?: LiveFeed): Promise<void> {
  const { desc, id } = job;
  let feed = live;
  const file = await open(path, "w", 0o600);
  try {
    let hash = createHash("sha256");
    let offset = 0;
    const report = throttled((n) => emit(bytesMessage(id, "Downloading", n, desc.size)));
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await session.blob(desc.digest, offset);
        if (offset > 0 && res.statusCode === 200) {
          // the registry ignored the range: start again
          feed?.fail();
          feed = undefined;
          hash = createHash("sha256");
          offset = 0;
          await file.truncate(0);
        }
        // written in batches of about 1 MiB: the registry's 64 KiB chunks cost a write each otherwise
        let batch: Buffer[] = [];
        let batched = 0;
        const flush = async () => {
          if (batched === 0) return;
          const data = batch;
          const at = offset - batched;
          batch = [];
          batched = 0;
          await file.writev(data, at);
        };
        try {
          for await (const chunk of res.body as AsyncIterable<Buffer>) {
            hash.update(chunk);
            batch.push(chunk);
            batched += chunk.length;
            offset += chunk.length;
            if (batched >= 1 << 20) await flush();
            if (feed) await feed.push(chunk);
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
          feed?.fail();
          feed = undefined;
          hash = createHash("sha256");
          offset = 0;
          await file.truncate(0);
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
    feed?.fail();
    throw err;
  } finally {
    await file.close();
  }
}

interface ExtractArgs {
  store: ImageStore;
  job: LayerJob;
  /** The downloaded blob (kept as the layer's blob); written while a live feed runs. */
  file: string;
  /** Bytes as they download, instead of reading `file` afterwards. */
  live?: LiveFeed;
  disablePigz: boolean;
  emit: Emit;
  signal: AbortSignal;
}

/** Decompresses, digests and applies a layer on its parent. */
async function extract({ store, job, file, live, disablePigz, emit, signal }: ExtractArgs): Promise<void> {
  if (signal.aborted) throw signal.reason;
  const total = job.desc.size;
  let read = 0;
  // fed live, the layer is reported as extracting from when its download is complete, as Docker does
  const report = throttled((n) => (!live || live.ended) && emit(bytesMessage(job.id, "Extracting", n, total)));
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      read += chunk.length;
      report(read);
      done(null, chunk);
    },
  });
  // a blob listed twice in one image was kept by its first layer already
  const source = !live && store.blobs.has(job.desc.digest) ? store.blobs.path(job.desc.digest) : file;
  const input = live ? live.readable : createReadStream(source, { highWaterMark: 1 << 20 });
  const stop = () => input.destroy(signal.reason instanceof Error ? signal.reason : new Error("the pull was cancelled"));
  signal.addEventListener("abort", stop, { once: true });
  // A failure reaches the registration through `meter` (its reader sees it as errored); the
  // listeners only keep an abort that lands between two reads from being an uncaught error.
  input.on("error", () => undefined);
  meter.on("error", () => undefined);
  const feeding = pipeline(input, meter).finally(() => signal.removeEventListener("abort", stop));
  feeding.catch(() => undefined);
  const tar = decompress(meter, { disablePigz });
  const keep = { file: source, digest: job.desc.digest, mediaType: job.desc.mediaType, size: job.desc.size };
  await store.layers.registerStream(job.parent, tar, job.diffId, keep);
  report(read, true);
  store.distribution.add(job.diffId, { digest: job.desc.digest, size: job.desc.size, mediaType: job.desc.mediaType, registry: job.registry, repository: job.repository });
  emit(status(job.id, "Pull complete"));
}

/** A download's bytes, handed to an extraction as they come (with backpressure). */
class LiveFeed {
  readonly readable = new PassThrough({ highWaterMark: 4 << 20 });
  /** The download had to start over (or the blob is shared): the feed was cut short. */
  broken = false;
  ended = false;

  async push(chunk: Buffer): Promise<void> {
    if (this.broken || this.readable.destroyed) return;
    if (!this.readable.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.readable.off("drain", done);
          this.readable.off("close", done);
          resolve();
        };
        this.readable.on("drain", done);
        this.readable.on("close", done);
      });
    }
  }

  end(): void {
    if (this.broken) return;
    this.ended = true;
    this.readable.end();
  }

  fail(): void {
    if (this.ended || this.broken) return;
    this.broken = true;
    this.readable.destroy(new Error("the download started over"));
  }
}

/** At most `n` at once, in the order asked; `onWait` when one has to queue. */
class Slots {
  private active = 0;
  private readonly queue: (() => void)[] = [];
  constructor(private readonly n: number) {}

  async run<T>(onWait: () => void, work: () => Promise<T>): Promise<T> {
    if (this.active >= this.n) {
      onWait();
      await new Promise<void>((r) => this.queue.push(r));
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
