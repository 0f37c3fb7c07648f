import type { PluginManifest } from "../../core/contracts/plugin.js";

export const manifest: PluginManifest = {
  id: "storage.fuse-overlayfs",
  kind: "storage",
  description:
    "Keeps each layer as a directory, as overlay2 does, and stacks a chain with fuse-overlayfs (FUSE): for hosts where the kernel's overlay cannot be mounted or cannot be used on the data root.",
  // No options: fuse-overlayfs has no quota, nor anything else to set per daemon.
  options: {},
  capabilities: ["native-diff", "parallel-apply"],
};
