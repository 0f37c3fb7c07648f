/**
 * Whose `--storage-opt` option is it? Options are namespaced by driver (`overlay2.size`,
 * `btrfs.min_space`, `zfs.fsname`): the selected driver's manifest reads its own (the loader,
 * host/plugins/plugin-options.ts), and an option that belongs to another driver is refused
 * here first, naming that driver, before any driver is made. The
 * owners are read from the built-in storage plugins' manifests (their `options`, and their names
 * as namespaces), which is cheap: `--validate` does it without loading a driver.
 */
import { parsePluginId, type PluginManifest } from "../../core/contracts/plugin.js";
import { errors } from "../../core/errors.js";
import { builtinManifests } from "../plugins/plugin-manifests.js";
import { checkPluginOptions } from "../plugins/plugin-options.js";
import { builtinStorageDrivers, selectStorageDriver, storageOptions } from "./select-driver.js";

/** The manifests of the built-in storage plugins, by driver name (`manifest.js` only, not the driver). */
export async function builtinStorageManifests(builtinDir: string): Promise<Map<string, PluginManifest>> {
  const storage = (await builtinManifests(builtinDir, "storage")).filter((m) => m.kind === "storage");
  return new Map(storage.map((m) => [parsePluginId(m.id).name, m]));
}

/**
 * Throws for an option that is not the `selected` driver's: one another driver declares, or
 * whose namespace names another driver, is "an option of the <other> storage driver"; one no
 * driver has is unknown. The selected driver's own (declared, or in its namespace) pass: its
 * manifest's declarations read them next, refusing a key they lack and a value of the wrong type.
 */
export function checkStorageOptions(
  options: Record<string, string>,
  selected: string,
  known: ReadonlyMap<string, PluginManifest>,
  selectedManifest: PluginManifest | undefined = known.get(selected),
): void {
  for (const key of Object.keys(options)) {
    if (selectedManifest?.options?.[key]) continue;
    const dot = key.indexOf(".");
    const namespace = dot > 0 ? key.slice(0, dot) : undefined;
    if (namespace === selected) continue;
    const declaredBy = [...known].find(([name, m]) => name !== selected && m.options?.[key])?.[0];
    const owner = declaredBy ?? (namespace !== undefined && known.has(namespace) ? namespace : undefined);
    if (owner) throw errors.storageOptionOtherDriver(key, owner, selected);
    throw errors.storageOptionUnknown(key, selected, Object.keys(selectedManifest?.options ?? {}));
  }
}

/**
 * `--validate`'s check of the storage options against the driver the configuration selects:
 * whose they are, and, for a built-in driver, what its manifest declares.
 */
export async function validateStorageOptions(configured: string, dataRoot: string, entries: readonly string[], builtinDir: string): Promise<void> {
  const options = storageOptions(entries);
  if (Object.keys(options).length === 0) return;
  const selected = selectStorageDriver(configured, dataRoot, builtinStorageDrivers(builtinDir));
  const known = await builtinStorageManifests(builtinDir);
  checkStorageOptions(options, selected, known);
  const manifest = known.get(selected);
  if (manifest) checkPluginOptions("storage", selected, manifest, options);
}
