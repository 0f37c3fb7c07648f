/**
 * storage.overlay2: the default storage driver. Layers are directories; a chain is seen
 * through an overlay mount of their diffs (see overlay2.ts and README.md).
 */
import type { EnginePlugin, HostFacts } from "../../core/contracts/plugin.js";
import { kernelLacksFilesystem } from "../../core/storage/backing-fs.js";
import { manifest } from "./manifest.js";

import { createOverlay2Driver } from "./overlay2.js";

export { createOverlay2Driver };

/** `true` when the kernel has overlay loaded (`/proc/filesystems`), else why not. */
export function overlaySupported(host: HostFacts, filesystems?: string): true | string {
  if (host.platform !== "linux") return `overlay2 needs Linux, this host is ${host.platform}`;
  return kernelLacksFilesystem("overlay", filesystems) ?? true;
}

const plugin: EnginePlugin = {
  manifest,
  supported: (host) => overlaySupported(host),
  apply(hooks) {
    // Cheap: the driver is made (and its options checked) only when the daemon asks for it.
    hooks.createStorageDriver.for("overlay2").tapPromise(manifest.id, (ctx) => createOverlay2Driver(ctx));
  },
};

export default plugin;
