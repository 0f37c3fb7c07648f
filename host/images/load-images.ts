/**
 * `POST /images/load`: images from a tar in the `docker save` form (manifest.json) or an OCI
 * image layout (index.json), compressed layers included. The archive is unpacked into the
 * store's temporary folder first; each image is then stored whole or not at all.
 */
import { randomBytes } from "node:crypto";
import { closeSync, createReadStream, createWriteStream, mkdirSync, openSync, readSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import typia from "typia";
import { decompress } from "../../core/archive/index.js";
import { errors } from "../../core/errors.js";
import { PRIVATE_DIR, PRIVATE_FILE } from "../../core/state-modes.js";
import { digestOfFile } from "../../core/images/blob-store.js";
import type { Image, ImageStore } from "../../core/images/image-store.js";
import { ArchiveDir } from "./archive-dir.js";
import { goArch } from "../../core/images/platform-specifier.js";
import { clientArchiveError } from "../client-archive-error.js";

interface DockerManifestEntry {
  Config: string;
  // (null in moby's Dangling test image: Go's decoder reads it as none)
  RepoTags?: string[] | null;
  Layers?: string[] | null;
  /** The image's parent's ID, when the archive holds the parent too (Docker's save). */
  Parent?: string | null;
}

interface OciDescriptor {
  mediaType?: string;
  digest: string;
  size?: number;
  annotations?: Record<string, string>;
  platform?: { os?: string; architecture?: string };
}

interface ToStore {
  config: Buffer;
  layers: string[];
  tags: string[];
  parent?: string;
}

interface OciIndex {
  manifests?: OciDescriptor[] | null;
}

interface OciManifest {
  config: OciDescriptor;
  layers: OciDescriptor[];
}

// what the archive's JSON files must be before anything is read by them
const isDockerManifest = typia.createIs<DockerManifestEntry[]>();
const isOciIndex = typia.createIs<OciIndex>();
const isOciManifest = typia.createIs<OciManifest>();

/** An archive member's JSON, checked: a 400 that names the member when it is not what it must be. */
function checkedJson<T>(archive: ArchiveDir, member: string, is: (v: unknown) => v is T, what: string): T {
  const value = archive.json<unknown>(member);
  if (!is(value)) throw errors.imageInvalidArchive(`${member} is not ${what}`);
  return value;
}

const blobMember = (digest: string) => `blobs/${digest.replace(":", "/")}`;

export async function loadImages(
  store: ImageStore,
  tar: Readable,
  opts: { disablePigz: boolean; onLoaded?: (image: Image, tags: string[]) => void },
): Promise<Image[]> {
  const work = join(store.tmpDir, `load-${randomBytes(8).toString("hex")}`);
  mkdirSync(work, { recursive: true, mode: PRIVATE_DIR });
  try {
    // As Docker's daemon, a compressed archive (`docker save | gzip`) is read as well as a plain one.
    const archive = await ArchiveDir.unpack(decompress(tar, { disablePigz: opts.disablePigz }), join(work, "archive"));
    let counter = 0;
    // Layers may come compressed (OCI layouts, some tools): the store takes them uncompressed.
    // A plain tar is used where it lies; the store moves it into its blobs.
    const uncompressed = async (member: string, expectedDigest?: string): Promise<string> => {
      const file = archive.path(member);
      if (expectedDigest) {
        const { digest } = await digestOfFile(file);
        if (digest !== expectedDigest) throw errors.imageDigestMismatch(member, expectedDigest, digest);
      }
      if (!isCompressed(file)) return file;
      const out = join(work, `layer-${counter++}.tar`);
      await pipeline(decompress(createReadStream(file), { disablePigz: opts.disablePigz }), createWriteStream(out, { mode: PRIVATE_FILE }));
      return out;
    };
    const plan: ToStore[] = [];
    if (archive.has("manifest.json")) {
      for (const entry of checkedJson(archive, "manifest.json", isDockerManifest, "a list of {Config, RepoTags, Layers}")) {
        const layers = [];
        for (const layer of entry.Layers ?? []) layers.push(await uncompressed(layer));
        plan.push({ config: archive.read(entry.Config), layers, tags: entry.RepoTags ?? [], parent: entry.Parent ?? undefined });
      }
    } else if (archive.has("index.json")) {
      for (const manifest of ociManifests(archive, checkedJson(archive, "index.json", isOciIndex, "an OCI image index").manifests ?? [])) {
        const body = checkedJson(archive, blobMember(manifest.digest), isOciManifest, "an OCI image manifest");
        const config = archive.read(blobMember(body.config.digest));
        const layers = [];
        for (const layer of body.layers) layers.push(await uncompressed(blobMember(layer.digest), layer.digest));
        const name = manifest.annotations?.["io.containerd.image.name"];
        plan.push({ config, layers, tags: name ? [name] : [] });
      }
    } else {
      throw errors.imageInvalidArchive("neither manifest.json nor index.json found: not a docker save archive nor an OCI image layout");
    }
    const loaded: Image[] = [];
    for (const item of plan) {
      const image = await store.create(item.config, item.layers, item.tags);
      opts.onLoaded?.(image, item.tags);
      loaded.push(image);
    }
    // A parent link holds when the archive brought the parent too (Docker's validatedParentLinks)
    const loadedIds = new Set(loaded.map((i) => i.id));
    for (const [i, item] of plan.entries()) {
      if (item.parent && item.parent !== loaded[i].id && loadedIds.has(item.parent)) await store.setParent(loaded[i].id, item.parent);
    }
    return loaded;
  } catch (err) {
    // a layer in the archive that is no tar, or one that climbs out: the archive's fault
    throw clientArchiveError(err, errors.imageInvalidArchive);
  } finally {
    // on the thread pool: freeing the extents of hundreds of MB is a long system call
    await rm(work, { recursive: true, force: true });
  }
}

/** gzip or zstd, by their magic bytes. */
function isCompressed(file: string): boolean {
  const head = Buffer.alloc(4);
  const fd = openSync(file, "r");
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  return (head[0] === 0x1f && head[1] === 0x8b) || head.readUInt32LE(0) === 0xfd2fb528;
}

/** The image manifests of an OCI index, nested indexes followed, this host's platform chosen. */
function ociManifests(archive: ArchiveDir, descriptors: OciDescriptor[], depth = 0): OciDescriptor[] {
  if (depth > 4) throw errors.imageInvalidArchive("OCI indexes nested too deep");
  const out: OciDescriptor[] = [];
  const arch = goArch();
  for (const d of descriptors) {
    if (d.platform && (d.platform.os !== "linux" || d.platform.architecture !== arch)) continue;
    if (d.mediaType?.includes("image.index") || d.mediaType?.includes("manifest.list")) {
      const nested = checkedJson(archive, blobMember(d.digest), isOciIndex, "an OCI image index");
      out.push(...ociManifests(archive, (nested.manifests ?? []).map((m) => ({ ...m, annotations: { ...d.annotations, ...m.annotations } })), depth + 1));
    } else {
      out.push(d);
    }
  }
  return out;
}
