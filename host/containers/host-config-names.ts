/**
 * The names of Docker's HostConfig fields, and the request's keys put under them as Go's JSON
 * decoding does: it matches a key to a field without regard to case when no field has the key
 * exactly, so docker-py's `CPURealtimeRuntime` sets `CpuRealtimeRuntime` (a key that matches no
 * field stays as it is).
 */
/**
 * Docker's HostConfig fields (api/types/container HostConfig with its Resources), in its order,
 * each with the kind of its zero value: s a string, n a number, b false, - null (a list, a map
 * or a pointer).
 */
export const HOST_CONFIG_FIELDS = `Binds:- ContainerIDFile:s LogConfig:log NetworkMode:s PortBindings:- RestartPolicy:restart
  AutoRemove:b VolumeDriver:s VolumesFrom:- ConsoleSize:console CapAdd:- CapDrop:- CgroupnsMode:s
  Dns:- DnsOptions:- DnsSearch:- ExtraHosts:- GroupAdd:- IpcMode:s Cgroup:s Links:- OomScoreAdj:n
  PidMode:s Privileged:b PublishAllPorts:b ReadonlyRootfs:b SecurityOpt:- UTSMode:s UsernsMode:s
  ShmSize:n Isolation:s CpuShares:n Memory:n NanoCpus:n CgroupParent:s BlkioWeight:n
  BlkioWeightDevice:- BlkioDeviceReadBps:- BlkioDeviceWriteBps:- BlkioDeviceReadIOps:-
  BlkioDeviceWriteIOps:- CpuPeriod:n CpuQuota:n CpuRealtimePeriod:n CpuRealtimeRuntime:n
  CpusetCpus:s CpusetMems:s Devices:- DeviceCgroupRules:- DeviceRequests:- MemoryReservation:n
  MemorySwap:n MemorySwappiness:- OomKillDisable:- PidsLimit:- Ulimits:- CpuCount:n CpuPercent:n
  IOMaximumIOps:n IOMaximumBandwidth:n MaskedPaths:- ReadonlyPaths:-`;

/** Docker's `omitempty` HostConfig fields: shown only when not empty (Init: only when not null). */
export const HOST_CONFIG_OMIT_EMPTY = ["Annotations", "StorageOpt", "Tmpfs", "Sysctls", "Runtime", "KernelMemory", "KernelMemoryTCP", "Mounts", "Init"];

const BY_LOWER = new Map([...HOST_CONFIG_FIELDS.split(/\s+/).map((f) => f.split(":")[0]), ...HOST_CONFIG_OMIT_EMPTY].map((name) => [name.toLowerCase(), name]));

/** Renames in place the keys of a create's HostConfig that name a Docker field in another case. */
export function canonicalHostConfigKeys(hc: unknown): void {
  if (hc === null || typeof hc !== "object" || Array.isArray(hc)) return;
  const obj = hc as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    const name = BY_LOWER.get(key.toLowerCase());
    if (!name || name === key) continue;
    if (!(name in obj)) obj[name] = obj[key];
    delete obj[key];
  }
}
