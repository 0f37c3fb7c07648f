/**
 * Builds the answers of `GET /info` and `GET /version` from the configuration, the host's
 * facts and the loaded plugins; each subsystem then adds its own fields through the
 * `processInfo` and `processVersion` hooks.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EngineHooks } from "../core/hooks.js";
import { kernelRandomUuid } from "../core/random-bytes.js";
import type { DaemonConfig } from "../core/options/table.js";
import type { SystemInfo, VersionComponent, VersionInfo } from "../core/system-info.js";
import { API_VERSION, BUILD_TIME, ENGINE_VERSION, GIT_COMMIT, MIN_API_VERSION } from "../core/version.js";
import { cgroupDriver, registryConfig, reloadableOptions, runtimesInfo, securityOptions } from "./config-report.js";
import { ruleHost, type HostReport } from "./host-facts.js";
import { selectRuntime } from "./containers/runtime-select.js";
import { runtimeComponent } from "./runtime-component.js";
import { initReport } from "./init-component.js";
import { maskCredentials } from "../core/options/mask-credentials.js";

export interface InfoSources {
  config: () => DaemonConfig;
  host: HostReport;
  hooks: EngineHooks;
  dataRoot: string;
  daemonId: string;
  /** Ids of the authorization plugins in force, in order. */
  authorization: () => string[];
  /** The names of the log and network drivers the daemon has (built in, and installed ones made since). */
  driverNames: (kind: "log" | "network") => string[];
  /** Warnings the daemon found at start (an unprotected TCP listener, ...). */
  warnings: () => string[];
  /** How many clients follow `GET /events` now. */
  eventListeners: () => number;
}

/** The daemon's ID: made once, kept in the data root, the same after every restart. */
export function loadDaemonId(dataRoot: string): string {
  const path = join(dataRoot, "engine-id");
  try {
    const id = readFileSync(path, "utf8").trim();
    if (id) return id;
  } catch {
    // first start
  }
  const id = kernelRandomUuid();
  writeFileSync(path, `${id}\n`, { mode: 0o600 });
  return id;
}

export async function buildSystemInfo(src: InfoSources): Promise<SystemInfo> {
  const config = src.config();
  const { host } = src;
  const rules = ruleHost(host);
  const authz = src.authorization();
  const init = await initReport(config["init-path"]);
  const base: SystemInfo = {
    ID: src.daemonId,
    Containers: 0,
    ContainersRunning: 0,
    ContainersPaused: 0,
    ContainersStopped: 0,
    Images: 0,
    Driver: config["storage-driver"],
    DriverStatus: [],
    // as dockerd lists them: `none` is no log driver to it, and the host and none networks' drivers are `host` and `null`
    Plugins: {
      Volume: [],
      Network: [...new Set([...src.driverNames("network"), "host", "null"])].sort(),
      Authorization: authz.length ? authz : null,
      Log: src.driverNames("log").filter((n) => n !== "none"),
    },
    MemoryLimit: host.limits.memory,
    SwapLimit: host.limits.swap,
    CpuCfsPeriod: host.limits.cpuCfs,
    CpuCfsQuota: host.limits.cpuCfs,
    CPUShares: host.limits.cpuShares,
    CPUSet: host.limits.cpuset,
    PidsLimit: host.limits.pids,
    IPv4Forwarding: readIpForward(),
    Debug: config.debug,
    // collected whatever the debug mode, as Docker's daemon does (its CLI shows them in debug mode)
    NFd: openFds(),
    OomKillDisable: host.limits.oomKillDisable,
    NGoroutines: activeTasks(),
    SystemTime: new Date().toISOString(),
    LoggingDriver: config["log-driver"],
    CgroupDriver: cgroupDriver(config, rules),
    CgroupVersion: String(host.cgroupVersion),
    NEventsListener: src.eventListeners(),
    KernelVersion: host.kernel,
    OperatingSystem: host.operatingSystem,
    OSVersion: host.osVersion,
    OSType: "linux",
    Architecture: host.architecture,
    // Docker Hub's index, as Docker's daemon names it: the Docker CLI keys Hub credentials by it (its ElectAuthServer)
    IndexServerAddress: "https://index.docker.io/v1/",
    RegistryConfig: registryConfig(config),
    NCPU: host.ncpu,
    MemTotal: host.memTotal,
    DockerRootDir: src.dataRoot,
    HttpProxy: maskCredentials(config["http-proxy"]),
    HttpsProxy: maskCredentials(config["https-proxy"]),
    NoProxy: config["no-proxy"],
    Name: host.hostname,
    // the same label given twice is shown once (Docker's GetConflictFreeLabels)
    Labels: [...new Set(config.label)],
    ExperimentalBuild: config.experimental,
    ServerVersion: ENGINE_VERSION,
    Runtimes: runtimesInfo(config),
    DefaultRuntime: config["default-runtime"],
    LiveRestoreEnabled: config["live-restore"],
    Isolation: "",
    InitBinary: init.binary,
    ContainerdCommit: { ID: GIT_COMMIT },
    // the commit `runc --version` prints, as Docker reads it ("N/A" when it says none)
    RuncCommit: { ID: (await defaultRuntimeComponent(src))?.Details?.GitCommit ?? "N/A" },
    InitCommit: { ID: init.commit },
    SecurityOptions: securityOptions(config, rules),
    EngineOptions: reloadableOptions(config),
    FirewallBackend: { Driver: "iptables" },
    Swarm: { NodeID: "", NodeAddr: "", LocalNodeState: "inactive", ControlAvailable: false, Error: "", RemoteManagers: null },
    Warnings: src.warnings(),
  };
  return src.hooks.processInfo.promise(base);
}

