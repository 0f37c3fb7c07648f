// Benchmark: daemon start to API ready, idle memory, and the latency of /_ping and /info,
// for engined and, when `dockerd` is installed, for Docker's daemon in the same run (started
// in its own network namespace with its own roots, socket and pid file, and no bridge).
// Numbers are printed, side by side, with ratios; nothing is asserted.
//
//   node_modules/node/bin/node bench/startup.mjs [--starts N] [--requests N] [--detail]
//
// --detail adds where engined's start goes, medians over the starts, from the figures it logs
// (host/daemon-process.ts): Node's start and loading the code, the configuration, the daemon's
// own start; with `node -e 0` beside them, the floor of any Node process.
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { have } from "./have.mjs";

const { values } = parseArgs({
  options: { starts: { type: "string", default: "10" }, requests: { type: "string", default: "2000" }, detail: { type: "boolean", default: false } },
});
const STARTS = Math.min(Number(values.starts), 50);
const REQUESTS = Math.min(Number(values.requests), 20_000);
const ROOT = new URL("..", import.meta.url).pathname;

function get(socketPath, path) {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: "GET", agent: keepAlive }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", reject);
    req.setTimeout(5000, () => req.destroy(new Error("timeout")));
    req.end();
  });
}
import { Agent } from "node:http";
const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

