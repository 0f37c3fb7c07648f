import type { PluginManifest } from "../../core/contracts/plugin.js";

export const manifest: PluginManifest = {
  id: "runtime.ocirun",
  kind: "runtime",
  description:
    "Runs containers with an OCI runtime (Debian's runc, registered as ocirun): makes each container's bundle and config.json from its configuration, its image's and the daemon's defaults.",
  capabilities: ["seccomp", "init", "cgroupfs", "systemd-cgroup", "no-pivot"],
};
