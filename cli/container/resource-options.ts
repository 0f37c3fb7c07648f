/**
 * HostConfig's resource fields from the flags of `run` and `create`, every one as the Docker
 * CLI sends it (unset ones zero, empty lists `[]`, the nullable ones null): memory and swap,
 * CPU shares, quotas, real-time limits and sets, block IO weights and limits, pids, ulimits,
 * the OOM killer, devices, device cgroup rules and device requests (`--gpus`, CDI devices).
 */
import type { Parsed } from "../flags.js";
import { parseDevices, parseThrottleBps, parseThrottleIops, parseWeightDevice } from "./device-options.js";
import { parseBytes, parseMemSwap, parseNanoCpus, parseUint, ulimitList } from "./units.js";

export function resourceFields(input: Parsed): Record<string, unknown> {
  const f = input.flags;
  const list = (name: string) => f[name] as string[];
  const num = (name: string) => Number(f[name]);
  const text = (name: string) => String(f[name]);
  const sized = (name: string, read: (v: string) => number = parseBytes) => (text(name) === "" ? 0 : read(text(name)));
  const { devices, requests } = parseDevices(list("device"), list("gpus"));
  return {
    CgroupParent: text("cgroup-parent"),
    Memory: sized("memory"),
    MemoryReservation: sized("memory-reservation"),
    MemorySwap: sized("memory-swap", parseMemSwap),
    MemorySwappiness: num("memory-swappiness"),
    OomKillDisable: Boolean(f["oom-kill-disable"]),
    NanoCpus: sized("cpus", parseNanoCpus),
    CpuCount: num("cpu-count"),
    CpuPercent: num("cpu-percent"),
    CpuShares: num("cpu-shares"),
    CpuPeriod: num("cpu-period"),
    CpusetCpus: text("cpuset-cpus"),
    CpusetMems: text("cpuset-mems"),
    CpuQuota: num("cpu-quota"),
    CpuRealtimePeriod: num("cpu-rt-period"),
    CpuRealtimeRuntime: num("cpu-rt-runtime"),
    PidsLimit: num("pids-limit"),
    BlkioWeight: sized("blkio-weight", (v) => parseUint(v, 16)),
    BlkioWeightDevice: list("blkio-weight-device").map(parseWeightDevice),
    BlkioDeviceReadBps: list("device-read-bps").map(parseThrottleBps),
    BlkioDeviceWriteBps: list("device-write-bps").map(parseThrottleBps),
    BlkioDeviceReadIOps: list("device-read-iops").map(parseThrottleIops),
    BlkioDeviceWriteIOps: list("device-write-iops").map(parseThrottleIops),
    IOMaximumIOps: sized("io-maxiops", (v) => parseUint(v, 64)),
    IOMaximumBandwidth: sized("io-maxbandwidth"),
    Ulimits: ulimitList(list("ulimit")),
    DeviceCgroupRules: list("device-cgroup-rule").length ? list("device-cgroup-rule") : null,
    Devices: devices,
    DeviceRequests: requests,
  };
}
