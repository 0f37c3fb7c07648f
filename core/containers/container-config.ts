/**
 * The body of `POST /containers/create` as the engine reads it (Docker Engine API): the
 * container's `Config` fields at the top level and its `HostConfig`. Types only: the API layer
 * validates the body against them (typia), the runtime reads them to make the OCI spec.
 * Fields the engine does not read yet are left out; an unknown field is kept, not refused.
 */
import type { HealthConfigRequest } from "./healthcheck.js";
import type { EndpointConfigRequest } from "../network/network-request.js";
import type { MountRequest } from "./mount-point.js";

/** One `--ulimit`: `nofile=1024:2048` is `{ Name: "nofile", Soft: 1024, Hard: 2048 }`; -1 is unlimited. */
export interface ContainerUlimit {
  Name: string;
  Soft: number;
  Hard: number;
}

/** `--log-driver` and `--log-opt`. */
export interface LogConfig {
  Type: string;
  Config?: Record<string, string>;
}

/** `--restart`. */
export interface RestartPolicy {
  /** "", "no", "always", "unless-stopped" or "on-failure": checked with Docker's messages (core/containers/restart-policy.ts). */
  Name: string;
  MaximumRetryCount?: number;
}

/**
 * One entry of `HostConfig.DeviceRequests`: devices a driver adds to the container. `docker run
 * --device vendor.com/class=name` sends `{ Driver: "cdi", DeviceIDs: ["vendor.com/class=name"] }`;
 * `--gpus` sends a Count or DeviceIDs with Capabilities (`[["gpu"]]`) and no Driver.
 */
export interface DeviceRequest {
  Driver?: string;
  /** -1 is all. */
  Count?: number;
  DeviceIDs?: string[] | null;
  /** Alternatives (OR) of capability sets (AND). */
  Capabilities?: string[][] | null;
  Options?: Record<string, string> | null;
}

/** A block device (a path under /dev) and its limit. */
export interface BlkioRate {
  Path: string;
  Rate: number;
}

/** One `--device /dev/x[:/dev/y][:rwm]`: a device node, or a folder of them, of the host. */
export interface HostDevice {
  PathOnHost: string;
  /** Empty: the same path as on the host. */
  PathInContainer?: string;
  /** Of `r`, `w`, `m`: what the device cgroup allows (the CLI sends `rwm` by default). */
  CgroupPermissions?: string;
}

