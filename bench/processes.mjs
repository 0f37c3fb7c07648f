// Processes a benchmark started: whether one is alive, and ending one by its pid.
import { readdirSync, readFileSync } from "node:fs";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Alive and not a zombie (a daemon's child that exited but was not reaped yet counts as gone). */
export function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** SIGTERM a pid we started (directly or through the daemon), SIGKILL after `graceMs`. */
export async function endPid(pid, graceMs = 10_000) {
  if (!pid || !alive(pid)) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  const until = Date.now() + graceMs;
  while (alive(pid) && Date.now() < until) await sleep(50);
  if (alive(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

/** Every process of the machine: pid, parent, command line, and its first word. */
export function procs() {
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
