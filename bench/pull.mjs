// Benchmark: pull throughput (MB/s) of a 200 MB image of incompressible layers (4 layers of
// 1 MiB random files, gzip level 1) from a real registry on loopback (Debian's docker-registry,
// `docker-registry serve`), through POST /images/create?fromImage=, into engined and, when
// `dockerd` is installed, into Docker's daemon in the same run (its own roots, socket and pid
// file, in its own network namespace with no bridge). Each pull goes into a fresh data root.
//
// The script pushes the image into a registry on 127.0.0.1 itself (the distribution protocol
// over plain HTTP). Each pull is then served by a registry of its own, started for that run over
// the same storage folder, read-only: for engined on the host's 127.0.0.1 (a fresh port), for
// Docker's daemon, which cannot reach the host's loopback from its namespace, inside that
// namespace (nsenter --net) on the push registry's port. Both daemons get the same kind of
// registry, just started, and their runs alternate (engined, dockerd, engined, ...), so that a
// neighbour's load on the machine falls on both alike.
//
//   node_modules/node/bin/node bench/pull.mjs [--runs N] [--mb SIZE] [--layers K] [--only engined|dockerd]
//                                             [--detail] [--timeline] [--profile DIR]
//
// The parts: the image (pull-image.mjs), the registry and the push (pull-registry.mjs), what the
// daemon's processes use (resource-usage.mjs) and the report printed at the end (pull-report.mjs).
import { spawn, execFileSync } from "node:child_process";
import { closeSync, createReadStream, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve as resolvePath } from "node:path";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { have } from "./have.mjs";
import { endPid, sleep } from "./processes.mjs";
import { makeImage } from "./pull-image.mjs";
import { freePort, limit, pushImage, registryAgent, registryConfig, startRegistry, waitListening } from "./pull-registry.mjs";
import { printReport } from "./pull-report.mjs";
import { cpuMeter, descendants, readIf, sampleRss } from "./resource-usage.mjs";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    mb: { type: "string", default: "200" },
    layers: { type: "string", default: "4" },
    only: { type: "string" },
    detail: { type: "boolean", default: false },
    timeline: { type: "boolean", default: false },
    profile: { type: "string" },
  },
});
// --profile DIR: engined runs with --cpu-prof into DIR (an absolute path; made if missing)
const PROFILE = values.profile ? resolvePath(values.profile) : undefined;
if (PROFILE) mkdirSync(PROFILE, { recursive: true });
const RUNS = Math.max(1, Math.min(Number(values.runs) || 3, 10));
const MB = Math.max(1, Math.min(Number(values.mb) || 200, 1024));
const LAYERS = Math.max(1, Math.min(Number(values.layers) || 4, 64));
const PULL_LIMIT_MS = 300_000; // one pull
const PART_LIMIT_MS = 1_800_000; // all the runs: no new round starts after this
const REPO = "bench/pull";
const TAG = "latest";
const ROOT = new URL("..", import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), "bench-pull-"));
// Ctrl-C: the running pull is abandoned, and every process and directory of the run is cleaned
// up as usual (a second Ctrl-C exits at once).
let interrupted = false;
const active = new Set(); // requests to destroy on Ctrl-C
process.on("SIGINT", () => {
  if (interrupted) process.exit(130);
  interrupted = true;
  console.error("interrupted: cleaning up (Ctrl-C again to leave everything as it is)");
  for (const req of active) req.destroy(new Error("interrupted"));
});

const now = () => Number(process.hrtime.bigint()) / 1e6;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// ---------------------------------------------------------------------------------------------
// Over a daemon's unix socket

function call(socketPath, method, path, limitMs = 60_000) {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, agent: false, headers: method === "POST" ? { "content-length": 0 } : {} }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    limit(req, limitMs, `${method} ${path}: not done in ${limitMs / 1000} s`);
    req.end();
  });
}

const message = (text) => {
  try {
    return JSON.parse(text).message ?? text.trim();
  } catch {
    return text.trim();
  }
};

