/**
 * A CreateContainer request checked field by field (InvalidArgument naming the field, before
 * anything is made) and turned into what the runtime plugin's base spec is made from: the
 * Docker-shaped container configuration and HostConfig (plugins/runtime-ocirun/spec.ts), so a
 * CRI container gets the same defaults as a Docker one: capabilities, masked paths, seccomp,
 * rlimits, device rules, cgroup path. The pod's namespaces and files are added afterwards
 * (container-spec.ts).
 *
 * CRI to Docker: command -> Entrypoint, args -> Cmd (the image's fill in what is not given,
 * the same rule); envs -> Env; run_as_user/run_as_group or run_as_username -> User;
 * supplemental_groups -> GroupAdd; seccomp unset or Unconfined -> `seccomp=unconfined` (the
 * kubelet's meaning of no profile), RuntimeDefault -> the daemon's default profile, Localhost
 * -> the profile file; no_new_privs -> `no-new-privileges`; resources -> the cgroup limits.
 */
import { existsSync, readFileSync } from "node:fs";
import { isAbsolute, normalize } from "node:path";
import type { ContainerCreateConfig, HostConfig } from "../../../core/containers/container-config.js";
import { errors } from "../../../core/errors.js";
import type { NamespaceMode } from "../sandbox/sandbox-config.js";
import { checkStopSignal } from "./stop-signal.js";

export interface KeyValueMsg {
  key: string;
  value: string;
}

export interface MountMsg {
  containerPath: string;
  hostPath: string;
  readonly: boolean;
  propagation: "PROPAGATION_PRIVATE" | "PROPAGATION_HOST_TO_CONTAINER" | "PROPAGATION_BIDIRECTIONAL";
  recursiveReadOnly?: boolean;
  image?: { image: string } | null;
}

export interface ProfileMsg {
  profileType: "RuntimeDefault" | "Unconfined" | "Localhost";
  localhostRef: string;
}

