import type { PluginManifest } from "../../core/contracts/plugin.js";

export const manifest: PluginManifest = {
  id: "storage.btrfs",
  kind: "storage",
  description: "Keeps each layer as a btrfs subvolume, a child layer as a snapshot of its parent's. Needs the data root on btrfs and btrfs-progs.",
  options: {
    "btrfs.min_space": {
      type: "size",
      description: "Minimum size of container subvolumes: a container's size storage option must not be smaller (turns btrfs quota on)",
    },
  },
  // What the driver can have: `quota` once btrfs quota groups are on (the driver's `capabilities` says).
  capabilities: ["quota"],
};
