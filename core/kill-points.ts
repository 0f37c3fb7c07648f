/**
 * Kill points, for the crash tests: named steps placed at the durable boundaries of an operation
 * (before and after a record is saved, a driver or the supervisor is called, a file is renamed
 * into place), where the process can be made to SIGKILL itself, so that a test reaches exactly
 * the windows a random kill rarely hits and checks what the next start makes of them. One
 * mechanism for both processes; each reads its own variables, `<P>` being `ENGINE_DAEMON` for
 * engined and `ENGINE_SUPERVISOR` for the supervisor:
 *
 *   <P>_KILL_POINT=<name>[:<n>]   SIGKILL the n-th time (default the first) the step `name` is reached
 *   <P>_KILL_POINT=@<file>        the same, read from <file> at every step (absent or empty: no
 *                                 kill), and counted again from zero whenever its content
 *                                 changes: a test arms a running daemon for its next operation
 *   <P>_KILL_TRACE=<file>         every step reached is appended to <file>, its name on a line:
 *                                 how a test learns which steps an operation passes
 *
 * engined arms its points once it serves (after its start-up, so that the recovery of a start
 * is never what is killed, and counts do not depend on what the start-up found); the supervisor
 * from its start. Unset, a step costs one comparison. The steps and what survives a kill at
 * each are listed in docs/kill-points.md.
 */
import { appendFileSync, readFileSync } from "node:fs";

interface Wanted {
  name: string;
  n: number;
}

interface Setup {
  fixed?: Wanted;
  /** `@<file>`: read at every step. */
  file?: string;
  trace?: string;
  armed: boolean;
  /** The file's content last read, and the count of its step since. */
  seen?: string;
  reached: number;
}

let setup: Setup | undefined;

/** `<name>[:<n>]`, or undefined for an empty text. */
function parseKillPoint(text: string | undefined): Wanted | undefined {
  const value = text?.trim();
  if (!value) return undefined;
  const cut = value.lastIndexOf(":");
  const n = cut > 0 ? Number(value.slice(cut + 1)) : NaN;
  return Number.isInteger(n) && n > 0 ? { name: value.slice(0, cut), n } : { name: value, n: 1 };
}

/**
 * Reads `<prefix>_KILL_POINT` and `<prefix>_KILL_TRACE` from `env` (once, at the process's
 * start). `armed`: whether steps count from now (the supervisor) or from `armKillPoints`.
 */
export function configureKillPoints(prefix: string, env: NodeJS.ProcessEnv, opts: { armed: boolean }): void {
  const point = env[`${prefix}_KILL_POINT`];
  const trace = env[`${prefix}_KILL_TRACE`];
  if (!point && !trace) {
    setup = undefined;
    return;
  }
  setup = {
    ...(point?.startsWith("@") ? { file: point.slice(1) } : { fixed: parseKillPoint(point) }),
    ...(trace ? { trace } : {}),
    armed: opts.armed,
    reached: 0,
  };
}

/** From now on the steps count (engined: once it serves). */
export function armKillPoints(): void {
  if (setup) setup.armed = true;
}

/** A step of an operation: traced, and the process killed here when this is the step asked for. */
export function killPoint(name: string): void {
  if (setup === undefined || !setup.armed) return;
  if (setup.trace) appendFileSync(setup.trace, `${name}\n`);
  const wanted = setup.file ? fromFile(setup) : setup.fixed;
  if (wanted?.name !== name || ++setup.reached < wanted.n) return;
  process.kill(process.pid, "SIGKILL");
}

function fromFile(s: Setup): Wanted | undefined {
  let text: string;
  try {
    text = readFileSync(s.file!, "utf8");
  } catch {
    text = "";
  }
  if (text !== s.seen) {
    s.seen = text;
    s.reached = 0;
  }
  return parseKillPoint(text);
}
