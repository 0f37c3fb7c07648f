/**
 * The CRI's stats of a container and of a pod, read where `docker stats` reads them (the
 * cgroup files of host/containers/container-stats.ts, v1 or v2, found from the container's
 * init process), and shaped as the kubelet's summary API wants them:
 *
 * - CPU: cumulative core-nanoseconds, and nano-cores averaged since the previous sample of the
 *   same container or pod (0 for the first: one sample has no rate, as in containerd);
 * - memory: the working set is the usage less the inactive file cache (what the kubelet's
 *   eviction counts), rss the anonymous memory, page faults cumulative; available bytes only
 *   under a limit (without one there is no "available" to the container);
 * - the writable layer: the bytes and inodes of the container's own layer (the storage driver's
 *   usage), on the filesystem the image store is on (ImageFsInfo's mountpoint as its fsId), so
 *   the kubelet counts it against the image filesystem;
 * - a pod: the sum over its running containers (no infra process, no cgroup of its own here),
 *   its processes, and the counters of the interfaces in its network namespace.
 *
 * A container that does not run has attributes and writable layer only.
 */
import { totalmem } from "node:os";
import type { StorageDriver } from "../../../core/contracts/storage.js";
import { cgroupOfPid, cgroupPids, type ContainerCgroup } from "../../containers/cgroup-files.js";
import { cpuStatsOf, memoryStatsOf, networkStats, parseNetDev } from "../../containers/container-stats.js";
import type { CriContainerRecord } from "../containers/container-service.js";
import { nowNanos } from "../nanos.js";
import { runInNamespaces } from "../sandbox/pinned-namespaces.js";
import type { SandboxRecord } from "../sandbox/sandbox-service.js";

const u64 = (n: number | bigint) => ({ value: String(n < 0 ? 0 : n) });

export interface CpuUsageMsg {
  timestamp: string;
  usageCoreNanoSeconds: { value: string };
  usageNanoCores: { value: string };
}

export interface MemoryUsageMsg {
  timestamp: string;
  workingSetBytes: { value: string };
  availableBytes?: { value: string };
  usageBytes: { value: string };
  rssBytes: { value: string };
  pageFaults: { value: string };
  majorPageFaults: { value: string };
}

export interface ContainerStatsMsg {
  attributes: object;
  cpu: CpuUsageMsg | null;
  memory: MemoryUsageMsg | null;
  writableLayer: object | null;
}

/** What one running container's cgroup says, as numbers, for the container's message and the pod's sums. */
interface CgroupReading {
  cpuNanos: bigint;
  memory: { usage: number; workingSet: number; rss: number; faults: number; majorFaults: number; limit?: number };
  processes: number;
}

export interface CriStatsDeps {
  storage: StorageDriver;
  /** The folder of the storage driver (`<data-root>/<driver>`): the image filesystem's mountpoint as ImageFsInfo names it. */
  storageHome: string;
}

export class CriStatsReader {
  /** The previous CPU sample per container or pod (`pod:<id>`), for the nano-cores rate. */
  private readonly lastCpu = new Map<string, { cpu: bigint; at: bigint }>();

  constructor(private readonly deps: CriStatsDeps) {}

  /** Drops the samples of containers and pods that are gone (called by the list calls). */
  prune(liveIds: Iterable<string>): void {
    const live = new Set([...liveIds]);
    for (const key of this.lastCpu.keys()) if (!live.has(key.replace(/^pod:/, ""))) this.lastCpu.delete(key);
  }

  async container(rec: CriContainerRecord): Promise<ContainerStatsMsg> {
    const reading = readCgroup(rec);
    const at = nowNanos();
    const layer = await this.deps.storage.usage(rec.id).catch(() => undefined);
    return {
      attributes: { id: rec.id, metadata: rec.config.metadata, labels: rec.config.labels, annotations: rec.config.annotations },
      cpu: reading ? this.cpuMessage(rec.id, reading.cpuNanos, at) : null,
      memory: reading ? memoryMessage(reading.memory, at) : null,
      writableLayer: layer ? { timestamp: at, fsId: { mountpoint: this.deps.storageHome }, usedBytes: u64(layer.size), inodesUsed: u64(layer.inodes) } : null,
    };
  }

