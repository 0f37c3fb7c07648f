/**
 * Opens the storage driver the configuration selects (see select-driver.ts): loads its plugin
 * (built-in, installed package or path), and asks the plugin's `createStorageDriver` hook for
 * the driver with its home `<data-root>/<name>` and the `--storage-opt` options, read by the
 * types its manifest declares. An option of another driver (option-owners.ts), one the driver
 * does not declare or a value its type cannot read (the loader), or a driver that is missing,
 * not for this host, or refuses its options, stops the daemon with its message.
 */
import { join } from "node:path";
import type { PluginManifest } from "../../core/contracts/plugin.js";
import type { StorageDriver } from "../../core/contracts/storage.js";
import type { PluginHost } from "../plugins/driver-registry.js";
import { builtinStorageManifests, checkStorageOptions } from "./option-owners.js";
import { builtinStorageDrivers, selectStorageDriver, storageOptions } from "./select-driver.js";
import type { IdMap } from "../../core/userns/id-map.js";

export async function openStorage(configured: string, storageOpts: readonly string[], host: PluginHost, idMap?: IdMap): Promise<StorageDriver> {
  const wanted = selectStorageDriver(configured, host.dataRoot, builtinStorageDrivers(host.resolve.builtinDir));
  const options = storageOptions(storageOpts);
  // (the other drivers' manifests only matter when there are options to judge: none to load at a plain start)
  const builtin = Object.keys(options).length > 0 ? await builtinStorageManifests(host.resolve.builtinDir) : new Map<string, PluginManifest>();
  let name = wanted;
  const driver = await host.drivers.driver("storage", wanted, {
    // Options of another driver are refused first, naming it; the loader then reads this
    // driver's own through its manifest's declarations (unknown keys, bad values).
    options: (plugin, answersAs) => {
      name = answersAs;
      checkStorageOptions(options, answersAs, builtin, plugin.manifest);
      return options;
    },
    context: (answersAs, typed) => ({ home: join(host.dataRoot, answersAs), options: typed, ...(idMap ? { idMap } : {}) }),
  });
  // cleanup() runs when the image store opens (ImageStore.open), which owns the layers.
  host.log.info({ driver: name }, "storage driver ready");
  return driver;
}
