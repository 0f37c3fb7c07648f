/**
 * Volume drivers by name, loaded as plugins on first use (built-in `plugins/volume-<name>` or a
 * package `engine-plugin-volume-<name>`; never a path: a volume's driver is always a client's
 * choice), each made once through `hooks.createVolumeDriver`. A name no plugin serves is a 404,
 * as Docker answers for a volume plugin it cannot find; a path is a 400.
 */
import { join } from "node:path";
import type { VolumeDriver } from "../../core/contracts/volume.js";
import { EngineError, errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import { loadPlugins, type LoaderDeps } from "../plugins/plugin-loader.js";
import { isPathReference } from "../plugins/resolve-plugin.js";
import type { Owner } from "../../core/userns/id-map.js";

export type VolumeDriverSource = (name: string) => Promise<VolumeDriver>;

/** `rootOwner`: the remapped root under `--userns-remap`, given to drivers for the data of new volumes. */
export function volumeDriverSource(loader: LoaderDeps & { hooks: EngineHooks }, rootOwner?: Owner): VolumeDriverSource {
  const drivers = new Map<string, Promise<VolumeDriver>>();
  const load = async (name: string): Promise<VolumeDriver> => {
    try {
      await loadPlugins([{ kind: "volume", name, chosenBy: "client" }], loader);
    } catch (err) {
      if (err instanceof EngineError && err.code === errors.pluginNotFound.code) throw errors.volumeDriverNotFound(name);
      throw err;
    }
    const driver = await loader.hooks.createVolumeDriver.get(name)?.promise({ dataRoot: loader.dataRoot, home: join(loader.dataRoot, "volumes"), ...(rootOwner ? { rootOwner } : {}) });
    if (!driver) throw errors.volumeDriverNotFound(name);
    return driver;
  };
  return (name) => {
    // A name only, never a path: an API client must not make the daemon import a module of its choosing.
    if (isPathReference(name)) return Promise.reject(errors.pluginPathFromClient("volume", name));
    if (!/^[a-z0-9][a-z0-9._-]*$/.test(name)) return Promise.reject(errors.volumeDriverNotFound(name));
    if (!drivers.has(name)) {
      drivers.set(name, load(name).catch((err: Error) => {
        drivers.delete(name);
        throw err;
      }));
    }
    return drivers.get(name)!;
  };
}
