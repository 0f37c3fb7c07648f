// The image bench/pull.mjs pulls: K layers of 1 MiB random files, each a tar gzipped at level 1
// into a file, hashed on the way (diff_id: the tar; digest: the gzip), one file's worth of random
// bytes at a time; a config with those diff IDs and a Docker schema2 manifest.
import { createHash, randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import tarStream from "tar-stream";

export const sha = (b) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

/** A layer of `count` files of 1 MiB of random bytes (`layer<l>/file<i>`), gzipped into `file`. */
export async function makeLayer(file, l, count) {
  const pack = tarStream.pack();
  const diff = createHash("sha256");
  const digest = createHash("sha256");
  let size = 0;
  const written = pipeline(
    pack,
    async function* (src) {
      for await (const c of src) {
        diff.update(c);
        yield c;
      }
    },
    createGzip({ level: 1 }),
    async function* (src) {
      for await (const c of src) {
        digest.update(c);
        size += c.length;
        yield c;
      }
    },
    createWriteStream(file),
  );
  const failed = written.then(() => new Promise(() => {}));
  for (let i = 0; i < count; i++) {
    const data = randomBytes(1024 * 1024);
    const entry = new Promise((res, rej) => pack.entry({ name: `layer${l}/file${i}`, size: data.length, mtime: new Date(0), mode: 0o644 }, data, (err) => (err ? rej(err) : res())));
    await Promise.race([entry, failed]);
  }
  pack.finalize();
  await written;
  return { file, size, digest: `sha256:${digest.digest("hex")}`, diffId: `sha256:${diff.digest("hex")}` };
}

/** `layerCount` layers of `mb` / `layerCount` files of 1 MiB (rounded up) each, written to `dir`. */
export async function makeImage(dir, mb, layerCount) {
  const perLayer = Math.ceil(mb / layerCount);
  const layers = [];
  for (let l = 0; l < layerCount; l++) layers.push(await makeLayer(join(dir, `layer${l}.tar.gz`), l, perLayer));
  return imageOf(layers);
}

/** The image of `layers` (from makeLayer, base first): its config and schema2 manifest. */
export function imageOf(layers) {
  const config = Buffer.from(JSON.stringify({
    architecture: "amd64",
    os: "linux",
    created: "2026-01-01T00:00:00Z",
    config: {},
    rootfs: { type: "layers", diff_ids: layers.map((l) => l.diffId) },
    history: layers.map(() => ({ created: "2026-01-01T00:00:00Z", created_by: "bench/pull.mjs" })),
  }));
  const manifest = Buffer.from(JSON.stringify({
    schemaVersion: 2,
    mediaType: "application/vnd.docker.distribution.manifest.v2+json",
    config: { mediaType: "application/vnd.docker.container.image.v1+json", size: config.length, digest: sha(config) },
    layers: layers.map((l) => ({ mediaType: "application/vnd.docker.image.rootfs.diff.tar.gzip", size: l.size, digest: l.digest })),
  }));
  return { layers, config, manifest, bytes: layers.reduce((a, l) => a + l.size, 0) };
}
