// Benchmark: how long engined's event loop stalls while 16 clients run container cycles at once
// (create+start+wait+remove of `busybox true`, NetworkMode none), and, with `--scenario`, during
// the heavy operations of bench/event-loop-scenarios.mjs (pull, load, commit, logs), engined
// only. The daemon is
// started as bench/daemons.mjs starts it (its own folder and network namespace, no bridge), with
// bench/event-loop-probe.mjs loaded into it, which samples the event-loop delay every
// millisecond (perf_hooks.monitorEventLoopDelay) and reports it at each SIGUSR2. Every round
// prints the cycles/s and the delay's mean, p50, p99, p99.9 and max, and how many 1-ms samples
// waited 5 ms or more, and how many cycles failed (a 503 when the daemon sheds load); then the
// medians over the rounds. Each other scenario prints the same delay figures for its one
// operation; `--detail` adds the delay's percentiles from p90 to the max. Nothing is asserted;
// the goal (issue 32) is a maximum under 100 ms in every scenario.
//
//   node_modules/node/bin/node bench/event-loop.mjs [--scenario cycles|pull|load|commit|logs|all]
//       [--clients N] [--cycles N] [--rounds R] [--detail]
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { busyboxTar, cycle, ready, spawnDaemon, stopDaemon } from "./daemons.mjs";
import { sleep } from "./processes.mjs";
import { scenarios } from "./event-loop-scenarios.mjs";
import { going, median, now, stopLoopsOnCtrlC } from "./timing.mjs";

const { values } = parseArgs({
  options: {
    scenario: { type: "string", default: "cycles" },
    clients: { type: "string", default: "16" },
    cycles: { type: "string", default: "96" },
    rounds: { type: "string", default: "3" },
    detail: { type: "boolean", default: false },
  },
});
const SCENARIOS = values.scenario === "all" ? ["cycles", ...Object.keys(scenarios)] : values.scenario.split(",");
for (const s of SCENARIOS) if (s !== "cycles" && !scenarios[s]) throw new Error(`unknown scenario ${s}: cycles, ${Object.keys(scenarios).join(", ")} or all`);
const CLIENTS = Math.max(1, Math.min(Number(values.clients) || 16, 64));
const CYCLES = Math.max(CLIENTS, Math.min(Number(values.cycles) || 96, 2000));
const ROUNDS = Math.max(1, Math.min(Number(values.rounds) || 3, 20));
const ROUND_LIMIT_MS = 180_000;
const PROBE = new URL("./event-loop-probe.mjs", import.meta.url).pathname;

const work = mkdtempSync(join(tmpdir(), "bench-event-loop-"));
const figuresFile = join(work, "event-loop.json");
stopLoopsOnCtrlC();

/** Asks the probe for what it saw since the last ask (and to start again); waits for its file. */
async function probe(daemon) {
  const before = existsSync(figuresFile) ? statSync(figuresFile).mtimeMs : 0;
  const seq = before ? JSON.parse(readFileSync(figuresFile, "utf8")).seq : 0;
  process.kill(daemon.proc.pid, "SIGUSR2");
  for (let i = 0; i < 200; i++) {
    await sleep(10);
    if (!existsSync(figuresFile)) continue;
    const figures = JSON.parse(readFileSync(figuresFile, "utf8"));
    if (figures.seq > seq) return figures;
  }
  throw new Error("the probe did not answer (is it loaded? see daemon.log)");
}

async function round(daemon) {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  let started = 0;
  let done = 0;
  let failed = 0;
  let firstError;
  const t0 = now();
  await probe(daemon); // from here
  const client = async () => {
    while (started < CYCLES && going(t0, ROUND_LIMIT_MS)) {
      started++;
      try {
        await cycle(daemon.sock, agent);
        done++;
      } catch (err) {
        // a 503 (the daemon's load shedding: its event loop stalled past 1 s) is a result too
        failed++;
        firstError ??= err.message;
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  const seconds = (now() - t0) / 1000;
  const figures = await probe(daemon);
  agent.destroy();
  return { cyclesPerSecond: done / seconds, failed, firstError, ...figures };
}

const fmt = (x, digits = 2) => x.toFixed(digits).padStart(8);
const DELAY_HEAD = "   mean ms    p50 ms    p99 ms  p99.9 ms    max ms  samples>=5ms";
const delays = (f) => `${fmt(f.meanMs)}  ${fmt(f.p50Ms)}  ${fmt(f.p99Ms)}  ${fmt(f.p999Ms)}  ${fmt(f.maxMs)}  ${String(f.over5Ms).padStart(12)}`;
const detail = (f) => values.detail && console.log(`      percentiles: ${f.tail.map(([p, v]) => `p${p} ${v.toFixed(1)}`).join(", ")} ms`);

async function cycles(daemon) {
  const rows = [];
  console.log(`cycles: ${CLIENTS} clients, ${CYCLES} cycles a round (create+start+wait+remove of busybox true, no network)`);
  console.log(`round  cycles/s${DELAY_HEAD}  failed`);
  for (let r = 1; r <= ROUNDS && going(0, Infinity); r++) {
    const f = await round(daemon);
    rows.push(f);
    console.log(`${String(r).padStart(5)} ${fmt(f.cyclesPerSecond)}${delays(f)}  ${String(f.failed).padStart(6)}`);
    if (f.firstError) console.log(`      first failure: ${f.firstError}`);
    detail(f);
  }
  if (rows.length > 1) {
    const m = (k) => median(rows.map((f) => f[k]));
    const med = Object.fromEntries(["meanMs", "p50Ms", "p99Ms", "p999Ms", "maxMs", "over5Ms"].map((k) => [k, m(k)]));
    console.log(`  med ${fmt(m("cyclesPerSecond"))}${delays(med)}  ${String(m("failed")).padStart(6)}`);
  }
}

/** One heavy operation, prepared outside the measured window. */
async function single(daemon, name) {
  const scenario = scenarios[name];
  const dir = join(work, name);
  mkdirSync(dir);
  const prepared = await scenario.prepare(daemon, dir);
  try {
    await probe(daemon);
    const t0 = now();
    await scenario.run(daemon, prepared);
    const seconds = (now() - t0) / 1000;
    const f = await probe(daemon);
    console.log(`${name}: ${scenario.what}`);
    console.log(`   seconds${DELAY_HEAD}`);
    console.log(`  ${fmt(seconds)}${delays(f)}`);
    detail(f);
  } finally {
    await prepared.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

// unshare needs the daemon's own command (bench/daemons.mjs); its probe is a plugin by path
const daemon = spawnDaemon("engined", work, { extraArgs: ["--authorization-plugin", PROBE], env: { ENGINE_BENCH_EVENT_LOOP_FILE: figuresFile } });
try {
  await ready(daemon, await busyboxTar());
  await cycle(daemon.sock); // warm-up
  for (const name of SCENARIOS) {
    if (!going(0, Infinity)) break;
    if (name === "cycles") await cycles(daemon);
    else await single(daemon, name);
  }
} catch (err) {
  console.error(`failed: ${err.message}`);
  process.exitCode = 1;
} finally {
  await stopDaemon(daemon);
  rmSync(work, { recursive: true, force: true });
}
