// Where a container cycle's time goes (containers.mjs --detail, issue 30), for engined and for
// Docker's daemon alike:
//   - the wall time of each call of create+start+wait+remove, as the client sees it;
//   - the CPU time of a cycle, split between the daemon, its supervisor (Docker: containerd) and
//     what they spawn (conmon and runc; Docker: the shim and runc). The daemon's and the
//     supervisor's come from their threads' schedstat; the total from a cgroup v1 `cpuacct`
//     group the two are moved into for the cycles, which every process they spawn inherits
//     (short-lived ones included, which no /proc sampling would catch). The container's own
//     process leaves it for the container's cgroup, so `true` itself is not counted;
//   - the floor: the same `true` in the same root filesystem run by runc alone (`runc run`), and
//     by conmon and runc through the supervisor's own functions (dist/host/supervisor/conmon.js:
//     conmon's `runc create`, `runc start`, the exit file, `runc delete`), without any daemon.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createBody, expect } from "./daemons.mjs";
import { have } from "./have.mjs";
import { sleep } from "./processes.mjs";
import { cpuMs } from "./scale-steps.mjs";
import { going, median, now } from "./timing.mjs";

const CPUACCT = "/sys/fs/cgroup/cpuacct";
const ROOT = new URL("..", import.meta.url).pathname;

/** create+start+wait+remove of `busybox true`, the ms of each call. */
async function timedCycle(sock, agent) {
  const t = {};
  let s = now();
  const { Id } = await expect(201, sock, "POST", "/containers/create", { body: createBody("none"), agent });
  t.create = now() - s;
  try {
    s = now();
    await expect(204, sock, "POST", `/containers/${Id}/start`, { agent });
    t.start = now() - s;
    s = now();
    const { StatusCode } = await expect(200, sock, "POST", `/containers/${Id}/wait`, { agent });
    t.wait = now() - s;
    if (StatusCode !== 0) throw new Error(`busybox true exited ${StatusCode}`);
  } finally {
    s = now();
    await expect(204, sock, "DELETE", `/containers/${Id}?force=1`, { agent });
    t.remove = now() - s;
  }
  return t;
}

/**
 * A cpuacct group of the bench's own holding `pids` (whole processes, with every thread) and
 * what they spawn from now on. `close()` moves whatever is still in it back to the root group
 * and removes it.
 */
function cpuGroup(tag, pids) {
  if (!existsSync(`${CPUACCT}/cpuacct.usage`)) throw new Error(`no cgroup v1 cpuacct hierarchy at ${CPUACCT}`);
  const dir = `${CPUACCT}/engine-bench-${tag}-${process.pid}`;
  mkdirSync(dir);
  const close = () => {
    for (let i = 0; i < 5 && existsSync(dir); i++) {
      for (const pid of readFileSync(`${dir}/cgroup.procs`, "utf8").split("\n").filter(Boolean)) {
        try {
          writeFileSync(`${CPUACCT}/cgroup.procs`, pid);
        } catch {
          // ended meanwhile
        }
      }
      try {
        rmdirSync(dir);
      } catch {
        // a process was being forked into it: once more
      }
    }
  };
  try {
    for (const pid of pids) writeFileSync(`${dir}/cgroup.procs`, String(pid));
  } catch (err) {
    close();
    throw err;
  }
  return { usageMs: () => Number(readFileSync(`${dir}/cpuacct.usage`, "utf8")) / 1e6, close };
}

/**
 * `cycles` create+start+wait+remove cycles, one client: each call's median and the CPU a cycle
 * took in the daemon, its supervisor and what they spawned.
 */
