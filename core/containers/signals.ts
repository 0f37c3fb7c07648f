/**
 * Signals as the API takes them (`SIGKILL`, `KILL`, `kill`, `9`), checked and put in the one
 * form the OCI runtime's `kill` reads: the name without `SIG`, or the number.
 */
import { constants } from "node:os";

const BY_NAME = constants.signals as Record<string, number>;
const NUMBERS = new Set(Object.values(BY_NAME));

/** The signal's name without `SIG` (`KILL`), or its number as text; undefined when it is no signal. */
export function parseSignal(raw: string): string | undefined {
  const text = raw.trim();
  if (/^\d+$/.test(text)) return NUMBERS.has(Number(text)) || (Number(text) >= 34 && Number(text) <= 64) ? text : undefined;
  const name = text.toUpperCase().replace(/^SIG/, "");
  if (/^RTM(IN|AX)([+-]\d+)?$/.test(name)) return name;
  return `SIG${name}` in BY_NAME ? name : undefined;
}
