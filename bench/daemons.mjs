// The two daemons the container benches compare, engined and Docker's `dockerd`: each started
// fresh in a folder of its own (data root, exec root, socket, pid file) and in a network
// namespace of its own (`unshare --net`: its bridge, its iptables rules and anything else it does
// to interfaces stay out of the host's), with or without its default bridge; the API over its
// unix socket; the `busybox` image imported into it; the Docker CLI pointed at it; and the removal
// of everything it started. The namespace goes away with the last process in it.
import { spawn, execFile, execFileSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import tarStream from "tar-stream";
import { have } from "./have.mjs";
import { alive, endPid, procs, sleep } from "./processes.mjs";
import { wasInterrupted } from "./timing.mjs";

const ROOT = new URL("..", import.meta.url).pathname;

// ---------------------------------------------------------------------------------------------
// HTTP over the daemon's unix socket

export function call(socketPath, method, path, { body, agent, timeoutMs = 60_000, contentType } = {}) {
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
export async function expect(want, socketPath, method, path, opts) {
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

/** The body of `POST /containers/create` for a busybox command; NetworkMode `default` is what the CLI sends without --network. */
export const createBody = (networkMode, cmd = ["true"]) => ({ Image: "busybox", Cmd: cmd, HostConfig: { NetworkMode: networkMode } });

/** create+start+wait+remove of `busybox true`; throws unless it exited 0. */
export async function cycle(sock, agent, networkMode = "none") {
  const { Id } = await expect(201, sock, "POST", "/containers/create", { body: createBody(networkMode), agent });
  try {
    await expect(204, sock, "POST", `/containers/${Id}/start`, { agent });
    const { StatusCode } = await expect(200, sock, "POST", `/containers/${Id}/wait`, { agent });
    if (StatusCode !== 0) throw new Error(`busybox true exited ${StatusCode}`);
  } finally {
    await expect(204, sock, "DELETE", `/containers/${Id}?force=1`, { agent });
  }
}

// ---------------------------------------------------------------------------------------------
// The busybox image: bin/busybox, a relative symlink per applet, empty proc dev sys tmp etc

export async function busyboxTar() {
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
// The two daemons: how to start them, and where their supervisor and monitors are

const readPid = (file) => {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return pid > 0 && alive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
};

function safeList(dir) {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  } catch {
    return [];
  }
}

const roots = (dir) => ["-H", `unix://${dir}/d.sock`, "--data-root", `${dir}/data`, "--exec-root", `${dir}/exec`, "--pidfile", `${dir}/d.pid`];

/**
 * `start(dir, bridge)`: the command line, in a network namespace of its own. With `bridge` the
 * daemon makes its default bridge there, on `bip` (a private range of the bench's own, and a
 * different one per daemon, so that a leftover is easy to tell apart from anything else).
 */
export const daemons = {
  engined: {
    bip: "10.201.0.1/24",
    start: (dir, bridge) => ["unshare", ["--net", join(ROOT, "bin/engined"), ...roots(dir), ...(bridge ? ["--bip", daemons.engined.bip] : ["--bridge", "none"])]],
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
    bip: "10.202.0.1/24",
    // With its bridge, its docker0 and iptables rules are made in its namespace and go with it.
    start: (dir, bridge) => ["unshare", ["--net", "dockerd", ...roots(dir), ...(bridge ? ["--bip", daemons.dockerd.bip] : ["--bridge=none", "--iptables=false", "--ip6tables=false"])]],
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

/** Why a daemon cannot be run here, or undefined. */
function missing(name) {
  if (name === "engined" && !existsSync(join(ROOT, "dist/host/engined.js"))) return "not built (run the build first)";
  const cmd = (name === "dockerd" ? ["dockerd", "unshare"] : ["unshare"]).find((c) => !have(c));
  return cmd && `${cmd} is not installed`;
}

/**
 * Starts a daemon in a new folder under `work` (`extraArgs` after its own, `env` over this
 * process's); its output goes to `daemon.log` there. The
 * handle is returned at once, so that `stopDaemon` cleans up whatever `ready` then fails at.
 * `started` collects the init pids of containers, for a last-resort cleanup.
 */
export function spawnDaemon(name, work, { bridge = false, extraArgs = [], env } = {}) {
  const dir = mkdtempSync(join(work, `${name}-`));
  const [cmd, args] = daemons[name].start(dir, bridge);
  const logFd = openSync(`${dir}/daemon.log`, "a");
  const proc = spawn(cmd, [...args, ...extraArgs], { stdio: ["ignore", logFd, logFd], env: { ...process.env, ...env } });
  closeSync(logFd);
  return { name, dir, sock: `${dir}/d.sock`, proc, started: new Set(), supervisorPid: undefined, leftovers: 0 };
}

/** The API answers, and `busybox` is imported. */
export async function ready(daemon, tar, limitMs = 30_000) {
  const until = Date.now() + limitMs;
  for (;;) {
    if (daemon.proc.exitCode !== null) throw new Error(`daemon exited (${daemon.proc.exitCode})`);
    try {
      if ((await call(daemon.sock, "GET", "/_ping", { timeoutMs: 2000 })).status === 200) break;
    } catch {
      // not yet
    }
    if (Date.now() > until) throw new Error("daemon not ready in time");
    await sleep(20);
  }
  await importBusybox(daemon.sock, tar);
}

export const supervisorPid = (daemon) => daemons[daemon.name].supervisorPid(daemon.dir, daemon.proc.pid);

/**
 * Every container force-removed through the API, the daemon stopped by its pid and so is engined's
 * supervisor (it outlives engined by design); then, only for what this daemon started: what runc
 * still knows under its roots (counted in `leftovers`), container init pids, monitors whose command
 * line names its folder; whatever is mounted under the folder (container namespaces) is unmounted,
 * and the folder removed.
 */
export async function stopDaemon(daemon) {
  const { name, dir, sock, proc } = daemon;
  const d = daemons[name];
  try {
    const all = await expect(200, sock, "GET", "/containers/json?all=1", { timeoutMs: 10_000 });
    for (const c of all) await call(sock, "DELETE", `/v1.41/containers/${c.Id}?force=1`, { timeoutMs: 30_000 }).catch(() => {});
  } catch {
    // the daemon is not answering; the last resort below
  }
  daemon.supervisorPid ??= supervisorPid(daemon);
  if (proc.exitCode === null) {
    proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
    await new Promise((r) => (proc.exitCode !== null ? r() : proc.once("exit", r)));
    clearTimeout(timer);
  }
  if (name === "engined" && daemon.supervisorPid) await endPid(daemon.supervisorPid);
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
        daemon.leftovers++;
      } catch {
        // gone
      }
    }
  }
  for (const pid of daemon.started) if (alive(pid)) await endPid(pid, 1000);
  for (const pid of d.leftovers(dir)) await endPid(pid, 2000);
  unmountUnder(dir);
  rmSync(dir, { recursive: true, force: true });
}

/** Removing through a mount would reach into what is mounted: deepest first, lazily. */
function unmountUnder(dir) {
  const mounts = readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")[4]).filter((m) => m && (m === dir || m.startsWith(`${dir}/`)));
  for (const m of mounts.reverse()) {
    try {
      execFileSync("umount", ["--lazy", m], { stdio: "ignore", timeout: 10_000 });
    } catch {
      // gone meanwhile
    }
  }
}

/**
 * What `parts(daemon, part, out)` measured with a fresh daemon `name`, started in a folder under
 * `work` (`bridge`: with its default bridge; `env`: variables added to its environment, e.g.
 * `NODE_OPTIONS` for a CPU profile): `out.failed` when the daemon did not start; a
 * `part(key, fn)` that throws gives `{ na: reason }` under its key, and so does every part that
 * runs containers when the warm-up cycle (NetworkMode `warmUp`) failed. Everything the daemon
 * started is removed before it returns; `out.leftovers` counts what only runc could remove.
 */
async function measureDaemon(name, work, tar, { bridge, warmUp, env }, parts) {
  const daemon = spawnDaemon(name, work, { bridge, env });
  const out = {};
  try {
    await ready(daemon, tar);
    let runs = true;
    try {
      await cycle(daemon.sock, undefined, warmUp); // warm-up, and: can this daemon run a container at all?
    } catch (err) {
      runs = err.message;
    }
    const part = async (key, fn, { runsContainers = true } = {}) => {
      if (wasInterrupted()) return (out[key] = { na: "interrupted" });
      if (runs !== true && runsContainers) return (out[key] = { na: runs });
      try {
        out[key] = await fn();
      } catch (err) {
        out[key] = { na: err.message };
      }
    };
    await parts(daemon, part, out);
  } catch (err) {
    out.failed = err.message;
  } finally {
    await stopDaemon(daemon);
    if (daemon.leftovers) out.leftovers = daemon.leftovers;
  }
  return out;
}

/**
 * `measureDaemon` for engined, then Docker's daemon where it is installed (`only`: one of them),
 * the `busybox` image built once; `{ engined, dockerd }`, a daemon that could not run with its
 * reason in `failed`. `opts.env` is `{ engined?: {...}, dockerd?: {...} }`: variables added to
 * that daemon's environment.
 */
export async function measureBoth(work, only, opts, parts) {
  const results = {};
  const tar = await busyboxTar();
  for (const name of ["engined", "dockerd"]) {
    if (only && only !== name) continue;
    const why = wasInterrupted() ? "interrupted" : missing(name);
    results[name] = why ? { failed: why } : await measureDaemon(name, work, tar, { bridge: false, warmUp: "none", ...opts, env: opts.env?.[name] }, parts);
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// The Docker CLI

function findDockerCli() {
  for (const candidate of ["/usr/local/bin/docker", "/usr/bin/docker"]) if (existsSync(candidate)) return candidate;
  try {
    return execFileSync("which", ["docker"], { encoding: "utf8" }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * `docker -H unix://<the daemon's socket> ARGS` with a private DOCKER_CONFIG in `configDir` (no
 * user's context or hints); rejects with the CLI's last error line. Throws when there is no CLI.
 */
export function dockerCommand(daemon, configDir) {
  const cli = findDockerCli();
  if (!cli) throw new Error("no docker CLI");
  const env = { ...process.env, DOCKER_CONFIG: configDir, DOCKER_CLI_HINTS: "false" };
  delete env.DOCKER_HOST;
  delete env.DOCKER_CONTEXT;
  return (args) => new Promise((resolve, reject) => {
    execFile(cli, ["-H", `unix://${daemon.sock}`, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`docker ${args[0]}: ${(stderr || err.message).trim().split("\n").pop().slice(0, 160)}`)) : resolve(stdout));
  });
}
