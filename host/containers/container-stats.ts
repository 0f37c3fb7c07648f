/**
 * A container's statistics in the shape of Docker's `GET /containers/{id}/stats`: CPU, memory,
 * pids and block I/O from its cgroup (v1 or v2 files, as Docker reads them), network counters
 * from its network namespace (`/proc/<pid>/net/dev`), the host's CPU time from /proc/stat.
 * `precpu_stats` and `preread` come from the sample before (zero for the first).
 */
import { readFileSync } from "node:fs";
import { totalmem } from "node:os";
import { join } from "node:path";
import type { ContainerRecord } from "../../core/containers/container-store.js";
import { cgroupOfPid, readKeyValues, readNumber, readText, type ContainerCgroup } from "./cgroup-files.js";

const ZERO_TIME = "0001-01-01T00:00:00Z";
/** USER_HZ: the unit of /proc/stat and cpuacct.stat (100 on Linux, as Docker assumes). */
const CLOCK_TICKS = 100;
const NS_PER_TICK = 1e9 / CLOCK_TICKS;

export interface CpuStats {
  cpu_usage: { total_usage: number; percpu_usage?: number[]; usage_in_kernelmode: number; usage_in_usermode: number };
  system_cpu_usage?: number;
  online_cpus?: number;
  throttling_data: { periods: number; throttled_periods: number; throttled_time: number };
}

interface BlkioEntry {
  major: number;
  minor: number;
  op: string;
  value: number;
}

export interface StatsSample {
  read: string;
  cpu_stats: CpuStats;
  [key: string]: unknown;
}

function emptyCpuStats(): CpuStats {
  return { cpu_usage: { total_usage: 0, usage_in_kernelmode: 0, usage_in_usermode: 0 }, throttling_data: { periods: 0, throttled_periods: 0, throttled_time: 0 } };
}

/** What Docker sends for a container that does not run: its name and id, all else zero. */
export function emptyStats(c: ContainerRecord): Record<string, unknown> {
  // (in the order of Docker's StatsJSON: the embedded Stats' fields, then name and id)
  return {
    read: ZERO_TIME,
    preread: ZERO_TIME,
    pids_stats: {},
    blkio_stats: emptyBlkio(),
    num_procs: 0,
    storage_stats: {},
    cpu_stats: emptyCpuStats(),
    precpu_stats: emptyCpuStats(),
    memory_stats: {},
    name: c.Name,
    id: c.Id,
  };
}

function emptyBlkio(): Record<string, BlkioEntry[] | null> {
  return {
    io_service_bytes_recursive: null,
    io_serviced_recursive: null,
    io_queue_recursive: null,
    io_service_time_recursive: null,
    io_wait_time_recursive: null,
    io_merged_recursive: null,
    io_time_recursive: null,
    sectors_recursive: null,
  };
}

/** One sample of a running container; throws when its process is gone. */
export function sampleStats(c: ContainerRecord, previous?: StatsSample): StatsSample {
  const cg = cgroupOfPid(c.State.Pid);
  const read = new Date().toISOString();
  const sample: StatsSample = {
    read,
    preread: previous?.read ?? ZERO_TIME,
    pids_stats: pidsStats(cg),
    blkio_stats: cg.version === 1 ? blkioV1(cg) : blkioV2(cg),
    num_procs: 0,
    storage_stats: {},
    cpu_stats: cpuStatsOf(cg),
    precpu_stats: previous?.cpu_stats ?? emptyCpuStats(),
    memory_stats: memoryStatsOf(cg),
    name: c.Name,
    id: c.Id,
  };
  const networks = c.HostConfig.NetworkMode === "host" ? {} : networkStats(c.State.Pid);
  if (Object.keys(networks).length > 0) sample.networks = networks;
  return sample;
}

/** CPU time from the cgroup's files (v1 cpuacct and cpu, or v2 cpu.stat), in Docker's shape. Also used by the CRI's stats. */
export function cpuStatsOf(cg: ContainerCgroup): CpuStats {
  return cg.version === 1 ? cpuV1(cg) : cpuV2(cg);
}

/** Memory from the cgroup's files in Docker's shape: `usage`, `limit` and memory.stat's keys as `stats`. */
export function memoryStatsOf(cg: ContainerCgroup): Record<string, unknown> {
  return cg.version === 1 ? memoryV1(cg) : memoryV2(cg);
}

