/**
 * storage.vfs: every layer a plain directory, a child a full copy of its parent's tree (see
 * vfs.ts and README.md). Docker's fallback driver: it needs nothing of the kernel or the data
 * root's filesystem beyond bind mounts, so it runs where overlay cannot (a data root on
 * overlayfs, a nested or unprivileged-looking CI container).
 */
import type { EnginePlugin, HostFacts } from "../../core/contracts/plugin.js";
import { manifest } from "./manifest.js";

import { createVfsDriver } from "./vfs.js";

export { createVfsDriver };

/** `true` on Linux (bind mounts are all it uses), else why not. */
export function vfsSupported(host: HostFacts): true | string {
  return host.platform === "linux" ? true : `vfs needs Linux, this host is ${host.platform}`;
}

const plugin: EnginePlugin = {
  manifest,
  supported: (host) => vfsSupported(host),
  apply(hooks) {
    // Cheap: the driver is made only when the daemon asks for it.
    hooks.createStorageDriver.for("vfs").tapPromise(manifest.id, (ctx) => createVfsDriver(ctx));
  },
};

export default plugin;
