import type { PluginManifest } from "../../core/contracts/plugin.js";

/**
 * Log options are not namespaced (they come from `--log-opt` and a container's
 * `HostConfig.LogConfig.Config`), so the keys below are Docker's plain names.
 */
export const manifest: PluginManifest = {
  id: "log.json-file",
  kind: "log",
  description:
    "Writes each container's output as one JSON object per line to <data-root>/containers/<id>/<id>-json.log, in Docker's json-file format. The default log driver.",
  options: {
    "max-size": { description: "Size at which the log file is rotated (10m, 1g; decimal as Docker's: 1k = 1000); unset: never rotated" },
    "max-file": { description: "How many log files to keep, the current one included (default 1); without max-size it changes nothing" },
    compress: { description: "Gzip rotated files (.1.gz); needs max-size and max-file of 2 or more" },
    labels: { description: "Comma-separated container label keys whose values are stored in attrs" },
    "labels-regex": { description: "Container labels whose keys match this regular expression are stored in attrs" },
    env: { description: "Comma-separated environment variable names whose values are stored in attrs" },
    "env-regex": { description: "Environment variables whose names match this regular expression are stored in attrs" },
    tag: { description: "A template ({{.ID}}, {{.Name}}, ...) stored as attrs.tag" },
    mode: { description: "Accepted as Docker's daemon accepts it for every driver (blocking, non-blocking); output never blocks here" },
    "max-buffer-size": { description: "Accepted with mode=non-blocking, as Docker's daemon does; unused" },
    "cache-disabled": { description: "Dual logging: accepted and checked (bool); json-file is readable itself, so it has no cache" },
    "cache-max-file": { description: "Dual logging: accepted and checked (integer >= 0); unused by json-file" },
    "cache-max-size": { description: "Dual logging: accepted and checked (size); unused by json-file" },
    "cache-compress": { description: "Dual logging: accepted and checked (bool); unused by json-file" },
  },
  capabilities: ["read"],
};
