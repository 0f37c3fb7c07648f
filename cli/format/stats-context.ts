/**
 * A container's statistics as `docker stats` shows them: the values the Docker CLI computes from
 * `GET /containers/{id}/stats` (CPU % from the two samples, memory without the inactive file
 * cache, network and block I/O summed), and the fields a template sees (.Container .Name .ID
 * .CPUPerc .MemUsage .MemPerc .NetIO .BlockIO .PIDs), "--" while a container has none.
 */
import { truncateId } from "./render.js";
import { struct, type GoStruct } from "./template.js";
import { bytesSize, humanSize } from "../../core/go-units.js";

export interface StatsEntry {
  /** The container as asked for (a name, or the short id in the list of all). */
  container: string;
  name: string;
  id: string;
  cpuPercentage: number;
  memory: number;
  memoryLimit: number;
  memoryPercentage: number;
  networkRx: number;
  networkTx: number;
  blockRead: number;
  blockWrite: number;
  pidsCurrent: number;
  isInvalid: boolean;
}

interface CpuStats {
  cpu_usage?: { total_usage?: number; percpu_usage?: number[] | null };
  system_cpu_usage?: number;
  online_cpus?: number;
}

/** The part of `/containers/{id}/stats` the CLI reads. */
export interface StatsResponse {
  name?: string;
  id?: string;
  cpu_stats?: CpuStats;
  precpu_stats?: CpuStats;
  memory_stats?: { usage?: number; limit?: number; stats?: Record<string, number> | null };
  networks?: Record<string, { rx_bytes?: number; tx_bytes?: number }> | null;
  blkio_stats?: { io_service_bytes_recursive?: { op?: string; value?: number }[] | null };
  pids_stats?: { current?: number };
}

export const STATS_HEADERS: Record<string, string> = {
  Container: "CONTAINER",
  Name: "NAME",
  ID: "CONTAINER ID",
  CPUPerc: "CPU %",
  MemUsage: "MEM USAGE / LIMIT",
  MemPerc: "MEM %",
  NetIO: "NET I/O",
  BlockIO: "BLOCK I/O",
  PIDs: "PIDS",
};

export const STATS_TYPE = "*container.statsContext";
export const STATS_TABLE = "table {{.ID}}\t{{.Name}}\t{{.CPUPerc}}\t{{.MemUsage}}\t{{.MemPerc}}\t{{.NetIO}}\t{{.BlockIO}}\t{{.PIDs}}";

export function emptyEntry(container: string): StatsEntry {
  return { container, name: "", id: "", cpuPercentage: 0, memory: 0, memoryLimit: 0, memoryPercentage: 0, networkRx: 0, networkTx: 0, blockRead: 0, blockWrite: 0, pidsCurrent: 0, isInvalid: false };
}

function cpuPercent(pre: CpuStats = {}, cur: CpuStats = {}): number {
  const cpuDelta = (cur.cpu_usage?.total_usage ?? 0) - (pre.cpu_usage?.total_usage ?? 0);
  const systemDelta = (cur.system_cpu_usage ?? 0) - (pre.system_cpu_usage ?? 0);
  const online = cur.online_cpus || (cur.cpu_usage?.percpu_usage ?? []).length;
  return systemDelta > 0 && cpuDelta > 0 ? (cpuDelta / systemDelta) * online * 100 : 0;
}

/** Usage less the inactive file cache (cgroup v1's total_inactive_file, v2's inactive_file). */
function memoryNoCache(mem: StatsResponse["memory_stats"] = {}): number {
  const usage = mem.usage ?? 0;
  const stats = mem.stats ?? {};
  if ("total_inactive_file" in stats && stats.total_inactive_file < usage) return usage - stats.total_inactive_file;
  const inactive = stats.inactive_file ?? 0;
  return inactive < usage ? usage - inactive : usage;
}

/** A new reading for `container`, computed as the Docker CLI computes it on Linux. */
export function entryFrom(container: string, v: StatsResponse): StatsEntry {
  const memory = memoryNoCache(v.memory_stats);
  const limit = v.memory_stats?.limit ?? 0;
  let rx = 0;
  let tx = 0;
  for (const n of Object.values(v.networks ?? {})) {
    rx += n.rx_bytes ?? 0;
    tx += n.tx_bytes ?? 0;
  }
  let read = 0;
  let write = 0;
  for (const e of v.blkio_stats?.io_service_bytes_recursive ?? []) {
    const op = (e.op ?? "")[0];
    if (op === "r" || op === "R") read += e.value ?? 0;
    else if (op === "w" || op === "W") write += e.value ?? 0;
  }
  return {
    container,
    name: v.name ?? "",
    id: v.id ?? "",
    cpuPercentage: cpuPercent(v.precpu_stats, v.cpu_stats),
    memory,
    memoryLimit: limit,
    memoryPercentage: limit !== 0 ? (memory / limit) * 100 : 0,
    networkRx: rx,
    networkTx: tx,
    blockRead: read,
    blockWrite: write,
    pidsCurrent: v.pids_stats?.current ?? 0,
    isInvalid: false,
  };
}

/** Go's strconv.FormatFloat(v, 'f', 2, 64) and "%": exact ties round to even, as Go rounds them. */
export function formatPercentage(v: number): string {
  const scaled = v * 100;
  if (Number.isInteger(v * 8) && !Number.isInteger(scaled) && Number.isInteger(scaled * 2)) {
    const down = Math.floor(scaled);
    return `${((down % 2 === 0 ? down : down + 1) / 100).toFixed(2)}%`;
  }
  return `${v.toFixed(2)}%`;
}

export function statsContext(s: StatsEntry, trunc: boolean): GoStruct {
  return struct(STATS_TYPE, {
    Container: () => s.container,
    Name: () => (s.name.length > 1 ? s.name.slice(1) : "--"),
    ID: () => (trunc ? truncateId(s.id) : s.id),
    CPUPerc: () => (s.isInvalid ? "--" : formatPercentage(s.cpuPercentage)),
    MemUsage: () => (s.isInvalid ? "-- / --" : `${bytesSize(s.memory)} / ${bytesSize(s.memoryLimit)}`),
    MemPerc: () => (s.isInvalid ? "--" : formatPercentage(s.memoryPercentage)),
    NetIO: () => (s.isInvalid ? "--" : `${humanSize(s.networkRx, 3)} / ${humanSize(s.networkTx, 3)}`),
    BlockIO: () => (s.isInvalid ? "--" : `${humanSize(s.blockRead, 3)} / ${humanSize(s.blockWrite, 3)}`),
    PIDs: () => (s.isInvalid ? "--" : String(s.pidsCurrent)),
  });
}
