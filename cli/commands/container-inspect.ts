/** `engine container inspect`: containers only, as JSON or through a template. */
import { inspectKindCommand } from "../format/inspect-one-kind.js";

export const command = inspectKindCommand({
  usage: "[OPTIONS] CONTAINER [CONTAINER...]",
  extraFlags: [{ name: "size", short: "s", type: "bool", description: "Display total file sizes" }],
  path: (ref) => `/containers/${encodeURIComponent(ref)}/json`,
  query: ({ flags }) => ({ size: flags.size ? "1" : undefined }),
});