/** The default runtime's component (undefined when it cannot be found or say its version). */
async function defaultRuntimeComponent(src: InfoSources): Promise<VersionComponent | undefined> {
  try {
    return await runtimeComponent(selectRuntime(src.config(), undefined, ruleHost(src.host)).path);
  } catch {
    return undefined;
  }
}

export async function buildVersionInfo(src: InfoSources): Promise<VersionInfo> {
  const details = {
    ApiVersion: API_VERSION,
    Arch: process.arch === "x64" ? "amd64" : process.arch,
    BuildTime: BUILD_TIME,
    Experimental: String(src.config().experimental),
    GitCommit: GIT_COMMIT,
    GoVersion: process.version,
    KernelVersion: src.host.kernel,
    MinAPIVersion: MIN_API_VERSION,
    Os: "linux",
  };
  const runtime = await defaultRuntimeComponent(src);
  const init = (await initReport(src.config()["init-path"])).component;
  const base: VersionInfo = {
    Platform: { Name: "Engine" },
    Components: [{ Name: "Engine", Version: ENGINE_VERSION, Details: details }, ...(runtime ? [runtime] : []), ...(init ? [init] : [])],
    Version: ENGINE_VERSION,
    ApiVersion: API_VERSION,
    MinAPIVersion: MIN_API_VERSION,
    GitCommit: GIT_COMMIT,
    GoVersion: process.version,
    Os: "linux",
    Arch: details.Arch,
    KernelVersion: src.host.kernel,
    Experimental: src.config().experimental,
    BuildTime: BUILD_TIME,
  };
  return src.hooks.processVersion.promise(base);
}

/**
 * The daemon's open file descriptors, as Docker counts its own: the size the kernel gives
 * /proc/self/fd (Linux 6.2 and later), else its entries less the one the count itself opens.
 */
function openFds(): number {
  try {
    const size = statSync("/proc/self/fd").size;
    if (size > 0) return size;
    return readdirSync("/proc/self/fd").length - 1;
  } catch {
    return 0;
  }
}

/**
 * What stands for Docker's count of goroutines (`NGoroutines`): a Node daemon has no
 * goroutines; the nearest is what its event loop has in progress, each of which a Go daemon
 * would serve in a goroutine of its own: the open sockets and listeners, child processes,
 * timers and pending file-system and DNS requests (libuv's active handles and requests).
 */
function activeTasks(): number {
  return process.getActiveResourcesInfo().length;
}

function readIpForward(): boolean {
  try {
    return readFileSync("/proc/sys/net/ipv4/ip_forward", "utf8").trim() === "1";
  } catch {
    return false;
  }
}
