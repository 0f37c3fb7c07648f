/**
 * `POST /containers/{id}/update` as Docker does it: the request's non-zero limits replace the
 * container's, with Docker's conflicts refused (Nano CPUs against a CPU period or quota, a
 * memory limit above the swap limit); a restart policy replaces the container's unless it
 * has AutoRemove. The result goes to a running container as OCI LinuxResources (`runc
 * update`), where a zero leaves the runtime's value as it is.
 */
import type { tags } from "typia";
import type { HostConfig, RestartPolicy } from "../../core/containers/container-config.js";
import { checkRestartPolicy, isNoPolicy } from "../../core/containers/restart-policy.js";
import { cpusetRefusal } from "../../core/containers/cpuset.js";
import { errors } from "../../core/errors.js";

/** A Go int64 field: a number that is not a whole one in its range is a 400, as Go's decoder refuses it. */
type Int64 = number & tags.Type<"int64">;

/** The body of an update: the resources Docker's UpdateConfig carries that the engine applies. */
export interface ContainerUpdateRequest {
  BlkioWeight?: number & tags.Type<"uint32">;
  CpuShares?: Int64;
  CpuPeriod?: Int64;
  CpuQuota?: Int64;
  NanoCpus?: Int64;
  CpusetCpus?: string;
  CpusetMems?: string;
  Memory?: Int64;
  MemorySwap?: Int64;
  MemoryReservation?: Int64;
  PidsLimit?: Int64 | null;
  RestartPolicy?: RestartPolicy;
  [key: string]: unknown;
}

const MIN_MEMORY = 6 * 1024 * 1024;

/**
 * The container's HostConfig after the update; throws the 400 Docker answers for a conflict.
 * `cpuset`: the host's cpus and memory nodes, which a new cpuset must be within.
 */
export function applyUpdate(id: string, current: HostConfig, u: ContainerUpdateRequest, cpuset: { cpus?: string; mems?: string } = {}): HostConfig {
  const refuse = (why: string) => errors.containerUpdateFailed(id, why);
  // Docker checks these before the update proper: its message has no "Cannot update" prefix
  const cpusetWrong = cpusetRefusal("cpus", u.CpusetCpus ?? "", cpuset.cpus) ?? cpusetRefusal("mems", u.CpusetMems ?? "", cpuset.mems);
  if (cpusetWrong) throw errors.containerInvalidResource(cpusetWrong);
  checkRestartPolicy(u.RestartPolicy);
  if (u.Memory && u.Memory > 0 && u.Memory < MIN_MEMORY) throw refuse("Minimum memory limit allowed is 6MB");
  if (u.BlkioWeight && (u.BlkioWeight < 10 || u.BlkioWeight > 1000)) throw refuse("Range of blkio weight is from 10 to 1000");
  if (u.CpuPeriod && (u.CpuPeriod < 1000 || u.CpuPeriod > 1_000_000)) throw refuse("CPU cfs period can not be less than 1ms (i.e. 1000) or larger than 1s (i.e. 1000000)");
  if (u.CpuQuota && u.CpuQuota > 0 && u.CpuQuota < 1000) throw refuse("CPU cfs quota can not be less than 1ms (i.e. 1000)");
  if (u.NanoCpus && (u.CpuPeriod || u.CpuQuota)) throw refuse("Conflicting options: Nano CPUs and CPU Period cannot both be set");
  // NanoCpus sets the period and quota itself: the one excludes the other across updates too.
  if (u.NanoCpus && current.CpuPeriod) throw refuse("Conflicting options: Nano CPUs cannot be updated as CPU Period has already been set");
  if (u.NanoCpus && current.CpuQuota) throw refuse("Conflicting options: Nano CPUs cannot be updated as CPU Quota has already been set");
  if (u.CpuPeriod && current.NanoCpus) throw refuse("Conflicting options: CPU Period cannot be updated as NanoCPUs has already been set");
  if (u.CpuQuota && current.NanoCpus) throw refuse("Conflicting options: CPU Quota cannot be updated as NanoCPUs has already been set");
  const next: HostConfig = { ...current };
  for (const key of ["BlkioWeight", "CpuShares", "NanoCpus", "CpuPeriod", "CpuQuota", "CpusetCpus", "CpusetMems", "MemoryReservation"] as const) {
    const v = u[key];
    if (v !== undefined && v !== null && v !== 0 && v !== "") (next as Record<string, unknown>)[key] = v;
  }
  if (u.Memory) {
    // Docker records twice the memory as swap at create when none is given.
    const swap = swapOf(current);
    if (swap > 0 && u.Memory > swap && !u.MemorySwap) {
      throw refuse("Memory limit should be smaller than already set memoryswap limit, update the memoryswap at the same time");
    }
    next.Memory = u.Memory;
  }
  if (u.MemorySwap) next.MemorySwap = u.MemorySwap;
  if ((next.MemorySwap ?? 0) > 0 && (next.Memory ?? 0) > 0 && next.MemorySwap! < next.Memory!) {
    throw refuse("Minimum memoryswap limit should be larger than memory limit, see usage");
  }
  if (u.PidsLimit !== undefined && u.PidsLimit !== null) next.PidsLimit = u.PidsLimit;
  if (u.RestartPolicy && u.RestartPolicy.Name !== "") {
    if (!isNoPolicy(u.RestartPolicy) && current.AutoRemove) throw refuse("Restart policy cannot be updated because AutoRemove is enabled for the container");
    next.RestartPolicy = { Name: u.RestartPolicy.Name, MaximumRetryCount: u.RestartPolicy.MaximumRetryCount ?? 0 };
  }
  return next;
}

function swapOf(hc: HostConfig): number {
  if (hc.MemorySwap) return hc.MemorySwap;
  return hc.Memory && hc.Memory > 0 ? hc.Memory * 2 : 0;
}

/** The OCI LinuxResources of a running container's update (zero: the runtime keeps its value). */
export function resourcesUpdate(hc: HostConfig): Record<string, unknown> {
  let period = 0;
  let quota = 0;
  if (hc.NanoCpus) {
    period = 100_000;
    quota = Math.round((hc.NanoCpus * period) / 1e9);
  }
  if (quota === 0 && hc.CpuQuota) quota = hc.CpuQuota;
  if (period === 0 && hc.CpuPeriod) period = hc.CpuPeriod;
  const memory: Record<string, number> = {};
  if (hc.Memory) memory.limit = hc.Memory;
  if (hc.MemoryReservation) memory.reservation = hc.MemoryReservation;
  const swap = swapOf(hc);
  if (swap) memory.swap = swap;
  return {
    memory,
    cpu: {
      ...(hc.CpuShares ? { shares: hc.CpuShares } : {}),
      period,
      quota,
      cpus: hc.CpusetCpus ?? "",
      mems: hc.CpusetMems ?? "",
    },
    ...(hc.BlkioWeight ? { blockIO: { weight: hc.BlkioWeight } } : {}),
    // 0 and -1 are "no limit" to Docker; the runtime reads 0 as "unchanged" and -1 as "max".
    ...(hc.PidsLimit !== undefined && hc.PidsLimit !== null ? { pids: { limit: hc.PidsLimit <= 0 ? -1 : hc.PidsLimit } } : {}),
  };
}
