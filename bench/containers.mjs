// Benchmark: the container lifecycle, for engined and, when `dockerd` is installed, for
// Docker's daemon in the same run, each in its own network namespace with no bridge
// (bench/daemons.mjs). Numbers are printed side by side with ratios; nothing is asserted.
//
//   1. create+start+wait+remove of `busybox true` (NetworkMode none) over the API: one client
//      (ms a cycle, cycles/s) and 4 concurrent clients (cycles/s);
//   2. `docker run --rm --network none busybox true` through the Docker CLI;
//   3. `GET /containers/json?all=1` with 100 created (not started) containers;
//   4. memory: the daemon and its supervisor (engined's supervisor / containerd) when idle, and
//      per running container the monitor process (conmon / containerd-shim-runc-v2), RSS and
//      PSS (/proc/PID/smaps_rollup), with 10 `sleep 300` containers running;
//   5. with --detail, where a cycle's time goes (bench/cycle-detail.mjs): each call's wall time,
//      the CPU of the daemon, of its supervisor and of what they spawn (conmon and runc; the shim
//      and runc), and the floor: `true` run by runc alone and by conmon with runc.
// Issue 30's goals are printed under the table, met or not.
//
// The `busybox` image is imported into each daemon (POST /images/create?fromSrc=-) from a root
// filesystem built from the host's static /usr/bin/busybox: no registry, no network.
// A part a daemon cannot do (e.g. its start endpoint fails) is reported as "n/a (reason)".
// The same run with the default bridge is bench/network.mjs.
//
//   node_modules/node/bin/node bench/containers.mjs [--cycles N] [--quick] [--detail] [--only engined|dockerd]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cycleBreakdown, runtimeFloors } from "./cycle-detail.mjs";
import { busyboxTar, call, createBody, cycle, daemons, dockerCommand, expect, measureBoth, supervisorPid } from "./daemons.mjs";
import { sleep } from "./processes.mjs";
import { sideBySide } from "./table.mjs";
import { going, median, now, stopLoopsOnCtrlC, timedRuns, wasInterrupted } from "./timing.mjs";

const { values } = parseArgs({
  options: { cycles: { type: "string", default: "20" }, quick: { type: "boolean", default: false }, detail: { type: "boolean", default: false }, only: { type: "string" } },
});
const QUICK = values.quick;
const DETAIL = values.detail;
const CYCLES = Math.max(1, Math.min(Number(values.cycles) || 20, 500, QUICK ? 5 : Infinity));
const CONCURRENT_CLIENTS = 4;
const CONCURRENT_CYCLES = Math.max(CYCLES, 2 * CONCURRENT_CLIENTS);
const CLI_RUNS = QUICK ? 3 : 10;
const LIST_CONTAINERS = 100;
const LIST_REQUESTS = QUICK ? 10 : 50;
const MEM_CONTAINERS = QUICK ? 3 : 10;
const PHASE_LIMIT_MS = QUICK ? 60_000 : 180_000; // each timed loop stops here, whatever its count
const work = mkdtempSync(join(tmpdir(), "bench-containers-"));
stopLoopsOnCtrlC();

// ---------------------------------------------------------------------------------------------
// Memory

