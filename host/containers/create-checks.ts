/**
 * What a container create checks and records of the options Docker checks at create (the
 * `checkContainerCreate` tap): the memory settings (memory-checks.ts: minimums, pairs,
 * swappiness, and the swap limit recorded as twice the memory when none is given),
 * OomScoreAdj and BlkioWeight ranges with Docker's messages; a weight the kernel cannot
 * apply dropped with Docker's warning; the containers VolumesFrom, PidMode and IpcMode
 * `container:` name (400 when there is none; the modes are recorded with the full id);
 * annotation keys; a MacAddress with a
 * network mode that has no endpoint of its own; the security options' keys and the isolation
 * (Linux has only `default`); CpusetCpus and CpusetMems within the host's; and the runtime in effect, as inspect shows it.
 */
import type { HostConfig } from "../../core/containers/container-config.js";
import type { ContainerStore } from "../../core/containers/container-store.js";
import { availableParallelism } from "node:os";
import { posix } from "node:path";
import { EngineError, errors } from "../../core/errors.js";
import type { ContainerCreateCheck, EngineHooks } from "../../core/hooks.js";
import type { DaemonConfig } from "../../core/options/table.js";
import type { CgroupLimits, HostReport } from "../host-facts.js";
import { cpusetRefusal } from "../../core/containers/cpuset.js";
import { parseSignal, signalNumberOf } from "../../core/containers/signals.js";
import { validVolumesFromMode } from "../volumes/mount-plan.js";
import { checkMemory, defaultSwap } from "./memory-checks.js";
import { checkPortBindings } from "./port-binding-checks.js";

export interface CreateChecksDeps {
  hooks: EngineHooks;
  containers: ContainerStore;
  limits: Pick<CgroupLimits, "memory" | "swap" | "cpuRealtime" | "swappiness" | "blkioWeight" | "blkioWeightDevice" | "blkioReadBps" | "blkioWriteBps" | "blkioReadIOps" | "blkioWriteIOps">;
  /** The host's cpus and memory nodes, which CpusetCpus and CpusetMems must be within. */
  cpuset: HostReport["cpuset"];
  config: () => DaemonConfig;
}

/** Docker's warning for a weight the kernel cannot apply (an update gives it too: resource-update.ts). */
export const BLKIO_WEIGHT_DISCARDED = "Your kernel does not support Block I/O weight or the cgroup is not mounted. Weight discarded.";

/** Per-device block IO settings, the kernel facility each needs, and Docker's warning when it is missing. */
const BLKIO_DEVICE_FIELDS = [
  ["BlkioWeightDevice", "blkioWeightDevice", "Your kernel does not support Block I/O weight_device or the cgroup is not mounted. Weight-device discarded."],
  ["BlkioDeviceReadBps", "blkioReadBps", "Your kernel does not support BPS Block I/O read limit or the cgroup is not mounted. Block I/O BPS read limit discarded."],
  ["BlkioDeviceWriteBps", "blkioWriteBps", "Your kernel does not support BPS Block I/O write limit or the cgroup is not mounted. Block I/O BPS write limit discarded."],
  ["BlkioDeviceReadIOps", "blkioReadIOps", "Your kernel does not support IOPS Block read limit or the cgroup is not mounted. Block I/O IOPS read limit discarded."],
  ["BlkioDeviceWriteIOps", "blkioWriteIOps", "Your kernel does not support IOPS Block write limit or the cgroup is not mounted. Block I/O IOPS write limit discarded."],
] as const;

/**
 * Docker's range of NanoCpus (`--cpus`), at create and update: up to the cpus the daemon may run
 * on (Go's NumCPU, the affinity mask's count, as availableParallelism counts them); in Docker
 * 28's words (20.10's began with a capital).
 */
export function nanoCpusRefusal(nanoCpus: number | undefined): string | undefined {
  const cpus = availableParallelism();
  if (nanoCpus !== undefined && (nanoCpus < 0 || nanoCpus > cpus * 1e9)) return `range of CPUs is from 0.01 to ${cpus}.00, as there are only ${cpus} CPUs available`;
  return undefined;
}

