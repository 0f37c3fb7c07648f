/**
 * Where a running container's cgroup is, and what its files say. The cgroup is found from its
 * init process (`/proc/<pid>/cgroup`, mapped through this process's mount table), so it does
 * not matter which cgroup driver or parent put it there. Both cgroup v1 (one hierarchy per
 * controller) and v2 (the unified hierarchy) are read.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface ContainerCgroup {
  version: 1 | 2;
  /** The directory of the container's cgroup for a v1 controller (`memory`, `cpuacct`...), or the v2 one. */
  dir(controller: string): string | undefined;
}

interface CgroupMount {
  root: string;
  mountPoint: string;
  fsType: "cgroup" | "cgroup2";
  controllers: string[];
}

function cgroupMounts(): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [left, right] = line.split(" - ");
    if (!right) continue;
    const fields = left.split(" ");
    const [fsType, , superOptions] = right.split(" ");
    if (fsType !== "cgroup" && fsType !== "cgroup2") continue;
    mounts.push({ root: unescape(fields[3]), mountPoint: unescape(fields[4]), fsType, controllers: fsType === "cgroup" ? superOptions.split(",") : [] });
  }
  return mounts;
}

/** mountinfo escapes spaces and the like as octal. */
function unescape(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

function within(mount: CgroupMount, path: string): string | undefined {
  if (mount.root === "/") return join(mount.mountPoint, path);
  if (path === mount.root || path.startsWith(`${mount.root}/`)) return join(mount.mountPoint, path.slice(mount.root.length));
  return undefined;
}

/**
 * The folder of the cgroup an OCI spec's `cgroupsPath` names, in the hierarchy of the v1
 * `controller` (the unified one where that controller is not on v1): an absolute path, as
 * runc's cgroupfs driver takes it, or systemd's `slice:prefix:name`, the scope
 * `prefix-name.scope` under the slice's folders (`a-b.slice` is `a.slice/a-b.slice`).
 * Undefined for a relative path (runc's own cgroup is its base) or no such hierarchy.
 */
export function cgroupDirOfSpecPath(cgroupsPath: string, controller: string): { version: 1 | 2; dir: string } | undefined {
  let path: string;
  const systemd = /^([^:/]*):([^:]*):([^:]*)$/.exec(cgroupsPath);
  if (systemd) {
    const [, slice, prefix, name] = systemd;
    const parts = slice === "" || slice === "-.slice" ? [] : slice.replace(/\.slice$/, "").split("-");
    const slices = parts.map((_, i) => `${parts.slice(0, i + 1).join("-")}.slice`);
    path = `/${[...slices, `${prefix ? `${prefix}-` : ""}${name}.scope`].join("/")}`;
  } else if (cgroupsPath.startsWith("/")) path = cgroupsPath;
  else return undefined;
  const mounts = cgroupMounts();
  const v1 = mounts.find((m) => m.fsType === "cgroup" && m.controllers.includes(controller));
  if (v1) {
    const dir = within(v1, path);
    return dir ? { version: 1, dir } : undefined;
  }
  const v2 = mounts.find((m) => m.fsType === "cgroup2");
  const dir = v2 && within(v2, path);
  return dir ? { version: 2, dir } : undefined;
}

/** The cgroup of process `pid`; throws when the process is gone. */
export function cgroupOfPid(pid: number): ContainerCgroup {
  const lines = readFileSync(`/proc/${pid}/cgroup`, "utf8").split("\n").filter(Boolean);
  const mounts = cgroupMounts();
  const v1 = new Map<string, string>();
  let unified: string | undefined;
  for (const line of lines) {
    const [hierarchy, controllers, ...rest] = line.split(":");
    const path = rest.join(":");
    if (hierarchy === "0" && controllers === "") {
      const m = mounts.find((x) => x.fsType === "cgroup2");
      if (m) unified = within(m, path);
      continue;
    }
    for (const controller of controllers.split(",")) {
      const m = mounts.find((x) => x.fsType === "cgroup" && x.controllers.includes(controller));
      const dir = m && within(m, path);
      if (dir) v1.set(controller, dir);
    }
  }
  // A host with the v1 memory controller is a v1 (or hybrid) host: its unified hierarchy holds no controllers.
  if (v1.has("memory") || v1.has("cpuacct")) return { version: 1, dir: (c) => v1.get(c) };
  return { version: 2, dir: () => unified };
}

/** The processes (not threads) in the container's cgroup. */
export function cgroupPids(cg: ContainerCgroup): number[] {
  const dir = cg.version === 2 ? cg.dir("") : cg.dir("pids") ?? cg.dir("memory") ?? cg.dir("freezer") ?? cg.dir("cpu");
  if (!dir) return [];
  return readText(join(dir, "cgroup.procs"))
    .split("\n")
    .filter(Boolean)
    .map(Number);
}

export function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** A file with one number (`max` and absence read as undefined). */
export function readNumber(path: string): number | undefined {
  const text = readText(path).trim();
  return /^-?\d+$/.test(text) ? Number(text) : undefined;
}

/** `key value` lines (memory.stat, cpu.stat, cpuacct.stat) as numbers. */
export function readKeyValues(path: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of readText(path).split("\n")) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && /^-?\d+$/.test(v)) out[k] = Number(v);
  }
  return out;
}

/**
 * Whether the process's cgroup is frozen (paused: the v1 freezer's state, FREEZING counted as
 * frozen, or v2's `cgroup.freeze`); undefined when it cannot be read (the process is gone).
 */
export function frozenState(pid: number): boolean | undefined {
  let cg: ContainerCgroup;
  try {
    cg = cgroupOfPid(pid);
  } catch {
    return undefined;
  }
  const v1 = cg.version === 1 ? cg.dir("freezer") : undefined;
  if (v1) {
    const state = readText(join(v1, "freezer.state")).trim();
    return state ? state !== "THAWED" : undefined;
  }
  const v2 = cg.version === 2 ? cg.dir("") : undefined;
  const freeze = v2 ? readText(join(v2, "cgroup.freeze")).trim() : "";
  return freeze ? freeze === "1" : undefined;
}
