/** The error catalogue, networks, volumes and mounts, storage (core/errors.ts assembles it). */
import { define } from "./define.js";

export const resourcesErrors = {
  // --- networks ---
  networkNotFound: define("ENGINE_ERR_NETWORK_NOT_FOUND", 404, (ref: string) => `network ${ref} not found`),
  networkContainerNotRunning: define(
    "ENGINE_ERR_NETWORK_CONTAINER_NOT_RUNNING",
    409,
    // Docker 28's words: the container by its name, and its state (created, exited...)
    (name: string, state: string) => `cannot join network namespace of a non running container: container ${name.replace(/^\//, "")} is ${state}`,
  ),
  // a container whose network mode names itself (Docker 28 finds it at the start, before the state of the container named)
  networkJoinOwn: define("ENGINE_ERR_NETWORK_JOIN_OWN", 400, () => "cannot join own network namespace"),
  networkInvalidPort: define("ENGINE_ERR_NETWORK_INVALID_PORT", 400, (spec: string) => `invalid port specification: "${spec}"`),
  // Docker 28's words (a port: "...: driver failed programming external connectivity on endpoint ...")
  networkSetupFailed: define("ENGINE_ERR_NETWORK_SETUP_FAILED", 500, (why: string) => `failed to set up container networking: ${why}`),
  networkInvalidMac: define("ENGINE_ERR_NETWORK_INVALID_MAC", 500, (mac: string) => `address ${mac}: invalid MAC address`),
  networkNameInUse: define("ENGINE_ERR_NETWORK_NAME_IN_USE", 409, (name: string) => `network with name ${name} already exists`),
  networkInvalid: define("ENGINE_ERR_NETWORK_INVALID", 400, (why: string) => why),
  networkInvalidName: define("ENGINE_ERR_NETWORK_INVALID_NAME", 400, (name: string) => `invalid name: ${name}`),
  // Docker's message, its trailing space included.
  networkNamePredefined: define("ENGINE_ERR_NETWORK_NAME_PREDEFINED", 403, (name: string) => `operation is not permitted on predefined ${name} network `),
  networkDriverNotFound: define("ENGINE_ERR_NETWORK_DRIVER_NOT_FOUND", 404, (driver: string) => `plugin "${driver}" not found`),
  networkPluginUnusable: define(
    "ENGINE_ERR_NETWORK_PLUGIN_UNUSABLE",
    500,
    (driver: string, why: string) => `error looking up network plugin ${driver}: ${why}`,
  ),
  networkIpamPluginUnusable: define(
    "ENGINE_ERR_NETWORK_IPAM_PLUGIN_UNUSABLE",
    500,
    (driver: string, why: string) => `error looking up IPAM plugin ${driver}: ${why}`,
  ),
  // Docker's words: the step, then the plugin's ("failed to allocate gateway (): remote: ...")
  networkIpamFailed: define("ENGINE_ERR_NETWORK_IPAM_FAILED", 500, (why: string) => why),
  networkPredefined: define(
    "ENGINE_ERR_NETWORK_PREDEFINED",
    403,
    (name: string, action: string) => `${name} is a pre-defined network and cannot be ${action}`,
  ),
  networkActiveEndpoints: define(
    "ENGINE_ERR_NETWORK_ACTIVE_ENDPOINTS",
    403,
    (name: string, id: string) => `error while removing network: network ${name} id ${id} has active endpoints`,
  ),
  networkAddressInUse: define("ENGINE_ERR_NETWORK_ADDRESS_IN_USE", 403, (why: string) => why),
  networkPoolExhausted: define("ENGINE_ERR_NETWORK_POOL_EXHAUSTED", 403, (why: string) => why),
  networkAlreadyConnected: define(
    "ENGINE_ERR_NETWORK_ALREADY_CONNECTED",
    403,
    (container: string, network: string) => `endpoint with name ${container} already exists in network ${network}`,
  ),
  networkNotConnected: define(
    "ENGINE_ERR_NETWORK_NOT_CONNECTED",
    403,
    // Docker names the container by its ID, and says "the network" of one that does not run
    (containerId: string, network: string, running: boolean) => `container ${containerId} is not connected to ${running ? "" : "the "}network ${network}`,
  ),
  networkModeConflict: define(
    "ENGINE_ERR_NETWORK_MODE_CONFLICT",
    400,
    (mode: string) => `container sharing network namespace with another container or host (network mode ${mode}) cannot be connected to any other network`,
  ),
  // a connect Docker's updateNetworkSettings refuses, in its words (runconfig's errors)
  networkSharedNamespace: define(
    "ENGINE_ERR_NETWORK_SHARED_NAMESPACE",
    400,
    () => "container sharing network namespace with another container or host cannot be connected to any other network",
  ),
  networkHostConflict: define("ENGINE_ERR_NETWORK_HOST_CONFLICT", 400, () => "container cannot be disconnected from host network or connected to host network"),
  networkNoneConflict: define(
    "ENGINE_ERR_NETWORK_NONE_CONFLICT",
    400,
    () => "container cannot be connected to multiple networks with one of the networks in private (none) mode",
  ),
  supervisorUnavailable: define("ENGINE_ERR_SUPERVISOR_UNAVAILABLE", 503, (why: string) => `the supervisor is not available: ${why}`),

  // --- volumes and mounts ---
  volumeNotFound: define("ENGINE_ERR_VOLUME_NOT_FOUND", 404, (name: string) => `get ${name}: no such volume`),
  volumeInvalidName: define(
    "ENGINE_ERR_VOLUME_INVALID_NAME",
    400,
    // a name of one byte (`.`, `a`) is too short before its characters are looked at, as Docker's local driver says
    (name: string) =>
      Buffer.byteLength(name) === 1
        ? `create ${name}: volume name is too short, names should be at least two alphanumeric characters`
        : `create ${name}: "${name}" includes invalid characters for a local volume name, only "[a-zA-Z0-9][a-zA-Z0-9_.-]" are allowed. If you intended to pass a host directory, use absolute path`,
  ),
  volumeNameTooLong: define(
    "ENGINE_ERR_VOLUME_NAME_TOO_LONG",
    400,
    // (files are named after it: Docker's daemon fails at its mkdir past 255 bytes, with a 500)
    (name: string) => `create ${name}: volume name is too long: ${Buffer.byteLength(name)} bytes, at most 250`,
  ),
  volumeInUse: define(
    "ENGINE_ERR_VOLUME_IN_USE",
    409,
    (name: string, containers: string[]) => `remove ${name}: volume is in use - [${containers.join(", ")}]`,
  ),
  volumeNameConflict: define(
    "ENGINE_ERR_VOLUME_NAME_CONFLICT",
    409,
    (name: string, driver: string, asked: string) =>
      `create ${name}: volume name must be unique: a volume named ${name} already exists with driver ${driver}, not ${asked}`,
  ),
  volumeDriverNotFound: define(
    "ENGINE_ERR_VOLUME_DRIVER_NOT_FOUND",
    404,
    // a create names the volume first, as Docker's does (an anonymous one by its generated name)
    (driver: string, volume?: string) => `${volume === undefined ? "" : `create ${volume}: `}error looking up volume plugin ${driver}: plugin "${driver}" not found`,
  ),
  volumePluginUnusable: define(
    "ENGINE_ERR_VOLUME_PLUGIN_UNUSABLE",
    500,
    // Docker's words up to the cause, which is ours: its own says "legacy plugin: <dial error>"
    (driver: string, why: string) => `error looking up volume plugin ${driver}: ${why}`,
  ),
  volumeInvalidOptions: define("ENGINE_ERR_VOLUME_INVALID_OPTIONS", 400, (name: string, why: string) => `create ${name}: ${why}`),
  volumeDriverFailed: define("ENGINE_ERR_VOLUME_DRIVER_FAILED", 500, (op: string, name: string, why: string) => `${op} ${name}: ${why}`),
  mountInvalidSpec: define(
    "ENGINE_ERR_MOUNT_INVALID_SPEC",
    400,
    (spec: string, why?: string) => `invalid volume specification: '${spec}'${why ? `: ${why}` : ""}`,
  ),
  mountInvalidMode: define("ENGINE_ERR_MOUNT_INVALID_MODE", 400, (mode: string) => `invalid mode: ${mode}`),
  mountInvalidConfig: define(
    "ENGINE_ERR_MOUNT_INVALID_CONFIG",
    400,
    (type: string, why: string) => `invalid mount config for type "${type}": ${why}`,
  ),
  mountDaemonRootPropagation: define(
    "ENGINE_ERR_MOUNT_DAEMON_ROOT_PROPAGATION",
    400,
    (root: string, source: string, propagation: string) =>
      `invalid mount config: must use either propagation mode "rslave" or "rshared" when mount source is within the daemon root, daemon root: ${JSON.stringify(root)}, bind mount source: ${JSON.stringify(source)}, propagation: ${JSON.stringify(propagation)}`,
  ),
  mountDuplicate: define("ENGINE_ERR_MOUNT_DUPLICATE", 400, (destination: string) => `Duplicate mount point: ${destination}`),
  mountFailed: define("ENGINE_ERR_MOUNT_FAILED", 500, (destination: string, why: string) => `error while mounting volume '${destination}': ${why}`),
  mountNotShared: define(
    "ENGINE_ERR_MOUNT_NOT_SHARED",
    400,
    (source: string, mountPoint: string, kind: string) => `path ${source} is mounted on ${mountPoint} but it is not a ${kind} mount`,
  ),
  mountSubpathNeedsApi: define("ENGINE_ERR_MOUNT_SUBPATH_API", 400, () => "VolumeOptions.Subpath needs API v1.45 or newer"),
  volumeSubpathNotAccessible: define("ENGINE_ERR_VOLUME_SUBPATH_NOT_ACCESSIBLE", 404, (path: string, why: string) => `cannot access path ${path}: ${why}`),
  volumeSubpathEscapes: define(
    "ENGINE_ERR_VOLUME_SUBPATH_ESCAPES",
    400,
    (base: string, subpath: string) => `path concatenation escapes the base directory, base: ${base}, subpath: ${subpath}`,
  ),

  // --- storage ---
  storageDriverAmbiguous: define(
    "ENGINE_ERR_STORAGE_DRIVER_AMBIGUOUS",
    500,
    (dataRoot: string, drivers: string[]) =>
      `${dataRoot} contains state of several storage drivers (${drivers.join(", ")}); choose one with --storage-driver`,
  ),
  storageOptionInvalid: define(
    "ENGINE_ERR_STORAGE_OPTION_INVALID",
    400,
    (entry: string) => `invalid storage option "${entry}": expected <driver>.<option>=<value>`,
  ),
  storageOptionOtherDriver: define(
    "ENGINE_ERR_STORAGE_OPTION_OTHER_DRIVER",
    400,
    (key: string, owner: string, selected: string) => `${key} is an option of the ${owner} storage driver, not of ${selected}`,
  ),
  storageOptionUnknown: define(
    "ENGINE_ERR_STORAGE_OPTION_UNKNOWN",
    400,
    (key: string, selected: string, own: string[]) =>
      `unknown storage option ${key}: no storage driver has it (${selected} takes ${own.length > 0 ? own.join(", ") : "no options"})`,
  ),
  storageDriverNoUserns: define(
    "ENGINE_ERR_STORAGE_DRIVER_NO_USERNS",
    500,
    (name: string) => `the ${name} storage driver does not support --userns-remap (its layers cannot be kept with remapped owners); use overlay2 or fuse-overlayfs`,
  ),
  storageDriverOptionUnknown: define(
    "ENGINE_ERR_STORAGE_DRIVER_OPTION_UNKNOWN",
    400,
    (driver: string, key: string, known: readonly string[]) =>
      `${driver}: unknown option ${key}${known.length === 0 ? ` (the ${driver} storage driver has no options)` : ""}`,
  ),
  storageDriverOptionInvalid: define(
    "ENGINE_ERR_STORAGE_DRIVER_OPTION_INVALID",
    400,
    (driver: string, key: string, value: string, why: string) => `${driver}: invalid ${key} ${JSON.stringify(value)}: ${why}`,
  ),
  // A container's own storage options (`docker create --storage-opt size=10G`), refused at create.
  storageLayerOptionUnknown: define("ENGINE_ERR_STORAGE_LAYER_OPTION_UNKNOWN", 400, (driver: string, key: string) => `${driver}: unknown storage option ${key}`),
  storageLayerSizeInvalid: define(
    "ENGINE_ERR_STORAGE_LAYER_SIZE_INVALID",
    400,
    (driver: string, value: string, why: string) => `${driver}: invalid size ${JSON.stringify(value)}: ${why}`,
  ),
  storageLayerSizeUnsupported: define("ENGINE_ERR_STORAGE_LAYER_SIZE_UNSUPPORTED", 400, (driver: string, why: string) => `${driver}: the size option ${why}`),
  storageLayerSizeBelowMinimum: define(
    "ENGINE_ERR_STORAGE_LAYER_SIZE_BELOW_MINIMUM",
    400,
    (size: string, minimum: string) => `btrfs: storage size ${size} cannot be less than btrfs.min_space (${minimum})`,
  ),

} as const;
