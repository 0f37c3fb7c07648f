/**
 * volume.local: the default volume driver. A volume is a folder under
 * `<data-root>/volumes/<name>/_data`, or a filesystem mounted there on first use when it was
 * created with `type`/`device`/`o` (see local-driver.ts and README.md).
 */
import type { EnginePlugin } from "../../core/contracts/plugin.js";
import { manifest } from "./manifest.js";
import { createLocalVolumeDriver } from "./local-driver.js";
import { validateLocalOptions } from "./options.js";

export { createLocalVolumeDriver, validateLocalOptions };

const plugin: EnginePlugin = {
  manifest,
  supported: (host) => (host.platform === "linux" ? true : `the local volume driver needs Linux, this host is ${host.platform}`),
  apply(hooks) {
    // Cheap: the driver reads its folder only when the daemon first uses it.
    hooks.createVolumeDriver.for("local").tapPromise(manifest.id, async (ctx) => createLocalVolumeDriver(ctx.home, ctx.rootOwner));
  },
};

export default plugin;
