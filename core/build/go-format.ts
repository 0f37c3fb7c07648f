/**
 * Values printed the way Go's fmt prints them: Docker's classic builder writes its history
 * entries (`created_by`) with `%q` and `%v`, and clients show those strings as they are.
 */
import { goDuration } from "../containers/healthcheck.js";
import { goQuote } from "./go-text.js";
import type { HealthConfig } from "../containers/healthcheck.js";

/** `%q` of a []string: `["a" "b"]`. */
export const goQuoteList = (list: readonly string[]): string => `[${list.map(goQuote).join(" ")}]`;

/** `%v` of a []string: `[a b]`. */
export const goList = (list: readonly string[]): string => `[${list.join(" ")}]`;

/** `%q` of an int: Go prints it as a quoted rune (`'\x00'` for 0, `'\x03'` for 3). */
function goRune(n: number): string {
  if (n >= 0x20 && n < 0x7f && n !== 0x27 && n !== 0x5c) return `'${String.fromCharCode(n)}'`;
  return n < 0x100 ? `'\\x${n.toString(16).padStart(2, "0")}'` : `'\\u${n.toString(16).padStart(4, "0")}'`;
}

/**
 * `%q` of a *HealthConfig, as Docker's HEALTHCHECK history entry shows it:
 * `&{["CMD-SHELL" "true"] "5s" "0s" "0s" "0s" '\x00'}` (Test, Interval, Timeout, StartPeriod,
 * StartInterval, Retries).
 */
export function goHealthConfig(hc: HealthConfig): string {
  const d = (ns: number | undefined) => goQuote(goDuration(ns ?? 0));
  return `&{${goQuoteList(hc.Test ?? [])} ${d(hc.Interval)} ${d(hc.Timeout)} ${d(hc.StartPeriod)} ${d(hc.StartInterval)} ${goRune(hc.Retries ?? 0)}}`;
}
