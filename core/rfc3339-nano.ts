/**
 * Times with nanoseconds, as Go's `time.RFC3339Nano` writes them: conmon's log lines carry
 * them, and Docker's json-file lines must. JavaScript's Date keeps only milliseconds, so the
 * time travels as nanoseconds since the epoch in a bigint.
 */

/** Nanoseconds since the epoch of a Date (milliseconds). */
export function dateToNs(d: Date): bigint {
  return BigInt(d.getTime()) * 1_000_000n;
}

/** A read's bound in nanoseconds: the exact one when given, else its Date's. */
export const boundNs = (d: Date | undefined, ns: bigint | undefined): bigint | undefined => ns ?? (d ? dateToNs(d) : undefined);

/** Go's `time.RFC3339Nano` in UTC: `2026-01-02T03:04:05.123456789Z`, trailing zeros dropped. */
export function formatRFC3339Nano(ns: bigint): string {
  const { base, nanos } = split(ns);
  if (nanos === "000000000") return base + "Z";
  return `${base}.${nanos.replace(/0+$/, "")}Z`;
}

/**
 * Always nine digits of fraction (Docker's `RFC3339NanoFixed`): what `docker logs --timestamps`
 * prints, so that the lines' columns line up.
 */
export function formatRFC3339NanoFixed(ns: bigint): string {
  const { base, nanos } = split(ns);
  return `${base}.${nanos}Z`;
}

function split(ns: bigint): { base: string; nanos: string } {
  let sec = ns / 1_000_000_000n;
  let frac = ns % 1_000_000_000n;
  if (frac < 0n) {
    frac += 1_000_000_000n;
    sec -= 1n;
  }
  return { base: new Date(Number(sec) * 1000).toISOString().slice(0, 19), nanos: frac.toString().padStart(9, "0") };
}

const TIME_RE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** The last whole second parsed, in UTC: a log's lines come many to a second. */
let lastSecond = "";
let lastSecondNs = 0n;

/** Nanoseconds since the epoch of an RFC3339(Nano) time, or undefined. */
export function parseRFC3339Nano(s: string): bigint | undefined {
  // the form Docker and this daemon write, in UTC, read without the regular expression
  if (s.length >= 20 && s.length <= 30 && s.charCodeAt(s.length - 1) === 90 /* Z */ && (s.length === 20 || s.charCodeAt(19) === 46) /* . */) {
    const fraction = s.length === 20 ? "" : s.slice(20, -1);
    if (/^\d{0,9}$/.test(fraction) && (s.length === 20 || fraction !== "")) {
      const second = s.slice(0, 19);
      if (second !== lastSecond) {
        if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(second)) return parseGeneral(s);
        const ms = Date.parse(`${second}Z`);
        if (Number.isNaN(ms)) return undefined;
        lastSecond = second;
        lastSecondNs = BigInt(ms) * 1_000_000n;
      }
      return fraction === "" ? lastSecondNs : lastSecondNs + BigInt(fraction.padEnd(9, "0"));
    }
  }
  return parseGeneral(s);
}

function parseGeneral(s: string): bigint | undefined {
  const m = TIME_RE.exec(s);
  if (!m) return undefined;
  const ms = Date.parse(m[1] + m[3]);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? "").padEnd(9, "0"));
}
