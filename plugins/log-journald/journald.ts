/**
 * The journald log driver: each line of a container's output is a journal entry sent over
 * journald's native protocol, with Docker's fields (see README.md). It does not read the
 * journal back; `docker logs` reads the daemon's local cache (dual logging).
 *
 * Why this file: the driver's front door; protocol.ts encodes entries, writer.ts sends them.
 */
import type { LogDriver } from "../../core/contracts/log.js";
import { validateJournaldOptions } from "./options.js";
import { createJournaldLogger, JOURNAL_SOCKET } from "./writer.js";

export { validateJournaldOptions } from "./options.js";
export { checkFieldName, encodeEntry, sanitizeKey, type JournalFields } from "./protocol.js";
export { containerFields, createJournaldLogger, JournaldWriter, JOURNAL_SOCKET } from "./writer.js";

const DRIVER_NAME = "journald";

/**
 * `socketPath` is journald's own socket for the daemon (no option names another, as in
 * Docker); the conformance suite passes a fake journal's, so that the driver runs in-process.
 */
export function createJournaldLogDriver(socketPath = JOURNAL_SOCKET): LogDriver {
  return {
    name: DRIVER_NAME,
    capabilities: [],
    validateOptions: validateJournaldOptions,
    createLogger: (ctx) => createJournaldLogger(ctx, socketPath),
  };
}
