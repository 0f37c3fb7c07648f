/**
 * Facts about the host that the daemon reports and plugins check: the kernel, the operating
 * system, the cgroup version and driver. Read once at start; none of them changes while the
 * daemon runs.
 */
import { existsSync, readFileSync } from "node:fs";
import { availableParallelism, hostname, machine, release, totalmem } from "node:os";
import type { HostFacts } from "../core/contracts/plugin.js";
import type { RuleHost } from "../core/options/rules.js";

export interface HostReport extends HostFacts {
  hostname: string;
  operatingSystem: string;
  osVersion: string;
  architecture: string;
  ncpu: number;
  memTotal: number;
  /** systemd runs as init: the systemd cgroup driver is possible. */
  systemd: boolean;
  /** Which resource limits the kernel's cgroups can enforce here. */
  limits: CgroupLimits;
  /** The cpus and memory nodes the root cpuset has (`0-3`), where there is a cpuset controller. */
  cpuset: { cpus?: string; mems?: string };
}

export interface CgroupLimits {
  memory: boolean;
  swap: boolean;
  cpuCfs: boolean;
  cpuShares: boolean;
  cpuset: boolean;
  pids: boolean;
  oomKillDisable: boolean;
  /** Real-time group scheduling (cpu.rt_period_us): cgroup v1 only, as Docker's sysinfo finds it. */
  cpuRealtime: boolean;
  /** memory.swappiness: cgroup v1 only. */
  swappiness: boolean;
  /** A block IO weight file: v1's blkio.weight (a kernel with only BFQ's has none), v2's io controller. */
  blkioWeight: boolean;
  /** Per-device weights: v1's blkio.weight_device, v2's io controller. */
  blkioWeightDevice: boolean;
  /** Per-device limits: v1's blkio.throttle.* files, v2's io controller (io.max). */
  blkioReadBps: boolean;
  blkioWriteBps: boolean;
  blkioReadIOps: boolean;
  blkioWriteIOps: boolean;
}

export function readHostFacts(): HostReport {
  const osRelease = parseOsRelease();
  const cgroupVersion = existsSync("/sys/fs/cgroup/cgroup.controllers") ? 2 : 1;
  const systemdInit = existsSync("/run/systemd/system");
  return {
    platform: process.platform,
    arch: process.arch,
    kernel: release(),
    cgroupVersion,
    hostname: hostname(),
    operatingSystem: osRelease.PRETTY_NAME ?? "Linux",
    osVersion: osRelease.VERSION_ID ?? "",
    architecture: machine(),
    ncpu: availableParallelism(),
    memTotal: totalmem(),
    systemd: systemdInit,
    limits: cgroupVersion === 2 ? cgroupV2Limits() : cgroupV1Limits(),
    cpuset: cgroupVersion === 2 ? { cpus: readTrimmed(`${V1}/cpuset.cpus.effective`), mems: readTrimmed(`${V1}/cpuset.mems.effective`) } : { cpus: readTrimmed(`${V1}/cpuset/cpuset.cpus`), mems: readTrimmed(`${V1}/cpuset/cpuset.mems`) },
  };
}

function readTrimmed(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

const V1 = "/sys/fs/cgroup";

function cgroupV1Limits(): CgroupLimits {
  return {
    memory: existsSync(`${V1}/memory/memory.limit_in_bytes`),
    swap: existsSync(`${V1}/memory/memory.memsw.limit_in_bytes`),
    cpuCfs: existsSync(`${V1}/cpu/cpu.cfs_period_us`),
    cpuShares: existsSync(`${V1}/cpu/cpu.shares`),
    cpuRealtime: existsSync(`${V1}/cpu/cpu.rt_period_us`),
    cpuset: existsSync(`${V1}/cpuset/cpuset.cpus`),
    pids: existsSync(`${V1}/pids`),
    oomKillDisable: existsSync(`${V1}/memory/memory.oom_control`),
    swappiness: existsSync(`${V1}/memory/memory.swappiness`),
    blkioWeight: existsSync(`${V1}/blkio/blkio.weight`),
    blkioWeightDevice: existsSync(`${V1}/blkio/blkio.weight_device`),
    blkioReadBps: existsSync(`${V1}/blkio/blkio.throttle.read_bps_device`),
    blkioWriteBps: existsSync(`${V1}/blkio/blkio.throttle.write_bps_device`),
    blkioReadIOps: existsSync(`${V1}/blkio/blkio.throttle.read_iops_device`),
    blkioWriteIOps: existsSync(`${V1}/blkio/blkio.throttle.write_iops_device`),
  };
}

function cgroupV2Limits(): CgroupLimits {
  let controllers: string[] = [];
  try {
    controllers = readFileSync(`${V1}/cgroup.controllers`, "utf8").trim().split(/\s+/);
  } catch {
    // no controllers delegated
  }
  const has = (c: string) => controllers.includes(c);
  return {
    memory: has("memory"),
    swap: has("memory"),
    cpuCfs: has("cpu"),
    cpuShares: has("cpu"),
    cpuRealtime: false,
    cpuset: has("cpuset"),
    pids: has("pids"),
    oomKillDisable: false,
    swappiness: false,
    blkioWeight: has("io"),
    blkioWeightDevice: has("io"),
    blkioReadBps: has("io"),
    blkioWriteBps: has("io"),
    blkioReadIOps: has("io"),
    blkioWriteIOps: has("io"),
  };
}

/** The facts the option rules need. */
export function ruleHost(facts: HostReport): RuleHost {
  return { platform: "linux", cgroupVersion: facts.cgroupVersion, systemd: facts.systemd };
}

function parseOsRelease(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const path of ["/etc/os-release", "/usr/lib/os-release"]) {
    try {
      for (const line of readFileSync(path, "utf8").split("\n")) {
        const m = /^([A-Z_]+)=(.*)$/.exec(line);
        if (m) out[m[1]] = m[2].replace(/^"(.*)"$/, "$1");
      }
      return out;
    } catch {
      // try the next one
    }
  }
  return out;
}
