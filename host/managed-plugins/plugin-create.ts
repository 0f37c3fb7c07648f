/**
 * `POST /plugins/create?name=`: the request's body is a tar of a folder holding `config.json`
 * and `rootfs/` (what `docker plugin create NAME DIR` sends). It is unpacked into a stage of the
 * store (nothing outside it is written: core/archive's extraction keeps every entry inside),
 * its configuration read, and its root filesystem packed again into the plugin's one layer
 * (`layer.tar.gz`, gzip, as Docker stores it for a push), whose digest the configuration's
 * `rootfs.diff_ids` names.
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { applyLayer, packLayer } from "../../core/archive/index.js";
import { errors } from "../../core/errors.js";
import { parsePluginConfig, type PluginConfig } from "./plugin-object.js";

export const LAYER_FILE = "layer.tar.gz";

/** Unpacks the context into `stage` (`stage/rootfs`, `stage/layer.tar.gz`); resolves with its configuration and layer digest. */
export async function stageContext(stage: string, body: Readable): Promise<{ config: PluginConfig; layer: string }> {
  const context = join(stage, "context");
  await mkdir(context, { mode: 0o700 });
  try {
    await applyLayer(body, context, { whiteouts: "none", allowDevices: true });
  } catch (err) {
    throw errors.managedPluginCreateInvalid(`failed to read from tar: ${(err as Error).message}`);
  }
  // Docker's order: the root filesystem is looked for first, then the configuration
  if (!(await stat(join(context, "rootfs")).catch(() => undefined))?.isDirectory()) throw errors.managedPluginCreateInvalid("no rootfs found: EOF");
  const text = await readFile(join(context, "config.json"), "utf8").catch(() => undefined);
  if (text === undefined) throw errors.managedPluginCreateInvalid("config not found");
  const config = parsePluginConfig(text);
  await rename(join(context, "rootfs"), join(stage, "rootfs"));
  await rm(context, { recursive: true, force: true });
  const layer = await packRootfs(join(stage, "rootfs"), join(stage, LAYER_FILE));
  return { config, layer };
}

/** Packs the root filesystem as a gzipped layer at `file`; resolves with the digest of the file. */
async function packRootfs(rootfs: string, file: string): Promise<string> {
  const hash = createHash("sha256");
  const gzip = createGzip();
  gzip.on("data", (chunk: Buffer) => hash.update(chunk));
  await pipeline(packLayer(rootfs, { whiteouts: "none" }), gzip, createWriteStream(file, { mode: 0o600 }));
  return `sha256:${hash.digest("hex")}`;
}
