import type { PluginManifest } from "../../core/contracts/plugin.js";

export const manifest: PluginManifest = {
  id: "storage.winfilter",
  kind: "storage",
  description:
    "The win platform's storage driver: layers and container sandboxes kept by the host compute service (VHDs and the filter driver). Not for Linux hosts.",
  options: {
    size: { type: "size", default: "20G", description: "Size of the sandbox (writable layer) created for a container" },
  },
  // quota: a container's `size` storage option sets its sandbox size.
  capabilities: ["quota"],
};
