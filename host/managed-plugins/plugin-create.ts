/**
 * `POST /plugins/create?name=`: the request's body is a tar of a folder holding `config.json`
 * and `rootfs/` (what `docker plugin create NAME DIR` sends). It is unpacked into a stage of the
 * store (nothing outside it is written: core/archive's extraction keeps every entry inside),
 * its configuration read, and its root filesystem packed again into the plugin's one layer
 * (gzip, kept in `blobs/` as Docker keeps it for a push), whose digest the configuration's
 * `rootfs.diff_ids` names.
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { lstat, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { applyLayer, packLayer } from "../../core/archive/index.js";
import { errors } from "../../core/errors.js";
import { parsePluginConfig, type PluginConfig } from "./plugin-object.js";

/** A plugin's blobs (its layers, its configuration as pushed): `<plugin>/blobs/<hex>`. */
export const blobPath = (dir: string, digest: string) => join(dir, "blobs", digest.replace(/^sha256:/, ""));

/** Unpacks the context into `stage` (`stage/rootfs`, its layer in `stage/blobs/`); resolves with its configuration and layer digest. */
export async function stageContext(stage: string, body: Readable): Promise<{ config: PluginConfig; layer: string }> {
  const context = join(stage, "context");
  await mkdir(context, { mode: 0o700 });
  try {
    await applyLayer(body, context, { whiteouts: "none", allowDevices: true });
  } catch (err) {
    throw errors.managedPluginCreateInvalid(`failed to read from tar: ${(err as Error).message}`);
  }
  // Docker's order: the root filesystem is looked for first, then the configuration. Both are
  // the tar's own entries: a symlink (to the host's / or a file of its) is neither
  if (!(await lstat(join(context, "rootfs")).catch(() => undefined))?.isDirectory()) throw errors.managedPluginCreateInvalid("no rootfs found: EOF");
  const configFile = await lstat(join(context, "config.json")).catch(() => undefined);
  const text = configFile?.isFile() ? await readFile(join(context, "config.json"), "utf8") : undefined;
  if (text === undefined) throw errors.managedPluginCreateInvalid("config not found");
  const config = parsePluginConfig(text);
  await rename(join(context, "rootfs"), join(stage, "rootfs"));
  await rm(context, { recursive: true, force: true });
  const layer = await packRootfs(join(stage, "rootfs"), stage);
  return { config, layer };
}

/** Packs the root filesystem as a gzipped layer among the stage's blobs; resolves with its digest. */
async function packRootfs(rootfs: string, stage: string): Promise<string> {
  await mkdir(join(stage, "blobs"), { recursive: true, mode: 0o700 });
  const tmp = join(stage, "blobs", "layer.tmp");
  const hash = createHash("sha256");
  const gzip = createGzip();
  gzip.on("data", (chunk: Buffer) => hash.update(chunk));
  await pipeline(packLayer(rootfs, { whiteouts: "none" }), gzip, createWriteStream(tmp, { mode: 0o600 }));
  const digest = `sha256:${hash.digest("hex")}`;
  await rename(tmp, blobPath(stage, digest));
  return digest;
}

/** Keeps `data` among the plugin's blobs in `dir`; resolves with its digest. */
export async function keepBlob(dir: string, data: Buffer): Promise<string> {
  await mkdir(join(dir, "blobs"), { recursive: true, mode: 0o700 });
  const digest = `sha256:${createHash("sha256").update(data).digest("hex")}`;
  await writeFile(blobPath(dir, digest), data, { mode: 0o600 });
  return digest;
}