async function waitReady(socketPath, proc, limitMs) {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    if (proc.exitCode !== null) throw new Error("daemon exited");
    try {
      if ((await get(socketPath, "/_ping")) === 200) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error("daemon not ready in time");
}

function rssMiB(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

function childPids(pid) {
  try {
    return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" }).split("\n").map(Number).filter(Boolean);
  } catch {
    return [];
  }
}

async function stop(proc) {
  if (proc.exitCode !== null) return;
  proc.kill("SIGTERM");
  const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
  await new Promise((r) => proc.once("exit", r));
  clearTimeout(timer);
}

const daemons = {
  engined: (dir) => ({
    // As Docker's below: in its own network namespace, with no bridge (the host's is never touched).
    cmd: "unshare",
    args: ["--net", join(ROOT, "bin/engined"), "-H", `unix://${dir}/d.sock`, "--data-root", `${dir}/data`, "--exec-root", `${dir}/exec`, "--pidfile", `${dir}/d.pid`, "--bridge=none", "--iptables=false", "--ip6tables=false"],
  }),
  dockerd: (dir) => ({
    // Its own network namespace: --bridge=none there cannot touch the host's interfaces.
    cmd: "unshare",
    args: ["--net", "dockerd", "-H", `unix://${dir}/d.sock`, "--data-root", `${dir}/data`, "--exec-root", `${dir}/exec`,
      "--pidfile", `${dir}/d.pid`, "--bridge=none", "--iptables=false", "--ip6tables=false"],
  }),
};

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** A child's output as it comes, for startPhases to read. */
function collect(stream) {
  const seen = { text: "" };
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => (seen.text += chunk));
  return seen;
}

/** engined's own figures of a start, from its log (the ready line may follow the first answer). */
async function startPhases(log) {
  const until = Date.now() + 5000;
  while (Date.now() < until && !/totalMs=\d+/.test(log.text)) await new Promise((r) => setTimeout(r, 10));
  const field = (name) => Number(new RegExp(`${name}=(\\d+)`).exec(log.text)?.[1] ?? NaN);
  return { load: field("loadMs"), config: field("configMs"), init: field("initMs"), total: field("totalMs") };
}

const phases = [];

async function measure(name) {
  const starts = [];
  let memory = 0;
  const latency = {};
  for (let i = 0; i < STARTS; i++) {
    const dir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
    const { cmd, args } = daemons[name](dir);
    const t0 = process.hrtime.bigint();
    // (only engined logs its phases)
    const detail = values.detail && name === "engined";
    const proc = spawn(cmd, args, { stdio: ["ignore", "ignore", detail ? "pipe" : "ignore"] });
    const log = detail ? collect(proc.stderr) : undefined;
    try {
      await waitReady(`${dir}/d.sock`, proc, 30_000);
      starts.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (log) phases.push(await startPhases(log));
      if (i === STARTS - 1) {
        await new Promise((r) => setTimeout(r, 1000));
        memory = [proc.pid, ...childPids(proc.pid)].reduce((sum, pid) => sum + rssMiB(pid), 0);
        for (const path of ["/_ping", "/v1.41/info"]) {
          const times = [];
          const n = path === "/_ping" ? REQUESTS : Math.ceil(REQUESTS / 4);
          for (let j = 0; j < n; j++) {
            const s = process.hrtime.bigint();
            await get(`${dir}/d.sock`, path);
            times.push(Number(process.hrtime.bigint() - s) / 1e6);
          }
          times.sort((a, b) => a - b);
          latency[path] = { p50: percentile(times, 50), p99: percentile(times, 99), perSecond: (n / times.reduce((a, b) => a + b, 0)) * 1000 };
        }
      }
    } finally {
      keepAlive.destroy();
      await stop(proc);
      rmSync(dir, { recursive: true, force: true });
    }
  }
  starts.sort((a, b) => a - b);
  return { startMedian: percentile(starts, 50), memory, latency };
}

const results = { engined: await measure("engined") };
if (have("dockerd") && have("unshare")) results.dockerd = await measure("dockerd");

const row = (label, pick, unit, lowerIsBetter = true) => {
  const e = pick(results.engined);
  const d = results.dockerd ? pick(results.dockerd) : undefined;
  const gain = d === undefined ? undefined : lowerIsBetter ? d / e : e / d;
  const ratio = gain === undefined ? "" : gain >= 1 ? `engined ${gain.toFixed(1)}x better` : `engined ${(1 / gain).toFixed(1)}x worse`;
  console.log(`${label.padEnd(30)} ${`${e.toFixed(2)} ${unit}`.padStart(14)} ${d === undefined ? "n/a".padStart(14) : `${d.toFixed(2)} ${unit}`.padStart(14)}  ${ratio}`);
};
console.log(`\nstarts: ${STARTS}, requests: ${REQUESTS} (/_ping) and ${Math.ceil(REQUESTS / 4)} (/info), one client, keep-alive, unix socket`);
console.log(`${"".padEnd(30)} ${"engined".padStart(14)} ${"dockerd".padStart(14)}`);
row("start to API ready (median)", (r) => r.startMedian, "ms");
row("idle RSS, daemon + children", (r) => r.memory, "MiB");
row("GET /_ping p50", (r) => r.latency["/_ping"].p50, "ms");
row("GET /_ping p99", (r) => r.latency["/_ping"].p99, "ms");
row("GET /_ping per second", (r) => r.latency["/_ping"].perSecond, "/s", false);
row("GET /info p50", (r) => r.latency["/v1.41/info"].p50, "ms");
row("GET /info per second", (r) => r.latency["/v1.41/info"].perSecond, "/s", false);
if (results.dockerd) {
  const met = (ok) => (ok ? "met" : "not met");
  console.log(`\ngoals (issue 30): start no slower than dockerd: ${met(results.engined.startMedian <= results.dockerd.startMedian)}; idle RSS at most 0.75x dockerd's: ${met(results.engined.memory <= 0.75 * results.dockerd.memory)}`);
}
if (values.detail && phases.length > 0) {
  const median = (pick) => percentile(phases.map(pick).filter((v) => !Number.isNaN(v)).sort((a, b) => a - b), 50);
  const floor = [];
  for (let i = 0; i < STARTS; i++) {
    const t0 = process.hrtime.bigint();
    execFileSync(process.execPath, ["-e", "0"]);
    floor.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  floor.sort((a, b) => a - b);
  console.log(`\nengined's start, as it logs it (medians of ${phases.length}):`);
  console.log(`  Node's start and loading the code     ${median((p) => p.load).toFixed(0).padStart(6)} ms   (node -e 0 alone: ${percentile(floor, 50).toFixed(0)} ms)`);
  console.log(`  options, daemon.json, host facts      ${median((p) => p.config).toFixed(0).padStart(6)} ms`);
  console.log(`  the daemon's start (stores, plugins, API, listeners) ${median((p) => p.init).toFixed(0).padStart(6)} ms`);
  console.log(`  total, process start to serving       ${median((p) => p.total).toFixed(0).padStart(6)} ms`);
}
if (!results.dockerd) {
  console.log("\ndockerd is not installed: no same-run comparison. Install Debian's docker.io (its service kept from");
  console.log("starting) to compare; DESIGN.md records Docker's start at 150 ms and 93 + 44 MiB idle on this machine kind.");
}
