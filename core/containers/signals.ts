/**
 * Signals as the API takes them (`SIGKILL`, `KILL`, `kill`, `9`, `SIGRTMIN+3`), checked and put in
 * a form the OCI runtime's `kill` reads: the name without `SIG`, or the number (a real-time one's).
 */
import { constants } from "node:os";

const BY_NAME = constants.signals as Record<string, number>;
const NUMBERS = new Set(Object.values(BY_NAME));

/** Linux's real-time signals as Docker numbers them (moby/sys/signal): RTMIN is 34, RTMAX 64. */
const RTMIN = 34;
const RTMAX = 64;

/** The signal's name without `SIG` (`KILL`), or its number as text (a real-time signal's); undefined when it is no signal. */
export function parseSignal(raw: string): string | undefined {
  const text = raw.trim();
  if (/^\d+$/.test(text)) return NUMBERS.has(Number(text)) || (Number(text) >= 34 && Number(text) <= 64) ? text : undefined;
  const name = text.toUpperCase().replace(/^SIG/, "");
  // the real-time signals Docker names: RTMIN, RTMIN+1 to +15, RTMAX-14 to -1, RTMAX
  const rt = /^RTM(IN|AX)(?:([+-])(\d+))?$/.exec(name);
  if (rt) {
    const offset = rt[3] === undefined ? 0 : Number(rt[3]);
    const fits = rt[1] === "IN" ? rt[2] !== "-" && offset <= 15 : rt[2] !== "+" && offset <= 14;
    // as its number: the runtime's `kill` knows no real-time signal by name
    return fits || offset === 0 ? String(rt[1] === "IN" ? RTMIN + offset : RTMAX - offset) : undefined;
  }
  return `SIG${name}` in BY_NAME ? name : undefined;
}

/**
 * A signal as its number, as text (`KILL`, `SIGKILL` and `9` are `9`; `SIGRTMIN+3` is `37`): what
 * Docker's events carry, and what the runtime's `kill` is given. What is no signal is kept as it is.
 */
export function signalNumberText(signal: string): string {
  const parsed = parseSignal(signal);
  if (parsed === undefined || /^\d+$/.test(parsed)) return parsed ?? signal;
  return String(BY_NAME[`SIG${parsed}`]);
}

/** A number Go's signal.ParseSignal takes as a signal (any but 0), which a platform check may still refuse. */
export function signalNumberOf(raw: string): number | undefined {
  const text = raw.trim();
  return /^[+-]?\d+$/.test(text) && Number(text) !== 0 ? Number(text) : undefined;
}
