import type { PluginManifest } from "../../core/contracts/plugin.js";

export const manifest: PluginManifest = {
  id: "authz.readonly",
  kind: "authz",
  description: "Allows only requests that read: GET and HEAD. Everything that changes state is denied.",
  capabilities: ["request"],
};
