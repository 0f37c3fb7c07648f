// Benchmark: the container lifecycle, for engined and, when `dockerd` is installed, for
// Docker's daemon in the same run (its own data root, exec root, socket and pid file, in its
// own network namespace with no bridge). Numbers are printed side by side with ratios; nothing
// is asserted.
//
//   1. create+start+wait+remove of `busybox true` (NetworkMode none) over the API: one client
//      (ms a cycle, cycles/s) and 4 concurrent clients (cycles/s);
//   2. `docker run --rm --network none busybox true` through the Docker CLI;
//   3. `GET /containers/json?all=1` with 100 created (not started) containers;
//   4. memory: the daemon and its supervisor (engined's supervisor / containerd) when idle, and
//      per running container the monitor process (conmon / containerd-shim-runc-v2), RSS and
//      PSS (/proc/PID/smaps_rollup), with 10 `sleep 300` containers running.
//
// The `busybox` image is imported into each daemon (POST /images/create?fromSrc=-) from a root
// filesystem built from the host's static /usr/bin/busybox: no registry, no network.
// A part a daemon cannot do (e.g. its start endpoint fails) is reported as "n/a (reason)".
//
//   node_modules/node/bin/node bench/containers.mjs [--cycles N] [--quick] [--only engined|dockerd]
import { spawn, execFile, execFileSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { have } from "./have.mjs";
import { alive, endPid, sleep } from "./processes.mjs";
import tarStream from "tar-stream";

const { values } = parseArgs({
  options: { cycles: { type: "string", default: "20" }, quick: { type: "boolean", default: false }, only: { type: "string" } },
});
const QUICK = values.quick;
const CYCLES = Math.max(1, Math.min(Number(values.cycles) || 20, 500, QUICK ? 5 : Infinity));
const CONCURRENT_CLIENTS = 4;
const CONCURRENT_CYCLES = Math.max(CYCLES, 2 * CONCURRENT_CLIENTS);
const CLI_RUNS = QUICK ? 3 : 10;
const LIST_CONTAINERS = 100;
const LIST_REQUESTS = QUICK ? 10 : 50;
const MEM_CONTAINERS = QUICK ? 3 : 10;
const PHASE_LIMIT_MS = QUICK ? 60_000 : 180_000; // each timed loop stops here, whatever its count
const ROOT = new URL("..", import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), "bench-containers-"));
// Ctrl-C: the loops stop, and every daemon, container and directory of the run is cleaned up as
// usual (a second Ctrl-C exits at once).
let interrupted = false;
process.on("SIGINT", () => {
  if (interrupted) process.exit(130);
  interrupted = true;
  console.error("interrupted: cleaning up (Ctrl-C again to leave everything as it is)");
});
const going = (t0) => !interrupted && now() - t0 < PHASE_LIMIT_MS;

// ---------------------------------------------------------------------------------------------
// HTTP over the daemon's unix socket

