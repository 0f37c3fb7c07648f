/**
 * `GET /images/get` and `GET /images/{name}/get`: images as one tar that is at once a `docker
 * save` archive (manifest.json, and `repositories` for tagged images, which older tools read)
 * and an OCI image layout (oci-layout, index.json, blobs/), so that both `docker load` and OCI
 * tools read it. Layers go out exactly as they came in (the
 * uncompressed tars kept as blobs; a pulled layer's tar made again from its files and layout,
 * or its downloaded compressed blob decompressed on the way), so a saved image loads again
 * with the same ID.
 */
import { createHash } from "node:crypto";

import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import tarStream from "tar-stream";
import type { Image, ImageStore } from "../../core/images/image-store.js";
import { familiarName } from "../../core/images/reference.js";

export interface SaveItem {
  image: Image;
  /** Full references to record for it (empty when saved by ID). */
  refs: string[];
}

/** When the image was made (its config's `created`, to the second as a tar header keeps it); the epoch when it has none. */
function createdOf(image: Image): Date {
  const ms = Date.parse(image.config.created ?? "");
  return Number.isNaN(ms) || ms < 0 ? new Date(0) : new Date(ms);
}

/** `disablePigz`: the daemon's `disable-pigz`, for pulled layers decompressed on the way. */
export function saveImages(store: ImageStore, items: readonly SaveItem[], opts: { disablePigz: boolean }): Readable {
  const pack = tarStream.pack();
  const written = new Set<string>();
  // As Docker's save: the image's config and layers dated when the image was made (a layer two
  // images share, by the first saved), the rest (manifests, index, oci-layout, repositories) at
  // the epoch, so that the same images make the same archive.
  const EPOCH = new Date(0);
  const addBuffer = (name: string, data: Buffer, mtime = EPOCH) =>
    new Promise<void>((resolve, reject) => pack.entry({ name, size: data.length, mtime, mode: 0o644 }, data, (err) => (err ? reject(err) : resolve())));
  const addBlobFile = async (digest: string, mtime: Date) => {
    if (written.has(digest)) return;
    written.add(digest);
    const entry = pack.entry({ name: `blobs/sha256/${digest.slice(7)}`, size: store.blobs.size(digest), mtime, mode: 0o644 });
    await pipeline(store.blobs.open(digest), entry);
  };
  /** A layer's uncompressed tar under its diff ID (a pulled layer's is decompressed on the way). */
  const addLayer = async (chainId: string, diffId: string, mtime: Date): Promise<number> => {
    const layer = store.layers.get(chainId);
    if (!layer) throw new Error(`layer ${chainId} is missing`);
    const { size, stream } = await store.layers.openTar(layer, opts);
    if (written.has(diffId)) {
      stream.destroy();
      return size;
    }
    written.add(diffId);
    const entry = pack.entry({ name: `blobs/sha256/${diffId.slice(7)}`, size, mtime, mode: 0o644 });
    await pipeline(stream, entry);
    return size;
  };
  const addBlobBuffer = async (data: Buffer): Promise<string> => {
    const digest = `sha256:${createHash("sha256").update(data).digest("hex")}`;
    if (!written.has(digest)) {
      written.add(digest);
      await addBuffer(`blobs/sha256/${digest.slice(7)}`, data);
    }
    return digest;
  };

  (async () => {
    await addBuffer("oci-layout", Buffer.from('{"imageLayoutVersion":"1.0.0"}'));
    const dockerManifest = [];
    const index = [];
    const savedIds = new Set(items.map((i) => i.image.id));
    /** The legacy `repositories` file: name -> tag -> the hex of the image's top layer's diff ID, as Docker 25+ writes it. */
    const repositories: Record<string, Record<string, string>> = {};
    for (const { image, refs } of items) {
      const created = createdOf(image);
      const diffIds = image.config.rootfs.diff_ids;
      const sizes: number[] = [];
      for (const [i, d] of diffIds.entries()) sizes.push(await addLayer(image.chain[i], d, created));
      await addBlobFile(image.id, created);
      const manifest = Buffer.from(JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: image.id, size: store.blobs.size(image.id) },
        layers: diffIds.map((d, i) => ({ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: d, size: sizes[i] })),
      }));
      const manifestDigest = await addBlobBuffer(manifest);
      const repoTags = refs.filter((r) => !r.includes("@")).map(familiarName);
      dockerManifest.push({
        Config: `blobs/sha256/${image.id.slice(7)}`,
        // (Go's nil slice: an image saved by ID has none)
        RepoTags: repoTags.length > 0 ? repoTags : null,
        Layers: diffIds.map((d) => `blobs/sha256/${d.slice(7)}`),
        // the link to its parent, when the parent is saved too: a load puts it back (Docker's save)
        ...(image.parent && image.parent !== image.id && savedIds.has(image.parent) ? { Parent: image.parent } : {}),
      });
      const descriptor = { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: manifestDigest, size: manifest.length };
      if (refs.length === 0) index.push(descriptor);
      for (const ref of refs) {
        const tag = ref.includes("@") ? undefined : ref.slice(ref.lastIndexOf(":") + 1);
        if (tag !== undefined && diffIds.length > 0) {
          const name = familiarName(ref.slice(0, ref.lastIndexOf(":")));
          (repositories[name] ??= {})[tag] = diffIds[diffIds.length - 1].slice(7);
        }
        index.push({ ...descriptor, annotations: { "io.containerd.image.name": ref, ...(tag ? { "org.opencontainers.image.ref.name": tag } : {}) } });
      }
    }
    await addBuffer("index.json", Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: index })));
    if (Object.keys(repositories).length > 0) await addBuffer("repositories", Buffer.from(`${JSON.stringify(repositories)}\n`));
    await addBuffer("manifest.json", Buffer.from(JSON.stringify(dockerManifest)));
    pack.finalize();
  })().catch((err: Error) => pack.destroy(err));
  // tar-stream's streams are streamx streams: hand Node a Node stream.
  return Readable.from(pack);
}

