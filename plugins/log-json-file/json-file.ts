/**
 * The json-file log driver: Docker's format, rotation and reading (see README.md).
 *
 * Why this file: it is the driver's front door. It builds the `LogDriver` the daemon gets
 * from the `createLogDriver` hook and re-exports the pieces index.ts and the tests use; the
 * work is done in options.ts (checks), format.ts (the line format), files.ts (file names),
 * writer.ts (writing, rotation), lines.ts and reader.ts (reading back).
 */
import type { LogDriver } from "../../core/contracts/log.js";
import { checkJsonFileOptions } from "./options.js";
import { createJsonFileReader } from "./reader.js";
import { createJsonFileLogger } from "./writer.js";

export { checkJsonFileOptions, parseJsonFileOptions, type JsonFileConfig } from "./options.js";
export {
  decodeEntry,
  encodeEntry,
  encodeJsonString,
  extraAttributes,
  formatRFC3339Nano,
  parseRFC3339Nano,
} from "./format.js";
export { logPath } from "./files.js";
export { createJsonFileLogger, JsonFileWriter } from "./writer.js";
export { createJsonFileReader, JsonFileReader, type JsonFileReaderOptions } from "./reader.js";

const DRIVER_NAME = "json-file";

/** The driver the daemon gets from the `createLogDriver` hook for `json-file`. */
export function createJsonFileLogDriver(): LogDriver {
  return {
    name: DRIVER_NAME,
    capabilities: ["read"],
    // Names at create, values when the logger is made (start), as Docker checks them.
    validateOptions: (options) => checkJsonFileOptions(options),
    createLogger: (ctx, resume) => createJsonFileLogger(ctx, resume),
    createReader: (ctx) => createJsonFileReader(ctx),
  };
}