/**
 * The pull, timed from the request to the end of the progress stream; every line checked. Gives
 * `{ ms, marks }`: `marks` is when (ms from the request) each layer first reported each status
 * (Downloading, Download complete, Extracting, Pull complete...), and when the first and the
 * last line came, for --timeline.
 */
function pull(socketPath, ref) {
  const [name, tag] = [ref.slice(0, ref.lastIndexOf(":")), ref.slice(ref.lastIndexOf(":") + 1)];
  const path = `/v1.41/images/create?fromImage=${encodeURIComponent(name)}&tag=${encodeURIComponent(tag)}`;
  return new Promise((resolve, reject) => {
    const t0 = now();
    const req = request({ socketPath, method: "POST", path, agent: false, headers: { "content-length": 0 } }, (res) => {
      let rest = "";
      const lines = [];
      const stamps = []; // ms of each line
      res.setEncoding("utf8");
      res.on("data", (d) => {
        rest += d;
        const parts = rest.split("\n");
        rest = parts.pop();
        const at = now() - t0;
        for (const p of parts) if (p.trim()) (lines.push(p), stamps.push(at));
      });
      res.on("error", reject);
      res.on("end", () => {
        const ms = now() - t0;
        active.delete(req);
        if (rest.trim()) lines.push(rest);
        if (res.statusCode !== 200) return reject(new Error(`POST /images/create?fromImage= answered ${res.statusCode}: ${message(lines.join("\n")).slice(0, 200)}`));
        for (const line of lines) {
          let o;
          try {
            o = JSON.parse(line);
          } catch {
            return reject(new Error(`a progress line is not JSON: ${line.slice(0, 160)}`));
          }
          if (o.error || o.errorDetail) return reject(new Error(`the pull failed: ${(o.error ?? o.errorDetail?.message ?? "").slice(0, 200)}`));
        }
        const last = lines.length ? JSON.parse(lines[lines.length - 1]).status ?? "" : "";
        if (!last.startsWith("Status: Downloaded newer image for")) return reject(new Error(`the progress stream ended with ${JSON.stringify(last).slice(0, 160)}`));
        resolve({ ms, marks: marksOf(lines, stamps, ms) });
      });
    });
    active.add(req);
    req.on("error", (err) => {
      active.delete(req);
      reject(err);
    });
    limit(req, PULL_LIMIT_MS, `the pull did not end in ${PULL_LIMIT_MS / 1000} s`);
    req.end();
  });
}

/** For --timeline: per layer id, the first time of each status; "first line" and "end" too. */
function marksOf(lines, stamps, ms) {
  const marks = { "first line": stamps[0] ?? ms, end: ms, layers: new Map() };
  lines.forEach((line, i) => {
    const { id, status } = JSON.parse(line);
    if (!id || !status || status.startsWith("Pulling from")) return;
    if (!marks.layers.has(id)) marks.layers.set(id, new Map());
    const layer = marks.layers.get(id);
    if (!layer.has(status)) layer.set(status, stamps[i]);
  });
  return marks;
}

/** SIGTERM a process this run started (a ChildProcess, or a pid), SIGKILL after `graceMs`. */
async function stop(procOrPid, graceMs = 15_000) {
  if (typeof procOrPid === "object") {
    const proc = procOrPid;
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
    await new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r() : proc.once("exit", r)));
    clearTimeout(timer);
    return;
  }
  await endPid(procOrPid, graceMs);
}

// ---------------------------------------------------------------------------------------------
// The daemons

const daemons = {
  // The host's namespace (the registry is on its loopback), so no bridge and no rules.
  engined: (dir) => [join(ROOT, "bin/engined"), ["-H", `unix://${dir}/d.sock`, "--data-root", `${dir}/data`, "--exec-root", `${dir}/exec`, "--pidfile", `${dir}/d.pid`, "--bridge=none", "--iptables=false", "--ip6tables=false"]],
  // Its own network namespace: --bridge=none there cannot touch the host's interfaces.
  dockerd: (dir) => ["unshare", ["--net", "dockerd", "-H", `unix://${dir}/d.sock`, "--data-root", `${dir}/data`, "--exec-root", `${dir}/exec`,
    "--pidfile", `${dir}/d.pid`, "--bridge=none", "--iptables=false", "--ip6tables=false"]],
};

