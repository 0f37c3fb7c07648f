/**
 * `POST /images/{name}/push`: a push. Each layer is checked first against what the store
 * knows of it (`distribution`): a blob the target repository has already is "Layer already
 * exists", one another repository of the same registry has is mounted from there; the rest
 * are gzip-compressed from the stored tar on the fly and uploaded in chunks
 * (`max-concurrent-uploads` at once), digested on the way. The config goes up whole
 * (monolithic), the manifest (Docker schema 2) last, under the tag.
 */
import { createHash } from "node:crypto";
import { Transform } from "node:stream";
import { createGzip } from "node:zlib";
import { errors } from "../../core/errors.js";
import type { Image, ImageStore } from "../../core/images/image-store.js";
import { familiarName, formatReference, repositoryOf, type Reference } from "../../core/images/reference.js";
import type { Credentials } from "../registry/auth.js";
import type { RegistrySession } from "../registry/client.js";
import { MediaTypes, sha256 } from "../registry/manifests.js";
import type { RegistryService } from "../registry/registry.js";
import { bytesMessage, status, statusOnly, shortId, throttled, type Emit } from "./progress.js";

export interface PushDeps {
  store: ImageStore;
  registry: RegistryService;
  uploads: () => number;
}

export interface PushOptions {
  /** The repository, with the tag to push (none: every tag of the repository). */
  reference: Reference;
  credentials?: Credentials;
  signal: AbortSignal;
  emit: Emit;
  /** The daemon's `disable-pigz`: a pulled layer is decompressed with zlib on its way out. */
  disablePigz: boolean;
}

const CHUNK = 4 * 1024 * 1024;

/**
 * The local tags to push, as Docker's daemon finds them: none of the repository at all is "An
 * image does not exist locally with the tag: <repository>", a tag the repository lacks "tag does
 * not exist: <reference>".
 */
export function pushTargets(store: ImageStore, ref: Reference): { ref: Reference; image: Image }[] {
  const repo = repositoryOf(ref);
  const all: { ref: Reference; image: Image }[] = [];
  for (const image of store.list()) {
    for (const r of image.references) {
      if (r.startsWith(`${repo}:`) && !r.includes("@")) all.push({ ref: { ...ref, tag: r.slice(repo.length + 1) }, image });
    }
  }
  if (all.length === 0) throw errors.registryNoLocalImage(familiarName(repo));
  if (ref.tag === undefined) return all.sort((a, b) => a.ref.tag!.localeCompare(b.ref.tag!));
  const tagged = all.find((t) => t.ref.tag === ref.tag);
  if (!tagged) throw errors.registryPushTagMissing(familiarName(formatReference(ref)));
  return [tagged];
}

/**
 * Pushes the tag `opts.reference` names, or every tag of its repository. As Docker's daemon,
 * the first line names the repository (in full: `docker.io/library/busybox`), before the local
 * tags are looked at and the registry is asked: a failure of either is the stream's error.
 */
export async function pushImage(deps: PushDeps, opts: PushOptions): Promise<void> {
  const { reference: ref } = opts;
  opts.emit(status(undefined, `The push refers to repository [${repositoryOf(ref)}]`));
  const targets = pushTargets(deps.store, ref);
  const { session } = await deps.registry.open(ref.domain, ref.path, "push", opts.credentials, opts.signal, async () => undefined);
  for (const target of targets) await pushOne(deps, opts, session, target.ref, target.image);
}

