import type { PluginManifest } from "../../core/contracts/plugin.js";

export const manifest: PluginManifest = {
  id: "storage.zfs",
  kind: "storage",
  description: "Keeps each layer as a ZFS dataset: a child layer is a clone of a snapshot of its parent. Needs the zfs kernel module and the zfs command.",
  options: {
    "zfs.fsname": {
      type: "string",
      description: "ZFS filesystem the layers' datasets are made under; default: the ZFS filesystem mounted at the data root",
    },
  },
  // quota: a container's `size` storage option becomes its dataset's ZFS quota.
  capabilities: ["quota"],
};
