import type { PluginManifest } from "../../core/contracts/plugin.js";

export const manifest: PluginManifest = {
  id: "storage.vfs",
  kind: "storage",
  description:
    "Keeps each layer as a plain directory holding a whole copy of its parent's tree: no overlay, no snapshots, works on any filesystem (slow and large; for CI and nested setups).",
  options: {},
  capabilities: [],
};