function call(socketPath, method, path, { body, agent, timeoutMs = 60_000, contentType } = {}) {
  return new Promise((resolve, reject) => {
    const headers = {};
    let payload;
    if (Buffer.isBuffer(body)) {
      payload = body;
      headers["content-type"] = contentType ?? "application/x-tar";
    } else if (body !== undefined) {
      payload = Buffer.from(JSON.stringify(body));
      headers["content-type"] = "application/json";
    }
    if (payload) headers["content-length"] = payload.length;
    else if (method === "POST") headers["content-length"] = 0;
    const req = request({ socketPath, path, method, headers, agent: agent ?? false }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer in ${timeoutMs} ms`)));
    req.end(payload);
  });
}

/** The call, or an error naming the status and the daemon's message when it is not `want`. */
async function expect(want, socketPath, method, path, opts) {
  const res = await call(socketPath, method, `/v1.41${path}`, opts);
  if (res.status !== want) {
    let message = res.text.trim();
    try {
      message = JSON.parse(res.text).message ?? message;
    } catch {
      // not JSON
    }
    throw new Error(`${method} ${path.split("?")[0].replace(/[0-9a-f]{64}/, "{id}")} answered ${res.status}: ${message.slice(0, 160)}`);
  }
  return res.text ? JSON.parse(res.text) : undefined;
}

// ---------------------------------------------------------------------------------------------
// The busybox image: bin/busybox, a relative symlink per applet, empty proc dev sys tmp etc

async function busyboxTar() {
  const applets = execFileSync("/usr/bin/busybox", ["--list"], { encoding: "utf8" }).split("\n").filter((a) => a && a !== "busybox" && !a.includes("/"));
  const pack = tarStream.pack();
  const chunks = [];
  const done = (async () => {
    for await (const c of pack) chunks.push(c);
  })();
  const entry = (header, data) => new Promise((res, rej) => pack.entry({ mtime: new Date(0), uid: 0, gid: 0, ...header }, data, (err) => (err ? rej(err) : res())));
  for (const dir of ["bin", "proc", "dev", "sys", "tmp", "etc"]) await entry({ name: `${dir}/`, type: "directory", mode: dir === "tmp" ? 0o1777 : 0o755 });
  await entry({ name: "bin/busybox", mode: 0o755 }, readFileSync("/usr/bin/busybox"));
  for (const applet of applets) await entry({ name: `bin/${applet}`, type: "symlink", linkname: "busybox", mode: 0o777 });
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

async function importBusybox(socketPath, tar) {
  const res = await call(socketPath, "POST", "/v1.41/images/create?fromSrc=-&repo=busybox&tag=latest", { body: tar, timeoutMs: 120_000 });
  if (res.status !== 200 || /"error"/.test(res.text)) throw new Error(`image import answered ${res.status}: ${res.text.slice(0, 200)}`);
  await expect(200, socketPath, "GET", "/images/busybox:latest/json");
}

// ---------------------------------------------------------------------------------------------
// Processes and memory

function procs() {
  const list = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").filter(Boolean);
      list.push({ pid: Number(name), ppid, cmdline: cmdline.join(" "), exe: cmdline[0] ?? "" });
    } catch {
      // gone meanwhile
    }
  }
  return list;
}



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

const readPid = (file) => {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return pid > 0 && alive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
};

// ---------------------------------------------------------------------------------------------
// The two daemons: how to start them, and where their supervisor and monitors are

const daemons = {
  engined: {
    start: (dir) => [join(ROOT, "bin/engined"), ["-H", `unix://${dir}/d.sock`, "--data-root", `${dir}/data`, "--exec-root", `${dir}/exec`, "--pidfile", `${dir}/d.pid`]],
    supervisorPid(dir) {
      const fromFile = readPid(`${dir}/exec/supervisor/supervisor.pid`);
      if (fromFile) return fromFile;
      return procs().find((p) => p.cmdline.includes("supervisor/main.js") && p.cmdline.includes(`--root ${dir}/exec/supervisor`))?.pid;
    },
    monitorPid(dir, id) {
      for (const ns of ["engine", ...safeList(`${dir}/exec/supervisor`)]) {
        const pid = readPid(`${dir}/exec/supervisor/${ns}/${id}/conmon/conmon.pid`);
        if (pid) return pid;
      }
      return procs().find((p) => /(^|\/)conmon$/.test(p.exe) && p.cmdline.includes(id))?.pid;
    },
    leftovers: (dir) => procs().filter((p) => /(^|\/)conmon$/.test(p.exe) && p.cmdline.includes(`${dir}/`)).map((p) => p.pid),
    runcRoots: (dir) => safeList(`${dir}/exec/supervisor`).map((ns) => `${dir}/exec/supervisor/${ns}/runtime`),
  },
  dockerd: {
    // Its own network namespace: --bridge=none there cannot touch the host's interfaces.
    start: (dir) => ["unshare", ["--net", "dockerd", "-H", `unix://${dir}/d.sock`, "--data-root", `${dir}/data`, "--exec-root", `${dir}/exec`,
      "--pidfile", `${dir}/d.pid`, "--bridge=none", "--iptables=false", "--ip6tables=false"]],
    supervisorPid(dir, daemonPid) {
      return procs().find((p) => p.ppid === daemonPid && /(^|\/)containerd$/.test(p.exe))?.pid;
    },
    monitorPid(dir, id) {
      return procs().find((p) => /containerd-shim/.test(p.exe) && p.cmdline.includes(`-id ${id}`) && p.cmdline.includes(`${dir}/`))?.pid;
    },
    leftovers: (dir) => procs().filter((p) => /containerd-shim/.test(p.exe) && p.cmdline.includes(`${dir}/`)).map((p) => p.pid),
    runcRoots: (dir) => safeList(`${dir}/exec/runtime-runc`).map((ns) => `${dir}/exec/runtime-runc/${ns}`),
  },
};

function safeList(dir) {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    return [];
  }
}

async function waitReady(socketPath, proc, limitMs) {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    if (proc.exitCode !== null) throw new Error(`daemon exited (${proc.exitCode})`);
    try {
      if ((await call(socketPath, "GET", "/_ping", { timeoutMs: 2000 })).status === 200) return;
    } catch {
      // not yet
    }
    await sleep(20);
  }
  throw new Error("daemon not ready in time");
}

