/**
 * The shapes of `GET /info` and `GET /version`, as the Docker Engine API defines them. The
 * daemon fills the fields it owns; each subsystem adds its own through `hooks.processInfo`.
 */

export interface RuntimeInfo {
  path?: string;
  runtimeArgs?: string[];
  runtimeType?: string;
  options?: Record<string, unknown>;
}

export interface RegistryConfigInfo {
  InsecureRegistryCIDRs: string[];
  IndexConfigs: Record<string, { Name: string; Mirrors: string[]; Secure: boolean; Official: boolean }>;
  Mirrors: string[];
}

/** A device a device driver offers (`DiscoveredDevices`): `{ Source: "cdi", ID: "vendor.com/class=name" }`. */
export interface DeviceInfo {
  Source: string;
  ID: string;
}

/** A resource this node advertises to a cluster (`--node-generic-resource`). */
export type GenericResource =
  | { DiscreteResourceSpec: { Kind: string; Value: number } }
  | { NamedResourceSpec: { Kind: string; Value: string } };

export interface SystemInfo {
  ID: string;
  Containers: number;
  ContainersRunning: number;
  ContainersPaused: number;
  ContainersStopped: number;
  Images: number;
  Driver: string;
  DriverStatus: [string, string][] | null;
  Plugins: { Volume: string[]; Network: string[]; Authorization: string[] | null; Log: string[] };
  MemoryLimit: boolean;
  SwapLimit: boolean;
  CpuCfsPeriod: boolean;
  CpuCfsQuota: boolean;
  CPUShares: boolean;
  CPUSet: boolean;
  PidsLimit: boolean;
  IPv4Forwarding: boolean;
  Debug: boolean;
  NFd: number;
  OomKillDisable: boolean;
  NGoroutines: number;
  SystemTime: string;
  LoggingDriver: string;
  CgroupDriver: string;
  CgroupVersion: string;
  NEventsListener: number;
  KernelVersion: string;
  OperatingSystem: string;
  OSVersion: string;
  OSType: string;
  Architecture: string;
  IndexServerAddress: string;
  RegistryConfig: RegistryConfigInfo;
  NCPU: number;
  MemTotal: number;
  DockerRootDir: string;
  HttpProxy: string;
  HttpsProxy: string;
  NoProxy: string;
  Name: string;
  Labels: string[];
  ExperimentalBuild: boolean;
  ServerVersion: string;
  Runtimes: Record<string, RuntimeInfo>;
  DefaultRuntime: string;
  LiveRestoreEnabled: boolean;
  Isolation: string;
  InitBinary: string;
  /**
   * The commits Docker lists of containerd, runc and docker-init: here the supervisor's (the
   * engine's own), the default runtime's and the init's (host/init-component.ts). Before API
   * 1.49 each also carries `Expected`, equal to `ID` (host/api/routes/info-versions.ts).
   */
  ContainerdCommit: { ID: string };
  RuncCommit: { ID: string };
  InitCommit: { ID: string };
  SecurityOptions: string[];
  /** Not in Docker's API: the reloadable options' current values by file key. */
  EngineOptions: Record<string, unknown>;
  /** Cluster mode's state on this node; "inactive" until the node joins a cluster. */
  Swarm: { NodeID: string; NodeAddr: string; LocalNodeState: string; ControlAvailable: boolean; Error: string; RemoteManagers: null };
  /** What this node advertises to a cluster (`--node-generic-resource`); null when none, as Docker has it. */
  GenericResources?: GenericResource[] | null;
  /** The firewall the networks' rules are written with (API 1.49): iptables here, as Docker's daemon without nftables or firewalld. */
  FirewallBackend?: { Driver: string };
  /** Devices the device drivers discovered; left out when none. */
  DiscoveredDevices?: DeviceInfo[];
  /** Where CDI spec files are read from; empty when CDI is off. */
  CDISpecDirs?: string[];
  Warnings: string[];
}

export interface VersionComponent {
  Name: string;
  Version: string;
  Details?: Record<string, string>;
}

export interface VersionInfo {
  Platform: { Name: string };
  Components: VersionComponent[];
  Version: string;
  ApiVersion: string;
  MinAPIVersion: string;
  GitCommit: string;
  GoVersion: string;
  Os: string;
  Arch: string;
  KernelVersion: string;
  Experimental: boolean;
  BuildTime: string;
}
