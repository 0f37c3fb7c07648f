/** `engine network inspect`: networks as JSON or through a template, as `docker network inspect`. */
import { inspectKindCommand } from "../format/inspect-one-kind.js";

export const command = inspectKindCommand({
  usage: "[OPTIONS] NETWORK [NETWORK...]",
  extraFlags: [{ name: "verbose", short: "v", type: "bool", description: "Verbose output for diagnostics" }],
  path: (ref) => `/networks/${encodeURIComponent(ref)}`,
  query: ({ flags }) => ({ verbose: flags.verbose ? "true" : undefined }),
});
