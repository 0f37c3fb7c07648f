/**
 * Docker's checks of the memory settings of a create or an update (moby's
 * verifyPlatformContainerResources), in its order: what the kernel cannot apply is dropped with
 * a warning, then the minimums and the pairs are refused (400, Docker's words, no "Cannot update"
 * prefix: Docker checks them before the update proper). An update is checked on its own fields,
 * not merged with the container's, as Docker checks it; its swap limit may come without a memory
 * limit. A create then records twice the memory as the swap limit when none was given, as
 * Docker does, which later updates of the memory limit are held to.
 */
import type { HostConfig } from "../../core/containers/container-config.js";
import { errors } from "../../core/errors.js";
import type { CgroupLimits } from "../host-facts.js";

/** The kernel's minimum that Docker holds limits and reservations to. */
export const MIN_MEMORY = 6 * 1024 * 1024;

export type MemoryFields = Pick<HostConfig, "Memory" | "MemorySwap" | "MemoryReservation" | "MemorySwappiness">;

const MEMORY_DISCARDED = "Your kernel does not support memory limit capabilities or the cgroup is not mounted. Limitation discarded.";
const SWAP_DISCARDED = "Your kernel does not support swap limit capabilities or the cgroup is not mounted. Memory limited without swap.";
const SWAPPINESS_DISCARDED = "Your kernel does not support memory swappiness capabilities or the cgroup is not mounted. Memory swappiness discarded.";

/** Checks (and adjusts, as Docker records them) `r`'s memory settings; resolves with the warnings. */
export function checkMemory(r: MemoryFields, limits: Pick<CgroupLimits, "memory" | "swap" | "swappiness">, update: boolean): string[] {
  const warnings: string[] = [];
  const refuse = (why: string) => errors.containerInvalidResource(why);
  if (r.Memory && r.Memory < MIN_MEMORY) throw refuse("Minimum memory limit allowed is 6MB");
  if ((r.Memory ?? 0) > 0 && !limits.memory) {
    warnings.push(MEMORY_DISCARDED);
    r.Memory = 0;
    r.MemorySwap = -1;
  }
  if ((r.Memory ?? 0) > 0 && r.MemorySwap !== -1 && !limits.swap) {
    warnings.push(SWAP_DISCARDED);
    r.MemorySwap = -1;
  }
  const memory = r.Memory ?? 0;
  const swap = r.MemorySwap ?? 0;
  if (memory > 0 && swap > 0 && swap < memory) throw refuse("Minimum memoryswap limit should be larger than memory limit, see usage");
  if (memory === 0 && swap > 0 && !update) throw refuse("You should always set the Memory limit when using Memoryswap limit, see usage");
  // -1 is "the kernel's", recorded as null as Docker does
  if (r.MemorySwappiness === -1) r.MemorySwappiness = null;
  if (typeof r.MemorySwappiness === "number" && !limits.swappiness) {
    warnings.push(SWAPPINESS_DISCARDED);
    r.MemorySwappiness = null;
  }
  const swappiness = r.MemorySwappiness;
  if (typeof swappiness === "number" && (swappiness < 0 || swappiness > 100)) throw refuse(`Invalid value: ${swappiness}, valid memory swappiness range is 0-100`);
  const reservation = r.MemoryReservation ?? 0;
  if (reservation > 0 && reservation < MIN_MEMORY) throw refuse("Minimum memory reservation allowed is 6MB");
  if (memory > 0 && reservation > 0 && memory < reservation) throw refuse("Minimum memory limit can not be less than memory reservation limit, see usage");
  return warnings;
}

/** A create's swap limit as Docker records it: twice the memory limit when only that was given. */
export function defaultSwap(hc: MemoryFields): void {
  if ((hc.Memory ?? 0) > 0 && !hc.MemorySwap) hc.MemorySwap = hc.Memory! * 2;
}
