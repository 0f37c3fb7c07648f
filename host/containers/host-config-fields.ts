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
