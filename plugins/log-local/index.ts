/**
 * log.local: Docker's `local` log driver (framed protobuf records, rotation, gzip, `docker
 * logs`); see local.ts and README.md.
 */
import type { EnginePlugin } from "../../core/contracts/plugin.js";
import { manifest } from "./manifest.js";
import { createLocalLogDriver, createLocalLogger, createLocalReader, parseLocalOptions } from "./local.js";

export { createLocalLogDriver, createLocalLogger, createLocalReader, parseLocalOptions };

const plugin: EnginePlugin = {
  manifest,
  apply(hooks) {
    hooks.createLogDriver.for("local").tap(manifest.id, () => createLocalLogDriver());
  },
};

export default plugin;