export interface ContainerConfigMsg {
  metadata: { name: string; attempt: number } | null;
  image: { image: string } | null;
  command: string[];
  args: string[];
  workingDir: string;
  envs: KeyValueMsg[];
  mounts: MountMsg[];
  devices: { containerPath: string; hostPath: string; permissions: string }[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  logPath: string;
  stdin: boolean;
  stdinOnce: boolean;
  tty: boolean;
  /** A name of the CRI's Signal enum; RUNTIME_DEFAULT (or absent, in records older than the field) for the image's. */
  stopSignal?: string;
  linux: {
    resources: {
      cpuPeriod: string;
      cpuQuota: string;
      cpuShares: string;
      memoryLimitInBytes: string;
      memorySwapLimitInBytes?: string;
      oomScoreAdj: string;
      cpusetCpus: string;
      cpusetMems: string;
    } | null;
    securityContext: {
      capabilities: { addCapabilities: string[]; dropCapabilities: string[] } | null;
      privileged: boolean;
      namespaceOptions: { network: NamespaceMode; pid: NamespaceMode; ipc: NamespaceMode; targetId: string } | null;
      runAsUser: { value: string } | null;
      runAsGroup: { value: string } | null;
      runAsUsername: string;
      readonlyRootfs: boolean;
      supplementalGroups: string[];
      noNewPrivs: boolean;
      maskedPaths: string[];
      readonlyPaths: string[];
      seccomp: ProfileMsg | null;
      seccompProfilePath: string;
      /** Merge (the proto's default) or Strict; absent in records older than the field: Merge. */
      supplementalGroupsPolicy?: "Merge" | "Strict";
      /** Absent in records older than the field: the default. */
      cgroupMountMode?: "CGROUP_MOUNT_MODE_UNSPECIFIED" | "CGROUP_MOUNT_MODE_READ_ONLY" | "CGROUP_MOUNT_MODE_WRITABLE";
    } | null;
  } | null;
}

const bad = (field: string, why: string) => errors.criInvalidArgument(field, why);

/** The checks that need no image and no sandbox. */
export function checkContainerConfig(config: ContainerConfigMsg | null): ContainerConfigMsg {
  if (!config) throw bad("config", "the container configuration is required");
  if (!config.metadata?.name) throw bad("config.metadata.name", "must not be empty");
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(config.metadata.name)) throw bad("config.metadata.name", `${JSON.stringify(config.metadata.name)} may hold only letters, digits, '_', '.' and '-'`);
  if (!config.image?.image?.trim()) throw bad("config.image.image", "an image reference or ID is required");
  if (config.logPath && (isAbsolute(config.logPath) || normalize(config.logPath).startsWith(".."))) throw bad("config.log_path", "must be a path inside the pod's log directory");
  if (config.workingDir && !isAbsolute(config.workingDir)) throw bad("config.working_dir", "must be an absolute path");
  config.envs.forEach((e, i) => {
    if (!e.key || e.key.includes("=")) throw bad(`config.envs[${i}].key`, `${JSON.stringify(e.key)} is not a variable name`);
  });
  config.mounts.forEach((m, i) => {
    // an image volume (KEP-4639): not served yet. UNIMPLEMENTED is how a runtime says so: critest
    // skips its image volume specs on it, where INVALID_ARGUMENT failed them
    if (m.image?.image) throw errors.criUnimplemented(`config.mounts[${i}].image`, "image volumes are");
    if (!isAbsolute(m.containerPath)) throw bad(`config.mounts[${i}].container_path`, "must be an absolute path");
    if (!isAbsolute(m.hostPath)) throw bad(`config.mounts[${i}].host_path`, "must be an absolute path");
    if (!existsSync(m.hostPath)) throw bad(`config.mounts[${i}].host_path`, `${m.hostPath} does not exist`);
    // the CRI's rules for a recursive read-only mount (recursive-read-only.ts), as containerd checks them
    if (m.recursiveReadOnly && !m.readonly) throw bad(`config.mounts[${i}].recursive_read_only`, "needs readonly");
    if (m.recursiveReadOnly && m.propagation !== "PROPAGATION_PRIVATE") throw bad(`config.mounts[${i}].recursive_read_only`, `cannot be with ${m.propagation}, only PROPAGATION_PRIVATE`);
  });
  config.devices.forEach((d, i) => {
    if (!isAbsolute(d.hostPath) || !existsSync(d.hostPath)) throw bad(`config.devices[${i}].host_path`, `${d.hostPath} is not a device on this node`);
  });
  checkStopSignal(config.stopSignal);
  const res = config.linux?.resources;
  if (Number(res?.memorySwapLimitInBytes) > 0 && Number(res?.memorySwapLimitInBytes) < Number(res?.memoryLimitInBytes)) {
    throw bad("config.linux.resources.memory_swap_limit_in_bytes", "is memory plus swap: it must not be below memory_limit_in_bytes");
  }
  const sc = config.linux?.securityContext;
  if (sc?.runAsGroup && !sc.runAsUser && !sc.runAsUsername) throw bad("config.linux.security_context.run_as_group", "needs run_as_user or run_as_username");
  if (sc?.runAsUser && sc.runAsUsername) throw bad("config.linux.security_context.run_as_username", "only one of run_as_user and run_as_username may be given");
  const ns = sc?.namespaceOptions;
  if (ns && ns.network !== "POD" && ns.network !== "NODE") throw bad("config.linux.security_context.namespace_options.network", `${ns.network} is not POD or NODE`);
  // a container's own cgroup tree needs cgroup v2 with nsdelegate and runtime support this
  // runtime does not claim (RuntimeFeatures.cgroup_mount_mode is false): refused, as the CRI
  // asks of a runtime that cannot honour it, rather than run with a read-only one
  if (sc?.cgroupMountMode === "CGROUP_MOUNT_MODE_WRITABLE") throw bad("config.linux.security_context.cgroup_mount_mode", "CGROUP_MOUNT_MODE_WRITABLE is not supported by this runtime");
  if (sc?.seccomp?.profileType === "Localhost" && !existsSync(sc.seccomp.localhostRef)) {
    throw bad("config.linux.security_context.seccomp.localhost_ref", `${sc.seccomp.localhostRef} does not exist`);
  }
  return config;
}

function userOf(sc: NonNullable<NonNullable<ContainerConfigMsg["linux"]>["securityContext"]> | null | undefined): string | undefined {
  if (!sc) return undefined;
  const user = sc.runAsUser ? sc.runAsUser.value : sc.runAsUsername;
  if (!user) return undefined;
  return sc.runAsGroup ? `${user}:${sc.runAsGroup.value}` : user;
}

