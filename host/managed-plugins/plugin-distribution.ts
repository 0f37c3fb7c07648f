/**
 * Managed plugins and registries, as Docker's plugin manager moves them: a plugin is an image
 * whose manifest (Docker schema 2) names a configuration of the media type
 * `application/vnd.docker.plugin.v1+json` (the plugin's `Config`, as its create wrote it) and
 * its root filesystem's gzipped layers.
 *
 * - push: the layers and the configuration blob go up (a blob the repository has is not sent
 *   again), then the manifest under the plugin's tag;
 * - fetch (pull, upgrade, privileges): the manifest, then the configuration, then the layers,
 *   each checked against its digest, kept in the stage's `blobs/` and unpacked in order into
 *   its `rootfs/`.
 *
 * The progress lines are Docker's: `The push refers to repository [...]`, each blob's
 * `Preparing`/`Upload complete`; `<tag>: Pulling from <name>`, `Digest: ...`, a layer's
 * `Waiting`, `Downloading`, `Download complete`, and `Complete` once unpacked.
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { applyLayer } from "../../core/archive/index.js";
import { errors } from "../../core/errors.js";
import { familiarName, formatReference, repositoryOf, type Reference } from "../../core/images/reference.js";
import type { Credentials } from "../registry/auth.js";
import { MediaTypes, parseManifest, sha256 } from "../registry/manifests.js";
import type { RegistryService } from "../registry/registry.js";
import { bytesMessage, shortId, status, statusOnly, throttled, type Emit } from "../images/progress.js";
import { blobPath } from "./plugin-create.js";
import { parsePluginConfig, type PluginConfig } from "./plugin-object.js";
import type { PluginRecord } from "./plugin-store.js";

/** The media type of a plugin's configuration blob (Docker's schema2.MediaTypePluginConfig). */
export const PLUGIN_CONFIG_MEDIA_TYPE = "application/vnd.docker.plugin.v1+json";
const ACCEPT = [MediaTypes.dockerManifest, MediaTypes.ociManifest];
const LAYER = /^application\/vnd\.(docker\.image\.rootfs\.diff\.tar(\.gzip)?|oci\.image\.layer\.v1\.tar(\+gzip)?)$/;

export interface TransferOptions {
  registry: RegistryService;
  credentials?: Credentials;
  signal: AbortSignal;
  emit: Emit;
}

/** The manifest of a stored plugin: its configuration blob and layers, Docker's schema 2. */
export async function pluginManifest(dir: string, rec: PluginRecord): Promise<Buffer> {
  const blob = async (digest: string) => (await readFile(blobPath(dir, digest))).length;
  return Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaTypes.dockerManifest,
      config: { mediaType: PLUGIN_CONFIG_MEDIA_TYPE, size: await blob(rec.config), digest: rec.config },
      layers: await Promise.all(rec.layers.map(async (digest) => ({ mediaType: MediaTypes.dockerLayer, size: await blob(digest), digest }))),
    }),
  );
}

/**
 * `docker plugin push`: the plugin's blobs (those the repository lacks), then its manifest under
 * its tag. As Docker's: each of the manifest, the layers and the configuration is `Preparing`,
 * then `Upload complete` (whether it was sent or the repository had it), and the result goes in
 * the `aux` line (the CLI prints no digest line for a plugin).
 */
export async function pushPlugin(dir: string, rec: PluginRecord, ref: Reference, opts: TransferOptions): Promise<void> {
  opts.emit(status(undefined, `The push refers to repository [${familiarName(repositoryOf(ref))}]`));
  const { session } = await opts.registry.open(ref.domain, ref.path, "push", opts.credentials, opts.signal, async () => undefined);
  const manifest = await pluginManifest(dir, rec);
  const digest = sha256(manifest);
  const blobs = [...rec.layers, rec.config];
  const all = [digest, ...blobs];
  for (const d of all) opts.emit(status(shortId(d), "Preparing"));
  for (const blob of blobs) {
    if ((await session.blobSize(blob)) !== undefined) continue;
    const location = await session.startUpload();
    await session.finishUpload(location, blob, await readFile(blobPath(dir, blob)));
  }
  await session.putManifest(ref.tag!, MediaTypes.dockerManifest, manifest);
  for (const d of all) opts.emit(status(shortId(d), "Upload complete"));
  opts.emit({ progressDetail: {}, aux: { Tag: ref.tag, Digest: digest, Size: manifest.length } });
}

/** The configuration the registry has for `ref` (privileges), nothing else fetched. */
export async function fetchConfig(ref: Reference, opts: Omit<TransferOptions, "emit">): Promise<PluginConfig> {
  const { value } = await opts.registry.open(ref.domain, ref.path, "pull", opts.credentials, opts.signal, async (session) => {
    const { manifest } = await readManifest(session, ref);
    const res = await session.blob(manifest.config.digest);
    const data = Buffer.from(await res.body.arrayBuffer());
    if (sha256(data) !== manifest.config.digest) throw errors.registryError(`plugin config ${manifest.config.digest}`, "its content does not match its digest");
    return parsePluginConfig(data.toString("utf8"));
  });
  return value;
}

export interface Fetched {
  config: PluginConfig;
  /** The configuration's blob, kept as it came. */
  configDigest: string;
  layers: string[];
}

