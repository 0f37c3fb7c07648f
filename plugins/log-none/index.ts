/**
 * log.none: Docker's `none` log driver. Nothing is stored; `docker logs` is refused (no `read`
 * capability); attach works from the supervisor's spool (see none.ts and README.md).
 */
import type { EnginePlugin } from "../../core/contracts/plugin.js";
import { manifest } from "./manifest.js";
import { createNoneLogDriver, createNoneLogger } from "./none.js";

export { createNoneLogDriver, createNoneLogger };

const plugin: EnginePlugin = {
  manifest,
  apply(hooks) {
    hooks.createLogDriver.for("none").tap(manifest.id, () => createNoneLogDriver());
  },
};

export default plugin;
