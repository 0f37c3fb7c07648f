/**
 * `POST /containers/{id}/update` as Docker does it: the update's own fields checked first
 * (`checkUpdate`), then its non-zero limits replace the container's, with Docker's conflicts
 * refused (Nano CPUs against a CPU period or quota, a memory limit above the swap limit); a
 * restart policy replaces the container's unless it has AutoRemove. The result goes to a running container as OCI LinuxResources (`runc
 * update`), where a zero leaves the runtime's value as it is.
 */
import type { tags } from "typia";
import type { HostConfig, RestartPolicy } from "../../core/containers/container-config.js";
import { checkRestartPolicy, isNoPolicy } from "../../core/containers/restart-policy.js";
import { cpusetRefusal } from "../../core/containers/cpuset.js";
import { errors } from "../../core/errors.js";
import type { CgroupLimits } from "../host-facts.js";
import { BLKIO_WEIGHT_DISCARDED, nanoCpusRefusal } from "./create-checks.js";
import { checkMemory } from "./memory-checks.js";

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

/**
 * What Docker checks of an update before the update proper, on the update's own fields: the
 * memory settings (memory-checks.ts), the CPU settings' ranges and pairs, the block IO weight
 * (dropped with a warning when the kernel has no weight), the cpuset, the restart policy. Its
 * refusals have no "Cannot update" prefix. Resolves with the warnings; `u` is adjusted.
 */
export function checkUpdate(
  u: ContainerUpdateRequest,
  limits: Pick<CgroupLimits, "memory" | "swap" | "swappiness" | "blkioWeight">,
  cpuset: { cpus?: string; mems?: string } = {},
): string[] {
  const refuse = (why: string) => errors.containerInvalidResource(why);
  const warnings = checkMemory(u, limits, true);
  if (u.NanoCpus && u.CpuPeriod) throw refuse("Conflicting options: Nano CPUs and CPU Period cannot both be set");
  if (u.NanoCpus && u.CpuQuota) throw refuse("Conflicting options: Nano CPUs and CPU Quota cannot both be set");
  const cpusWrong = nanoCpusRefusal(u.NanoCpus);
  if (cpusWrong) throw refuse(cpusWrong);
  if (u.CpuPeriod && (u.CpuPeriod < 1000 || u.CpuPeriod > 1_000_000)) throw refuse("CPU cfs period can not be less than 1ms (i.e. 1000) or larger than 1s (i.e. 1000000)");
  if (u.CpuQuota && u.CpuQuota > 0 && u.CpuQuota < 1000) throw refuse("CPU cfs quota can not be less than 1ms (i.e. 1000)");
  const cpusetWrong = cpusetRefusal("cpus", u.CpusetCpus ?? "", cpuset.cpus) ?? cpusetRefusal("mems", u.CpusetMems ?? "", cpuset.mems);
  if (cpusetWrong) throw refuse(cpusetWrong);
  if (u.BlkioWeight && !limits.blkioWeight) {
    warnings.push(BLKIO_WEIGHT_DISCARDED);
    u.BlkioWeight = 0;
  }
  if (u.BlkioWeight && (u.BlkioWeight < 10 || u.BlkioWeight > 1000)) throw refuse("Range of blkio weight is from 10 to 1000");
  checkRestartPolicy(u.RestartPolicy);
  return warnings;
}

/**
 * The container's HostConfig after an update `checkUpdate` passed; throws the 409 Docker answers
 * for a conflict with what the container has ("Cannot update container <id>: ...": Docker's
 * conflictingUpdateOptions, a Conflict).
 */
export function applyUpdate(id: string, current: HostConfig, u: ContainerUpdateRequest): HostConfig {
  const refuse = (why: string) => errors.containerUpdateConflict(id, why);
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
    // Held to the swap limit the container has (none, or unlimited, is below any memory limit:
    // Docker's rule, which asks for both at once then)
    if (u.Memory > swapOf(current) && !u.MemorySwap) {
      throw refuse("Memory limit should be smaller than already set memoryswap limit, update the memoryswap at the same time");
    }
    next.Memory = u.Memory;
  }
  if (u.MemorySwap) next.MemorySwap = u.MemorySwap;
  // 0 and any negative value are "unlimited", recorded as 0 (Docker's update route)
  if (u.PidsLimit !== undefined && u.PidsLimit !== null) next.PidsLimit = u.PidsLimit <= 0 ? 0 : u.PidsLimit;
  if (u.RestartPolicy && u.RestartPolicy.Name !== "") {
    if (!isNoPolicy(u.RestartPolicy) && current.AutoRemove) throw refuse("Restart policy cannot be updated because AutoRemove is enabled for the container");
    next.RestartPolicy = { Name: u.RestartPolicy.Name, MaximumRetryCount: u.RestartPolicy.MaximumRetryCount ?? 0 };
  }
  return next;
}

/** The swap limit a container has: as recorded, or for a record made before creates recorded it, Docker's default. */
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