export interface HostConfig {
  AutoRemove?: boolean;
  /** `[height, width]` of the terminal at start (with `Tty`). */
  ConsoleSize?: [number, number] | null;
  /** `host-src:container-dest[:options]` or `volume:container-dest[:options]`. */
  Binds?: string[] | null;
  /** `--mount`: binds, volumes and tmpfs mounts, each with its options. */
  Mounts?: MountRequest[] | null;
  /** The driver of the named volumes `Binds` create (`--volume-driver`); default `local`. */
  VolumeDriver?: string;
  LogConfig?: LogConfig;
  RestartPolicy?: RestartPolicy;
  /** A runtime name registered with `--add-runtime` (default `--default-runtime`). */
  Runtime?: string;
  /** Bytes; 0 is unlimited. */
  Memory?: number;
  /** Memory plus swap, bytes; -1 is unlimited swap; 0 leaves it to the kernel (twice Memory with Docker). */
  MemorySwap?: number;
  MemoryReservation?: number;
  /** CPUs in units of 1e-9 (`--cpus 1.5` is 1_500_000_000); not with CpuQuota/CpuPeriod. */
  NanoCpus?: number;
  CpuShares?: number;
  CpuQuota?: number;
  CpuPeriod?: number;
  /** The real-time scheduler's budget (cgroup v1's cpu.rt_runtime_us / cpu.rt_period_us), microseconds. */
  CpuRealtimeRuntime?: number;
  CpuRealtimePeriod?: number;
  /** `0-3`, `0,1`. */
  CpusetCpus?: string;
  CpusetMems?: string;
  /** 0 or -1 is unlimited; null is unset. */
  PidsLimit?: number | null;
  Ulimits?: ContainerUlimit[] | null;
  /** Run an init as pid 1; null follows the daemon's `--init`. */
  Init?: boolean | null;
  Privileged?: boolean;
  ReadonlyRootfs?: boolean;
  /** Capability names with or without `CAP_`, or `ALL`. */
  CapAdd?: string[] | null;
  CapDrop?: string[] | null;
  /** `no-new-privileges[:true|false]`, `seccomp=unconfined|<profile JSON>`, `apparmor=...`, `label=...`, `writable-cgroups=true|false`. */
  SecurityOpt?: string[] | null;
  /** `default` (or empty): the only isolation Linux has; anything else is refused at create. */
  Isolation?: string;
  /** Bytes of /dev/shm; 0 takes the daemon's `--default-shm-size`. */
  ShmSize?: number;
  /** `private`, `shareable`, `host`, `none`, `container:<id>`; empty takes `--default-ipc-mode`. */
  IpcMode?: string;
  /** `private` or `host`; empty takes `--default-cgroupns-mode`. */
  CgroupnsMode?: "" | "private" | "host";
  /** Overrides the daemon's `--cgroup-parent` for this container. */
  CgroupParent?: string;
  /** `none`, `bridge`, `host`, a network name, `container:<id>`. */
  NetworkMode?: string;
  PidMode?: string;
  UTSMode?: string;
  /** `host` opts the container out of the daemon's `--userns-remap` user namespace; anything else keeps it. */
  UsernsMode?: string;
  /** Mount point -> tmpfs options (`size=64m,noexec`). */
  Tmpfs?: Record<string, string> | null;
  /** `sysctl name -> value`. */
  Sysctls?: Record<string, string> | null;
  GroupAdd?: string[] | null;
  ExtraHosts?: string[] | null;
  /** Legacy links, `name:alias` or `name` (core/containers/links.ts); kept as given, inspect shows them resolved. */
  Links?: string[] | null;
  Dns?: string[] | null;
  DnsOptions?: string[] | null;
  DnsSearch?: string[] | null;
  /** `"80/tcp" -> [{ HostIp, HostPort }]`; a HostPort of "" or "0" takes a free port, "8000-8010" the first free one. */
  PortBindings?: Record<string, { HostIp?: string; HostPort?: string }[] | null> | null;
  /** Publishes every exposed port on a free host port. */
  PublishAllPorts?: boolean;
  OomKillDisable?: boolean;
  /** The container's own storage options (`--storage-opt size=10G`), given to the storage driver when its writable layer is made. */
  StorageOpt?: Record<string, string> | null;
  /** Host device nodes given to the container (`--device`); checked at each start. */
  Devices?: HostDevice[] | null;
  /** Device cgroup rules (`--device-cgroup-rule 'c 42:* rmw'`): `a|b|c major|*:minor|* r?w?m?`. */
  DeviceCgroupRules?: string[] | null;
  /** `container[:ro|rw]`: the mounts of those containers, copied at create. */
  VolumesFrom?: string[] | null;
  /** In [-1000, 1000]: the container process's /proc/self/oom_score_adj. */
  OomScoreAdj?: number;
  /** 0 to 100, or -1 (or null) for the kernel's; cgroup v1 only. */
  MemorySwappiness?: number | null;
  /** 10 to 1000, 0 for the kernel's; dropped with a warning where the kernel has no weight file. */
  BlkioWeight?: number;
  /** Per-device weights (`--blkio-weight-device /dev/sda:300`); dropped with a warning where the kernel has none. */
  BlkioWeightDevice?: { Path: string; Weight: number }[] | null;
  /** Per-device limits in bytes or operations per second (`--device-read-bps /dev/sda:1mb`...); each dropped with a warning where the kernel has no such limit. */
  BlkioDeviceReadBps?: BlkioRate[] | null;
  BlkioDeviceWriteBps?: BlkioRate[] | null;
  BlkioDeviceReadIOps?: BlkioRate[] | null;
  BlkioDeviceWriteIOps?: BlkioRate[] | null;
  /** OCI annotations of the container's spec (API 1.43), over those of its labels. */
  Annotations?: Record<string, string> | null;
  /** Devices asked of device drivers (CDI); applied to the OCI spec at each start. */
  DeviceRequests?: DeviceRequest[] | null;
  /** Paths to mask and to make read-only; when given they replace the defaults. */
  MaskedPaths?: string[] | null;
  ReadonlyPaths?: string[] | null;
  [key: string]: unknown;
}

/** The container's own configuration: the request's top-level fields. */
export interface ContainerCreateConfig {
  Hostname?: string;
  Domainname?: string;
  /** `user`, `uid`, `user:group`, `uid:gid`; names are looked up in the image's /etc/passwd and /etc/group. */
  User?: string;
  /** `NAME=value`; a bare `NAME` is kept as given, and unsets NAME for the container's process (Docker's rule). */
  Env?: string[] | null;
  /** Replaces the image's Cmd. */
  Cmd?: string[] | string | null;
  /** Replaces the image's Entrypoint (and then its Cmd too); `[""]` clears it. */
  Entrypoint?: string[] | string | null;
  WorkingDir?: string;
  Labels?: Record<string, string> | null;
  StopSignal?: string;
  StopTimeout?: number | null;
  Tty?: boolean;
  OpenStdin?: boolean;
  StdinOnce?: boolean;
  AttachStdin?: boolean;
  AttachStdout?: boolean;
  AttachStderr?: boolean;
  ExposedPorts?: Record<string, object> | null;
  Volumes?: Record<string, object> | null;
  NetworkDisabled?: boolean;
  /** The health check (core/containers/healthcheck.ts); merged over the image's at create. */
  Healthcheck?: HealthConfigRequest | null;
  /** The MAC of the endpoint on the NetworkMode network (older APIs' place; EndpointsConfig has one per network). */
  MacAddress?: string;
  /** The image reference as the client gave it. */
  Image: string;
  [key: string]: unknown;
}

/** `POST /containers/create` body. */
export interface ContainerCreateRequest extends ContainerCreateConfig {
  HostConfig?: HostConfig;
  NetworkingConfig?: { EndpointsConfig?: Record<string, EndpointConfigRequest | null> | null } | null;
}