/**
 * Drops the page cache, dentries and inodes (root only; a no-op otherwise). Measured on these
 * machines: with the cache full of what earlier runs wrote and removed, making files costs the
 * kernel up to four times the system time (an extraction of the same tar: 11 s, 2.6 s after a
 * drop), and which run pays depends on what ran before, not on the daemon.
 */
function dropCaches() {
  try {
    writeFileSync("/proc/sys/vm/drop_caches", "3");
  } catch {
    // not root: runs compare less well, nothing else changes
  }
}

/** Reads every file of the registry's storage once, so that no daemon's pull waits for the disk. */
async function warmRegistry() {
  const walk = (dir) => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
  for (const file of walk(join(work, "registry"))) await pipeline(createReadStream(file), new Writable({ write: (_c, _e, done) => done() }));
}

async function waitReady(socketPath, proc, limitMs) {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    if (proc.exitCode !== null) throw new Error(`the daemon exited (${proc.exitCode})`);
    try {
      if ((await call(socketPath, "GET", "/_ping", 2000)).status === 200) return;
    } catch {
      // not yet
    }
    await sleep(20);
  }
  throw new Error("the daemon was not ready in 30 s");
}

/** The runs of one daemon so far: MB/s, peak RSS, CPU s, and each run's CPU split and the registry's CPU s. */
const newSide = () => ({ rates: [], peaks: [], cpus: [], splits: [], registryCpus: [], timelines: [], na: undefined });

/**
 * One pull into a fresh data root, its figures added to `side`; a failure sets `side.na` (the
 * reason) and ends that daemon's runs. The pull is served by a registry started for the run over
 * the push registry's storage: on the host for engined, in Docker's daemon's namespace for it.
 */
