/**
 * Times with nanoseconds, as Go's `time.RFC3339Nano` writes them: conmon's log lines carry
 * them, and Docker's json-file lines must. JavaScript's Date keeps only milliseconds, so the
 * time travels as nanoseconds since the epoch in a bigint.
 */

/** Nanoseconds since the epoch of a Date (milliseconds). */
export function dateToNs(d: Date): bigint {
  return BigInt(d.getTime()) * 1_000_000n;
}

/** Go's `time.RFC3339Nano` in UTC: `2026-01-02T03:04:05.123456789Z`, trailing zeros dropped. */
export function formatRFC3339Nano(ns: bigint): string {
  let sec = ns / 1_000_000_000n;
  let frac = ns % 1_000_000_000n;
  if (frac < 0n) {
    frac += 1_000_000_000n;
    sec -= 1n;
  }
  const base = new Date(Number(sec) * 1000).toISOString().slice(0, 19);
  if (frac === 0n) return base + "Z";
  return `${base}.${frac.toString().padStart(9, "0").replace(/0+$/, "")}Z`;
}

const TIME_RE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Nanoseconds since the epoch of an RFC3339(Nano) time, or undefined. */
export function parseRFC3339Nano(s: string): bigint | undefined {
  const m = TIME_RE.exec(s);
  if (!m) return undefined;
  const ms = Date.parse(m[1] + m[3]);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? "").padEnd(9, "0"));
}