/** Docker's order: what the kernel cannot apply is dropped (a warning) before its range is checked. */
function checkResources(hc: HostConfig, limits: CreateChecksDeps["limits"], cpuset: CreateChecksDeps["cpuset"]): string[] {
  const warnings = checkMemory(hc, limits, false);
  const cpusWrong = nanoCpusRefusal(hc.NanoCpus);
  if (cpusWrong) throw errors.containerInvalidResource(cpusWrong);
  if ((hc.CpuShares ?? 0) < 0) throw errors.containerInvalidResource(`invalid CPU shares (${hc.CpuShares}): value must be a positive integer`);
  // the period and quota's ranges, as an update checks them (resource-update.ts)
  const period = hc.CpuPeriod ?? 0;
  if (period !== 0 && (period < 1000 || period > 1_000_000)) throw errors.containerInvalidResource("CPU cfs period can not be less than 1ms (i.e. 1000) or larger than 1s (i.e. 1000000)");
  if ((hc.CpuQuota ?? 0) > 0 && hc.CpuQuota! < 1000) throw errors.containerInvalidResource("CPU cfs quota can not be less than 1ms (i.e. 1000)");
  const cpusetWrong = cpusetRefusal("cpus", hc.CpusetCpus ?? "", cpuset.cpus) ?? cpusetRefusal("mems", hc.CpusetMems ?? "", cpuset.mems);
  if (cpusetWrong) throw errors.containerInvalidResource(cpusetWrong);
  const adj = hc.OomScoreAdj ?? 0;
  if (adj < -1000 || adj > 1000) throw errors.containerInvalidResource(`Invalid value ${adj}, range for oom score adj is [-1000, 1000]`);
  // refused, not dropped, as Docker 28's daemon refuses them
  const rtPeriod = hc.CpuRealtimePeriod ?? 0;
  const rtRuntime = hc.CpuRealtimeRuntime ?? 0;
  if ((rtPeriod !== 0 || rtRuntime !== 0) && !limits.cpuRealtime) throw errors.containerInvalidResource("kernel does not support CPU real-time scheduler");
  if (rtPeriod !== 0 && rtRuntime !== 0 && rtRuntime > rtPeriod) throw errors.containerInvalidResource("cpu real-time runtime cannot be higher than cpu real-time period");
  if (hc.BlkioWeight && hc.BlkioWeight > 0 && !limits.blkioWeight) {
    warnings.push(BLKIO_WEIGHT_DISCARDED);
    hc.BlkioWeight = 0;
  }
  if (hc.BlkioWeight && (hc.BlkioWeight < 10 || hc.BlkioWeight > 1000)) throw errors.containerInvalidResource("Range of blkio weight is from 10 to 1000");
  for (const [field, facility, discarded] of BLKIO_DEVICE_FIELDS) {
    if ((hc[field]?.length ?? 0) > 0 && !limits[facility]) {
      warnings.push(discarded);
      hc[field] = [];
    }
  }
  return warnings;
}

/** The namespace modes Docker's daemon takes (its IpcMode, PidMode and UTSMode `Valid`), and no negative /dev/shm size, in its order and words. */
function checkNamespaceModes(hc: HostConfig): void {
  const ipc = hc.IpcMode ?? "";
  if (!["", "none", "private", "host", "shareable"].includes(ipc) && !ipc.startsWith("container:")) throw errors.containerInvalidResource(`invalid IPC mode: ${ipc}`);
  const pid = hc.PidMode ?? "";
  if (pid !== "" && pid !== "host" && !(pid.startsWith("container:") && pid.length > "container:".length)) throw errors.containerInvalidResource(`invalid PID mode: ${pid}`);
  if ((hc.ShmSize ?? 0) < 0) throw errors.containerInvalidResource("SHM size can not be less than 0");
  const uts = hc.UTSMode ?? "";
  if (uts !== "" && uts !== "host") throw errors.containerInvalidResource(`invalid UTS mode: ${uts}`);
}

/** Docker's daemon's check of SecurityOpt: `key=value` (or the older `key:value`) of the keys it knows. */
export function checkSecurityOpts(securityOpt: readonly string[]): void {
  for (const opt of securityOpt) {
    if (opt === "no-new-privileges" || opt === "disable") continue;
    const sep = opt.includes("=") ? opt.indexOf("=") : opt.indexOf(":");
    if (sep < 0) throw errors.containerInvalidResource(`invalid --security-opt 1: ${JSON.stringify(opt)}`);
    const [key, value] = [opt.slice(0, sep), opt.slice(sep + 1)];
    const boolean = /^(1|t|T|TRUE|true|True|0|f|F|FALSE|false|False)$/.test(value);
    if (["label", "apparmor", "seccomp"].includes(key) || (["no-new-privileges", "writable-cgroups"].includes(key) && boolean)) continue;
    throw errors.containerInvalidResource(`invalid --security-opt 2: ${JSON.stringify(opt)}`);
  }
}

/** The full id of the container `ref` names; a 400 (as Docker answers a create) when there is none. */
function referenced(containers: ContainerStore, ref: string): string {
  try {
    return containers.get(ref).Id;
  } catch (err) {
    if (err instanceof EngineError && err.statusCode === 404) throw errors.containerReferenceNotFound(ref);
    throw err;
  }
}

/** `container:<ref>` modes recorded with the full id; VolumesFrom entries checked (kept as given). */
function resolveReferences(hc: HostConfig, containers: ContainerStore): void {
  for (const key of ["PidMode", "IpcMode"] as const) {
    const mode = hc[key];
    if (typeof mode === "string" && mode.startsWith("container:")) hc[key] = `container:${referenced(containers, mode.slice("container:".length))}`;
  }
  for (const entry of hc.VolumesFrom ?? []) {
    const [ref, mode = "", ...rest] = entry.split(":");
    if (rest.length > 0 || !validVolumesFromMode(mode)) throw errors.containerInvalidResource(`invalid mode: ${rest.length > 0 ? entry.slice(ref.length + 1) : mode}`);
    referenced(containers, ref);
  }
}

