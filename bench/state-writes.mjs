// Benchmark: what writing the daemon's records costs its event loop, the synchronous way
// (core/images/atomic-file.ts: write, fsync, rename, fsync of the folder, all on the event loop)
// next to the way the daemon writes its state (core/fs/record-writer.ts over
// core/fs/durable-file.ts: the same steps on the thread pool, a burst of saves of one record
// coalesced). Bursts of saves as a burst of container starts makes them: `--records` records
// (one folder each), each saved `--saves` times, `--bursts` times over. Prints the wall time, the
// time the event loop spent inside the save calls, and its delay (monitorEventLoopDelay, 1 ms
// resolution: mean, p99, max). Run from the repository's root after a build; the files go to
// the temporary folder, whose disk sets the fsync's price (on tmpfs both ways cost about nothing).
//
//   node_modules/node/bin/node bench/state-writes.mjs [--records N] [--saves N] [--bursts N] [--rounds R]
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";

const ROOT = new URL("..", import.meta.url).pathname;
const { writeJsonAtomic } = await import(join(ROOT, "dist/core/images/atomic-file.js"));
const { RecordWriter } = await import(join(ROOT, "dist/core/fs/record-writer.js"));
const { jsonText } = await import(join(ROOT, "dist/core/fs/durable-file.js"));

const { values } = parseArgs({
  options: { records: { type: "string", default: "16" }, saves: { type: "string", default: "3" }, bursts: { type: "string", default: "20" }, rounds: { type: "string", default: "2" } },
});
const RECORDS = Math.max(1, Math.min(Number(values.records) || 16, 256));
const SAVES = Math.max(1, Math.min(Number(values.saves) || 3, 20));
const BURSTS = Math.max(1, Math.min(Number(values.bursts) || 20, 200));
const ROUNDS = Math.max(1, Math.min(Number(values.rounds) || 2, 10));

const dir = mkdtempSync(join(tmpdir(), "bench-state-writes-"));
for (let i = 0; i < RECORDS; i++) mkdirSync(join(dir, String(i)));
/** A record about the size of a container's (2 to 3 KiB). */
const record = (i, generation) => ({
  Id: String(i).padStart(64, "0"),
  State: { Status: "running", Pid: 1000 + i, generation },
  Config: { Env: Array.from({ length: 40 }, (_, j) => `VARIABLE_${j}=some value ${j}`) },
});

async function round(kind) {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const writer = new RecordWriter();
  let inCalls = 0;
  const t0 = performance.now();
  for (let b = 0; b < BURSTS; b++) {
    const pending = [];
    for (let i = 0; i < RECORDS; i++) {
      for (let s = 0; s < SAVES; s++) {
        const path = join(dir, String(i), "config.json");
        const rec = record(i, b * SAVES + s);
        const c0 = performance.now();
        if (kind === "sync") writeJsonAtomic(path, rec);
        else pending.push(writer.write(path, () => jsonText(rec)));
        inCalls += performance.now() - c0;
      }
    }
    await Promise.all(pending);
    await new Promise((r) => setTimeout(r, 5)); // a pause between bursts, as between requests
  }
  const wall = performance.now() - t0;
  delay.disable();
  return { wall, inCalls, mean: delay.mean / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 };
}

const fmt = (x, d = 1) => x.toFixed(d).padStart(9);
console.log(`${RECORDS} records x ${SAVES} saves a burst, ${BURSTS} bursts (${RECORDS * SAVES * BURSTS} saves a round), in ${tmpdir()}`);
console.log("way      round   wall ms  in-calls ms  delay mean  delay p99  delay max (ms)");
try {
  for (let r = 1; r <= ROUNDS; r++) {
    for (const kind of ["sync", "async"]) {
      const f = await round(kind);
      console.log(`${kind.padEnd(8)} ${String(r).padStart(5)} ${fmt(f.wall, 0)} ${fmt(f.inCalls, 0)}    ${fmt(f.mean, 2)} ${fmt(f.p99)} ${fmt(f.max)}`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