/** The host's CPU time in ns (all CPUs, all modes but guest), and how many CPUs are online. */
function hostCpu(): { system: number; online: number } {
  const lines = readFileSync("/proc/stat", "utf8").split("\n");
  const total = lines.find((l) => l.startsWith("cpu "));
  const ticks = (total ?? "").trim().split(/\s+/).slice(1, 8).reduce((sum, v) => sum + Number(v), 0);
  return { system: ticks * NS_PER_TICK, online: lines.filter((l) => /^cpu\d+ /.test(l)).length };
}

function cpuV1(cg: ContainerCgroup): CpuStats {
  const acct = cg.dir("cpuacct");
  const cpu = cg.dir("cpu");
  const host = hostCpu();
  const times = acct ? readKeyValues(join(acct, "cpuacct.stat")) : {};
  const throttle = cpu ? readKeyValues(join(cpu, "cpu.stat")) : {};
  const percpu = acct ? readText(join(acct, "cpuacct.usage_percpu")).trim().split(/\s+/).filter(Boolean).map(Number) : [];
  return {
    cpu_usage: {
      total_usage: (acct && readNumber(join(acct, "cpuacct.usage"))) || 0,
      ...(percpu.length ? { percpu_usage: percpu } : {}),
      usage_in_kernelmode: (times.system ?? 0) * NS_PER_TICK,
      usage_in_usermode: (times.user ?? 0) * NS_PER_TICK,
    },
    system_cpu_usage: host.system,
    online_cpus: host.online,
    throttling_data: { periods: throttle.nr_periods ?? 0, throttled_periods: throttle.nr_throttled ?? 0, throttled_time: throttle.throttled_time ?? 0 },
  };
}

function cpuV2(cg: ContainerCgroup): CpuStats {
  const dir = cg.dir("");
  const s = dir ? readKeyValues(join(dir, "cpu.stat")) : {};
  const host = hostCpu();
  return {
    cpu_usage: { total_usage: (s.usage_usec ?? 0) * 1000, usage_in_kernelmode: (s.system_usec ?? 0) * 1000, usage_in_usermode: (s.user_usec ?? 0) * 1000 },
    system_cpu_usage: host.system,
    online_cpus: host.online,
    throttling_data: { periods: s.nr_periods ?? 0, throttled_periods: s.nr_throttled ?? 0, throttled_time: (s.throttled_usec ?? 0) * 1000 },
  };
}

/** No limit shows as the host's memory, as Docker shows it. */
function memoryLimit(limit: number | undefined): number {
  const machine = totalmem();
  return limit === undefined || limit > machine ? machine : limit;
}

/** The memory.stat keys Docker's daemon reports on cgroup v1 (the fields of containerd's v1 MemoryStat it copies), in no order. */
const V1_MEMORY_KEYS = (() => {
  const counted = "cache rss rss_huge mapped_file dirty writeback pgpgin pgpgout pgfault pgmajfault inactive_anon active_anon inactive_file active_file unevictable".split(" ");
  return new Set([...counted, ...counted.map((k) => `total_${k}`), "hierarchical_memory_limit", "hierarchical_memsw_limit"]);
})();

function memoryV1(cg: ContainerCgroup): Record<string, unknown> {
  const dir = cg.dir("memory");
  if (!dir) return {};
  const maxUsage = readNumber(join(dir, "memory.max_usage_in_bytes")) ?? 0;
  const failcnt = readNumber(join(dir, "memory.failcnt")) ?? 0;
  // (max_usage and failcnt are omitempty in Docker's MemoryStats: left out when 0)
  return {
    usage: readNumber(join(dir, "memory.usage_in_bytes")) ?? 0,
    ...(maxUsage ? { max_usage: maxUsage } : {}),
    stats: Object.fromEntries(Object.entries(readKeyValues(join(dir, "memory.stat"))).filter(([k]) => V1_MEMORY_KEYS.has(k))),
    ...(failcnt ? { failcnt } : {}),
    limit: memoryLimit(readNumber(join(dir, "memory.limit_in_bytes"))),
  };
}

function memoryV2(cg: ContainerCgroup): Record<string, unknown> {
  const dir = cg.dir("");
  if (!dir) return {};
  return {
    usage: readNumber(join(dir, "memory.current")) ?? 0,
    stats: readKeyValues(join(dir, "memory.stat")),
    limit: memoryLimit(readNumber(join(dir, "memory.max"))),
  };
}

