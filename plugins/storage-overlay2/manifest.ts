import type { PluginManifest } from "../../core/contracts/plugin.js";

export const manifest: PluginManifest = {
  id: "storage.overlay2",
  kind: "storage",
  description: "Keeps each layer as a directory and stacks a chain with the kernel's overlay filesystem. The default storage driver.",
  options: {
    "overlay2.size": {
      type: "size",
      description:
        "Default maximum size of a container's writable layer (10G); only on xfs mounted with the pquota option, and below the size of that filesystem",
    },
  },
  // What the driver can have. What a given daemon has depends on the backing filesystem: the
  // driver's `capabilities` property says it (`quota` only on xfs with pquota).
  capabilities: ["native-diff", "parallel-apply", "quota"],
};
