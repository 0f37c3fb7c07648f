/**
 * The `local` log driver: Docker's on-disk format (framed protobuf records), rotation with
 * gzip, and reading back (see README.md).
 *
 * Why this file: the driver's front door. It builds the `LogDriver` the daemon gets from the
 * `createLogDriver` hook; the work is in options.ts (checks), proto.ts (the record format),
 * files.ts (names and modes), writer.ts (writing, rotation) and reader.ts (reading back).
 */
import type { LogDriver } from "../../core/contracts/log.js";
import { checkLocalOptions } from "./options.js";
import { createLocalReader } from "./reader.js";
import { createLocalLogger } from "./writer.js";

export { checkLocalOptions, parseLocalOptions, type LocalConfig } from "./options.js";
export { decodeEntry, encodeRecord, splitRecords, type LogEntry } from "./proto.js";
export { logPath } from "./files.js";
export { createLocalLogger, LocalWriter } from "./writer.js";
export { createLocalReader, LocalReader, type LocalReaderOptions } from "./reader.js";

const DRIVER_NAME = "local";

export function createLocalLogDriver(): LogDriver {
  return {
    name: DRIVER_NAME,
    capabilities: ["read"],
    // Names at create, values when the logger is made (start), as Docker checks them.
    validateOptions: (options) => checkLocalOptions(options),
    createLogger: (ctx) => createLocalLogger(ctx),
    createReader: (ctx) => createLocalReader(ctx),
  };
}
