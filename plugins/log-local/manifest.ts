import type { PluginManifest } from "../../core/contracts/plugin.js";

/** Log options are Docker's plain names (`--log-opt`, `LogConfig.Config`), not namespaced. */
export const manifest: PluginManifest = {
  id: "log.local",
  kind: "log",
  description:
    "Docker's `local` driver: each container's output as framed protobuf records in <data-root>/containers/<id>/local-logs/container.log, rotated and gzipped, readable by docker logs.",
  options: {
    "max-size": { description: "Size at which the file is rotated (decimal: 1k = 1000; default 20 MiB)" },
    "max-file": { description: "How many files to keep, the current one included (default 5)" },
    compress: { description: "Gzip rotated files (.1.gz; default true); needs max-file of 2 or more" },
    mode: { description: "Accepted as Docker's daemon accepts it for every driver (blocking, non-blocking); output never blocks here" },
    "max-buffer-size": { description: "Accepted with mode=non-blocking, as Docker's daemon does; unused" },
    "cache-disabled": { description: "Dual logging: checked (bool) and accepted; local is readable itself, so it has no cache" },
    "cache-max-file": { description: "Dual logging: accepted, unused" },
    "cache-max-size": { description: "Dual logging: accepted, unused" },
    "cache-compress": { description: "Dual logging: accepted, unused" },
  },
  capabilities: ["read"],
};
