import type { PluginManifest } from "../../core/contracts/plugin.js";

export const manifest: PluginManifest = {
  id: "storage.vfs",
  kind: "storage",
  description:
    "Keeps each layer as a plain directory holding a whole copy of its parent's tree: no overlay, no snapshots, works on any filesystem (slow and large; for CI and nested setups).",
  options: {
    "vfs.size": {
      type: "size",
      description:
        "Default maximum size of a container's filesystem (10G), its image's files included; only on xfs mounted with the pquota option (Docker's vfs size option)",
    },
  },
  // What the driver can have: `quota` only on xfs with pquota (the driver's `capabilities` says).
  capabilities: ["quota"],
};
