import type { PluginManifest } from "../../core/contracts/plugin.js";

/**
 * Docker's `none` driver has no options of its own, and its daemon lets any through unchecked:
 * so this manifest declares no `options` at all (declaring `{}` would refuse every key).
 */
export const manifest: PluginManifest = {
  id: "log.none",
  kind: "log",
  description: "Keeps nothing of a container's output: `docker logs` answers 501 (the driver cannot read); attach still shows the output as it comes.",
  capabilities: [],
};
