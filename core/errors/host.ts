/** The error catalogue, user namespaces, rootless mode, runtimes, devices and the cluster (core/errors.ts assembles it). */
import { define } from "./define.js";

export const hostErrors = {
  // --- user namespaces (--userns-remap) and rootless mode ---
  usernsLookup: define("ENGINE_ERR_USERNS_LOOKUP", 500, (detail: string) => detail),
  usernsUserCreate: define(
    "ENGINE_ERR_USERNS_USER_CREATE",
    500,
    (user: string, why: string) => `Error during "${user}" user creation: ${why}`,
  ),
  usernsNoRanges: define(
    "ENGINE_ERR_USERNS_NO_RANGES",
    500,
    (kind: "subuid" | "subgid", who: string, file: string) =>
      `Can't create ID mappings: no ${kind} ranges found for ${who} in ${file}; add a line <name>:<first id>:<count> for it (usermod ${kind === "subuid" ? "-v" : "-w"} <first>-<last> <user>)`,
  ),
  usernsRootAccess: define(
    "ENGINE_ERR_USERNS_ROOT_ACCESS",
    500,
    (root: string, dir: string) =>
      `a subdirectory in your graphroot path (${root}) restricts access to the remapped root uid/gid: ${dir}; please fix by allowing 'o+x' permissions on existing directories`,
  ),
  usernsSetupFailed: define("ENGINE_ERR_USERNS_SETUP_FAILED", 500, (what: string, why: string) => `user namespace: ${what}: ${why}`),
  usernsPrivileged: define(
    "ENGINE_ERR_USERNS_PRIVILEGED",
    400,
    () => "privileged mode is incompatible with user namespaces.  You must run the container in the host namespace when running privileged mode",
  ),
  usernsHostNetwork: define(
    "ENGINE_ERR_USERNS_HOST_NETWORK",
    400,
    () => "cannot share the host's network namespace when user namespaces are enabled",
  ),
  usernsHostPid: define("ENGINE_ERR_USERNS_HOST_PID", 400, () => "cannot share the host PID namespace when user namespaces are enabled"),
  rootlessAsRoot: define(
    "ENGINE_ERR_ROOTLESS_AS_ROOT",
    500,
    () =>
      "rootless mode: engined must be executed as a non-privileged user (it runs as root in the host's user namespace); start it as an ordinary user inside RootlessKit, or drop --rootless",
  ),
  rootlessMissing: define(
    "ENGINE_ERR_ROOTLESS_MISSING",
    500,
    (missing: string[]) => `rootless mode needs what this host does not give it: ${missing.join("; ")}`,
  ),
  rootlessWithRemap: define(
    "ENGINE_ERR_ROOTLESS_WITH_REMAP",
    500,
    () => "--userns-remap cannot be used in rootless mode: the daemon's own user namespace already maps the containers' ids",
  ),

  // --- runtimes ---
  runtimeUnknown: define("ENGINE_ERR_RUNTIME_UNKNOWN", 400, (name: string) => `unknown or invalid runtime name: ${name}`),
  runtimeNotSupported: define(
    "ENGINE_ERR_RUNTIME_NOT_SUPPORTED",
    400,
    (name: string, shim: string) =>
      `runtime ${name}${shim === name ? "" : ` (runtimeType ${shim})`} is a supervisor shim: shims are not supported by this engine's supervisor (it runs OCI runtimes through conmon); register an OCI runtime binary with a path instead`,
  ),
  runtimeBinaryUnusable: define(
    "ENGINE_ERR_RUNTIME_BINARY_UNUSABLE",
    400,
    (name: string, path: string, why: string) => `runtime ${name}: cannot use the binary ${path}: ${why}`,
  ),

  // --- devices (HostConfig.DeviceRequests; Docker answers these at start, with 500) ---
  deviceDriverUnavailable: define(
    "ENGINE_ERR_DEVICE_DRIVER_UNAVAILABLE",
    500,
    (driver: string, capabilities: string) => `could not select device driver "${driver}" with capabilities: ${capabilities}`,
  ),
  deviceRequestInvalid: define("ENGINE_ERR_DEVICE_REQUEST_INVALID", 500, (why: string) => why),
  deviceCdiInjectionFailed: define("ENGINE_ERR_DEVICE_CDI_INJECTION_FAILED", 500, (why: string) => `CDI device injection failed: ${why}`),

  // --- cluster advertisement ---
  clusterAdvertiseAddrInvalid: define(
    "ENGINE_ERR_CLUSTER_ADVERTISE_ADDR_INVALID",
    400,
    (value: string, why: string) => `invalid cluster-default-advertise-addr "${value}": ${why}`,
  ),

  // --- cluster mode (engined never joins a swarm: the answers of a node outside one) ---
  clusterNotManager: define(
    "ENGINE_ERR_CLUSTER_NOT_MANAGER",
    503,
    () => 'This node is not a swarm manager. Use "docker swarm init" or "docker swarm join" to connect this node to swarm and try again.',
  ),
  clusterNotMember: define("ENGINE_ERR_CLUSTER_NOT_MEMBER", 503, () => "This node is not part of a swarm"),
  clusterJoinUnsupported: define(
    "ENGINE_ERR_CLUSTER_JOIN_UNSUPPORTED",
    501,
    () => "This node cannot be part of a swarm: engined runs containers on this machine only, and an orchestrator drives it through this API (see docs/cluster.md)",
  ),
  clusterInvalidVersion: define(
    "ENGINE_ERR_CLUSTER_INVALID_VERSION",
    400,
    (kind: string, raw: string, why: string | undefined) =>
      why === undefined ? `invalid ${kind} version` : `invalid ${kind} version '${raw}': strconv.ParseUint: parsing ${JSON.stringify(raw)}: ${why}`,
  ),
  clusterLogsNoStream: define("ENGINE_ERR_CLUSTER_LOGS_NO_STREAM", 400, () => "Bad parameters: you must choose at least one stream"),
} as const;
