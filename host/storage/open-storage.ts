/**
 * Opens the storage driver the configuration selects (see select-driver.ts): loads its plugin
 * (built-in, installed package or path), and asks the plugin's `createStorageDriver` hook for
 * the driver with its home `<data-root>/<name>` and the `--storage-opt` options. An option of
 * another driver (option-owners.ts), or a driver that is missing, not for this host, or refuses
 * its options, stops the daemon with its message.
 */
import { join } from "node:path";
import type { StorageDriver } from "../../core/contracts/storage.js";
import { parsePluginId } from "../../core/contracts/plugin.js";
import { errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import { loadPlugins, type LoaderDeps } from "../plugins/plugin-loader.js";
import { builtinStorageManifests, checkStorageOptions } from "./option-owners.js";
import { builtinStorageDrivers, selectStorageDriver, storageOptions } from "./select-driver.js";
import type { IdMap } from "../../core/userns/id-map.js";

export async function openStorage(
  configured: string,
  storageOpts: readonly string[],
  loader: LoaderDeps & { hooks: EngineHooks },
  idMap?: IdMap,
): Promise<StorageDriver> {
  const wanted = selectStorageDriver(configured, loader.dataRoot, builtinStorageDrivers(loader.resolve.builtinDir));
  const options = storageOptions(storageOpts);
  const plugins = await loadPlugins([{ kind: "storage", name: wanted }], loader);
  const plugin = plugins.find((p) => p.plugin.manifest.kind === "storage");
  const name = plugin ? parsePluginId(plugin.id).name : wanted;
  checkStorageOptions(options, name, await builtinStorageManifests(loader.resolve.builtinDir), plugin?.plugin.manifest);
  const driver = await loader.hooks.createStorageDriver.get(name)?.promise({ home: join(loader.dataRoot, name), options, ...(idMap ? { idMap } : {}) });
  if (!driver) throw errors.storageDriverUnavailable(name);
  // cleanup() runs when the image store opens (ImageStore.open), which owns the layers.
  loader.log.info({ driver: name }, "storage driver ready");
  return driver;
}
