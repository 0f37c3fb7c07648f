/**
 * The error catalogue. Every error the engine reports to a client or an operator is defined
 * here once: a code `ENGINE_ERR_<AREA>_<WHAT>`, the HTTP status the API answers with (the Docker
 * mapping: 400 invalid parameter, 401, 403 forbidden, 404 not found, 409 conflict, 304 not
 * modified, 500 system, 501 not implemented, 503 unavailable) and the message clients expect.
 * `docs/errors.md` lists the catalogue; test/errors.test.ts keeps the two in step.
 */

export class EngineError extends Error {
  constructor(
    readonly code: string,
    readonly statusCode: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "EngineError";
  }
}

interface ErrorDefinition<A extends unknown[]> {
  readonly code: string;
  readonly statusCode: number;
  /** Makes the error; the arguments fill the message. */
  (...args: A): EngineError;
}

function define<A extends unknown[]>(
  code: string,
  statusCode: number,
  message: (...args: A) => string,
): ErrorDefinition<A> {
  const make = (...args: A) => new EngineError(code, statusCode, message(...args));
  return Object.assign(make, { code, statusCode }) as ErrorDefinition<A>;
}

export const errors = {
  // --- API ---
  apiVersionTooOld: define(
    "ENGINE_ERR_API_VERSION_TOO_OLD",
    400,
    (client: string, min: string) =>
      `client version ${client} is too old. Minimum supported API version is ${min}, please upgrade your client to a newer version`,
  ),
  apiVersionTooNew: define(
    "ENGINE_ERR_API_VERSION_TOO_NEW",
    400,
    (client: string, max: string) => `client version ${client} is too new. Maximum supported API version is ${max}`,
  ),
  apiPageNotFound: define("ENGINE_ERR_API_PAGE_NOT_FOUND", 404, () => "page not found"),
  apiInvalidBody: define("ENGINE_ERR_API_INVALID_BODY", 400, (detail: string) => detail),
  apiInvalidJson: define("ENGINE_ERR_API_INVALID_JSON", 400, (detail: string) => `invalid JSON: ${detail}`),
  apiInvalidParameter: define("ENGINE_ERR_API_INVALID_PARAMETER", 400, (name: string, value: string) => `invalid value for ${name}: "${value}"`),
  apiBodyTooLarge: define("ENGINE_ERR_API_BODY_TOO_LARGE", 413, (limit: number) => `request body larger than ${limit} bytes`),
  apiUnsupportedMediaType: define(
    "ENGINE_ERR_API_UNSUPPORTED_MEDIA_TYPE",
    400,
    (type: string) => `unsupported Content-Type header (${type}): must be 'application/json'`,
  ),
  apiUnderPressure: define("ENGINE_ERR_API_UNDER_PRESSURE", 503, () => "the daemon is overloaded, try again later"),
  apiInternal: define("ENGINE_ERR_API_INTERNAL", 500, (detail: string) => detail),
  apiNotImplemented: define("ENGINE_ERR_API_NOT_IMPLEMENTED", 501, (what: string) => `not implemented yet: ${what}`),

  // --- authorization ---
  authzBodyTooLarge: define(
    "ENGINE_ERR_AUTHZ_BODY_TOO_LARGE",
    413,
    (size: number | undefined, cap: number) =>
      `request body${size === undefined ? "" : ` of ${size} bytes`} is larger than the ${cap} bytes an authorization plugin is shown: with authorization plugins active, a JSON body they cannot judge is refused`,
  ),
  authzDenied: define(
    "ENGINE_ERR_AUTHZ_DENIED",
    403,
    (plugin: string, msg: string) => `authorization denied by plugin ${plugin}: ${msg}`,
  ),
  authzResponseDenied: define(
    "ENGINE_ERR_AUTHZ_RESPONSE_DENIED",
    403,
    (plugin: string, msg: string) => `authorization denied by plugin ${plugin}: ${msg}`,
  ),
  authzPluginFailed: define(
    "ENGINE_ERR_AUTHZ_PLUGIN_FAILED",
    403,
    (plugin: string, detail: string) => `plugin ${plugin} failed with error: ${detail}`,
  ),

  // --- options and configuration ---
  optionInvalidValue: define(
    "ENGINE_ERR_OPTION_INVALID_VALUE",
    400,
    (option: string, value: string, why: string) => `invalid value "${value}" for ${option}: ${why}`,
  ),
  optionUnknown: define("ENGINE_ERR_OPTION_UNKNOWN", 400, (option: string) => `unknown flag: ${option}`),
  configInvalid: define(
    "ENGINE_ERR_CONFIG_INVALID",
    400,
    (path: string, problems: string[]) => `unable to configure the engine daemon with file ${path}: ${problems.join("; ")}`,
  ),
  configConflict: define(
    "ENGINE_ERR_CONFIG_CONFLICT",
    400,
    (source: string, detail: string[]) =>
      `unable to configure the engine daemon with ${source}: the following directives are specified both as a flag and in the configuration file: ${detail.join(", ")}`,
  ),
  configFileMissing: define(
    "ENGINE_ERR_CONFIG_FILE_MISSING",
    400,
    (path: string) => `unable to configure the engine daemon: the configuration file ${path} does not exist`,
  ),
  configRule: define("ENGINE_ERR_CONFIG_RULE", 400, (problems: string[]) => `invalid daemon configuration: ${problems.join("; ")}`),

  // --- plugins ---
  pluginDuplicateId: define(
    "ENGINE_ERR_PLUGIN_DUPLICATE_ID",
    500,
    (id: string, first: string, second: string) => `plugin id ${id} is declared twice: by ${first} and by ${second}`,
  ),
  pluginCycle: define(
    "ENGINE_ERR_PLUGIN_CYCLE",
    500,
    (cycle: string[]) => `plugin requirements form a cycle: ${cycle.join(" -> ")}`,
  ),
  pluginMissingRequirement: define(
    "ENGINE_ERR_PLUGIN_MISSING_REQUIREMENT",
    500,
    (id: string, required: string) => `plugin ${id} requires ${required}, which is not available`,
  ),
  pluginPathFromClient: define(
    "ENGINE_ERR_PLUGIN_PATH_FROM_CLIENT",
    400,
    (kind: string, name: string) =>
      `${kind} driver "${name}" is a path: drivers named in an API request are chosen by name (a built-in driver or an installed engine-plugin-${kind}-<name> package); only the daemon's own configuration may load a plugin from a path`,
  ),
  pluginMadeNoDriver: define(
    "ENGINE_ERR_PLUGIN_MADE_NO_DRIVER",
    500,
    (kind: string, name: string, hook: string) => `${kind} plugin "${name}" was loaded but made no driver: it tapped no ${hook} hook for that name`,
  ),
  pluginNotFound: define(
    "ENGINE_ERR_PLUGIN_NOT_FOUND",
    500,
    (what: string, name: string, tried: string[]) =>
      `${what} "${name}" not found; looked for: ${tried.join("; ")}`,
  ),
  pluginInvalid: define(
    "ENGINE_ERR_PLUGIN_INVALID",
    500,
    (where: string, detail: string) => `${where} is not a valid engine plugin: ${detail}`,
  ),
  pluginSpecInvalid: define(
    "ENGINE_ERR_PLUGIN_SPEC_INVALID",
    500,
    (path: string, detail: string) => `plugin spec file ${path} is not valid: ${detail}`,
  ),
  pluginLoadFailed: define(
    "ENGINE_ERR_PLUGIN_LOAD_FAILED",
    500,
    (id: string, detail: string) => `plugin ${id} failed to load: ${detail}`,
  ),
  pluginNotSupported: define(
    "ENGINE_ERR_PLUGIN_NOT_SUPPORTED",
    500,
    (id: string, reason: string) => `plugin ${id} was selected but is not supported on this host: ${reason}`,
  ),
  pluginKindMismatch: define(
    "ENGINE_ERR_PLUGIN_KIND_MISMATCH",
    500,
    (where: string, expected: string, actual: string) => `${where} is a ${actual} plugin, but a ${expected} plugin was asked for`,
  ),

  // --- images ---
  imageInvalidReference: define(
    "ENGINE_ERR_IMAGE_INVALID_REFERENCE",
    400,
    (ref: string, why: string) => `invalid reference format: ${why} (${ref})`,
  ),
  imageNotFound: define("ENGINE_ERR_IMAGE_NOT_FOUND", 404, (ref: string) => `No such image: ${ref}`),
  imageAmbiguous: define(
    "ENGINE_ERR_IMAGE_AMBIGUOUS",
    400,
    (prefix: string) => `multiple IDs found with provided prefix: ${prefix}`,
  ),
  imageConflict: define("ENGINE_ERR_IMAGE_CONFLICT", 409, (detail: string) => `conflict: ${detail}`),
  imageInvalidArchive: define("ENGINE_ERR_IMAGE_INVALID_ARCHIVE", 400, (detail: string) => `invalid image archive: ${detail}`),
  imageDigestMismatch: define(
    "ENGINE_ERR_IMAGE_DIGEST_MISMATCH",
    400,
    (what: string, expected: string, actual: string) => `${what}: digest mismatch: expected ${expected}, got ${actual}`,
  ),
  imageInvalidChange: define("ENGINE_ERR_IMAGE_INVALID_CHANGE", 400, (change: string, why: string) => `invalid change "${change}": ${why}`),
  imageCommitToDigest: define("ENGINE_ERR_IMAGE_COMMIT_TO_DIGEST", 400, () => "cannot commit to digest reference"),
  imageLayerUnexportable: define("ENGINE_ERR_IMAGE_LAYER_UNEXPORTABLE", 500, (diffId: string, why: string) => `layer ${diffId} cannot be exported: ${why}`),

  // --- registries ---
  registryInvalidAuthHeader: define("ENGINE_ERR_REGISTRY_INVALID_AUTH_HEADER", 400, (why: string) => `invalid X-Registry-Auth header: ${why}`),
  registryUnreachable: define("ENGINE_ERR_REGISTRY_UNREACHABLE", 500, (url: string, cause: string) => `Get "${url}": ${cause}`),
  registryNotSecure: define(
    "ENGINE_ERR_REGISTRY_NOT_SECURE",
    500,
    (url: string, cause: string, host: string) =>
      `Get "${url}": ${cause}; registry ${host} is not secure: secure it with TLS (its CA certificate at /etc/engine/certs.d/${host}/ca.crt if the host does not trust it already) or mark it insecure with --insecure-registry ${host}`,
  ),
  registryV1Only: define(
    "ENGINE_ERR_REGISTRY_LEGACY_ONLY",
    400,
    (host: string) => `registry ${host} speaks only the legacy v1 protocol: pull, push and login need the v2 protocol`,
  ),
  registryNotARegistry: define("ENGINE_ERR_REGISTRY_NOT_A_REGISTRY", 500, (url: string, status: number) => `${url} answered ${status}: not a v2 registry`),
  registryUnauthorized: define("ENGINE_ERR_REGISTRY_UNAUTHORIZED", 401, (detail: string) => detail),
  registryAuthFailed: define("ENGINE_ERR_REGISTRY_AUTH_FAILED", 500, (detail: string) => `registry authentication failed: ${detail}`),
  registryAccessDenied: define(
    "ENGINE_ERR_REGISTRY_ACCESS_DENIED",
    404,
    (repo: string, detail: string) => `pull access denied for ${repo}, repository does not exist or may require a login: ${detail}`,
  ),
  registryNotFound: define("ENGINE_ERR_REGISTRY_NOT_FOUND", 404, (what: string, detail: string) => `${what} not found: ${detail}`),
  registryNoMatchingPlatform: define(
    "ENGINE_ERR_REGISTRY_NO_MATCHING_PLATFORM",
    404,
    (platform: string) => `no matching manifest for ${platform} in the manifest list entries`,
  ),
  registryUnsupportedManifest: define(
    "ENGINE_ERR_REGISTRY_UNSUPPORTED_MANIFEST",
    500,
    (ref: string, mediaType: string) => `unsupported manifest media type ${mediaType || "(none)"} for ${ref}`,
  ),
  registryError: define("ENGINE_ERR_REGISTRY_ERROR", 500, (what: string, detail: string) => `${what}: ${detail}`),
  registrySearchUnavailable: define("ENGINE_ERR_REGISTRY_SEARCH_UNAVAILABLE", 500, (host: string, why: string) => `cannot search registry ${host}: ${why}`),
  registryDownloadFailed: define(
    "ENGINE_ERR_REGISTRY_DOWNLOAD_FAILED",
    500,
    (digest: string, attempts: number, cause: string) => `download of ${digest} failed after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${cause}`,
  ),
  registryNoLocalImage: define(
    "ENGINE_ERR_REGISTRY_NO_LOCAL_IMAGE",
    404,
    (name: string) => `An image does not exist locally with the tag: ${name}`,
  ),

  // --- containers ---
  containerNotFound: define("ENGINE_ERR_CONTAINER_NOT_FOUND", 404, (ref: string) => `No such container: ${ref}`),
  containerAmbiguous: define("ENGINE_ERR_CONTAINER_AMBIGUOUS", 400, (prefix: string) => `multiple containers found with provided prefix: ${prefix}`),
  containerNameInUse: define(
    "ENGINE_ERR_CONTAINER_NAME_IN_USE",
    409,
    (name: string, id: string) =>
      `Conflict. The container name "${name}" is already in use by container "${id}". You have to remove (or rename) that container to be able to reuse that name.`,
  ),
  containerInvalidName: define(
    "ENGINE_ERR_CONTAINER_INVALID_NAME",
    400,
    (name: string) => `Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`,
  ),
  containerRunning: define(
    "ENGINE_ERR_CONTAINER_RUNNING",
    409,
    (id: string) => `You cannot remove a running container ${id}. Stop the container before attempting removal or force remove`,
  ),
  containerNoCommand: define("ENGINE_ERR_CONTAINER_NO_COMMAND", 400, () => "no command specified"),
  containerNotRunning: define(
    "ENGINE_ERR_CONTAINER_NOT_RUNNING",
    409,
    (action: string, ref: string, id: string) => `Cannot ${action} container: ${ref}: Container ${id} is not running`,
  ),
  containerKillNoExit: define("ENGINE_ERR_CONTAINER_KILL_NO_EXIT", 500, () => "tried to kill container, but did not receive an exit event"),
  containerCommandFailed: define("ENGINE_ERR_CONTAINER_COMMAND_FAILED", 400, (why: string) => `failed to create task for container: ${why}`),
  containerStartFailed: define("ENGINE_ERR_CONTAINER_START_FAILED", 500, (why: string) => `failed to start container: ${why}`),
  containerInvalidSpec: define("ENGINE_ERR_CONTAINER_INVALID_SPEC", 400, (why: string) => why),
  // create-time checks of resources and references, in Docker's words (400)
  containerInvalidResource: define("ENGINE_ERR_CONTAINER_INVALID_RESOURCE", 400, (why: string) => why),
  containerReferenceNotFound: define("ENGINE_ERR_CONTAINER_REFERENCE_NOT_FOUND", 400, (ref: string) => `No such container: ${ref}`),
  // start-time: what Docker answers with 500 when the spec is made
  containerDeviceUnavailable: define(
    "ENGINE_ERR_CONTAINER_DEVICE_UNAVAILABLE",
    500,
    (path: string, why: string) => `error gathering device information while adding custom device "${path}": ${why}`,
  ),
  containerDeviceRuleInvalid: define("ENGINE_ERR_CONTAINER_DEVICE_RULE_INVALID", 500, (rule: string) => `invalid device cgroup rule format: '${rule}'`),
  containerNamespaceUnavailable: define("ENGINE_ERR_CONTAINER_NAMESPACE_UNAVAILABLE", 500, (why: string) => why),
  execNotFound: define("ENGINE_ERR_EXEC_NOT_FOUND", 404, (id: string) => `No such exec instance: ${id}`),
  execNoCommand: define("ENGINE_ERR_EXEC_NO_COMMAND", 400, () => "No exec command specified"),
  execContainerNotRunning: define("ENGINE_ERR_EXEC_CONTAINER_NOT_RUNNING", 409, (id: string) => `container ${id} is not running`),
  execAlreadyStarted: define(
    "ENGINE_ERR_EXEC_ALREADY_STARTED",
    409,
    (id: string, ran: boolean) => `Error: Exec command ${id} ${ran ? "has already run" : "is already running"}`,
  ),
  execStartFailed: define("ENGINE_ERR_EXEC_START_FAILED", 500, (message: string) => `cannot start the exec process: ${message}`),
  detachKeysInvalid: define(
    "ENGINE_ERR_DETACH_KEYS_INVALID",
    400,
    (keys: string, why: string) => `Invalid detach keys (${keys}) provided: ${why}`,
  ),
  containerInvalidSignal: define("ENGINE_ERR_CONTAINER_INVALID_SIGNAL", 400, (signal: string) => `Invalid signal: ${signal}`),
  containerCommitConflict: define(
    "ENGINE_ERR_CONTAINER_COMMIT_CONFLICT",
    409,
    (id: string, state: string) => `You cannot commit container ${id} which is ${state}`,
  ),
  containerInvalidWaitCondition: define(
    "ENGINE_ERR_CONTAINER_INVALID_WAIT_CONDITION",
    400,
    (condition: string) => `invalid condition: "${condition}" (not-running, next-exit or removed)`,
  ),
  containerLogsNoStream: define("ENGINE_ERR_CONTAINER_LOGS_NO_STREAM", 400, () => "You must choose at least one stream"),
  // Docker's words: the driver is not named (`docker logs` of a `none` container).
  containerLogsUnreadable: define("ENGINE_ERR_CONTAINER_LOGS_UNREADABLE", 501, () => "configured logging driver does not support reading"),
  // The driver's own words, as Docker answers a create (`unknown log opt 'x' for json-file log driver`).
  containerLogConfigInvalid: define("ENGINE_ERR_CONTAINER_LOG_CONFIG_INVALID", 400, (why: string) => why),
  // A log option whose value the driver refuses when it makes the logger, at start (Docker's words).
  containerLogInitFailed: define("ENGINE_ERR_CONTAINER_LOG_INIT_FAILED", 500, (why: string) => `failed to initialize logging driver: ${why}`),
  // files: docker cp (archive), export
  containerPathEmpty: define("ENGINE_ERR_CONTAINER_PATH_EMPTY", 400, () => "bad parameter: path cannot be empty"),
  containerFileNotFound: define(
    "ENGINE_ERR_CONTAINER_FILE_NOT_FOUND",
    404,
    (path: string, ref: string) => `Could not find the file ${path} in container ${ref}`,
  ),
  containerPathInvalid: define("ENGINE_ERR_CONTAINER_PATH_INVALID", 400, (path: string, why: string) => `invalid path ${path}: ${why}`),
  containerExtractNotDirectory: define("ENGINE_ERR_CONTAINER_EXTRACT_NOT_DIRECTORY", 400, () => "extraction point is not a directory"),
  containerRootfsReadOnly: define("ENGINE_ERR_CONTAINER_ROOTFS_READ_ONLY", 400, () => "container rootfs is marked read-only"),
  containerVolumeReadOnly: define("ENGINE_ERR_CONTAINER_VOLUME_READ_ONLY", 400, () => "mounted volume is marked read-only"),
  containerArchiveInvalid: define("ENGINE_ERR_CONTAINER_ARCHIVE_INVALID", 400, (why: string) => why),
  containerUserNotFound: define("ENGINE_ERR_CONTAINER_USER_NOT_FOUND", 400, (why: string) => why),
  // restart policies, pause, rename, update, top, stats
  containerInvalidRestartPolicy: define("ENGINE_ERR_CONTAINER_INVALID_RESTART_POLICY", 400, (why: string) => `invalid restart policy: ${why}`),
  containerAutoRemoveRestart: define("ENGINE_ERR_CONTAINER_AUTOREMOVE_RESTART", 400, () => "can't create 'AutoRemove' container with restart policy"),
  containerStateNotRunning: define("ENGINE_ERR_CONTAINER_STATE_NOT_RUNNING", 409, (id: string) => `Container ${id} is not running`),
  containerRestarting: define(
    "ENGINE_ERR_CONTAINER_RESTARTING",
    409,
    (id: string) => `Container ${id} is restarting, wait until the container is running`,
  ),
  containerAlreadyPaused: define("ENGINE_ERR_CONTAINER_ALREADY_PAUSED", 409, (id: string) => `Container ${id} is already paused`),
  containerNotPaused: define("ENGINE_ERR_CONTAINER_NOT_PAUSED", 409, (id: string) => `Container ${id} is not paused`),
  containerPausedStart: define("ENGINE_ERR_CONTAINER_PAUSED_START", 409, () => "cannot start a paused container, try unpause instead"),
  containerPauseFailed: define("ENGINE_ERR_CONTAINER_PAUSE_FAILED", 500, (action: string, id: string, why: string) => `Cannot ${action} container ${id}: ${why}`),
  containerRenameEmpty: define("ENGINE_ERR_CONTAINER_RENAME_EMPTY", 400, () => "Neither old nor new names may be empty"),
  containerRenameSame: define("ENGINE_ERR_CONTAINER_RENAME_SAME", 400, () => "Renaming a container with the same name as its current name"),
  containerUpdateFailed: define("ENGINE_ERR_CONTAINER_UPDATE_FAILED", 400, (id: string, why: string) => `Cannot update container ${id}: ${why}`),
  containerUpdateRuntimeFailed: define("ENGINE_ERR_CONTAINER_UPDATE_RUNTIME_FAILED", 500, (id: string, why: string) => `Cannot update container ${id}: ${why}`),
  containerTopInvalidArgs: define("ENGINE_ERR_CONTAINER_TOP_INVALID_ARGS", 400, (key: string, value: string) => `specifying "${key}=${value}" is not allowed`),
  containerTopFailed: define("ENGINE_ERR_CONTAINER_TOP_FAILED", 500, (why: string) => why),
  containerStatsUnavailable: define("ENGINE_ERR_CONTAINER_STATS_UNAVAILABLE", 500, (id: string, why: string) => `cannot read the statistics of container ${id}: ${why}`),
  // --- networks ---
  networkNotFound: define("ENGINE_ERR_NETWORK_NOT_FOUND", 404, (ref: string) => `network ${ref} not found`),
  networkContainerNotRunning: define(
    "ENGINE_ERR_NETWORK_CONTAINER_NOT_RUNNING",
    409,
    (id: string) => `cannot join network namespace of a non running container: container ${id} is not running`,
  ),
  networkInvalidPort: define("ENGINE_ERR_NETWORK_INVALID_PORT", 400, (spec: string) => `invalid port specification: "${spec}"`),
  networkSetupFailed: define("ENGINE_ERR_NETWORK_SETUP_FAILED", 500, (why: string) => `failed to set up the container's network: ${why}`),
  networkInvalidMac: define("ENGINE_ERR_NETWORK_INVALID_MAC", 500, (mac: string) => `address ${mac}: invalid MAC address`),
  networkNameInUse: define("ENGINE_ERR_NETWORK_NAME_IN_USE", 409, (name: string) => `network with name ${name} already exists`),
  networkInvalid: define("ENGINE_ERR_NETWORK_INVALID", 400, (why: string) => why),
  networkInvalidName: define("ENGINE_ERR_NETWORK_INVALID_NAME", 400, (name: string) => `invalid name: ${name}`),
  // Docker's message, its trailing space included.
  networkNamePredefined: define("ENGINE_ERR_NETWORK_NAME_PREDEFINED", 403, (name: string) => `operation is not permitted on predefined ${name} network `),
  networkDriverNotFound: define("ENGINE_ERR_NETWORK_DRIVER_NOT_FOUND", 404, (driver: string) => `plugin "${driver}" not found`),
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
    (container: string, network: string) => `container ${container} is not connected to network ${network}`,
  ),
  networkModeConflict: define(
    "ENGINE_ERR_NETWORK_MODE_CONFLICT",
    400,
    (mode: string) => `container sharing network namespace with another container or host (network mode ${mode}) cannot be connected to any other network`,
  ),
  supervisorUnavailable: define("ENGINE_ERR_SUPERVISOR_UNAVAILABLE", 503, (why: string) => `the supervisor is not available: ${why}`),

  // --- volumes and mounts ---
  volumeNotFound: define("ENGINE_ERR_VOLUME_NOT_FOUND", 404, (name: string) => `get ${name}: no such volume`),
  volumeInvalidName: define(
    "ENGINE_ERR_VOLUME_INVALID_NAME",
    400,
    (name: string) =>
      `create ${name}: "${name}" includes invalid characters for a local volume name, only "[a-zA-Z0-9][a-zA-Z0-9_.-]" are allowed. If you intended to pass a host directory, use absolute path`,
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
    (driver: string) => `error looking up volume plugin ${driver}: plugin "${driver}" not found`,
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
  mountDuplicate: define("ENGINE_ERR_MOUNT_DUPLICATE", 400, (destination: string) => `Duplicate mount point: ${destination}`),
  mountFailed: define("ENGINE_ERR_MOUNT_FAILED", 500, (destination: string, why: string) => `error while mounting volume '${destination}': ${why}`),

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
  storageDriverOptionUnknown: define("ENGINE_ERR_STORAGE_DRIVER_OPTION_UNKNOWN", 400, (driver: string, key: string) => `${driver}: unknown option ${key}`),
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

  // --- daemon process ---
  daemonAlreadyRunning: define(
    "ENGINE_ERR_DAEMON_ALREADY_RUNNING",
    500,
    (pidfile: string, pid: number) =>
      `pid file found, ensure engined is not running or delete ${pidfile} (process ${pid} is alive)`,
  ),
  listenerInvalidHost: define(
    "ENGINE_ERR_LISTENER_INVALID_HOST",
    400,
    (host: string, why: string) => `invalid host "${host}": ${why}`,
  ),
  listenerAddressInUse: define(
    "ENGINE_ERR_LISTENER_ADDRESS_IN_USE",
    500,
    (address: string) => `${address} is already in use by another process (is another daemon listening there?)`,
  ),
  metricsListenFailed: define(
    "ENGINE_ERR_METRICS_LISTEN_FAILED",
    500,
    (address: string, why: string) => `cannot serve metrics on ${address} (--metrics-addr): ${why}`,
  ),
  listenerNoActivationSocket: define(
    "ENGINE_ERR_LISTENER_NO_ACTIVATION_SOCKET",
    500,
    (which: string) => `socket activation: ${which}`,
  ),
  listenerGroupNotFound: define(
    "ENGINE_ERR_LISTENER_GROUP_NOT_FOUND",
    500,
    (group: string) => `group ${group} not found: cannot give it access to the API socket`,
  ),
  tlsFileUnreadable: define(
    "ENGINE_ERR_TLS_FILE_UNREADABLE",
    500,
    (what: string, path: string, why: string) => `could not read the TLS ${what} ${path}: ${why}`,
  ),
  tlsCertificateRejected: define(
    "ENGINE_ERR_TLS_CERT_REJECTED",
    500,
    (cert: string, key: string, why: string) => `the TLS certificate ${cert} with key ${key} cannot be used: ${why}`,
  ),

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

export type ErrorCatalogue = typeof errors;

/** Any thrown value as an EngineError: unknown failures become 500 with their message. */
export function toEngineError(err: unknown): EngineError {
  if (err instanceof EngineError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return errors.apiInternal(message);
}
