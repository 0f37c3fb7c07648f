/** The error catalogue, containers (core/errors.ts assembles it). */
import { define } from "./define.js";

export const containersErrors = {
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
  // a rename's refusals of its new name, which Docker's daemon puts after what it was doing
  containerRenameNameInUse: define(
    "ENGINE_ERR_CONTAINER_RENAME_NAME_IN_USE",
    409,
    (name: string, id: string) =>
      `Error when allocating new name: Conflict. The container name "${name}" is already in use by container "${id}". You have to remove (or rename) that container to be able to reuse that name.`,
  ),
  containerRenameInvalidName: define(
    "ENGINE_ERR_CONTAINER_RENAME_INVALID_NAME",
    400,
    (name: string) => `Error when allocating new name: Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`,
  ),
  // a removal without force, in Docker 28's words (the name with its slash)
  containerRunning: define("ENGINE_ERR_CONTAINER_RUNNING", 409, (name: string, state: "running" | "paused" | "restarting") =>
    `cannot remove container "${name}": ${state === "paused" ? "container is paused and must be unpaused first" : `container is ${state}: stop the container before removing or force remove`}`,
  ),
  containerNoCommand: define("ENGINE_ERR_CONTAINER_NO_COMMAND", 400, () => "no command specified"),
  containerInvalidIdentifier: define("ENGINE_ERR_CONTAINER_INVALID_IDENTIFIER", 400, () => 'invalid name or ID supplied: ""'),
  containerConfigEmpty: define("ENGINE_ERR_CONTAINER_CONFIG_EMPTY", 400, () => "Config cannot be empty in order to create a container"),
  containerRelativeWorkingDir: define(
    "ENGINE_ERR_CONTAINER_RELATIVE_WORKING_DIR",
    400,
    (dir: string) => `the working directory '${dir}' is invalid, it needs to be an absolute path`,
  ),
  // a working directory the image has a file at (or on the way to), refused at create as Docker's daemon does (its 500: the request's fault here)
  containerWorkingDirInvalid: define("ENGINE_ERR_CONTAINER_WORKING_DIR_INVALID", 400, (why: string) => why),
  containerNoFreeName: define("ENGINE_ERR_CONTAINER_NO_FREE_NAME", 500, () => "no free container name found"),
  containerNotRunning: define(
    "ENGINE_ERR_CONTAINER_NOT_RUNNING",
    409,
    (action: string, ref: string, id: string) => `Cannot ${action} container: ${ref}: Container ${id} is not running`,
  ),
  containerKillNoExit: define("ENGINE_ERR_CONTAINER_KILL_NO_EXIT", 500, () => "tried to kill container, but did not receive an exit event"),
  containerCommandFailed: define("ENGINE_ERR_CONTAINER_COMMAND_FAILED", 400, (why: string) => `failed to create task for container: ${why}`),
  containerStartFailed: define("ENGINE_ERR_CONTAINER_START_FAILED", 500, (why: string) => `failed to start container: ${why}`),
  containerTaskFailed: define("ENGINE_ERR_CONTAINER_TASK_FAILED", 500, (why: string) => `failed to create task for container: ${why}`),
  // a resource value the kernel refuses when the runtime writes it (a pids limit past what it counts, a real-time budget): the request's
  containerResourceRefused: define("ENGINE_ERR_CONTAINER_RESOURCE_REFUSED", 400, (why: string) => `failed to create task for container: ${why}`),
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
  // a resize of an exec whose start did not come within 10 s, or that could not start (Docker's ContainerExecResize)
  // Docker's words; its status is 500, but nothing failed here: the exec was never started (409)
  execNotReady: define("ENGINE_ERR_EXEC_NOT_READY", 409, () => "timeout waiting for exec session ready"),
  execNotStarted: define("ENGINE_ERR_EXEC_NOT_STARTED", 400, () => "exec process is not started"),
  execContainerPaused: define("ENGINE_ERR_EXEC_CONTAINER_PAUSED", 409, (id: string) => `Container ${id} is paused, unpause the container before exec`),
  containerAttachPaused: define("ENGINE_ERR_CONTAINER_ATTACH_PAUSED", 409, (ref: string) => `container ${ref} is paused, unpause the container before attach`),
  containerAttachRestarting: define("ENGINE_ERR_CONTAINER_ATTACH_RESTARTING", 409, (ref: string) => `container ${ref} is restarting, wait until the container is running`),
  execAlreadyStarted: define(
    "ENGINE_ERR_EXEC_ALREADY_STARTED",
    409,
    (id: string, ran: boolean) => `Error: Exec command ${id} ${ran ? "has already run" : "is already running"}`,
  ),
  // containerd's words around the runtime's, the gRPC code last, as Docker's clients show them
  execStartFailed: define("ENGINE_ERR_EXEC_START_FAILED", 500, (message: string) => `OCI runtime exec failed: ${message}: unknown`),
  // the command missing, not executable or a directory, or a working directory that is a file: the request's fault
  execCommandFailed: define("ENGINE_ERR_EXEC_COMMAND_FAILED", 400, (message: string, hint = "") => `OCI runtime exec failed: ${message}: unknown${hint}`),
  detachKeysInvalid: define("ENGINE_ERR_DETACH_KEYS_INVALID", 400, (keys: string) => `Invalid detach keys (${keys}) provided`),
  // an exec's, as Docker's exec create words it (attach's is the one above)
  execDetachKeysInvalid: define("ENGINE_ERR_EXEC_DETACH_KEYS_INVALID", 400, (keys: string) => `Invalid escape keys (${keys}) provided`),
  containerInvalidSignal: define("ENGINE_ERR_CONTAINER_INVALID_SIGNAL", 400, (signal: string) => `Invalid signal: ${signal}`),
  containerKillUnsupportedSignal: define(
    "ENGINE_ERR_CONTAINER_KILL_UNSUPPORTED_SIGNAL",
    400,
    (ref: string, signal: string) => `Cannot kill container: ${ref}: The linux daemon does not support signal ${signal}`,
  ),
  containerKillNotFound: define("ENGINE_ERR_CONTAINER_KILL_NOT_FOUND", 404, (ref: string) => `Cannot kill container: ${ref}: No such container: ${ref}`),
  containerCommitConflict: define(
    "ENGINE_ERR_CONTAINER_COMMIT_CONFLICT",
    409,
    (id: string, state: string) => `You cannot commit container ${id} which is ${state}`,
  ),
  containerInvalidWaitCondition: define(
    "ENGINE_ERR_CONTAINER_INVALID_WAIT_CONDITION",
    400,
    // Docker 28's words (Go's %q); 20.10 took any value as not-running
    (condition: string) => `invalid condition: ${JSON.stringify(condition)}`,
  ),
  containerLogsNoStream: define("ENGINE_ERR_CONTAINER_LOGS_NO_STREAM", 400, () => "Bad parameters: you must choose at least one stream"),
  // a start's HostConfig (API 1.23 and before): the create takes it now
  containerStartWithBody: define("ENGINE_ERR_CONTAINER_START_WITH_BODY", 400, () => "starting container with non-empty request body was deprecated since API v1.22 and removed in v1.24"),
  // Docker's words: the driver is not named (`docker logs` of a `none` container).
  containerLogsUnreadable: define("ENGINE_ERR_CONTAINER_LOGS_UNREADABLE", 501, () => "configured logging driver does not support reading"),
  // The driver's own words, as Docker answers a create (`unknown log opt 'x' for json-file log driver`).
  containerLogConfigInvalid: define("ENGINE_ERR_CONTAINER_LOG_CONFIG_INVALID", 400, (why: string) => why),
  containerLogDriverNotFound: define(
    "ENGINE_ERR_CONTAINER_LOG_DRIVER_NOT_FOUND",
    400,
    (name: string) => `error looking up logging plugin ${name}: plugin "${name}" not found`,
  ),
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
  containerStoppedMeanwhile: define(
    "ENGINE_ERR_CONTAINER_STOPPED_MEANWHILE",
    409,
    (id: string) => `Container ${id} stopped while its files were being opened: try again`,
  ),
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
  containerUpdateConflict: define("ENGINE_ERR_CONTAINER_UPDATE_CONFLICT", 409, (id: string, why: string) => `Cannot update container ${id}: ${why}`),
  containerUpdateRuntimeFailed: define("ENGINE_ERR_CONTAINER_UPDATE_RUNTIME_FAILED", 500, (id: string, why: string) => `Cannot update container ${id}: ${why}`),
  containerTopInvalidArgs: define("ENGINE_ERR_CONTAINER_TOP_INVALID_ARGS", 400, (key: string, value: string) => `specifying "${key}=${value}" is not allowed`),
  containerTopFailed: define("ENGINE_ERR_CONTAINER_TOP_FAILED", 500, (why: string) => why),
  containerTopArgsFailed: define("ENGINE_ERR_CONTAINER_TOP_ARGS_FAILED", 400, (why: string) => why),
  // legacy links (core/containers/links.ts): Docker answers a bad entry and the start-time refusals with 500
  containerLinkInvalid: define("ENGINE_ERR_CONTAINER_LINK_INVALID", 400, (why: string) => why),
  containerLinkTargetNotFound: define("ENGINE_ERR_CONTAINER_LINK_TARGET_NOT_FOUND", 400, (name: string, why: string) => `could not get container for ${name}: ${why}`),
  containerLinkNotRunning: define(
    "ENGINE_ERR_CONTAINER_LINK_NOT_RUNNING",
    409,
    (child: string, link: string) => `Cannot link to a non running container: ${child} AS ${link}`,
  ),
  containerLinkNotOnDefault: define("ENGINE_ERR_CONTAINER_LINK_NOT_ON_DEFAULT", 409, (child: string) => `Cannot link to ${child}, as it does not belong to the default network`),
  containerLinkDefaultName: define("ENGINE_ERR_CONTAINER_LINK_DEFAULT_NAME", 409, () => "Conflict, cannot remove the default link name of the container"),
} as const;
