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
import { spawn, execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { closeSync, createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve as resolvePath } from "node:path";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { parseArgs } from "node:util";
import { createGzip } from "node:zlib";
import { have } from "./have.mjs";
import { alive, endPid, procs, sleep } from "./processes.mjs";
import tarStream from "tar-stream";

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
const sha = (b) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// ---------------------------------------------------------------------------------------------
// The image: K layers of 1 MiB random files, each a tar gzipped at level 1 into a file, hashed
// on the way (diff_id: the tar; digest: the gzip). One file's worth of random bytes at a time.

async function makeLayer(file, l, count) {
  const pack = tarStream.pack();
  const diff = createHash("sha256");
  const digest = createHash("sha256");
  let size = 0;
  const written = pipeline(
    pack,
    async function* (src) {
      for await (const c of src) {
        diff.update(c);
        yield c;
      }
    },
    createGzip({ level: 1 }),
    async function* (src) {
      for await (const c of src) {
        digest.update(c);
        size += c.length;
        yield c;
      }
    },
    createWriteStream(file),
  );
  const failed = written.then(() => new Promise(() => {}));
  for (let i = 0; i < count; i++) {
    const data = randomBytes(1024 * 1024);
    const entry = new Promise((res, rej) => pack.entry({ name: `layer${l}/file${i}`, size: data.length, mtime: new Date(0), mode: 0o644 }, data, (err) => (err ? rej(err) : res())));
    await Promise.race([entry, failed]);
  }
  pack.finalize();
  await written;
  return { file, size, digest: `sha256:${digest.digest("hex")}`, diffId: `sha256:${diff.digest("hex")}` };
}

async function makeImage() {
  const perLayer = Math.ceil(MB / LAYERS);
  const layers = [];
  for (let l = 0; l < LAYERS; l++) layers.push(await makeLayer(join(work, `layer${l}.tar.gz`), l, perLayer));
  const config = Buffer.from(JSON.stringify({
    architecture: "amd64",
    os: "linux",
    created: "2026-01-01T00:00:00Z",
    config: {},
    rootfs: { type: "layers", diff_ids: layers.map((l) => l.diffId) },
    history: layers.map(() => ({ created: "2026-01-01T00:00:00Z", created_by: "bench/pull.mjs" })),
  }));
  const manifest = Buffer.from(JSON.stringify({
    schemaVersion: 2,
    mediaType: "application/vnd.docker.distribution.manifest.v2+json",
    config: { mediaType: "application/vnd.docker.container.image.v1+json", size: config.length, digest: sha(config) },
    layers: layers.map((l) => ({ mediaType: "application/vnd.docker.image.rootfs.diff.tar.gzip", size: l.size, digest: l.digest })),
  }));
  return { layers, config, manifest, bytes: layers.reduce((a, l) => a + l.size, 0) };
}

// ---------------------------------------------------------------------------------------------
// The registry: docker-registry with its own config, storage in the run's folder, log to a file

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function registryConfig(file, port, readonly) {
  writeFileSync(file, [
    "version: 0.1",
    "log:",
    "  level: warn",
    "  formatter: text",
    "  accesslog:",
    "    disabled: true",
    "storage:",
    "  filesystem:",
    `    rootdirectory: ${join(work, "registry")}`,
    "  maintenance:",
    "    uploadpurging:",
    "      enabled: false",
    "    readonly:",
    `      enabled: ${readonly}`,
    "http:",
    `  addr: 127.0.0.1:${port}`,
    "",
  ].join("\n"));
  return file;
}

/** docker-registry serve, optionally through nsenter into a network namespace (nsenter execs it: same pid). */
function startRegistry(config, log, netns) {
  const [cmd, args] = netns ? ["nsenter", [`--net=${netns}`, "docker-registry", "serve", config]] : ["docker-registry", ["serve", config]];
  const fd = openSync(log, "a");
  const proc = spawn(cmd, args, { stdio: ["ignore", fd, fd] });
  closeSync(fd);
  return proc;
}

/** Whether `pid`'s network namespace has a TCP socket listening on 127.0.0.1:port (/proc/PID/net/tcp is that namespace's). */
function listening(pid, port) {
  try {
    const want = `0100007F:${port.toString(16).toUpperCase().padStart(4, "0")}`;
    return readFileSync(`/proc/${pid}/net/tcp`, "utf8").split("\n").some((line) => {
      const f = line.trim().split(/\s+/);
      return f[1] === want && f[3] === "0A";
    });
  } catch {
    return false;
  }
}

/** Until the registry listens, looking in the network namespace of `nsPid` (not the registry's own
 * pid: until nsenter has entered the namespace, that is the host's, where the first registry listens). */
async function waitListening(proc, nsPid, port, log, limitMs = 15_000) {
  const until = Date.now() + limitMs;
  while (!listening(nsPid, port)) {
    if (proc.exitCode !== null || Date.now() > until) throw new Error(`docker-registry did not start: ${tail(log)}`);
    await sleep(20);
  }
}

function tail(file) {
  try {
    return readFileSync(file, "utf8").trim().split("\n").slice(-3).join(" | ").slice(0, 300) || "(no output)";
  } catch {
    return "(no log)";
  }
}

// ---------------------------------------------------------------------------------------------
// HTTP: to the registry on 127.0.0.1 (the push), and over a daemon's unix socket

/** A time limit on the whole exchange (request and response), not only on silence. */
function limit(req, ms, text) {
  const timer = setTimeout(() => req.destroy(new Error(text)), ms);
  req.once("close", () => clearTimeout(timer));
}

const registryAgent = new Agent({ keepAlive: true, maxSockets: 1 });

function http(opts, body, limitMs = 60_000) {
  return new Promise((resolve, reject) => {
    const req = request({ agent: registryAgent, ...opts }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    limit(req, limitMs, `${opts.method} ${opts.path}: not done in ${limitMs / 1000} s`);
    if (body === undefined || Buffer.isBuffer(body)) req.end(body);
    else body.pipe(req);
  });
}

async function pushBlob(base, data, digest, size) {
  const start = await http({ ...base, method: "POST", path: `/v2/${REPO}/blobs/uploads/`, headers: { "content-length": 0 } });
  if (start.status !== 202 || !start.headers.location) throw new Error(`blob upload start answered ${start.status}: ${start.text.slice(0, 200)}`);
  const url = new URL(start.headers.location, `http://${base.host}:${base.port}`);
  url.searchParams.set("digest", digest);
  const body = Buffer.isBuffer(data) ? data : createReadStream(data);
  const put = await http({ ...base, method: "PUT", path: url.pathname + url.search, headers: { "content-type": "application/octet-stream", "content-length": size } }, body, 120_000);
  if (put.status !== 201) throw new Error(`blob upload of ${digest.slice(0, 19)} answered ${put.status}: ${put.text.slice(0, 200)}`);
}

async function pushImage(port, image) {
  const base = { host: "127.0.0.1", port };
  const ping = await http({ ...base, method: "GET", path: "/v2/" });
  if (ping.status !== 200) throw new Error(`registry /v2/ answered ${ping.status}`);
  for (const l of image.layers) await pushBlob(base, l.file, l.digest, l.size);
  await pushBlob(base, image.config, sha(image.config), image.config.length);
  const put = await http({ ...base, method: "PUT", path: `/v2/${REPO}/manifests/${TAG}`, headers: { "content-type": "application/vnd.docker.distribution.manifest.v2+json", "content-length": image.manifest.length } }, image.manifest);
  if (put.status !== 201) throw new Error(`manifest upload answered ${put.status}: ${put.text.slice(0, 200)}`);
}

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

function printTimeline(marks) {
  const short = { "Pulling fs layer": "fs", Waiting: "wait", Downloading: "dl", "Verifying Checksum": "verify", "Download complete": "dl done", Extracting: "extr", "Pull complete": "done" };
  console.log(`    first line ${marks["first line"].toFixed(0)} ms, end ${marks.end.toFixed(0)} ms`);
  for (const [id, layer] of marks.layers) {
    console.log(`    ${id}: ${[...layer].map(([s, t]) => `${short[s] ?? s} ${t.toFixed(0)}`).join(", ")}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Processes and memory

function descendants(pid) {
  const list = procs();
  const out = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift();
    for (const c of list) if (c.ppid === p) (out.push(c.pid), queue.push(c.pid));
  }
  return out;
}

function rssMiB(pid) {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples the RSS of `pid` and all its descendants every 100 ms; stop() gives the peak (MiB). */
function sampleRss(pid) {
  let peak = 0;
  const sample = () => (peak = Math.max(peak, [pid, ...descendants(pid)].reduce((sum, p) => sum + rssMiB(p), 0)));
  sample();
  const timer = setInterval(sample, 100);
  return () => {
    clearInterval(timer);
    sample();
    return peak;
  };
}

/** utime, stime, cutime, cstime (ticks) of /proc/PID/stat or /proc/PID/task/TID/stat; zeros when gone. */
function times(statFile) {
  const stat = readIf(statFile);
  if (!stat) return [0, 0, 0, 0];
  // after the name: state is field 3, utime..cstime are fields 14..17
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ").slice(11, 15).map(Number);
}

/**
 * CPU seconds (user + system) the daemon and its descendants spend from now to the call of the
 * returned function: the live ones' own time, plus the time of children they have reaped
 * (unpigz, for example), from /proc/PID/stat. The call gives `{ total, parts }`: `parts` splits
 * it into user and system seconds of the daemon's threads by name (MainThread, libuv-worker,
 * ...; "exited threads" for those gone), of its live descendants by command, and of the
 * children the daemon and its descendants reaped ("reaped children").
 */
function cpuMeter(pid) {
  const snapshot = () => {
    const threads = new Map(); // tid -> [comm, user, system]
    let reapedU = 0;
    let reapedS = 0;
    const [pu, ps, pcu, pcs] = times(`/proc/${pid}/stat`);
    reapedU += pcu;
    reapedS += pcs;
    let live = [0, 0];
    for (const tid of readdirIf(`/proc/${pid}/task`)) {
      const [u, s] = times(`/proc/${pid}/task/${tid}/stat`);
      threads.set(tid, [readIf(`/proc/${pid}/task/${tid}/comm`), u, s]);
      live = [live[0] + u, live[1] + s];
    }
    const exited = [pu - live[0], ps - live[1]];
    const children = new Map(); // pid -> [comm, user, system]
    for (const d of descendants(pid)) {
      const [u, s, cu, cs] = times(`/proc/${d}/stat`);
      children.set(d, [readIf(`/proc/${d}/comm`) || "child", u, s]);
      reapedU += cu;
      reapedS += cs;
    }
    return { threads, exited, children, reaped: [reapedU, reapedS] };
  };
  const start = snapshot();
  return () => {
    const end = snapshot();
    const parts = new Map();
    const add = (who, u, s) => {
      const p = parts.get(who) ?? [0, 0];
      parts.set(who, [p[0] + u / 100, p[1] + s / 100]); // USER_HZ is 100 on Linux
    };
    for (const [tid, [comm, u, s]] of end.threads) {
      const [, u0, s0] = start.threads.get(tid) ?? [comm, 0, 0];
      add(`${comm}`, u - u0, s - s0);
    }
    // threads gone by the end: their time is in the process's now, less what they had used
    // by the start (then it was theirs, and not in the start's figure for gone threads)
    let [eu, es] = [end.exited[0] - start.exited[0], end.exited[1] - start.exited[1]];
    for (const [tid, [, u0, s0]] of start.threads) if (!end.threads.has(tid)) (eu -= u0), (es -= s0);
    add("exited threads", eu, es);
    let [ru, rs] = [end.reaped[0] - start.reaped[0], end.reaped[1] - start.reaped[1]];
    for (const [child, [comm, u, s]] of end.children) {
      const [, u0, s0] = start.children.get(child) ?? [comm, 0, 0];
      add(`child ${comm}`, u - u0, s - s0);
    }
    for (const [child, [, u0, s0]] of start.children) {
      // reaped during the pull: what it had used before the start is in the reaped time now
      if (!end.children.has(child)) (ru -= u0), (rs -= s0);
    }
    add("reaped children", ru, rs);
    const total = [...parts.values()].reduce((sum, [u, s]) => sum + u + s, 0);
    for (const [who, [u, s]] of parts) if (u + s <= 0) parts.delete(who);
    return { total, parts };
  };
}

function readdirIf(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function readIf(file) {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return "";
  }
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
      registry = startRegistry(registryConfig(`${dir}/registry.yml`, port, true), log, netns);
      await waitListening(registry, proc.pid, port, log);
    } else {
      servedOn = await freePort();
      registry = startRegistry(registryConfig(`${dir}/registry.yml`, servedOn, true), log);
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
  image = await makeImage();
  const port = await freePort();
  const log = join(work, "registry.log");
  registry = startRegistry(registryConfig(join(work, "registry.yml"), port, false), log);
  await waitListening(registry, registry.pid, port, log);
  await pushImage(port, image);
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

const notes = [];
const cell = (r, key, digits) => {
  if (!r) return "-";
  if (r.na !== undefined) {
    let i = notes.indexOf(r.na);
    if (i < 0) i = notes.push(r.na) - 1;
    return `n/a (${i + 1})`;
  }
  return r[key].toFixed(digits);
};
const e = results.engined;
const d = results.dockerd;
console.log(`\npull of a ${(image.bytes / 1e6).toFixed(0)} MB image (${LAYERS} layers, gzip), from docker-registry ${version} on 127.0.0.1, median of ${RUNS} runs`);
console.log(`${"".padEnd(12)} ${"MB/s".padStart(10)} ${"peak RSS MiB".padStart(14)} ${"CPU s".padStart(7)}`);
for (const [name, r] of Object.entries(results)) {
  let ratio = "";
  if (name === "dockerd" && e?.rate && d?.rate) {
    const x = e.rate / d.rate;
    ratio = `   engined/dockerd = ${x.toFixed(2)}${Math.abs(x - 1) < 0.05 ? " (about the same)" : ""}`;
  }
  if (r.n !== undefined && r.n < RUNS) ratio += `   (${r.n} of ${RUNS} runs)`;
  console.log(`${name.padEnd(12)} ${cell(r, "rate", 1).padStart(10)} ${cell(r, "rss", 1).padStart(14)} ${cell(r, "cpu", 2).padStart(7)}${ratio}`);
}
const each = Object.entries(results).filter(([, r]) => r.rates).map(([name, r]) => `${name} ${r.rates.map((x) => x.toFixed(1)).join(", ")}`);
if (each.length) console.log(`(each run, MB/s: ${each.join("; ")})`);
console.log("(MB/s: compressed bytes of the layers over the time from the request to the end of the progress stream;");
console.log(" peak RSS: the daemon and all its child processes (unpigz, Docker's containerd, engined's supervisor if started),");
console.log(" summed, sampled every 100 ms during the pull;");
console.log(" CPU s: user + system seconds of the daemon and its child processes during the pull; medians of the runs)");
notes.forEach((note, i) => console.log(`(${i + 1}) ${note}`));
if (values.detail) {
  // each run's CPU seconds, user/system, by thread of the daemon and by child process
  for (const [name, r] of Object.entries(results)) {
    if (!r.splits) continue;
    console.log(`\n${name}: CPU s of each run, user/system`);
    r.splits.forEach((parts, i) => {
      const rows = [...parts].sort((a, b) => b[1][0] + b[1][1] - a[1][0] - a[1][1]).map(([who, [u, s]]) => `${who} ${u.toFixed(2)}/${s.toFixed(2)}`);
      console.log(`  run ${i + 1}: ${r.cpus[i].toFixed(2)} (${rows.join(", ")}); the registry ${r.registryCpus[i].toFixed(2)}`);
    });
  }
}
if (values.timeline) {
  // when each layer reached each status, ms from the request
  for (const [name, r] of Object.entries(results)) {
    if (!r.timelines) continue;
    console.log(`\n${name}: progress of each run, ms from the request to the first line of each status`);
    r.timelines.forEach((marks, i) => {
      console.log(`  run ${i + 1}:`);
      printTimeline(marks);
    });
  }
}
if (PROFILE) console.log(`(engined's CPU profiles: ${PROFILE})`);
if (interrupted) process.exitCode = 130;