  async pod(pod: SandboxRecord, containers: CriContainerRecord[]) {
    const at = nowNanos();
    const readings = containers.map((rec) => ({ rec, reading: readCgroup(rec) }));
    const running = readings.filter((r) => r.reading !== undefined).map((r) => r.reading!);
    const sum = (pick: (r: CgroupReading) => number) => running.reduce((total, r) => total + pick(r), 0);
    const memory = {
      usage: sum((r) => r.memory.usage), workingSet: sum((r) => r.memory.workingSet), rss: sum((r) => r.memory.rss),
      faults: sum((r) => r.memory.faults), majorFaults: sum((r) => r.memory.majorFaults),
    };
    const cpuNanos = running.reduce((total, r) => total + r.cpuNanos, 0n);
    const pidOfRunning = readings.find((r) => r.reading !== undefined)?.rec.pid;
    return {
      attributes: { id: pod.id, metadata: pod.settings.metadata, labels: pod.settings.labels, annotations: pod.settings.annotations },
      linux: {
        cpu: this.cpuMessage(`pod:${pod.id}`, cpuNanos, at),
        memory: memoryMessage(memory, at),
        network: await podNetwork(pod, pidOfRunning, at),
        process: { timestamp: at, processCount: u64(sum((r) => r.processes)) },
        containers: await Promise.all(containers.map((rec) => this.container(rec))),
      },
    };
  }

  private cpuMessage(key: string, cpu: bigint, at: string): CpuUsageMsg {
    const now = BigInt(at);
    const before = this.lastCpu.get(key);
    this.lastCpu.set(key, { cpu, at: now });
    // usage (ns of CPU) per elapsed ns, in billionths of a core
    const rate = before && now > before.at && cpu >= before.cpu ? ((cpu - before.cpu) * 1_000_000_000n) / (now - before.at) : 0n;
    return { timestamp: at, usageCoreNanoSeconds: u64(cpu), usageNanoCores: u64(rate) };
  }
}

function memoryMessage(m: CgroupReading["memory"], at: string): MemoryUsageMsg {
  return {
    timestamp: at,
    workingSetBytes: u64(m.workingSet),
    ...(m.limit !== undefined ? { availableBytes: u64(Math.max(0, m.limit - m.workingSet)) } : {}),
    usageBytes: u64(m.usage),
    rssBytes: u64(m.rss),
    pageFaults: u64(m.faults),
    majorPageFaults: u64(m.majorFaults),
  };
}

/** The running container's cgroup, read; undefined when it does not run (or its process just ended). */
function readCgroup(rec: CriContainerRecord): CgroupReading | undefined {
  if (rec.state !== "CONTAINER_RUNNING" || rec.pid <= 0) return undefined;
  let cg: ContainerCgroup;
  try {
    cg = cgroupOfPid(rec.pid);
  } catch {
    return undefined;
  }
  const mem = memoryStatsOf(cg) as { usage?: number; limit?: number; stats?: Record<string, number> };
  const s = mem.stats ?? {};
  // v1 names its hierarchical counters total_*, v2 has only the cgroup's own (which include its children)
  const v1 = cg.version === 1;
  const usage = mem.usage ?? 0;
  const inactiveFile = (v1 ? s.total_inactive_file : s.inactive_file) ?? 0;
  // memoryStatsOf shows no limit as the host's memory (as Docker does): that is no limit here
  const limit = mem.limit !== undefined && mem.limit < totalmem() ? mem.limit : undefined;
  return {
    cpuNanos: BigInt(Math.round(cpuStatsOf(cg).cpu_usage.total_usage)),
    memory: {
      usage,
      workingSet: Math.max(0, usage - inactiveFile),
      rss: (v1 ? s.total_rss : s.anon) ?? 0,
      faults: (v1 ? s.total_pgfault : s.pgfault) ?? 0,
      majorFaults: (v1 ? s.total_pgmajfault : s.pgmajfault) ?? 0,
      ...(limit !== undefined ? { limit } : {}),
    },
    processes: cgroupPids(cg).length,
  };
}

/**
 * The pod's interfaces: read through a running container's process when there is one (its
 * `/proc/<pid>/net/dev` is the pod's namespace), else inside the pinned namespace (nsenter).
 * None for a pod on the node's network (its counters are the node's) or without a namespace.
 */
async function podNetwork(pod: SandboxRecord, runningPid: number | undefined, at: string) {
  if (pod.settings.namespaces.network === "NODE" || !pod.pinned.paths.net || pod.state !== "SANDBOX_READY") return null;
  let counters: Record<string, Record<string, number>>;
  if (runningPid) counters = networkStats(runningPid);
  else counters = parseNetDev(await runInNamespaces(pod.pinned, ["net"], ["cat", "/proc/net/dev"]).catch(() => ""));
  const usage = (name: string) => {
    const c = counters[name];
    return { name, rxBytes: u64(c.rx_bytes), rxErrors: u64(c.rx_errors), txBytes: u64(c.tx_bytes), txErrors: u64(c.tx_errors) };
  };
  const names = Object.keys(counters).sort();
  return {
    timestamp: at,
    defaultInterface: counters.eth0 ? usage("eth0") : null,
    interfaces: names.filter((n) => n !== "eth0").map(usage),
  };
}
