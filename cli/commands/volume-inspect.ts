/** `engine volume inspect`: volumes as JSON or through a template. */
import { inspectKindCommand } from "../format/inspect-one-kind.js";

export const command = inspectKindCommand({
  usage: "[OPTIONS] VOLUME [VOLUME...]",
  path: (ref) => `/volumes/${encodeURIComponent(ref)}`,
});