async function pushOne(deps: PushDeps, opts: PushOptions, session: RegistrySession, ref: Reference, image: Image): Promise<void> {
  const { store } = deps;
  const release = store.hold(image.chain);
  try {
    const diffIds = image.config.rootfs.diff_ids;
    // Docker lists the top layer first
    const order = [...diffIds.keys()].reverse();
    for (const i of order) opts.emit(status(shortId(diffIds[i]), "Preparing"));
    const slots = Math.max(1, deps.uploads());
    const results: Pushed[] = new Array(diffIds.length);
    let next = 0;
    const worker = async () => {
      while (next < order.length) {
        const i = order[next++];
        results[i] = await pushLayer(store, session, ref, image.chain[i], diffIds[i], opts);
      }
    };
    if (order.length > slots) for (const i of order.slice(slots)) opts.emit(status(shortId(diffIds[i]), "Waiting"));
    await Promise.all(Array.from({ length: Math.min(slots, order.length) }, worker));

    const configBytes = store.blobs.read(image.id);
    if ((await session.blobSize(image.id)) === undefined) {
      const location = await session.startUpload();
      await session.finishUpload(location, image.id, configBytes);
    }
    // Docker's schema 2 has no zstd layers: an image with one goes up as an OCI manifest
    const oci = results.some((r) => r.mediaType === MediaTypes.ociLayerZstd);
    const manifestType = oci ? MediaTypes.ociManifest : MediaTypes.dockerManifest;
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: manifestType,
        config: { mediaType: oci ? MediaTypes.ociConfig : MediaTypes.dockerConfig, size: configBytes.length, digest: image.id },
        layers: results.map((r) => ({ mediaType: oci && r.mediaType === MediaTypes.dockerLayer ? MediaTypes.ociLayerGzip : r.mediaType, size: r.size, digest: r.digest })),
      }, null, 3),
    );
    const digest = sha256(manifest);
    await session.putManifest(ref.tag!, manifestType, manifest);
    await store.createFromLayers(configBytes, image.chain, [formatReference({ ...ref, tag: undefined, digest })]);
    opts.emit(status(undefined, `${ref.tag}: digest: ${digest} size: ${manifest.length}`));
    opts.emit({ progressDetail: {}, aux: { Tag: ref.tag, Digest: digest, Size: manifest.length } });
  } finally {
    release();
  }
}

interface Pushed {
  digest: string;
  size: number;
  mediaType: string;
}

/** The media type a manifest gives a blob of this kind: gzip as Docker's, zstd as OCI's. */
const layerType = (mediaType: string) => (/zstd/.test(mediaType) ? MediaTypes.ociLayerZstd : MediaTypes.dockerLayer);

async function pushLayer(store: ImageStore, session: RegistrySession, ref: Reference, chainId: string, diffId: string, opts: PushOptions): Promise<Pushed> {
  const id = shortId(diffId);
  const layer = store.layers.get(chainId);
  const known = store.distribution.locations(diffId).filter((l) => /gzip|zstd/.test(l.mediaType));
  // the target repository first, then others of the same registry (mountable), then anywhere
  const rank = (l: (typeof known)[number]) => (l.registry === ref.domain ? (l.repository === ref.path ? 0 : 1) : 2);
  for (const loc of known.sort((a, b) => rank(a) - rank(b))) {
    const pushed = { digest: loc.digest, size: loc.size, mediaType: layerType(loc.mediaType) };
    if (rank(loc) === 1) {
      const { mounted } = await session.mount(loc.digest, loc.repository);
      if (mounted) {
        opts.emit(statusOnly(id, `Mounted from ${loc.repository}`));
        await store.distribution.add(diffId, { ...loc, repository: ref.path });
        return pushed;
      }
      continue;
    }
    if ((await session.blobSize(loc.digest)) !== undefined) {
      opts.emit(statusOnly(id, "Layer already exists"));
      await store.distribution.add(diffId, { ...loc, registry: ref.domain, repository: ref.path });
      return pushed;
    }
  }
  // a pulled layer goes up as the blob it came as; any other is gzip-compressed on the way
  const kept = layer?.compressed && store.blobs.has(layer.compressed.digest) ? layer.compressed : undefined;
  if (!layer) throw errors.imageNotFound(`layer ${diffId}`);
  const total = kept ? kept.size : (layer.tarSize ?? store.blobs.size(diffId));
  let read = 0;
  const report = throttled((n) => opts.emit(bytesMessage(id, "Pushing", n, total)));
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      read += chunk.length;
      report(read);
      done(null, chunk);
    },
  });
  const body = kept ? store.blobs.open(kept.digest).pipe(meter) : (await store.layers.openTar(layer, { disablePigz: opts.disablePigz })).stream.pipe(meter).pipe(createGzip({ level: 1 }));
  const hash = createHash("sha256");
  let location = await session.startUpload();
  let offset = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    const chunk = Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    location = await session.uploadChunk(location, chunk, offset);
    offset += chunk.length;
  };
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (opts.signal.aborted) throw opts.signal.reason;
      hash.update(chunk);
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes >= CHUNK) await flush();
    }
    if (pendingBytes > 0) await flush();
  } catch (err) {
    body.destroy();
    throw err;
  }
  const digest = `sha256:${hash.digest("hex")}`;
  await session.finishUpload(location, digest);
  report(read, true);
  opts.emit(statusOnly(id, "Pushed"));
  const mediaType = kept ? layerType(kept.mediaType) : MediaTypes.dockerLayer;
  await store.distribution.add(diffId, { digest, size: offset, mediaType, registry: ref.domain, repository: ref.path });
  return { digest, size: offset, mediaType };
}
