/** Times as the CRI carries them: nanoseconds since the epoch, as a decimal string (int64). */

/** Now, in nanoseconds (the wall clock's milliseconds plus the monotonic clock's finer part). */
export function nowNanos(): string {
  const ms = BigInt(Date.now());
  const fine = process.hrtime.bigint() % 1_000_000n;
  return String(ms * 1_000_000n + fine);
}

/** An RFC 3339 time (as the records keep it) in nanoseconds; "0" for none. */
export function isoToNanos(iso: string | undefined): string {
  if (!iso) return "0";
  const m = /\.(\d+)Z$/.exec(iso);
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return "0";
  const wholeSeconds = BigInt(Math.floor(ms / 1000));
  const fraction = m ? BigInt(m[1].padEnd(9, "0").slice(0, 9)) : BigInt(ms % 1000) * 1_000_000n;
  return String(wholeSeconds * 1_000_000_000n + fraction);
}
