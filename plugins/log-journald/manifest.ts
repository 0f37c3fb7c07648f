import type { PluginManifest } from "../../core/contracts/plugin.js";

export const manifest: PluginManifest = {
  id: "log.journald",
  kind: "log",
  description:
    "Sends each line of a container's output to journald (the native protocol on /run/systemd/journal/socket) with Docker's fields (CONTAINER_ID, CONTAINER_NAME, ...). Cannot read back: docker logs reads the daemon's local cache.",
  options: {
    tag: { description: "CONTAINER_TAG and SYSLOG_IDENTIFIER: a template of {{.ID}} (default), {{.FullID}}, {{.Name}}, {{.ImageID}}, {{.ImageFullID}}, {{.ImageName}}, {{.DaemonName}}" },
    labels: { description: "Comma-separated label keys sent as fields (keys upper-cased, other characters as _)" },
    "labels-regex": { description: "Labels whose keys match are sent as fields" },
    env: { description: "Comma-separated environment variables sent as fields" },
    "env-regex": { description: "Environment variables whose names match are sent as fields" },
  },
};
