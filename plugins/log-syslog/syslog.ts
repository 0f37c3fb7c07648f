/**
 * The syslog log driver: Docker's options, formats and transports (see README.md). It cannot
 * read back what it sent; `docker logs` reads the daemon's local cache (dual logging).
 *
 * Why this file: the driver's front door, the `LogDriver` the daemon gets from the
 * `createLogDriver` hook; the work is in options.ts (checks), format.ts (the bytes),
 * transport.ts (connections) and writer.ts (the logger).
 */
import type { LogDriver } from "../../core/contracts/log.js";
import { validateSyslogOptions } from "./options.js";
import { createSyslogLogger } from "./writer.js";

export { validateSyslogOptions, parseAddress, parseFacility, parseFormat } from "./options.js";
export { formatMessage, frame, rfc3339, stamp } from "./format.js";
export { createSyslogLogger, SyslogWriter } from "./writer.js";

const DRIVER_NAME = "syslog";

export function createSyslogLogDriver(): LogDriver {
  return {
    name: DRIVER_NAME,
    capabilities: [],
    validateOptions: validateSyslogOptions,
    createLogger: (ctx) => createSyslogLogger(ctx),
  };
}
