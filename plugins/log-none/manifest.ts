import type { PluginManifest } from "../../core/contracts/plugin.js";

/** Docker's `none` driver has no options of its own; its daemon lets any through unchecked. */
export const manifest: PluginManifest = {
  id: "log.none",
  kind: "log",
  description: "Keeps nothing of a container's output: `docker logs` answers 501 (the driver cannot read); attach still shows the output as it comes.",
  options: {},
  capabilities: [],
};