/**
 * What a container that joins another's network namespace (`container:<ref>`) or the host's
 * cannot also ask for, refused at create in Docker's words (its validateNetContainerMode and
 * validateNetMode, in their order): the other container has the name, the name servers, the
 * hosts file, the MAC address and the ports.
 */
function checkNetworkMode(request: ContainerCreateCheck["request"]): void {
  const hc = request.HostConfig;
  const mode = hc.NetworkMode ?? "";
  // "container" alone is taken for a container mode without its container, as Docker 28 takes it
  // (a network named "container" cannot be asked for by NetworkMode)
  const joined = mode === "container" || mode.startsWith("container:");
  const conflict = (what: string) => errors.containerInvalidResource(`conflicting options: ${what}`);
  if (joined && mode.slice("container:".length) === "") throw errors.containerInvalidResource("Invalid network mode: invalid container format container:<name|id>");
  if (joined && request.Hostname) throw conflict("hostname and the network mode");
  if (joined && (hc.Links ?? []).length > 0) throw conflict("container type network can't be used with links. This would result in undefined behavior");
  if (joined && (hc.Dns ?? []).length > 0) throw conflict("dns and the network mode");
  if (joined && (hc.ExtraHosts ?? []).length > 0) throw conflict("custom host-to-IP mapping and the network mode");
  if ((joined || mode === "host") && request.MacAddress) throw conflict("mac-address and the network mode");
  if (joined && (Object.keys(hc.PortBindings ?? {}).length > 0 || hc.PublishAllPorts)) throw conflict("port publishing and the container type network mode");
  if (joined && Object.keys(request.ExposedPorts ?? {}).length > 0) throw conflict("port exposing and the container type network mode");
  if (mode === "host" && (hc.Links ?? []).length > 0) throw conflict("host type networking can't be used with links. This would result in undefined behavior");
}

/** The checks of one create; changes the request's HostConfig as it is to be recorded. */
function checkCreate(check: ContainerCreateCheck, deps: Omit<CreateChecksDeps, "hooks">): ContainerCreateCheck {
  const { request } = check;
  const hc = request.HostConfig;
  // (Docker's validateHostConfig, before the platform's checks of the resources)
  checkPortBindings(hc.PortBindings);
  const warnings = checkResources(hc, deps.limits, deps.cpuset);
  checkNamespaceModes(hc);
  // 0 and any negative value are "unlimited": no limit recorded (Docker's create route; the
  // Docker CLI always sends the flag's value, 0 when not given)
  if (hc.PidsLimit !== undefined && hc.PidsLimit !== null && hc.PidsLimit <= 0) hc.PidsLimit = null;
  defaultSwap(hc);
  resolveReferences(hc, deps.containers);
  checkSecurityOpts(hc.SecurityOpt ?? []);
  for (const dest of Object.keys(hc.Tmpfs ?? {})) {
    if (posix.normalize(dest.replaceAll("\\", "/")).replace(/(.)\/+$/, "$1") === "/") throw errors.containerInvalidResource("invalid specification: destination can't be '/'");
    if (!dest.startsWith("/")) throw errors.containerInvalidResource(`invalid mount path: '${dest}' mount path must be absolute`);
  }
  // Docker's daemon reads the stop signal at create as a kill reads its signal
  const stopSignal = request.StopSignal;
  if (stopSignal && !parseSignal(stopSignal) && signalNumberOf(stopSignal) === undefined) throw errors.containerInvalidSignal(stopSignal);
  const isolation = hc.Isolation ?? "";
  if (isolation !== "" && isolation.toLowerCase() !== "default") {
    throw errors.containerInvalidResource(`Invalid isolation: ${JSON.stringify(isolation)} - linux only supports 'default'`);
  }
  if (Object.keys(hc.Annotations ?? {}).includes("")) {
    throw errors.containerInvalidResource("invalid Annotations: the empty string is not permitted as an annotation key");
  }
  checkNetworkMode(request);
  if (hc.UTSMode === "host" && request.Hostname) throw errors.containerInvalidResource("conflicting options: hostname and the UTS mode");
  if ((hc.NetworkMode ?? "") === "host" && Object.keys(hc.PortBindings ?? {}).length > 0) {
    warnings.push("Published ports are discarded when using host network mode");
  }
  // Docker records the runtime in effect at create, and the daemon's defaults of /dev/shm's size,
  // the IPC and the cgroup namespace modes (its adaptContainerSettings): inspect shows them, and
  // a later change of the daemon's defaults does not change the container
  const daemon = deps.config();
  if (!hc.Runtime) hc.Runtime = daemon["default-runtime"];
  if (!hc.ShmSize) hc.ShmSize = daemon["default-shm-size"];
  if (!hc.IpcMode) hc.IpcMode = daemon["default-ipc-mode"];
  if (!hc.CgroupnsMode) hc.CgroupnsMode = daemon["default-cgroupns-mode"];
  return { ...check, warnings: [...check.warnings, ...warnings] };
}

export function tapCreateChecks(deps: CreateChecksDeps): void {
  deps.hooks.checkContainerCreate.tapPromise("container options", async (check) => checkCreate(check, deps));
}
