// What a daemon and its processes use while a bench runs, read from /proc: its descendants, the
// peak RSS of all of them (sampled), and the CPU seconds they spend, split by thread and child.
import { readdirSync, readFileSync } from "node:fs";
import { procs } from "./processes.mjs";

/** The pids of `pid`'s children, their children, and so on. */
export function descendants(pid) {
  const list = procs();
  const out = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift();
    for (const c of list) if (c.ppid === p) (out.push(c.pid), queue.push(c.pid));
  }
  return out;
}

/** The resident memory of `pid` in MiB (0 when it is gone). */
export function rssMiB(pid) {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples the RSS of `pid` and all its descendants every 100 ms; stop() gives the peak (MiB). */
export function sampleRss(pid) {
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
export function cpuMeter(pid) {
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

export function readIf(file) {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return "";
  }
}
