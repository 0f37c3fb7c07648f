/**
 * The per-device block IO settings of a container's spec, as Docker's daemon makes them:
 * `BlkioWeightDevice` and the four `BlkioDevice*` limits name devices by path; the spec (and the
 * cgroup files runc writes) name them by their device numbers, read from the host's node when
 * the spec is made. A path that is no device fails the start.
 */
import { statSync } from "node:fs";
import type { BlkioRate, HostConfig } from "../../core/containers/container-config.js";
import type { OciDeviceRate, OciResources } from "../../core/contracts/runtime.js";
import { majorMinor } from "./devices.js";
import { SpecError } from "./spec.js";

function numbers(path: string): { major: number; minor: number } {
  try {
    const st = statSync(path, { bigint: true });
    if (!st.isBlockDevice() && !st.isCharacterDevice()) throw new SpecError(`${path} is not a device`);
    return majorMinor(st.rdev);
  } catch (e) {
    if (e instanceof SpecError) throw e;
    // Go's os.Stat words, as Docker's daemon passes them on
    throw new SpecError(`stat ${path}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file or directory" : (e as NodeJS.ErrnoException).code === "EACCES" ? "permission denied" : (e as Error).message}`);
  }
}

const rates = (list: readonly BlkioRate[] | null | undefined): OciDeviceRate[] => (list ?? []).map((d) => ({ ...numbers(d.Path), rate: d.Rate }));

/** The spec's blockIO from HostConfig: the weight, then each per-device list that is not empty; undefined when none is set. */
export function resolveBlockIo(hc: HostConfig): OciResources["blockIO"] {
  const io: NonNullable<OciResources["blockIO"]> = {};
  if (hc.BlkioWeight && hc.BlkioWeight > 0) io.weight = hc.BlkioWeight;
  const weights = (hc.BlkioWeightDevice ?? []).map((d) => ({ ...numbers(d.Path), weight: d.Weight }));
  if (weights.length) io.weightDevice = weights;
  const lists = {
    throttleReadBpsDevice: rates(hc.BlkioDeviceReadBps),
    throttleWriteBpsDevice: rates(hc.BlkioDeviceWriteBps),
    throttleReadIOPSDevice: rates(hc.BlkioDeviceReadIOps),
    throttleWriteIOPSDevice: rates(hc.BlkioDeviceWriteIOps),
  };
  for (const [key, list] of Object.entries(lists)) if (list.length) io[key as keyof typeof lists] = list;
  return Object.keys(io).length ? io : undefined;
}
