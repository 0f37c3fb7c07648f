// What the soak's clients record: each API call's latency under its route (ids folded), every
// error with what else was in flight at that moment (a 503 from the daemon's load shedding is
// explained by what the other clients were doing), and the per-call figures of the report.
import { now } from "./timing.mjs";

/** Keeps this many errors in full; the rest are only counted. */
const KEPT_ERRORS = 200;

export function soakStats() {
  const calls = new Map(); // name -> { times: number[], errors: number }
  const inFlight = new Map(); // name -> count
  const errors = [];
  let errorCount = 0;
  const t0 = now();

  const entry = (name) => {
    let e = calls.get(name);
    if (!e) calls.set(name, (e = { times: [], errors: 0 }));
    return e;
  };
  const busy = () => [...inFlight].filter(([, n]) => n > 0).map(([name, n]) => `${n} x ${name}`).join(", ");

  return {
    /**
     * Runs `fn` as the call `name` (the route: method and path with ids folded) and records its
     * latency; `fn` throws for an answer that is an error. Errors are recorded, not rethrown:
     * the result is `{ ok: true, value }` or `{ ok: false }`.
     */
    async time(name, client, fn) {
      const othersAtStart = busy();
      inFlight.set(name, (inFlight.get(name) ?? 0) + 1);
      const start = now();
      let value;
      let error;
      try {
        value = await fn();
      } catch (err) {
        error = err ?? new Error("failed");
      }
      const ms = now() - start;
      inFlight.set(name, inFlight.get(name) - 1);
      entry(name).times.push(ms);
      if (!error) return { ok: true, value };
      entry(name).errors++;
      errorCount++;
      if (errors.length < KEPT_ERRORS) {
        errors.push({ at: (start - t0) / 1000, ms, client, call: name, message: error.message, inFlightAtStart: othersAtStart, inFlightAtEnd: busy() });
      }
      return { ok: false };
    },
    /** Per call: count, p50, p99, max (ms), errors; sorted by name. */
    table() {
      return [...calls].sort(([a], [b]) => a.localeCompare(b)).map(([name, { times, errors: n }]) => {
        const s = [...times].sort((a, b) => a - b);
        return { name, count: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s.at(-1) ?? 0, errors: n };
      });
    },
    errorCount: () => errorCount,
    errors: () => errors,
  };
}

/** Nearest-rank percentile of sorted `s`. */
export function percentile(s, p) {
  if (s.length === 0) return 0;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