export function pidsStats(cg: ContainerCgroup): Record<string, number> {
  const dir = cg.version === 1 ? cg.dir("pids") : cg.dir("");
  if (!dir) return {};
  const limit = readNumber(join(dir, "pids.max"));
  return { current: readNumber(join(dir, "pids.current")) ?? 0, ...(limit !== undefined && limit > 0 ? { limit } : {}) };
}

/**
 * `8:0 Read 4096` lines (`8:0 4096` in the time and sectors files, whose op is ""). Docker lists
 * all eight on cgroup v1, empty where the file is missing or has nothing (kernels without CFQ);
 * the bytes and the operations fall back to the throttle files, as Docker's do.
 */
function blkioV1(cg: ContainerCgroup): Record<string, BlkioEntry[] | null> {
  const dir = cg.dir("blkio");
  const out = emptyBlkio();
  if (!dir) return out;
  const parse = (file: string): BlkioEntry[] =>
    readText(join(dir, file))
      .split("\n")
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => (f.length === 3 || f.length === 2) && /^\d+:\d+$/.test(f[0]))
      .map((f) => {
        const [major, minor] = f[0].split(":").map(Number);
        return { major, minor, op: f.length === 3 ? f[1] : "", value: Number(f[f.length - 1]) };
      });
  const withThrottle = (name: string): BlkioEntry[] => {
    const cfq = parse(`blkio.${name}`);
    return cfq.length ? cfq : parse(`blkio.throttle.${name}`);
  };
  out.io_service_bytes_recursive = withThrottle("io_service_bytes_recursive");
  out.io_serviced_recursive = withThrottle("io_serviced_recursive");
  out.io_queue_recursive = parse("blkio.io_queued_recursive");
  out.io_service_time_recursive = parse("blkio.io_service_time_recursive");
  out.io_wait_time_recursive = parse("blkio.io_wait_time_recursive");
  out.io_merged_recursive = parse("blkio.io_merged_recursive");
  out.io_time_recursive = parse("blkio.time_recursive");
  out.sectors_recursive = parse("blkio.sectors_recursive");
  return out;
}

/** io.stat: `8:0 rbytes=.. wbytes=.. rios=.. wios=..`, as Docker maps it onto the v1 names. */
function blkioV2(cg: ContainerCgroup): Record<string, BlkioEntry[] | null> {
  const dir = cg.dir("");
  const out = emptyBlkio();
  if (!dir) return out;
  const bytes: BlkioEntry[] = [];
  const ios: BlkioEntry[] = [];
  for (const line of readText(join(dir, "io.stat")).split("\n")) {
    const [dev, ...pairs] = line.trim().split(/\s+/);
    if (!dev || !/^\d+:\d+$/.test(dev)) continue;
    const [major, minor] = dev.split(":").map(Number);
    const kv = Object.fromEntries(pairs.map((p) => p.split("=")).map(([k, v]) => [k, Number(v)]));
    bytes.push({ major, minor, op: "read", value: kv.rbytes ?? 0 }, { major, minor, op: "write", value: kv.wbytes ?? 0 });
    ios.push({ major, minor, op: "read", value: kv.rios ?? 0 }, { major, minor, op: "write", value: kv.wios ?? 0 });
  }
  out.io_service_bytes_recursive = bytes;
  out.io_serviced_recursive = ios;
  return out;
}

/** The counters of every interface in the container's network namespace but its loopback. */
export function networkStats(pid: number): Record<string, Record<string, number>> {
  return parseNetDev(readText(`/proc/${pid}/net/dev`));
}

/** The text of a `/proc/net/dev`: counters by interface, the loopback left out. */
export function parseNetDev(text: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const line of text.split("\n").slice(2)) {
    const [name, rest] = line.split(":");
    if (!rest || name.trim() === "lo") continue;
    const f = rest.trim().split(/\s+/).map(Number);
    out[name.trim()] = {
      rx_bytes: f[0], rx_packets: f[1], rx_errors: f[2], rx_dropped: f[3],
      tx_bytes: f[8], tx_packets: f[9], tx_errors: f[10], tx_dropped: f[11],
    };
  }
  return out;
}
