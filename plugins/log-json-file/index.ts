/**
 * log.json-file: the default log driver. Each container's output is one JSON object per line
 * in `<data-root>/containers/<id>/<id>-json.log`, Docker's json-file format, with size
 * rotation and reading back for `docker logs` (see json-file.ts and README.md).
 */
import type { EnginePlugin } from "../../core/contracts/plugin.js";
import { manifest } from "./manifest.js";
import {
  createJsonFileLogDriver,
  createJsonFileLogger,
  createJsonFileReader,
  parseJsonFileOptions,
} from "./json-file.js";

export { createJsonFileLogDriver, createJsonFileLogger, createJsonFileReader, parseJsonFileOptions };

const plugin: EnginePlugin = {
  manifest,
  apply(hooks) {
    // Cheap: the driver makes one logger per container (`createJsonFileLogger`) and readers
    // for `docker logs` (`createJsonFileReader`) only when the daemon asks for them.
    hooks.createLogDriver.for("json-file").tap(manifest.id, () => createJsonFileLogDriver());
  },
};

export default plugin;
