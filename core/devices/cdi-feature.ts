/**
 * Whether CDI device injection is on: the `cdi` feature (`--feature cdi=false`, `"features":
 * {"cdi": false}`) is on unless set false, as in Docker since 28.3. Read here only, so that the
 * features map has one reader for this feature.
 */
import type { DaemonConfig } from "../options/table.js";

export function cdiEnabled(config: Pick<DaemonConfig, "feature">): boolean {
  return config.feature?.cdi !== false;
}
