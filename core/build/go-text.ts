/**
 * The few pieces of Go's standard library whose exact output shows up in Docker's build messages:
 * `%q` quoting (strconv.Quote), the quoting in the time package's errors, unicode.IsSpace and
 * strings.TrimSpace, time.ParseDuration, strconv.ParseInt(s, 10, 32) and path.Clean. A user sees
 * e.g. `failed to process "\"x": ...` or `time: invalid duration "x"`, so these follow Go exactly
 * (as far as a JavaScript string can carry it: invalid UTF-8 never reaches here).
 */

/**
 * Made at first use, from strings: a Unicode property class costs milliseconds to check and
 * compile (a regular expression literal is checked when the file is parsed), which every client
 * command that loads this file (the flag parser does) would otherwise pay at start.
 */
let classes: { space: RegExp; leading: RegExp; trailing: RegExp; printable: RegExp } | undefined;
const unicode = () =>
  (classes ??= {
    space: new RegExp("\\p{White_Space}", "u"),
    leading: new RegExp("^\\p{White_Space}+", "u"),
    trailing: new RegExp("\\p{White_Space}+$", "u"),
    printable: new RegExp("[\\p{L}\\p{M}\\p{N}\\p{P}\\p{S} ]", "u"),
  });

/** unicode.IsSpace: the Unicode White_Space property (which String.prototype.trim does not match exactly). */
export function isGoSpace(ch: string): boolean {
  return unicode().space.test(ch);
}

/** strings.TrimSpace. */
export function goTrimSpace(s: string): string {
  return s.replace(unicode().leading, "").replace(unicode().trailing, "");
}

/** strings.TrimLeftFunc(s, unicode.IsSpace). */
export function goTrimLeftSpace(s: string): string {
  return s.replace(unicode().leading, "");
}

const SHORT_ESCAPES: Record<string, string> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
  "\\": "\\\\",
  '"': '\\"',
};

/** strconv.Quote (what `%q` and `%#v` print for a string). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const short = SHORT_ESCAPES[ch];
    if (short) out += short;
    else if (unicode().printable.test(ch)) out += ch;
    else {
      const cp = ch.codePointAt(0)!;
      if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, "0")}`;
      else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, "0")}`;
      else out += `\\U${cp.toString(16).padStart(8, "0")}`;
    }
  }
  return out + '"';
}

/** The time package's own quoting in its parse errors: bytes of non-ASCII or control characters as \xNN. */
function timeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0x80 || cp < 0x20) {
      for (const byte of Buffer.from(ch, "utf8")) out += `\\x${byte.toString(16).padStart(2, "0")}`;
    } else out += ch === '"' || ch === "\\" ? `\\${ch}` : ch;
  }
  return out + '"';
}

const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  "\u00b5s": 1000n, // U+00B5 micro sign
  "\u03bcs": 1000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const INT64_MAX = (1n << 63n) - 1n;

/**
 * time.ParseDuration, in nanoseconds: a sequence of decimal numbers, each with an optional
 * fraction and a unit ("1h30m", "1.5s", "-2ms"); "0" alone needs no unit. Throws Go's message.
 */
export function parseGoDuration(text: string): number {
  const invalid = () => new Error(`time: invalid duration ${timeQuote(text)}`);
  let s = text;
  let negative = false;
  if (s[0] === "-" || s[0] === "+") {
    negative = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0;
  if (s === "") throw invalid();
  let total = 0n;
  while (s !== "") {
    const number = /^([0-9]*)(?:\.([0-9]*))?/.exec(s)!;
    const [whole, intPart, fraction] = [number[0], number[1]!, number[2]];
    if (intPart === "" && !fraction) throw invalid(); // neither digits before nor after the dot
    s = s.slice(whole.length);
    const unitLength = s.search(/[0-9.]/);
    const unit = unitLength < 0 ? s : s.slice(0, unitLength);
    if (unit === "") throw new Error(`time: missing unit in duration ${timeQuote(text)}`);
    s = s.slice(unit.length);
    const scale = UNIT_NANOS[unit];
    if (scale === undefined) throw new Error(`time: unknown unit ${timeQuote(unit)} in duration ${timeQuote(text)}`);
    let value = BigInt(intPart || "0") * scale;
    if (fraction) {
      // Go keeps the fraction's digits as a rational number and truncates once, at the end.
      value += (BigInt(fraction) * scale) / 10n ** BigInt(fraction.length);
    }
    total += value;
    if (total > INT64_MAX + (negative ? 1n : 0n)) throw invalid();
  }
  return Number(negative ? -total : total);
}

/** strconv.ParseInt(s, 10, 32), with its two messages. */
export function parseGoInt32(s: string): number {
  if (!/^[+-]?[0-9]+$/.test(s)) throw new Error(`strconv.ParseInt: parsing ${goQuote(s)}: invalid syntax`);
  const value = BigInt(s);
  if (value > 2147483647n || value < -2147483648n) throw new Error(`strconv.ParseInt: parsing ${goQuote(s)}: value out of range`);
  return Number(value);
}

/** path.Clean (filepath.Clean on Linux): no "." or ".." elements, no doubled or trailing slash; "" is ".". */
export function goCleanPath(p: string): string {
  if (p === "") return ".";
  const rooted = p.startsWith("/");
  const out: string[] = [];
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!rooted) out.push("..");
    } else out.push(part);
  }
  const joined = out.join("/");
  if (rooted) return `/${joined}`;
  return joined === "" ? "." : joined;
}
