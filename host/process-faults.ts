/**
 * What engined does with a fault nothing caught: an exception thrown from a timer or an event
 * handler (`uncaughtException`), or a promise rejected that nobody awaits (`unhandledRejection`).
 *
 * Once the daemon serves, such a fault is logged with its stack and the daemon goes on. Node's
 * advice is the opposite (restart the process after an uncaught exception, since the state it
 * left may be inconsistent); here a restart would cost more than the fault, and the state a
 * fault could leave half-changed is small:
 * - the containers do not live in this process: they run under the supervisor (conmon and the
 *   runtime), which keeps their output and exit codes whether engined is up or not, and a
 *   daemon stopped without --live-restore would stop every one of them;
 * - every record is written whole or not at all (a temporary file, flushed, renamed:
 *   core/fs/durable-file.ts), so a fault between two writes leaves each record old or new,
 *   never torn; memory and disk differ at most by the writes under way;
 * - a fault unwinds only the stack of the callback it was thrown from: a request's error is
 *   caught by the API (answered 500 with its message) and a container's steps by their queue
 *   (logged), so what reaches here is a stray callback of a driver or plugin, whose own work
 *   it spoils and no one else's. A notification tap that throws is caught too
 *   (host/notification-guard.ts): the operation that fired it goes on.
 *
 * Still fatal: a fault while the daemon starts (nothing was promised yet: it stops what it
 * started and exits 1, as a start that fails does), and what Node never hands to a handler
 * (out of memory, a native crash). A fault while the daemon stops is logged and the stop goes
 * on. A storm of faults (a timer that throws every millisecond) is not allowed to flood the
 * log: past `LOG_LIMIT` in a minute, they are only counted, and the count is logged.
 */
import type { Logger } from "pino";

export type DaemonPhase = "starting" | "serving" | "stopping";

export interface FaultHandlerOptions {
  log: Logger;
  /** Where the daemon is in its life when the fault comes. */
  phase: () => DaemonPhase;
  /** A fault before the daemon serves: it must stop (called once). */
  fatal: (err: unknown) => void;
  /** Now, in ms (tests give their own clock). */
  now?: () => number;
}

/** Faults logged with their stack in one window; beyond, counted. */
export const LOG_LIMIT = 20;
const WINDOW_MS = 60_000;

export type FaultOrigin = "uncaughtException" | "unhandledRejection";

/** The handler of one fault: logs it and says whether the daemon goes on. */
export function faultHandler(opts: FaultHandlerOptions): (err: unknown, origin: FaultOrigin) => void {
  const now = opts.now ?? Date.now;
  let windowStart = now();
  let logged = 0;
  let unlogged = 0;
  let fatalCalled = false;
  return (err, origin) => {
    const phase = opts.phase();
    const what = origin === "unhandledRejection" ? "unhandled rejection" : "uncaught exception";
    if (phase === "starting") {
      opts.log.fatal({ err: asError(err) }, `${what} while the daemon starts`);
      if (!fatalCalled) {
        fatalCalled = true;
        opts.fatal(err);
      }
      return;
    }
    if (now() - windowStart >= WINDOW_MS) {
      if (unlogged > 0) opts.log.warn({ faults: unlogged }, `${unlogged} more uncaught faults in the last minute were not logged one by one`);
      windowStart = now();
      logged = 0;
      unlogged = 0;
    }
    if (logged >= LOG_LIMIT) {
      unlogged++;
      return;
    }
    logged++;
    const goesOn = phase === "stopping" ? "the daemon goes on stopping" : "the daemon goes on serving";
    opts.log.error({ err: asError(err) }, `${what}: ${goesOn}`);
  };
}

/** Installs the handler for both kinds of fault; returns the function that removes it. */
export function handleProcessFaults(opts: FaultHandlerOptions): () => void {
  const handle = faultHandler(opts);
  const onException = (err: Error, origin: string) => handle(err, origin === "unhandledRejection" ? "unhandledRejection" : "uncaughtException");
  const onRejection = (reason: unknown) => handle(reason, "unhandledRejection");
  process.on("uncaughtException", onException);
  process.on("unhandledRejection", onRejection);
  return () => {
    process.off("uncaughtException", onException);
    process.off("unhandledRejection", onRejection);
  };
}

/** A rejection's reason may be anything; pino's serializer shows an Error's message and stack. */
function asError(reason: unknown): Error {
  if (reason instanceof Error) return reason;
  const err = new Error(`non-error value: ${safeText(reason)}`);
  err.stack = `${err.message}\n    (no stack: the value thrown or rejected was not an Error)`;
  return err;
}

function safeText(value: unknown): string {
  try {
    return typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    return String(value);
  }
}
