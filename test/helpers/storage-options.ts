/**
 * Storage drivers made in tests as the daemon makes them: the `--storage-opt` values, as text,
 * go through the plugin's manifest (host/plugins/plugin-options.ts) before the driver's factory
 * sees them, typed. A refusal rejects, as a daemon start fails.
 */
import { parsePluginId, type PluginManifest } from "../../core/contracts/plugin.js";
import type { StorageContext } from "../../core/contracts/storage.js";
import { checkPluginOptions } from "../../host/plugins/plugin-options.js";

/** The context a test gives: options as an operator writes them. */
export type RawStorageContext = Omit<StorageContext, "options"> & { options: Record<string, string> };

/** `make`, taking the options as text and reading them through `manifest` first. */
export function throughManifest<A extends unknown[], D>(
  manifest: PluginManifest,
  make: (ctx: StorageContext, ...rest: A) => Promise<D>,
): (ctx: RawStorageContext, ...rest: A) => Promise<D> {
  const name = parsePluginId(manifest.id).name;
  return async (ctx, ...rest) => make({ ...ctx, options: checkPluginOptions("storage", name, manifest, ctx.options) }, ...rest);
}

/** The options as the daemon gives them to the driver (typed), or the refusal it throws. */
export function storageOptionsOf(manifest: PluginManifest, options: Record<string, string>): Record<string, unknown> {
  return checkPluginOptions("storage", parsePluginId(manifest.id).name, manifest, options);
}
