/** `engine image inspect`: images only, as JSON or through a template. */
import { inspectKindCommand } from "../format/inspect-one-kind.js";
import { platformQuery } from "../progress/platform.js";

export const command = inspectKindCommand({
  usage: "[OPTIONS] IMAGE [IMAGE...]",
  extraFlags: [{ name: "platform", type: "string", description: `Inspect a specific platform of the multi-platform image ('os[/arch[/variant]]')` }],
  path: (ref) => `/images/${encodeURIComponent(ref)}/json`,
  query: ({ flags }) => ({ platform: platformQuery(String(flags.platform)) }),
});
