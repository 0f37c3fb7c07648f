// A probe loaded into engined for bench/event-loop.mjs (as `--authorization-plugin <this file>`,
// the one way to run code in the daemon's own process; it taps nothing and allows everything):
// it samples the daemon's event-loop delay every millisecond (perf_hooks.monitorEventLoopDelay)
// and, at each SIGUSR2, writes what it saw since the last one to ENGINE_BENCH_EVENT_LOOP_FILE
// and starts again. Not for production: a bench's measuring instrument.
import { writeFileSync, renameSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

const ms = (ns) => Number(ns) / 1e6;

export default {
  manifest: { id: "authz.event-loop-probe", kind: "authz", description: "bench: event-loop delay figures on SIGUSR2" },
  apply() {
    const file = process.env.ENGINE_BENCH_EVENT_LOOP_FILE;
    if (!file) throw new Error("ENGINE_BENCH_EVENT_LOOP_FILE is not set");
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    let seq = 0;
    process.on("SIGUSR2", () => {
      const figures = {
        seq: ++seq,
        samples: h.count,
        meanMs: ms(h.mean),
        p50Ms: ms(h.percentile(50)),
        p99Ms: ms(h.percentile(99)),
        p999Ms: ms(h.percentile(99.9)),
        maxMs: ms(h.max),
        // samples of 5 ms or more: a stall that a request in flight waited through
        over5Ms: h.count > 0 ? Math.round(h.count * (1 - percentileRank(h, 5e6))) : 0,
        // the upper tail, for --detail
        tail: [90, 95, 99, 99.9, 99.99, 100].map((p) => [p, ms(h.percentile(p))]),
      };
      writeFileSync(`${file}.tmp`, JSON.stringify(figures));
      renameSync(`${file}.tmp`, file);
      h.reset();
    });
  },
};

/** The share of samples below `ns` (from the histogram's percentiles, by bisection). */
function percentileRank(h, ns) {
  if (h.max < ns) return 1;
  let lo = 0;
  let hi = 100;
  for (let i = 0; i < 30; i++) {
    const mid = (lo + hi) / 2;
    if (h.percentile(mid) < ns) lo = mid;
    else hi = mid;
  }
  return lo / 100;
}
