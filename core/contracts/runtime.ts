/**
 * The runtime contract: how a container's process is described and run by an OCI runtime.
 *
 * Vocabulary
 * - runtime: an OCI runtime binary (`runc` by default, registered as `ocirun`), or another
 *   registered with `--add-runtime`: a drop-in (`{ path, runtimeArgs }`, run exactly like the
 *   default) or a runtime with its own supervisor shim (`{ runtimeType, options }`).
 * - bundle: a folder `<exec-root>/containers/<id>/bundle` holding `config.json`, the OCI
 *   runtime spec (1.0.x) of one container. The root filesystem is not copied into it: the spec's
 *   `root.path` names the folder where the host mounted the container's layer chain (the
 *   storage driver's mount specifications).
 * - spec: the `config.json` object. The runtime plugin makes a complete base spec from the
 *   container's configuration, the image's and the daemon's defaults; then the spec passes
 *   through the `processSpec` waterfall hook, where each tap changes what it owns (volumes their
 *   mounts, network the network namespace and /etc files, devices the CDI devices; the list is
 *   in core/hooks.ts) and returns it. A tap never removes what another owns.
 * - runtime arguments: global flags given before the command (`--root <state dir>`,
 *   `--systemd-cgroup`, an entry's `runtimeArgs`); `--no-pivot` for `create` with ENGINE_RAMDISK.
 *
 * Lifecycle of a container's run
 *   the host mounts the root filesystem -> the runtime driver writes the bundle (base spec,
 *   `processSpec`, `config.json`) -> the supervisor has conmon run the runtime's `create`
 *   (namespaces and cgroup made, process waiting), then runs `start` -> `kill <signal>` (stop)
 *   -> exit (conmon writes the exit code) -> `delete` -> the bundle folder is removed and the
 *   root filesystem unmounted. A `create` that fails leaves nothing the caller has to undo
 *   except the bundle folder and the mount.
 *   The runtime binary comes from the daemon's configuration (`ocirun` is runc; `--add-runtime`,
 *   `runtimes`, `--default-runtime`, a container's HostConfig.Runtime), not from the driver.
 */
import type { ContainerCreateConfig, HostConfig } from "../containers/container-config.js";
import type { ContainerConfig } from "../images/image-config.js";
import type { RuleHost } from "../options/rules.js";
import type { DaemonConfig } from "../options/table.js";
import type { RuntimeEntry } from "../options/value-types-structured.js";
import type { IdMap } from "../userns/id-map.js";

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

/** A block device's limit, by its device numbers. */
export interface OciDeviceRate {
  major: number;
  minor: number;
  rate: number;
}

export interface OciResources {
  devices?: OciDeviceRule[];
  memory?: { limit?: number; reservation?: number; swap?: number; swappiness?: number; disableOOMKiller?: boolean };
  blockIO?: {
    weight?: number;
    weightDevice?: { major: number; minor: number; weight: number }[];
    throttleReadBpsDevice?: OciDeviceRate[];
    throttleWriteBpsDevice?: OciDeviceRate[];
    throttleReadIOPSDevice?: OciDeviceRate[];
    throttleWriteIOPSDevice?: OciDeviceRate[];
  };
  cpu?: { shares?: number; quota?: number; period?: number; realtimeRuntime?: number; realtimePeriod?: number; cpus?: string; mems?: string };
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
  /**
   * The command as a create resolved it (a Docker container's Path and Args), run as it is; an
   * empty word included, which the OCI runtime then refuses as Docker's does. Absent (a CRI
   * container), the command is config's Entrypoint and Cmd over the image's, by Docker's rules.
   */
  command?: readonly string[];
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
  runtime?: { name: string; entry?: RuntimeEntry; /** its binary's absolute path */ path?: string };
  /**
   * The user namespace map of the container (`--userns-remap`, unless `UsernsMode` is `host`);
   * absent when it runs in the host's user namespace. The base spec then has a `user` namespace
   * with this map; the network plugin may name the namespace to join (one that owns the
   * network namespace it made).
   */
  idMap?: IdMap;
  /**
   * The variables of the container's legacy links (`DB_PORT=tcp://...`, core/containers/links.ts):
   * after PATH, HOSTNAME and TERM, before the container's own Env (which may replace them), as
   * Docker orders them.
   */
  linkEnv?: string[];
}

/** The waterfall a runtime driver passes the base spec through (the daemon's `hooks.processSpec`). */
export type ProcessSpec = (spec: OciSpec, ctx: SpecContext) => Promise<OciSpec>;

/**
 * What a runtime plugin gives the daemon (`hooks.createRuntime.for("ocirun")`): the maker of
 * bundles for OCI runtimes. One driver serves every runtime run the OCI way (runc, and the
 * drop-ins registered with `--add-runtime` or a `path` in `runtimes`): they read the same
 * config.json. The supervisor runs the binary through conmon (`create`, `start`, `kill`,
 * `delete`); the driver says which flags that takes.
 */
export interface RuntimeDriver {
  /** The name operators select it by (`ocirun`). */
  readonly name: string;
  /**
   * Makes `ctx.bundleDir` and writes its config.json: the driver's base spec for the container,
   * passed through `processSpec`. Resolves with the spec written. Throws an Error with
   * `name === "SpecError"` for a request no spec can be made from (a 400 for the API).
   */
  writeBundle(ctx: SpecContext, processSpec: ProcessSpec): Promise<OciSpec>;
  /** Whether `create` must not pivot_root(2) (ENGINE_RAMDISK: the root is on a ramdisk). */
  noPivot(daemon: DaemonConfig): boolean;
  /**
   * The process of an exec session in a running container, from the container's spec as its
   * bundle holds it. Throws (a SpecError for the API's 400) for a user the image does not know.
   */
  execProcess(ctx: ExecProcessContext): OciProcess;
}

/** What an exec asks for (`POST /containers/{id}/exec`), as the runtime needs it. */
export interface ExecProcessContext {
  /** The container's config.json, as written at its start. */
  spec: OciSpec;
  /** Where the container's root filesystem is mounted (users and groups are read there). */
  rootfs: string;
  /** The container's extra groups (`HostConfig.GroupAdd`): an exec's own user gets them too, as Docker gives them. */
  groupAdd?: readonly string[];
  exec: {
    Cmd: string[];
    Env?: string[];
    User?: string;
    WorkingDir?: string;
    Tty?: boolean;
    Privileged?: boolean;
    /** `[height, width]` of the terminal. */
    ConsoleSize?: [number, number] | null;
  };
}

/** What the daemon gives a runtime plugin's factory, once, at start. */
export interface RuntimeContext {
  execRoot: string;
}
