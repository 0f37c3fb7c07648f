/**
 * storage.winfilter: the win platform's storage driver (see winfilter-driver.ts and README.md).
 * On any other platform `supported()` says it is not for this host, so a daemon asked for
 * `--storage-driver winfilter` stops at start with that reason.
 */
import type { EnginePlugin, HostFacts } from "../../core/contracts/plugin.js";
import { manifest } from "./manifest.js";
import { createWinfilterDriver } from "./winfilter-driver.js";

export { createWinfilterDriver };

/** `true` on the win platform; elsewhere why not, naming this host's platform. */
export function winfilterSupported(host: HostFacts): true | string {
  if (host.platform === "win32") return true;
  return (
    `winfilter is the storage driver of the win platform (layers kept by its host compute service), ` +
    `and this host's platform is ${host.platform}; on Linux choose overlay2, fuse-overlayfs, btrfs, zfs or vfs`
  );
}

const plugin: EnginePlugin = {
  manifest,
  supported: (host) => winfilterSupported(host),
  apply(hooks) {
    hooks.createStorageDriver.for("winfilter").tapPromise(manifest.id, (ctx) => createWinfilterDriver(ctx));
  },
};

export default plugin;
