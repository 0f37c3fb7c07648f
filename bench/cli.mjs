// Benchmark: the `engine` client next to the Docker CLI, both against the same engined (started
// fresh by daemons.mjs in a network namespace of its own, --bridge none, busybox imported):
// `ps`, `images`, `run --rm --network none busybox true`, and `--version` (no daemon involved:
// what starting each client costs), with `node -e 0` under the project's Node as the floor no
// Node program goes below. Each command is run N times by each client, the two alternating which
// goes first; medians side by side with the ratio. Nothing is asserted.
//
//   node_modules/node/bin/node bench/cli.mjs [--runs N]
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { dockerCommand, measureBoth } from "./daemons.mjs";
import { median, now, stopLoopsOnCtrlC, timedRuns } from "./timing.mjs";

const { values } = parseArgs({ options: { runs: { type: "string", default: "20" } } });
const RUNS = Math.max(1, Math.min(Number(values.runs) || 20, 500));
const PHASE_LIMIT_MS = 180_000; // each timed loop stops here, whatever its count
const ROOT = new URL("..", import.meta.url).pathname;
const NODE = join(ROOT, "node_modules/node/bin/node");
const work = mkdtempSync(join(tmpdir(), "bench-cli-"));
stopLoopsOnCtrlC();

/** `cmd args` to its end; rejects with its last error line unless it exits 0. */
function exec(cmd, args, env) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env, timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${args.filter((a) => !a.startsWith("unix://") && a !== "-H")[0]}: ${(stderr || err.message).trim().split("\n").pop().slice(0, 160)}`)) : resolve(stdout));
  });
}

/** `engine -H unix://<the daemon's socket> ARGS` with a private ENGINE_CONFIG (no user's settings). */
function engineCommand(daemon) {
  const env = { ...process.env, ENGINE_CONFIG: join(work, "engine-config") };
  for (const name of ["ENGINE_HOST", "ENGINE_TLS_VERIFY", "ENGINE_CERT_PATH", "ENGINE_API_VERSION"]) delete env[name];
  return (args) => exec(join(ROOT, "bin/engine"), ["-H", `unix://${daemon.sock}`, ...args], env);
}

/** RUNS runs of `args` by each client after a warm-up of each, alternating which goes first; their medians. */
async function pairs(clients, args) {
  const times = clients.map(() => []);
  for (const run of clients) await run(args);
  await timedRuns(RUNS, PHASE_LIMIT_MS, async (i) => {
    const order = clients.map((run, k) => [run, times[k]]);
    for (const [run, list] of i % 2 ? order.reverse() : order) {
      const s = now();
      await run(args);
      list.push(now() - s);
    }
  });
  return { engine: median(times[0]), docker: median(times[1]), n: Math.min(...times.map((t) => t.length)) };
}

const COMMANDS = [
  ["--version", ["--version"], "--version (no daemon)"],
  ["ps", ["ps"], "ps"],
  ["images", ["images"], "images"],
  ["run", ["run", "--rm", "--network", "none", "busybox", "true"], "run --rm --network none busybox true"],
];

let results;
try {
  results = await measureBoth(work, "engined", {}, async (daemon, part) => {
    const clients = [engineCommand(daemon), dockerCommand(daemon, join(work, "docker-config"))];
    await part(
      "floor",
      async () => {
        const env = { ...process.env };
        await exec(NODE, ["-e", "0"], env);
        const t = await timedRuns(RUNS, PHASE_LIMIT_MS, () => exec(NODE, ["-e", "0"], env));
        return { engine: median(t), n: t.length };
      },
      { runsContainers: false },
    );
    for (const [key, args] of COMMANDS) await part(key, () => pairs(clients, args), { runsContainers: key === "run" });
  });
} finally {
  rmSync(work, { recursive: true, force: true });
}

const r = results.engined ?? {};
if (r.failed) {
  console.log(`engined did not start: ${r.failed}`);
  process.exit(1);
}
const fmt = (v) => (typeof v === "number" && Number.isFinite(v) ? `${v.toFixed(v < 10 ? 2 : 1)} ms` : "n/a");
const notes = [];
const width = 40;
console.log(`\n${RUNS} runs of each command by each client, alternated; medians, wall time of the whole process`);
console.log(`${"".padEnd(width)} ${"engine".padStart(10)} ${"docker".padStart(10)}`);
console.log(`${"node -e 0 (the floor for engine)".padEnd(width)} ${fmt(r.floor?.engine).padStart(10)}`);
for (const [key, , label] of COMMANDS) {
  const row = r[key];
  if (!row || "na" in row) {
    notes.push(row?.na ?? "not run");
    console.log(`${label.padEnd(width)} ${`n/a (${notes.length})`.padStart(10)} ${`n/a (${notes.length})`.padStart(10)}`);
    continue;
  }
  const gain = row.docker / row.engine;
  const ratio = Math.abs(gain - 1) < 0.05 ? "about the same" : gain >= 1 ? `engine ${gain.toFixed(1)}x faster` : `engine ${(1 / gain).toFixed(1)}x slower`;
  console.log(`${label.padEnd(width)} ${fmt(row.engine).padStart(10)} ${fmt(row.docker).padStart(10)}  ${ratio}${row.n < RUNS ? `  (${row.n} runs: time limit)` : ""}`);
}
notes.forEach((n, i) => console.log(`(${i + 1}) ${n}`));
if (r.leftovers) console.log(`${r.leftovers} container(s) left running had to be removed with runc directly`);
