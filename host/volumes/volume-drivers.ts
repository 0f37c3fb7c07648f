/**
 * Volume drivers by name, made by the driver registry on first use (built-in
 * `plugins/volume-<name>` or a package `engine-plugin-volume-<name>`; never a path: a volume's
 * driver is always a client's choice). A name no plugin serves is a 404, as Docker answers for a
 * volume plugin it cannot find; a path is a 400.
 */
import { join } from "node:path";
import type { VolumeDriver } from "../../core/contracts/volume.js";
import { EngineError, errors } from "../../core/errors.js";
import type { PluginHost } from "../plugins/driver-registry.js";
import type { Owner } from "../../core/userns/id-map.js";

export type VolumeDriverSource = (name: string) => Promise<VolumeDriver>;

/** `rootOwner`: the remapped root under `--userns-remap`, given to drivers for the data of new volumes. */
export function volumeDriverSource(host: PluginHost, rootOwner?: Owner): VolumeDriverSource {
  const notFound = [errors.pluginNotFound.code, errors.pluginMadeNoDriver.code];
  return async (name) => {
    try {
      // a name only, never a path (a 400): a client must not make the daemon import a module of its choosing
      return await host.drivers.driver("volume", name, {
        chosenBy: "client",
        context: () => ({ dataRoot: host.dataRoot, home: join(host.dataRoot, "volumes"), ...(rootOwner ? { rootOwner } : {}) }),
      });
    } catch (err) {
      if (err instanceof EngineError && notFound.includes(err.code)) throw errors.volumeDriverNotFound(name);
      throw err;
    }
  };
}