// ---------------------------------------------------------------------------------------------
// The measurements

const CREATE = { Image: "busybox", Cmd: ["true"], HostConfig: { NetworkMode: "none" } };

async function cycle(sock, agent) {
  const { Id } = await expect(201, sock, "POST", "/containers/create", { body: CREATE, agent });
  try {
    await expect(204, sock, "POST", `/containers/${Id}/start`, { agent });
    const { StatusCode } = await expect(200, sock, "POST", `/containers/${Id}/wait`, { agent });
    if (StatusCode !== 0) throw new Error(`busybox true exited ${StatusCode}`);
  } finally {
    await expect(204, sock, "DELETE", `/containers/${Id}?force=1`, { agent });
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const now = () => Number(process.hrtime.bigint()) / 1e6;

async function cyclesOneClient(sock) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const times = [];
    const t0 = now();
    while (times.length < CYCLES && going(t0)) {
      const s = now();
      await cycle(sock, agent);
      times.push(now() - s);
    }
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
      while (started < CONCURRENT_CYCLES && going(t0) && !failed) {
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

function dockerCli() {
  for (const candidate of ["/usr/local/bin/docker", "/usr/bin/docker"]) if (existsSync(candidate)) return candidate;
  try {
    return execFileSync("which", ["docker"], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

async function cliRuns(sock, cli) {
  const env = { ...process.env, DOCKER_CONFIG: join(work, "docker-config"), DOCKER_CLI_HINTS: "false" };
  delete env.DOCKER_HOST;
  delete env.DOCKER_CONTEXT;
  const run = () => new Promise((resolve, reject) => {
    execFile(cli, ["-H", `unix://${sock}`, "run", "--rm", "--network", "none", "busybox", "true"], { env, timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`docker run: ${(stderr || err.message).trim().split("\n").pop().slice(0, 160)}`)) : resolve());
  });
  await run(); // warm-up: the CLI's own first start
  const times = [];
  const t0 = now();
  while (times.length < CLI_RUNS && going(t0)) {
    const s = now();
    await run();
    times.push(now() - s);
  }
  return { msPerRun: median(times), n: times.length };
}

async function listLatency(sock) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const ids = [];
  try {
    const t0 = now();
    while (ids.length < LIST_CONTAINERS && going(t0)) ids.push((await expect(201, sock, "POST", "/containers/create", { body: CREATE, agent })).Id);
    if (ids.length < LIST_CONTAINERS) throw new Error(`only ${ids.length} containers created in ${PHASE_LIMIT_MS / 1000} s`);
    const listed = await expect(200, sock, "GET", "/containers/json?all=1", { agent });
    if (listed.length < LIST_CONTAINERS) throw new Error(`the list has ${listed.length} containers, not ${LIST_CONTAINERS}`);
    const times = [];
    for (let i = 0; i < LIST_REQUESTS && !interrupted; i++) {
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

async function perContainerMemory(name, dir, sock, daemonPid, started) {
  const d = daemons[name];
  const base = sumMemory([daemonPid, d.supervisorPid(dir, daemonPid)].filter(Boolean));
  const ids = [];
  const sleeper = { ...CREATE, Cmd: ["sleep", "300"] };
  try {
    for (let i = 0; i < MEM_CONTAINERS && !interrupted; i++) {
      const { Id } = await expect(201, sock, "POST", "/containers/create", { body: sleeper });
      ids.push(Id);
      await expect(204, sock, "POST", `/containers/${Id}/start`);
      const pid = (await expect(200, sock, "GET", `/containers/${Id}/json`)).State?.Pid;
      if (pid) started.add(pid);
    }
    await sleep(2000); // settle
    const monitors = [];
    for (const id of ids) {
      const pid = d.monitorPid(dir, id);
      if (!pid) throw new Error(`no monitor process found for container ${id.slice(0, 12)}`);
      monitors.push(pid);
    }
    const m = sumMemory(monitors);
    const after = sumMemory([daemonPid, d.supervisorPid(dir, daemonPid)].filter(Boolean));
    return {
      monitorRss: m.rss / ids.length,
      monitorPss: m.pss / ids.length,
      daemonGrowthRss: (after.rss - base.rss) / ids.length,
    };
  } finally {
    for (const id of ids) await call(sock, "DELETE", `/v1.41/containers/${id}?force=1`, { timeoutMs: 30_000 }).catch(() => {});
  }
}

/** Every figure for one daemon; a part it cannot do becomes `{ na: reason }`. */
async function measure(name, tar) {
  const d = daemons[name];
  const dir = mkdtempSync(join(work, `${name}-`));
  const sock = `${dir}/d.sock`;
  const [cmd, args] = d.start(dir);
  const logFd = openSync(`${dir}/daemon.log`, "a");
  const proc = spawn(cmd, args, { stdio: ["ignore", logFd, logFd] });
  closeSync(logFd);
  const out = {};
  const na = (reason) => ({ na: reason });
  const started = new Set(); // container init pids, for a last-resort cleanup
  let supervisorPid;
  try {
    await waitReady(sock, proc, 30_000);
    await importBusybox(sock, tar);
    let runs = true;
    try {
      await cycle(sock); // warm-up, and: can this daemon run a container at all?
    } catch (err) {
      runs = err.message;
    }
    await sleep(1000);
    supervisorPid = d.supervisorPid(dir, proc.pid);
    out.daemonIdle = memory(proc.pid);
    out.supervisorIdle = supervisorPid ? memory(supervisorPid) : na("no supervisor process found");
    const part = async (key, fn) => {
      if (interrupted) return (out[key] = na("interrupted"));
      if (runs !== true && key !== "list") return (out[key] = na(runs));
      try {
        out[key] = await fn();
      } catch (err) {
        out[key] = na(err.message);
      }
    };
    await part("one", () => cyclesOneClient(sock));
    await part("four", () => cyclesConcurrent(sock));
    const cli = dockerCli();
    await part("cli", () => (cli ? cliRuns(sock, cli) : Promise.reject(new Error("no docker CLI"))));
    await part("list", () => listLatency(sock));
    await part("mem", () => perContainerMemory(name, dir, sock, proc.pid, started));
    supervisorPid ??= d.supervisorPid(dir, proc.pid);
  } catch (err) {
    out.failed = err.message;
  } finally {
    // Every container of this daemon is ours (its data root is ours): force-remove them all.
    try {
      const all = await expect(200, sock, "GET", "/containers/json?all=1", { timeoutMs: 10_000 });
      for (const c of all) await call(sock, "DELETE", `/v1.41/containers/${c.Id}?force=1`, { timeoutMs: 30_000 }).catch(() => {});
    } catch {
      // the daemon is not answering; the last resort below
    }
    supervisorPid ??= d.supervisorPid(dir, proc.pid);
    if (proc.exitCode === null) {
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
      await new Promise((r) => (proc.exitCode !== null ? r() : proc.once("exit", r)));
      clearTimeout(timer);
    }
    // engined's supervisor outlives engined by design: it is ours, end it by its pid.
    if (name === "engined" && supervisorPid) await endPid(supervisorPid);
    // Last resort, only for what this run started: containers runc still knows under our
    // roots, their init pids, and monitors whose command line names our directory.
    for (const root of d.runcRoots(dir)) {
      let list = [];
      try {
        list = JSON.parse(execFileSync("runc", ["--root", root, "list", "--format", "json"], { encoding: "utf8", timeout: 10_000 }) || "[]") ?? [];
      } catch {
        // no runc state there
      }
      for (const c of list) {
        try {
          execFileSync("runc", ["--root", root, "delete", "--force", c.id], { stdio: "ignore", timeout: 10_000 });
          out.leftovers = (out.leftovers ?? 0) + 1;
        } catch {
          // gone
        }
      }
    }
    for (const pid of started) if (alive(pid)) await endPid(pid, 1000);
    for (const pid of d.leftovers(dir)) await endPid(pid, 2000);
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Run and print

const results = {};
try {
  const tar = await busyboxTar();
  if (values.only !== "dockerd") {
    if (existsSync(join(ROOT, "dist/host/engined.js")) && !interrupted) results.engined = await measure("engined", tar);
    else results.engined = { failed: "not built (run the build first)" };
  }
  if (values.only !== "engined") {
    if (interrupted) results.dockerd = { failed: "interrupted" };
    else if (have("dockerd") && have("unshare")) results.dockerd = await measure("dockerd", tar);
    else results.dockerd = { failed: "dockerd is not installed" };
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const notes = [];
const cell = (r, pick) => {
  if (!r) return { text: "-" };
  if (r.failed) return note(r.failed);
  let v;
  try {
    v = pick(r);
  } catch {
    v = undefined;
  }
  if (v && typeof v === "object" && "na" in v) return note(v.na);
  if (typeof v !== "number" || !Number.isFinite(v)) return { text: "n/a" };
  return { value: v };
};
function note(reason) {
  let i = notes.indexOf(reason);
  if (i < 0) i = notes.push(reason) - 1;
  return { text: `n/a (${i + 1})` };
}

const kinds = {
  ms: { unit: "ms", lowerIsBetter: true, better: "faster", worse: "worse" },
  rate: { unit: "/s", lowerIsBetter: false, better: "faster", worse: "worse" },
  mib: { unit: "MiB", lowerIsBetter: true, better: "less", worse: "more" },
};
const row = (label, pickObj, pickValue, kind, { ratio: withRatio = true } = {}) => {
  const k = kinds[kind];
  const pick = (r) => {
    const o = pickObj(r);
    return o && typeof o === "object" && "na" in o ? o : o === undefined ? undefined : pickValue(o);
  };
  const e = cell(results.engined, pick);
  const d = cell(results.dockerd, pick);
  const fmt = (c) => (c.value === undefined ? c.text : `${c.value.toFixed(c.value < 10 ? 2 : 1)} ${k.unit}`);
  let ratio = "";
  if (withRatio && e.value !== undefined && d.value !== undefined && e.value > 0 && d.value > 0) {
    const gain = k.lowerIsBetter ? d.value / e.value : e.value / d.value;
    ratio = Math.abs(gain - 1) < 0.05 ? "about the same" : gain >= 1 ? `engined ${gain.toFixed(1)}x ${k.better}` : `engined ${(1 / gain).toFixed(1)}x ${k.worse}`;
  }
  console.log(`${label.padEnd(44)} ${fmt(e).padStart(14)} ${fmt(d).padStart(14)}  ${ratio}`);
};

console.log(`\ncycles: ${CYCLES} (1 client), ${CONCURRENT_CYCLES} (${CONCURRENT_CLIENTS} clients); docker run: ${CLI_RUNS}; list: ${LIST_REQUESTS} requests over ${LIST_CONTAINERS} containers; memory: ${MEM_CONTAINERS} running containers${QUICK ? " (--quick)" : ""}`);
console.log(`${"".padEnd(44)} ${"engined".padStart(14)} ${"dockerd".padStart(14)}`);
row("create+start+wait+rm, 1 client, per cycle", (r) => r.one, (o) => o.msPerCycle, "ms");
row("create+start+wait+rm, 1 client", (r) => r.one, (o) => o.perSecond, "rate");
row(`create+start+wait+rm, ${CONCURRENT_CLIENTS} clients`, (r) => r.four, (o) => o.perSecond, "rate");
row("docker run --rm --network none busybox true", (r) => r.cli, (o) => o.msPerRun, "ms");
row(`GET /containers/json?all=1, ${LIST_CONTAINERS} containers`, (r) => r.list, (o) => o.ms, "ms");
row("idle daemon RSS", (r) => r.daemonIdle, (o) => o.rss, "mib");
row("idle daemon PSS", (r) => r.daemonIdle, (o) => o.pss, "mib");
row("idle supervisor RSS (containerd for Docker)", (r) => r.supervisorIdle, (o) => o.rss, "mib");
row("idle supervisor PSS", (r) => r.supervisorIdle, (o) => o.pss, "mib");
row("per running container: monitor RSS", (r) => r.mem, (o) => o.monitorRss, "mib");
row("per running container: monitor PSS", (r) => r.mem, (o) => o.monitorPss, "mib");
row("per running container: daemon+supervisor RSS", (r) => r.mem, (o) => o.daemonGrowthRss, "mib", { ratio: false });
console.log("(monitor: conmon for engined, containerd-shim-runc-v2 for Docker; times are medians; the daemon+supervisor");
console.log(" growth is a difference of two samples of garbage-collected heaps: noise-sized, no ratio given)");
notes.forEach((n, i) => console.log(`(${i + 1}) ${n}`));
for (const [name, r] of Object.entries(results)) if (r.leftovers) console.log(`${name}: ${r.leftovers} container(s) left running had to be removed with runc directly`);
if (interrupted) process.exitCode = 130;