function seccompOpt(sc: NonNullable<NonNullable<ContainerConfigMsg["linux"]>["securityContext"]> | null | undefined): string | undefined {
  const profile = sc?.seccomp;
  if (!profile) {
    // the deprecated string form: "runtime/default", "localhost/<path>", or "" (unconfined)
    const path = sc?.seccompProfilePath ?? "";
    if (path === "runtime/default" || path === "docker/default") return undefined;
    if (path.startsWith("localhost/")) return `seccomp=${readFileSync(path.slice("localhost/".length), "utf8")}`;
    return "seccomp=unconfined";
  }
  if (profile.profileType === "RuntimeDefault") return undefined;
  if (profile.profileType === "Localhost") return `seccomp=${readFileSync(profile.localhostRef, "utf8")}`;
  return "seccomp=unconfined";
}

const positive = (v: string | undefined) => (v && Number(v) > 0 ? Number(v) : undefined);

/** The Docker-shaped configuration the base spec is made from. */
export function dockerShape(config: ContainerConfigMsg, pod: { hostname: string; cgroupParent: string; hostNetwork: boolean; hostIpc: boolean; hostPid: boolean }) {
  const sc = config.linux?.securityContext;
  const r = config.linux?.resources;
  // a privileged CRI container has no seccomp profile at all, its own neither (containerd's rule;
  // Docker's daemon applies a privileged container's own)
  const seccomp = sc?.privileged ? undefined : seccompOpt(sc);
  const securityOpt = [seccomp, sc?.noNewPrivs ? "no-new-privileges" : undefined].filter((o): o is string => o !== undefined);
  const create: ContainerCreateConfig = {
    Image: config.image!.image,
    Hostname: pod.hostname,
    Env: config.envs.map((e) => `${e.key}=${e.value}`),
    ...(config.command.length ? { Entrypoint: config.command } : {}),
    ...(config.args.length ? { Cmd: config.args } : {}),
    ...(config.workingDir ? { WorkingDir: config.workingDir } : {}),
    ...(userOf(sc) ? { User: userOf(sc) } : {}),
    Tty: config.tty,
    OpenStdin: config.stdin,
    StdinOnce: config.stdinOnce,
    Labels: {},
  };
  const host: HostConfig = {
    Privileged: sc?.privileged === true,
    CapAdd: sc?.capabilities?.addCapabilities ?? [],
    CapDrop: sc?.capabilities?.dropCapabilities ?? [],
    ReadonlyRootfs: sc?.readonlyRootfs === true,
    SecurityOpt: securityOpt,
    GroupAdd: sc?.supplementalGroups ?? [],
    ...(sc?.maskedPaths?.length ? { MaskedPaths: sc.maskedPaths } : {}),
    ...(sc?.readonlyPaths?.length ? { ReadonlyPaths: sc.readonlyPaths } : {}),
    Devices: config.devices.map((d) => ({ PathOnHost: d.hostPath, PathInContainer: d.containerPath, CgroupPermissions: d.permissions || "rwm" })),
    CgroupParent: pod.cgroupParent,
    IpcMode: pod.hostIpc ? "host" : "private",
    ...(pod.hostPid ? { PidMode: "host" } : {}),
    ...(pod.hostNetwork ? { UTSMode: "host" } : {}),
    CpuPeriod: positive(r?.cpuPeriod),
    CpuQuota: positive(r?.cpuQuota),
    CpuShares: positive(r?.cpuShares),
    Memory: positive(r?.memoryLimitInBytes),
    // memory plus swap, as the kubelet gives it (equal to the memory limit: no swap); without it
    // the runtime left swap unlimited
    ...(positive(r?.memoryLimitInBytes) && positive(r?.memorySwapLimitInBytes) ? { MemorySwap: Number(r!.memorySwapLimitInBytes) } : {}),
    OomScoreAdj: r?.oomScoreAdj ? Number(r.oomScoreAdj) : 0,
    ...(r?.cpusetCpus ? { CpusetCpus: r.cpusetCpus } : {}),
    ...(r?.cpusetMems ? { CpusetMems: r.cpusetMems } : {}),
  } as HostConfig;
  return { create, host };
}