async function measureOnce(name, image, port, side) {
  const { rates, peaks, cpus, splits, registryCpus, timelines } = side;
  const dir = mkdtempSync(join(work, `${name}-`));
  const sock = `${dir}/d.sock`;
  const [cmd, args] = daemons[name](dir);
  const fd = openSync(`${dir}/daemon.log`, "a");
  // --profile: engined writes a V8 CPU profile of its whole life (start, pull, stop) there
  const env = name === "engined" && PROFILE ? { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --cpu-prof --cpu-prof-dir=${PROFILE}`.trim() } : process.env;
  const proc = spawn(cmd, args, { stdio: ["ignore", fd, fd], env });
  closeSync(fd);
  let registry;
  try {
    await waitReady(sock, proc, 30_000);
    const log = `${dir}/registry.log`;
    let servedOn = port;
    if (name === "dockerd") {
      // The host's 127.0.0.1 is not reachable from dockerd's namespace: the registry there,
      // on the same port.
      const netns = `/proc/${proc.pid}/ns/net`;
      execFileSync("nsenter", [`--net=${netns}`, "ip", "link", "set", "lo", "up"], { stdio: "ignore", timeout: 10_000 });
      registry = startRegistry(registryConfig(`${dir}/registry.yml`, join(work, "registry"), port, true), log, netns);
      await waitListening(registry, proc.pid, port, log);
    } else {
      servedOn = await freePort();
      registry = startRegistry(registryConfig(`${dir}/registry.yml`, join(work, "registry"), servedOn, true), log);
      await waitListening(registry, registry.pid, servedOn, log);
    }
    const ref = `127.0.0.1:${servedOn}/${REPO}:${TAG}`;
    // every run starts with nothing left to write back from the one before (each writes
    // hundreds of MB, which the kernel would otherwise flush during the next pull), and from
    // the same memory: the page cache dropped, then the registry's files read back into it
    execFileSync("sync", [], { timeout: 120_000 });
    dropCaches();
    await warmRegistry();
    const peak = sampleRss(proc.pid);
    const cpu = cpuMeter(proc.pid);
    const registryCpu = cpuMeter(registry.pid);
    let ms;
    let rss;
    try {
      const pulled = await pull(sock, ref);
      ms = pulled.ms;
      timelines.push(pulled.marks);
    } finally {
      rss = peak();
    }
    const used = cpu();
    cpus.push(used.total);
    splits.push(used.parts);
    registryCpus.push(registryCpu().total);
    const inspect = await call(sock, "GET", `/v1.41/images/${encodeURIComponent(ref)}/json`);
    if (inspect.status !== 200) throw new Error(`GET /images/{ref}/json after the pull answered ${inspect.status}: ${message(inspect.text).slice(0, 160)}`);
    const got = JSON.parse(inspect.text).RootFS?.Layers ?? [];
    if (got.join() !== image.layers.map((l) => l.diffId).join()) throw new Error(`the pulled image has layers ${JSON.stringify(got).slice(0, 160)}, not the pushed ones`);
    rates.push(image.bytes / 1e6 / (ms / 1000));
    peaks.push(rss);
  } catch (err) {
    if (!(interrupted && rates.length)) side.na = err.message;
  } finally {
    // The daemon's children (engined's supervisor, which outlives engined by design; Docker's
    // containerd) are ours too: each is stopped by its pid once the daemon has exited.
    const children = new Set(descendants(proc.pid));
    const supervisorPid = Number(readIf(`${dir}/exec/supervisor/supervisor.pid`));
    if (name === "engined" && supervisorPid > 0) children.add(supervisorPid);
    if (registry) await stop(registry, 5000);
    await stop(proc);
    for (const pid of children) await stop(pid, 5000);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A daemon's medians, { rate (MB/s), rss (MiB), cpu (s), n, ... }, or { na: reason }. */
function summary(side) {
  if (side.na !== undefined) return { na: side.na };
  const { rates, peaks, cpus, splits, registryCpus, timelines } = side;
  if (!rates.length) return { na: interrupted ? "interrupted" : "no run in the time limit" };
  return { rate: median(rates), rss: median(peaks), cpu: median(cpus), n: rates.length, rates, cpus, splits, registryCpus, timelines };
}

// ---------------------------------------------------------------------------------------------
// Run and print

const results = {};
let image;
let registry;
let version = "";
try {
  if (!have("docker-registry")) throw new Error("docker-registry is not installed (Debian's docker-registry package)");
  try {
    version = execFileSync("docker-registry", ["--version"], { encoding: "utf8", timeout: 10_000 }).trim().split(/\s+/).pop();
  } catch {
    // only for the title
  }
  mkdirSync(join(work, "registry"));
  image = await makeImage(work, MB, LAYERS);
  const port = await freePort();
  const log = join(work, "registry.log");
  registry = startRegistry(registryConfig(join(work, "registry.yml"), join(work, "registry"), port, false), log);
  await waitListening(registry, registry.pid, port, log);
  await pushImage(port, image, REPO, TAG);
  registryAgent.destroy();
  // each run pulls from a registry of its own over this one's storage; the daemons take turns
  const sides = {};
  if (values.only !== "dockerd") {
    if (!existsSync(join(ROOT, "dist/host/engined.js"))) results.engined = { na: "not built (run the build first)" };
    else sides.engined = newSide();
  }
  if (values.only !== "engined") {
    if (have("dockerd") && have("unshare") && have("nsenter")) sides.dockerd = newSide();
    else results.dockerd = { na: "dockerd is not installed: no same-run comparison (install Debian's docker.io with its service kept from starting)" };
  }
  const t0 = now();
  for (let i = 0; i < RUNS && !interrupted && now() - t0 < PART_LIMIT_MS; i++) {
    for (const [name, side] of Object.entries(sides)) {
      if (side.na === undefined && !interrupted) await measureOnce(name, image, port, side);
    }
  }
  for (const [name, side] of Object.entries(sides)) results[name] = summary(side);
} finally {
  registryAgent.destroy();
  if (registry) await stop(registry, 5000);
  rmSync(work, { recursive: true, force: true });
}

printReport(results, { bytes: image.bytes, layers: LAYERS, runs: RUNS, version, detail: values.detail, timeline: values.timeline });
if (PROFILE) console.log(`(engined's CPU profiles: ${PROFILE})`);
if (interrupted) process.exitCode = 130;
