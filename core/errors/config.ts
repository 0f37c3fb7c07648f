/** The error catalogue, options, configuration, plugins and the daemon process (core/errors.ts assembles it). */
import { define } from "./define.js";

export const configErrors = {
  // --- options and configuration ---
  optionInvalidValue: define(
    "ENGINE_ERR_OPTION_INVALID_VALUE",
    400,
    (option: string, value: string, why: string) => `invalid value "${value}" for ${option}: ${why}`,
  ),
  optionUnknown: define("ENGINE_ERR_OPTION_UNKNOWN", 400, (option: string) => `unknown flag: ${option}`),
  optionUnknownShorthand: define("ENGINE_ERR_OPTION_UNKNOWN_SHORTHAND", 400, (letter: string, arg: string) => `unknown shorthand flag: '${letter}' in ${arg}`),
  optionNeedsArgument: define("ENGINE_ERR_OPTION_NEEDS_ARGUMENT", 400, (option: string) => `flag needs an argument: ${option}`),
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
  /** The daemon's --log-opt refused by its --log-driver at start, in Docker's words. */
  configLogOpts: define("ENGINE_ERR_CONFIG_LOG_OPTS", 400, (why: string) => `failed to set log opts: ${why}`),

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

} as const;