/** RSS (from status) and PSS (from smaps_rollup) in MiB; 0 when the process is gone. */
function memory(pid) {
  const kb = (file, key) => {
    try {
      const m = new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/${file}`, "utf8"));
      return m ? Number(m[1]) / 1024 : 0;
    } catch {
      return 0;
    }
  };
  return { rss: kb("status", "VmRSS"), pss: kb("smaps_rollup", "Pss") };
}
const sumMemory = (pids) => pids.map(memory).reduce((a, b) => ({ rss: a.rss + b.rss, pss: a.pss + b.pss }), { rss: 0, pss: 0 });

// ---------------------------------------------------------------------------------------------
// The measurements

async function cyclesOneClient(sock) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const t0 = now();
    const times = await timedRuns(CYCLES, PHASE_LIMIT_MS, () => cycle(sock, agent));
    return { msPerCycle: median(times), perSecond: (times.length / (now() - t0)) * 1000, n: times.length };
  } finally {
    agent.destroy();
  }
}

async function cyclesConcurrent(sock) {
  let started = 0;
  let done = 0;
  let failed = false;
  const t0 = now();
  const client = async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      while (started < CONCURRENT_CYCLES && going(t0, PHASE_LIMIT_MS) && !failed) {
        started++;
        await cycle(sock, agent);
        done++;
      }
    } catch (err) {
      failed = true; // the other clients stop after their current cycle
      throw err;
    } finally {
      agent.destroy();
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: CONCURRENT_CLIENTS }, client));
  const failure = settled.find((s) => s.status === "rejected");
  if (failure) throw failure.reason;
  return { perSecond: (done / (now() - t0)) * 1000, n: done };
}

async function cliRuns(daemon) {
  const docker = dockerCommand(daemon, join(work, "docker-config"));
  const run = () => docker(["run", "--rm", "--network", "none", "busybox", "true"]);
  await run(); // warm-up: the CLI's own first start
  const times = await timedRuns(CLI_RUNS, PHASE_LIMIT_MS, run);
  return { msPerRun: median(times), n: times.length };
}

async function listLatency(sock) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const ids = [];
  try {
    const t0 = now();
    while (ids.length < LIST_CONTAINERS && going(t0, PHASE_LIMIT_MS)) ids.push((await expect(201, sock, "POST", "/containers/create", { body: createBody("none"), agent })).Id);
    if (ids.length < LIST_CONTAINERS) throw new Error(`only ${ids.length} containers created in ${PHASE_LIMIT_MS / 1000} s`);
    const listed = await expect(200, sock, "GET", "/containers/json?all=1", { agent });
    if (listed.length < LIST_CONTAINERS) throw new Error(`the list has ${listed.length} containers, not ${LIST_CONTAINERS}`);
    const times = [];
    for (let i = 0; i < LIST_REQUESTS && !wasInterrupted(); i++) {
      const s = now();
      await expect(200, sock, "GET", "/containers/json?all=1", { agent });
      times.push(now() - s);
    }
    return { ms: median(times) };
  } finally {
    for (const id of ids) await call(sock, "DELETE", `/v1.41/containers/${id}?force=1`, { agent, timeoutMs: 30_000 }).catch(() => {});
    agent.destroy();
  }
}

async function perContainerMemory(daemon) {
  const { sock, dir } = daemon;
  const monitorPid = (id) => daemons[daemon.name].monitorPid(dir, id);
  const daemonAndSupervisor = () => sumMemory([daemon.proc.pid, supervisorPid(daemon)].filter(Boolean));
  const base = daemonAndSupervisor();
  const ids = [];
  try {
    for (let i = 0; i < MEM_CONTAINERS && !wasInterrupted(); i++) {
      const { Id } = await expect(201, sock, "POST", "/containers/create", { body: createBody("none", ["sleep", "300"]) });
      ids.push(Id);
      await expect(204, sock, "POST", `/containers/${Id}/start`);
      const pid = (await expect(200, sock, "GET", `/containers/${Id}/json`)).State?.Pid;
      if (pid) daemon.started.add(pid);
    }
    await sleep(2000); // settle
    const monitors = [];
    for (const id of ids) {
      const pid = monitorPid(id);
      if (!pid) throw new Error(`no monitor process found for container ${id.slice(0, 12)}`);
      monitors.push(pid);
    }
    const m = sumMemory(monitors);
    const after = daemonAndSupervisor();
    return {
      monitorRss: m.rss / ids.length,
      monitorPss: m.pss / ids.length,
      daemonGrowthRss: (after.rss - base.rss) / ids.length,
    };
  } finally {
    for (const id of ids) await call(sock, "DELETE", `/v1.41/containers/${id}?force=1`, { timeoutMs: 30_000 }).catch(() => {});
  }
}

/** Every figure for one daemon, after its warm-up cycle. */
async function measure(daemon, part, out) {
  await sleep(1000);
  daemon.supervisorPid = supervisorPid(daemon);
  out.daemonIdle = memory(daemon.proc.pid);
  out.supervisorIdle = daemon.supervisorPid ? memory(daemon.supervisorPid) : { na: "no supervisor process found" };
  await part("one", () => cyclesOneClient(daemon.sock));
  await part("four", () => cyclesConcurrent(daemon.sock));
  await part("cli", () => cliRuns(daemon));
  await part("list", () => listLatency(daemon.sock), { runsContainers: false });
  await part("mem", () => perContainerMemory(daemon));
  if (DETAIL) {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      await part("detail", () => cycleBreakdown(daemon, daemon.supervisorPid, agent, CYCLES, PHASE_LIMIT_MS));
    } finally {
      agent.destroy();
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Run and print

let results;
let floors;
try {
  results = await measureBoth(work, values.only, {}, measure);
  if (DETAIL && !wasInterrupted()) floors = await runtimeFloors(mkdtempSync(join(work, "floor-")), await busyboxTar(), CYCLES, PHASE_LIMIT_MS).catch((err) => ({ na: err.message }));
} finally {
  rmSync(work, { recursive: true, force: true });
}

const table = sideBySide(results);
console.log(`\ncycles: ${CYCLES} (1 client), ${CONCURRENT_CYCLES} (${CONCURRENT_CLIENTS} clients); docker run: ${CLI_RUNS}; list: ${LIST_REQUESTS} requests over ${LIST_CONTAINERS} containers; memory: ${MEM_CONTAINERS} running containers${QUICK ? " (--quick)" : ""}`);
table.header();
table.row("create+start+wait+rm, 1 client, per cycle", (r) => r.one, (o) => o.msPerCycle, "ms");
table.row("create+start+wait+rm, 1 client", (r) => r.one, (o) => o.perSecond, "rate");
table.row(`create+start+wait+rm, ${CONCURRENT_CLIENTS} clients`, (r) => r.four, (o) => o.perSecond, "rate");
table.row("docker run --rm --network none busybox true", (r) => r.cli, (o) => o.msPerRun, "ms");
table.row(`GET /containers/json?all=1, ${LIST_CONTAINERS} containers`, (r) => r.list, (o) => o.ms, "ms");
table.row("idle daemon RSS", (r) => r.daemonIdle, (o) => o.rss, "mib");
table.row("idle daemon PSS", (r) => r.daemonIdle, (o) => o.pss, "mib");
table.row("idle supervisor RSS (containerd for Docker)", (r) => r.supervisorIdle, (o) => o.rss, "mib");
table.row("idle supervisor PSS", (r) => r.supervisorIdle, (o) => o.pss, "mib");
table.row("per running container: monitor RSS", (r) => r.mem, (o) => o.monitorRss, "mib");
table.row("per running container: monitor PSS", (r) => r.mem, (o) => o.monitorPss, "mib");
table.row("per running container: daemon+supervisor RSS", (r) => r.mem, (o) => o.daemonGrowthRss, "mib", { ratio: false });
console.log("(monitor: conmon for engined, containerd-shim-runc-v2 for Docker; times are medians; the daemon+supervisor");
console.log(" growth is a difference of two samples of garbage-collected heaps: noise-sized, no ratio given)");
if (DETAIL) printDetail(table);
table.printNotes();
printGoals();
if (wasInterrupted()) process.exitCode = 130;

function printDetail(table) {
  console.log(`\nwhere a cycle goes (${CYCLES} cycles, 1 client, medians; CPU per cycle, all threads)`);
  for (const call of ["create", "start", "wait", "remove"]) table.row(`  ${call}`, (r) => r.detail, (o) => o[call], "ms");
  table.row("  CPU: the daemon", (r) => r.detail, (o) => o.cpu.daemon, "ms");
  table.row("  CPU: its supervisor (containerd)", (r) => r.detail, (o) => o.cpu.supervisor, "ms");
  table.row("  CPU: conmon+runc (shim+runc)", (r) => r.detail, (o) => o.cpu.spawned, "ms");
  table.row("  CPU: all of it", (r) => r.detail, (o) => o.cpu.total, "ms");
  const f = (v) => (typeof v === "number" ? `${v.toFixed(1)} ms` : "n/a");
  if (floors?.na) console.log(`  floor: n/a (${floors.na})`);
  else if (floors) console.log(`  floor, no daemon: \`true\` by runc alone (runc run) ${f(floors.runcRun)}, by conmon with runc (create, start, exit file, delete) ${f(floors.conmonRunc)}`);
}

/** Issue 30's goals, with this run's figures. */
function printGoals() {
  const e = results.engined;
  const d = results.dockerd;
  const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
  const verdict = (ok, text) => `${ok === undefined ? "n/a" : ok ? "met" : "not met"} (${text})`;
  const one = [num(e?.one?.msPerCycle), num(d?.one?.msPerCycle)];
  const four = [num(e?.four?.perSecond), num(d?.four?.perSecond)];
  const idle = (r) => num(r?.daemonIdle?.rss) !== undefined && num(r?.supervisorIdle?.rss) !== undefined ? r.daemonIdle.rss + r.supervisorIdle.rss : undefined;
  const rss = [idle(e), idle(d)];
  const ratio = ([a, b]) => (a !== undefined && b ? a / b : undefined);
  const r1 = ratio(one);
  const r4 = ratio(four);
  const rm = ratio(rss);
  console.log("\ngoals (issue 30):");
  console.log(`  1 client, a cycle at most 0.3x dockerd's: ${verdict(r1 === undefined ? undefined : r1 <= 0.3, r1 === undefined ? "no ratio" : `${r1.toFixed(2)}x`)}`);
  console.log(`  ${CONCURRENT_CLIENTS} clients, at least 3x dockerd's cycles/s: ${verdict(r4 === undefined ? undefined : r4 >= 3, r4 === undefined ? "no ratio" : `${r4.toFixed(2)}x`)}`);
  console.log(`  idle RSS, daemon + supervisor, at most 0.75x dockerd + containerd: ${verdict(rm === undefined ? undefined : rm <= 0.75, rm === undefined ? "no ratio" : `${rss[0].toFixed(1)} against ${rss[1].toFixed(1)} MiB, ${rm.toFixed(2)}x`)}`);
}
