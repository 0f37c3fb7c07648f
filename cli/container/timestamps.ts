/**
 * `--since` and `--until` as the Docker CLI sends them: a Go duration (`42m`, `1h30m`) counts
 * back from now, a date or RFC 3339 time becomes Unix seconds with nanoseconds, and a Unix
 * timestamp goes as typed.
 */

import { ExitError } from "../command.js";

const UNIT_NS: Record<string, number> = { ns: 1, us: 1e3, "µs": 1e3, "μs": 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** Go's time.ParseDuration, in nanoseconds; undefined when `text` is not a duration. */
function goDuration(text: string): number | undefined {
  const m = /^([+-]?)((?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(text);
  if (!m) return text === "0" ? 0 : undefined;
  let total = 0;
  for (const part of m[2].matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(part[1]) * UNIT_NS[part[2]];
  return m[1] === "-" ? -total : total;
}

export function apiTimestamp(value: string, now = Date.now()): string {
  const d = goDuration(value);
  if (value !== "0" && d !== undefined) return String(Math.floor((now - d / 1e6) / 1000));
  if (value.includes("-")) {
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) throw new Error(`parsing time "${value}": cannot parse as a time`);
    const frac = /\.(\d+)/.exec(value)?.[1] ?? "";
    const nanos = frac ? frac.padEnd(9, "0").slice(0, 9) : String((ms % 1000) * 1e6).padStart(9, "0");
    return `${Math.floor(ms / 1000)}.${nanos}`;
  }
  if (/^\d+(\.\d+)?$/.test(value)) return value;
  throw new Error(`failed to parse value as time or duration: "${value}"`);
}

/**
 * A `--since`/`--until` flag's value for the API, or undefined when empty; a bad value is an
 * ExitError worded by `message` (logs names the flag, events does not).
 */
export function timestampFlag(value: string, message: (why: string) => string): string | undefined {
  if (value === "") return undefined;
  try {
    return apiTimestamp(value);
  } catch (e) {
    throw new ExitError(1, message((e as Error).message));
  }
}
