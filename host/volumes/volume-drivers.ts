/**
 * Volume drivers by name, made by the driver registry on first use (built-in
 * `plugins/volume-<name>` or a package `engine-plugin-volume-<name>`; never a path: a volume's
 * driver is always a client's choice), else served by another process (a plugin written for
 * Docker's daemon: host/remote-plugins, remote-volume-driver.ts). A name nothing serves is a 404, as Docker answers
 * for a volume plugin it cannot find; a path is a 400; a plugin that is installed but cannot
 * be used (not running, not a volume driver) is a 500 that says why.
 */
import { join } from "node:path";
import type { VolumeDriver } from "../../core/contracts/volume.js";
import { errors } from "../../core/errors.js";
import type { PluginHost } from "../plugins/driver-registry.js";
import type { Owner } from "../../core/userns/id-map.js";
import type { RemoteDrivers } from "../remote-plugins/remote-drivers.js";

export type VolumeDriverSource = (name: string) => Promise<VolumeDriver>;

/** `rootOwner`: the remapped root under `--userns-remap`, given to drivers for the data of new volumes. */
export function volumeDriverSource(host: PluginHost, remote: RemoteDrivers<VolumeDriver>, rootOwner?: Owner): VolumeDriverSource {
  return async (name) => {
    try {
      // a name only, never a path (a 400): a client must not make the daemon import a module of its choosing
      return await host.drivers.driver("volume", name, {
        chosenBy: "client",
        context: () => ({ dataRoot: host.dataRoot, home: join(host.dataRoot, "volumes"), ...(rootOwner ? { rootOwner } : {}) }),
      });
    } catch (err) {
      const served = remote.instead(name, err, (why) => errors.volumePluginUnusable(name, why));
      if (!served) throw errors.volumeDriverNotFound(name);
      return served;
    }
  };
}
