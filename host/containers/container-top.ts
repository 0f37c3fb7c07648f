/**
 * `GET /containers/{id}/top?ps_args=`: the host's `ps` with the client's arguments (default
 * `-ef`), its lines kept when their PID is one of the container's processes (its cgroup's),
 * as Docker does: `{Processes, Titles}` (its struct's order), the last column holding the rest of
 * a line.
 *
 * `ps` refusing its arguments (an exit status), or printing no usable PID column, is the
 * client's `ps_args` at fault (400, where Docker answers 500); `ps` that cannot be run is the
 * host's. A container whose processes are gone by the time they are read is not running (409).
 */
import { execFile } from "node:child_process";
import { errors } from "../../core/errors.js";
import { cgroupOfPid, cgroupPids } from "./cgroup-files.js";

export interface TopResult {
  Processes: string[][];
  Titles: string[];
}

/** Docker refuses arguments that would put another column under the PID title. */
function checkPsArgs(psArgs: string): void {
  for (const m of psArgs.matchAll(/\s+(\S*)=\s*(PID\S*)/g)) {
    if (m[1] !== "pid") throw errors.containerTopInvalidArgs(m[1], m[2]);
  }
}

export async function containerTop(id: string, initPid: number, psArgs: string): Promise<TopResult> {
  checkPsArgs(psArgs);
  const pids = new Set(containerPids(id, initPid));
  const args = psArgs.split(" ").filter((a) => a !== "");
  const output = await new Promise<string>((resolve, reject) => {
    execFile("ps", args, { encoding: "utf8", timeout: 30_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      // as Docker's daemon says it: the first line of ps's complaint (its usage text follows)
      const why = `ps: ${(stderr ?? "").split("\n")[0]?.trim() || err?.message || ""}`;
      if (err) reject(typeof err.code === "number" ? errors.containerTopArgsFailed(why) : errors.containerTopFailed(why));
      else resolve(stdout);
    });
  });
  return parsePs(output, pids);
}

/** The container's processes, by its first one's cgroup; gone meanwhile (it exited since its state was read), it is not running. */
function containerPids(id: string, initPid: number): number[] {
  try {
    return cgroupPids(cgroupOfPid(initPid));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ESRCH") throw errors.containerStateNotRunning(id);
    throw err;
  }
}

/** ASCII whitespace only: ps may print other spaces inside a command. */
const fields = (line: string) => line.split(/[ \t\n\v\f\r]+/).filter((f) => f !== "");

export function parsePs(output: string, pids: ReadonlySet<number>): TopResult {
  const lines = output.split("\n");
  const titles = fields(lines[0] ?? "");
  const pidIndex = titles.indexOf("PID");
  if (pidIndex < 0) throw errors.containerTopArgsFailed("Couldn't find PID field in ps output");
  const processes: string[][] = [];
  let lastPid = 0;
  for (const line of lines.slice(1)) {
    if (line.trim() === "") continue;
    const f = fields(line);
    // Thread lines (`-L`, `-T`) show "-" for the PID: they belong to the process above.
    const pid = f[pidIndex] === "-" ? lastPid : Number(f[pidIndex]);
    if (!Number.isInteger(pid)) throw errors.containerTopArgsFailed(`Unexpected pid '${f[pidIndex]}'`);
    lastPid = pid;
    if (!pids.has(pid)) continue;
    processes.push([...f.slice(0, titles.length - 1), f.slice(titles.length - 1).join(" ")]);
  }
  return { Processes: processes, Titles: titles };
}
