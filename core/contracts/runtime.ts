/**
 * The runtime contract: how a container's process is described and run by an OCI runtime.
 *
 * Vocabulary
 * - runtime: an OCI runtime binary (`runc` by default, registered as `ocirun`), or another
 *   registered with `--add-runtime`: a drop-in (`{ path, runtimeArgs }`, run exactly like the
 *   default) or a runtime with its own supervisor shim (`{ runtimeType, options }`).
 * - bundle: a folder `<exec-root>/containers/<id>/bundle` holding `config.json`, the OCI
 *   runtime spec (1.0.x) of one container. The root filesystem is not copied into it: the spec's
 *   `root.path` names the folder where storage mounted the container's layer chain.
 * - spec: the `config.json` object. The runtime plugin makes a complete base spec from the
 *   container's configuration, the image's and the daemon's defaults; then the spec passes
 *   through the `processSpec` waterfall hook, where each plugin changes what it owns (storage
 *   adds the root filesystem mounts, network sets the network namespace path, log nothing) and
 *   returns it. A tap never removes what another owns.
 * - runtime arguments: global flags given before the command (`--root <state dir>`,
 *   `--systemd-cgroup`); create arguments (`--no-pivot` with ENGINE_RAMDISK).
 *
 * Lifecycle of a container's runtime state
 *   create bundle (folder, then `processSpec` -> `config.json`) -> runtime `create` (namespaces
 *   and cgroup made, process waiting) -> `start` -> `state` (as often as needed: created,
 *   running, stopped, with the pid) -> `kill <signal>` (stop, restart) -> `delete` (after it
 *   stopped; `delete --force` kills first). The bundle folder is removed after `delete`.
 *   `create` that fails leaves nothing the caller has to undo except the bundle folder.
 *   The supervisor (see DESIGN.md "Containers") runs create/start through conmon.
 */
import type { ContainerCreateConfig, HostConfig } from "../containers/container-config.js";
import type { ContainerConfig } from "../images/image-config.js";
import type { RuleHost } from "../options/rules.js";
import type { DaemonConfig } from "../options/table.js";
import type { RuntimeEntry } from "../options/value-types-structured.js";

export type { RuntimeEntry };

/** The OCI runtime spec (config.json) with the parts the engine writes typed; the rest is open. */
export interface OciSpec {
  ociVersion: string;
  process?: OciProcess;
  root?: { path: string; readonly?: boolean };
  hostname?: string;
  domainname?: string;
  mounts?: OciMount[];
  annotations?: Record<string, string>;
  linux?: OciLinux;
  [key: string]: unknown;
}

export interface OciProcess {
  terminal?: boolean;
  user: { uid: number; gid: number; umask?: number; additionalGids?: number[] };
  args: string[];
  env?: string[];
  cwd: string;
  capabilities?: { bounding?: string[]; effective?: string[]; inheritable?: string[]; permitted?: string[]; ambient?: string[] };
  rlimits?: { type: string; hard: number; soft: number }[];
  noNewPrivileges?: boolean;
  apparmorProfile?: string;
  oomScoreAdj?: number;
  [key: string]: unknown;
}

export interface OciMount {
  destination: string;
  type?: string;
  source?: string;
  options?: string[];
}

export interface OciNamespace {
  type: "pid" | "network" | "mount" | "ipc" | "uts" | "user" | "cgroup" | "time";
  path?: string;
}

export interface OciDeviceRule {
  allow: boolean;
  type?: "a" | "c" | "b";
  major?: number;
  minor?: number;
  access?: string;
}

export interface OciResources {
  devices?: OciDeviceRule[];
  memory?: { limit?: number; reservation?: number; swap?: number; disableOOMKiller?: boolean };
  cpu?: { shares?: number; quota?: number; period?: number; cpus?: string; mems?: string };
  pids?: { limit: number };
  [key: string]: unknown;
}

export interface OciSeccomp {
  defaultAction: string;
  defaultErrnoRet?: number;
  architectures?: string[];
  flags?: string[];
  syscalls?: { names: string[]; action: string; errnoRet?: number; args?: { index: number; value: number; valueTwo?: number; op: string }[] }[];
  [key: string]: unknown;
}

export interface OciLinux {
  namespaces?: OciNamespace[];
  uidMappings?: { containerID: number; hostID: number; size: number }[];
  gidMappings?: { containerID: number; hostID: number; size: number }[];
  devices?: { path: string; type: string; major: number; minor: number; fileMode?: number; uid?: number; gid?: number }[];
  cgroupsPath?: string;
  resources?: OciResources;
  sysctl?: Record<string, string>;
  maskedPaths?: string[];
  readonlyPaths?: string[];
  seccomp?: OciSeccomp;
  [key: string]: unknown;
}

/** What passes with the spec through `processSpec`: everything a tap may read (and nothing to change). */
export interface SpecContext {
  /** The container's full id (64 hex). */
  containerId: string;
  /** The create request's container configuration (Cmd, Env, User...). */
  config: ContainerCreateConfig;
  hostConfig: HostConfig;
  /** The image's container configuration (`config` of the image JSON); `{}` for none. */
  imageConfig: ContainerConfig;
  /** The daemon's configuration at the time of the create (a reload does not change running containers). */
  daemon: DaemonConfig;
  /** What cgroupDriverOf and cgroupParentOf need about the host. */
  host: RuleHost;
  /** The folder the container's root filesystem is (or will be) mounted at; absolute. */
  rootfs: string;
  /** The bundle folder where `config.json` is written; absolute. */
  bundleDir: string;
  /**
   * The runtime selected for the container (HostConfig.Runtime, else `--default-runtime`),
   * by name and entry; `ocirun` is the built-in runc.
   */
  runtime?: { name: string; entry?: RuntimeEntry };
}

/** Where a container is in its runtime life (`runc state`'s `status`). */
export type RuntimeStatus = "creating" | "created" | "running" | "stopped" | "paused";

export interface RuntimeState {
  id: string;
  status: RuntimeStatus;
  /** The container's init process on the host; 0 once stopped. */
  pid: number;
  bundle: string;
}

/** An OCI runtime as the supervisor drives it. All methods take the container id. */
export interface OciRuntime {
  readonly name: string;
  /** Global flags put before every command (`--root <dir>`, `--systemd-cgroup`). */
  globalArgs(): string[];
  /** Flags for `create` / `run` (`--no-pivot` with ENGINE_RAMDISK). */
  createArgs(): string[];
  create(id: string, bundleDir: string): Promise<void>;
  start(id: string): Promise<void>;
  state(id: string): Promise<RuntimeState>;
  kill(id: string, signal: string): Promise<void>;
  /** Safe for an id the runtime does not know. */
  delete(id: string, opts?: { force?: boolean }): Promise<void>;
}
