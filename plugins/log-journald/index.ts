/** log.journald: containers' output to journald, as Docker's journald driver (see journald.ts, README.md). */
import type { EnginePlugin } from "../../core/contracts/plugin.js";
import { manifest } from "./manifest.js";
import { createJournaldLogDriver } from "./journald.js";

export { createJournaldLogDriver };

const plugin: EnginePlugin = {
  manifest,
  apply(hooks) {
    hooks.createLogDriver.for("journald").tap(manifest.id, () => createJournaldLogDriver());
  },
};

export default plugin;