/** Fetches the plugin `ref` into `stage`: `blobs/` and `rootfs/`. */
export async function fetchPlugin(ref: Reference, stage: string, opts: TransferOptions): Promise<Fetched> {
  const { value } = await opts.registry.open(ref.domain, ref.path, "pull", opts.credentials, opts.signal, async (session) => {
    const { manifest, digest } = await readManifest(session, ref);
    opts.emit(status(ref.tag ?? ref.digest!, `Pulling from ${familiarName(repositoryOf(ref))}`));
    opts.emit(status(undefined, `Digest: ${digest}`));
    await mkdir(join(stage, "blobs"), { recursive: true, mode: 0o700 });
    await mkdir(join(stage, "rootfs"), { mode: 0o755 });
    const configDigest = manifest.config.digest;
    await download(session, configDigest, join(stage, "blobs"), undefined, opts);
    const config = parsePluginConfig(await readFile(blobPath(stage, configDigest), "utf8"));
    for (const layer of manifest.layers) opts.emit(status(shortId(layer.digest), "Waiting"));
    for (const layer of manifest.layers) {
      await download(session, layer.digest, join(stage, "blobs"), layer.size, opts);
      opts.emit(statusOnly(shortId(layer.digest), "Download complete"));
      const file = Readable.from(await readFile(blobPath(stage, layer.digest)));
      const tar = /gzip/.test(layer.mediaType) ? file.pipe(createGunzip()) : file;
      await applyLayer(tar, join(stage, "rootfs"), { whiteouts: "remove", allowDevices: true });
      opts.emit(statusOnly(shortId(layer.digest), "Complete"));
    }
    return { config, configDigest, layers: manifest.layers.map((l) => l.digest) };
  });
  return value;
}

type Session = Parameters<Parameters<RegistryService["open"]>[5]>[0];

/** The plugin's manifest: an image manifest whose configuration is a plugin's. */
async function readManifest(session: Session, ref: Reference) {
  const name = formatReference(ref);
  const served = await session.manifest(ref.digest ?? ref.tag!, ACCEPT);
  const digest = sha256(served.body);
  if (ref.digest && ref.digest !== digest) throw errors.registryError(`manifest for ${name}`, "its content does not match its digest");
  const parsed = parseManifest(served.body, served.mediaType, name);
  if (parsed.kind !== "image") throw errors.registryError(`manifest for ${name}`, "a list of manifests is no plugin");
  const manifest = parsed.manifest;
  // Docker's words when the image is not a plugin
  if (manifest.config.mediaType !== PLUGIN_CONFIG_MEDIA_TYPE) throw errors.managedPluginCreateInvalid("fetched plugin image but plugin config is missing");
  for (const layer of manifest.layers) {
    if (!LAYER.test(layer.mediaType)) throw errors.registryError(`manifest for ${name}`, `unsupported layer media type ${layer.mediaType}`);
  }
  return { manifest, digest };
}

/** A blob into `dir/<hex>`, checked against its digest on the way. */
async function download(session: Session, digest: string, dir: string, size: number | undefined, opts: TransferOptions): Promise<void> {
  const res = await session.blob(digest);
  const hash = createHash("sha256");
  const total = size ?? Number(res.headers["content-length"] ?? 0);
  let read = 0;
  const report = throttled((n) => size !== undefined && opts.emit(bytesMessage(shortId(digest), "Downloading", n, total)));
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      read += chunk.length;
      report(read);
      done(null, chunk);
    },
  });
  const tmp = join(dir, `${digest.replace(/^sha256:/, "")}.tmp`);
  await pipeline(res.body, meter, createWriteStream(tmp, { mode: 0o600 }), { signal: opts.signal });
  if (`sha256:${hash.digest("hex")}` !== digest) throw errors.registryError(`blob ${digest}`, "its content does not match its digest");
  await rename(tmp, join(dir, digest.replace(/^sha256:/, "")));
}

export interface PluginPrivilege {
  Name: string;
  Description: string;
  Value: string[];
}

/** What a plugin asks of the host, as Docker's computePrivileges lists it (null for nothing). */
export function privilegesOf(c: PluginConfig): PluginPrivilege[] | null {
  const out: PluginPrivilege[] = [];
  if (c.Network.Type !== "null" && c.Network.Type !== "bridge" && c.Network.Type !== "") out.push({ Name: "network", Description: "permissions to access a network", Value: [c.Network.Type] });
  if (c.IpcHost) out.push({ Name: "host ipc namespace", Description: "allow access to host ipc namespace", Value: ["true"] });
  if (c.PidHost) out.push({ Name: "host pid namespace", Description: "allow access to host pid namespace", Value: ["true"] });
  for (const m of c.Mounts ?? []) if (m.Source !== null) out.push({ Name: "mount", Description: "host path to mount", Value: [m.Source] });
  for (const d of c.Linux.Devices ?? []) if (d.Path !== null) out.push({ Name: "device", Description: "host device to access", Value: [d.Path] });
  if (c.Linux.AllowAllDevices) out.push({ Name: "allow-all-devices", Description: "allow 'rwm' access to all devices", Value: ["true"] });
  if ((c.Linux.Capabilities ?? []).length > 0) out.push({ Name: "capabilities", Description: "list of additional capabilities required", Value: c.Linux.Capabilities! });
  return out.length ? out : null;
}

/** Whether the privileges a client accepted are those the plugin asks for (Docker's validatePrivileges: by name, values in any order). */
export function samePrivileges(wanted: readonly PluginPrivilege[] | null, given: readonly PluginPrivilege[] | null): boolean {
  const key = (p: PluginPrivilege) => `${p.Name}\u0000${[...(p.Value ?? [])].sort().join("\u0000")}`;
  const a = (wanted ?? []).map(key).sort();
  const b = (given ?? []).map(key).sort();
  return a.length === b.length && a.every((k, i) => k === b[i]);
}