export async function cycleBreakdown(daemon, supervisorPid, agent, cycles, limitMs) {
  const pids = [daemon.proc.pid, supervisorPid].filter(Boolean);
  const group = cpuGroup(daemon.name, pids);
  try {
    const before = { total: group.usageMs(), daemon: cpuMs(daemon.proc.pid), supervisor: supervisorPid ? cpuMs(supervisorPid) : 0 };
    const calls = [];
    const t0 = now();
    while (calls.length < cycles && going(t0, limitMs)) calls.push(await timedCycle(daemon.sock, agent));
    // a container's clean-up may end just after the removal answers
    await sleep(200);
    const n = calls.length;
    const cpu = {
      daemon: (cpuMs(daemon.proc.pid) - before.daemon) / n,
      supervisor: supervisorPid ? (cpuMs(supervisorPid) - before.supervisor) / n : 0,
      total: (group.usageMs() - before.total) / n,
    };
    cpu.spawned = Math.max(0, cpu.total - cpu.daemon - cpu.supervisor);
    const pick = (k) => median(calls.map((c) => c[k]));
    return { n, create: pick("create"), start: pick("start"), wait: pick("wait"), remove: pick("remove"), cpu };
  } finally {
    group.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The floor: runc alone, and conmon with runc, on a bundle of the bench's busybox

const run = (cmd, args, timeout = 30_000) =>
  new Promise((resolve, reject) =>
    execFile(cmd, args, { timeout, encoding: "utf8" }, (err, stdout, stderr) => (err ? reject(new Error(`${cmd} ${args.join(" ")}: ${(stderr || err.message).trim()}`)) : resolve(stdout))));

/** A bundle under `dir`: the busybox tar as its root filesystem, runc's default spec running `true`, no terminal. */
async function makeBundle(dir, tar) {
  mkdirSync(join(dir, "rootfs"), { recursive: true });
  writeFileSync(join(dir, "busybox.tar"), tar);
  await run("tar", ["-xf", join(dir, "busybox.tar"), "-C", join(dir, "rootfs")]);
  await run("runc", ["spec", "--bundle", dir]);
  const spec = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
  spec.process.args = ["/bin/true"];
  spec.process.terminal = false;
  writeFileSync(join(dir, "config.json"), JSON.stringify(spec));
}

/**
 * Medians of `runs` runs of `true` by runc alone and by conmon with runc; `{ na }` for a part
 * that cannot run here. Every container is deleted; conmon exits with its container.
 */
export async function runtimeFloors(dir, tar, runs, limitMs) {
  const missing = ["runc", "conmon", "tar"].find((c) => !have(c));
  if (missing) return { na: `${missing} is not installed` };
  // the supervisor's own code for conmon and runc (built), so that the floor is what it does
  const conmon = await import(join(ROOT, "dist/host/supervisor/conmon.js"));
  await makeBundle(dir, tar);
  const state = join(dir, "state");
  mkdirSync(join(state, "exits"), { recursive: true });
  const root = join(state, "runc");
  const runcPath = (await run("sh", ["-c", "command -v runc"])).trim();
  const timesOf = async (fn) => {
    const times = [];
    const t0 = now();
    for (let i = 0; i < runs + 1 && going(t0, limitMs); i++) {
      const s = now();
      await fn(i);
      if (i > 0) times.push(now() - s); // the first warms the page cache
    }
    return times.length ? median(times) : undefined;
  };
  const runcRun = await timesOf((i) => run("runc", ["--root", root, "run", "--bundle", dir, `floor-run-${i}`]));
  const rt = { runtimePath: runcPath, runtimeRoot: root };
  const conmonRunc = await timesOf(async (i) => {
    const id = `floor-conmon-${i}`;
    try {
      await conmon.startContainer({ ...rt, id, bundle: dir, exitDir: join(state, "exits"), persistDir: join(state, id), logPath: join(state, `${id}.log`) });
      await conmon.waitExit(join(state, "exits"), id, AbortSignal.timeout(30_000));
    } finally {
      await conmon.deleteContainer(rt, id).catch(() => {});
    }
  });
  // whatever a failed run left: runc knows it
  for (const c of JSON.parse((await run("runc", ["--root", root, "list", "--format", "json"]).catch(() => "[]")) || "[]") ?? []) {
    await run("runc", ["--root", root, "delete", "--force", c.id]).catch(() => {});
  }
  return { runcRun, conmonRunc };
}
