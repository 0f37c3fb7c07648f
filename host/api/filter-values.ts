/** Values of the API's `filters` that several lists share: `label` and `until`. */
import { parseGoDuration } from "../../core/build/go-text.js";
import { errors } from "../../core/errors.js";

/**
 * `until` of the prune endpoints (and of the image list), in milliseconds, read as Docker's
 * daemon reads it (its GetTimestamp): a Go duration back from now (`10m`, `1h30m`; not `0`),
 * a date or an RFC 3339 time (in the daemon's time zone when it names none), or Unix seconds with
 * an optional fraction. Anything else: `failed to parse value as time or duration: "x"` (400).
 */
export function untilTime(raw: string): number {
  if (raw !== "0") {
    try {
      return Date.now() - parseGoDuration(raw) / 1e6;
    } catch {
      // not a duration
    }
  }
  if (/^\d+(\.\d{1,9})?$/.test(raw)) return Number(raw) * 1000;
  // a date or a time: local unless it names a zone (Z, +hh:mm, or a third dash: -hh:mm)
  if (raw.includes("-")) {
    const zoned = /[zZ+]/.test(raw) || raw.split("-").length - 1 === 3;
    const m = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})(\.\d{1,9})?)?)?)?(Z|[+-]\d{2}:\d{2})?$/i.exec(raw);
    if (m && (m[8] !== undefined) === zoned) {
      const [, y, mo, d, h = "00", mi = "00", sec = "00", frac = "", zone] = m;
      // Go's time.Parse checks each field as it reads it, and the day against its month last
      const outOfRange = (what: string) => errors.apiGoParseError(`parsing time ${JSON.stringify(raw)}: ${what} out of range`);
      if (Number(mo) < 1 || Number(mo) > 12) throw outOfRange("month");
      if (Number(h) > 23) throw outOfRange("hour");
      if (Number(mi) > 59) throw outOfRange("minute");
      if (Number(sec) > 59) throw outOfRange("second");
      if (Number(d) < 1 || Number(d) > new Date(Date.UTC(Number(y), Number(mo), 0)).getUTCDate()) throw outOfRange("day");
      const text = `${y}-${mo}-${d}T${h}:${mi}:${sec}${frac.slice(0, 4)}${zone ? zone.toUpperCase() : ""}`;
      const ms = Date.parse(text);
      if (!Number.isNaN(ms)) return ms;
    }
  }
  throw errors.apiGoParseError(`failed to parse value as time or duration: ${JSON.stringify(raw)}`);
}

/** A `label` filter value: `k` (present) or `k=v`. */
export function hasLabel(labels: Record<string, string> | null | undefined, filter: string): boolean {
  const eq = filter.indexOf("=");
  return eq < 0 ? filter in (labels ?? {}) : labels?.[filter.slice(0, eq)] === filter.slice(eq + 1);
}

/** Every `label` filter holds and no `label!` one does. */
export function labelsMatch(labels: Record<string, string> | null | undefined, filters: Map<string, string[]>): boolean {
  return (filters.get("label") ?? []).every((v) => hasLabel(labels, v)) && !(filters.get("label!") ?? []).some((v) => hasLabel(labels, v));
}

/**
 * Docker's `filters.Match` (the `name` filter of the container, network and volume lists): the
 * value equals one of `sources`, or is a Go regular expression found in one of them (not
 * anchored: `name=web` takes `myweb1`, `name=^web$` only `web`). A value that is no regular
 * expression Go would compile matches by equality only, as Docker skips it. Go's syntax read:
 * leading flags `(?i)` `(?s)` `(?m)`, `\A` and `\z`, POSIX classes `[[:alpha:]]`; what JavaScript
 * takes and RE2 would refuse (look-arounds, back references) is taken.
 */
export function filterMatches(value: string, ...sources: string[]): boolean {
  if (sources.includes(value)) return true;
  const re = goRegExp(value);
  return re !== undefined && sources.some((s) => re.test(s));
}

const POSIX_CLASSES: Record<string, string> = {
  alnum: "0-9A-Za-z",
  alpha: "A-Za-z",
  ascii: "\\x00-\\x7F",
  blank: "\\t ",
  cntrl: "\\x00-\\x1F\\x7F",
  digit: "0-9",
  graph: "!-~",
  lower: "a-z",
  print: " -~",
  punct: "!-/:-@[-`{-~",
  space: "\\t\\n\\v\\f\\r ",
  upper: "A-Z",
  word: "0-9A-Za-z_",
  xdigit: "0-9A-Fa-f",
};

const compiled = new Map<string, RegExp | undefined>();

/** Go's regular expression `pattern` as a JavaScript one; undefined where it does not compile. */
function goRegExp(pattern: string): RegExp | undefined {
  if (compiled.has(pattern)) return compiled.get(pattern);
  let source = pattern;
  let flags = "";
  const lead = /^\(\?([ims]+)\)/.exec(source);
  if (lead) {
    flags = lead[1];
    source = source.slice(lead[0].length);
  }
  source = source
    .replace(/\[:(\^?)([a-z]+):\]/g, (whole, not: string, name: string) => (POSIX_CLASSES[name] && !not ? POSIX_CLASSES[name] : whole))
    .replace(/\\A/g, "^")
    .replace(/\\z/g, "$(?![\\s\\S])");
  let re: RegExp | undefined;
  try {
    re = new RegExp(source, flags);
  } catch {
    re = undefined;
  }
  if (compiled.size > 1000) compiled.clear(); // (values come from requests: bounded)
  compiled.set(pattern, re);
  return re;
}
