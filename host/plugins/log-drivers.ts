/**
 * Log drivers by name, made by the driver registry on first use (built-in `plugins/log-<name>`,
 * a package `engine-plugin-log-<name>`, or, when the operator chose it, a path), each once:
 * engined uses them to check a container's log options and to read logs back, the supervisor
 * process to write them. A driver that cannot read is kept wrapped in a local cache (dual
 * logging). (A logger that cannot be made fails the start with Docker's words: the supervisor
 * says so, see LOGGER_FAILED.)
 */
import type { LogDriver } from "../../core/contracts/log.js";
import { createHooks } from "../../core/hooks.js";
import { readHostFacts } from "../host-facts.js";
import { createLogger } from "../logger.js";
import { DriverRegistry, type PluginHost } from "./driver-registry.js";
import { CACHE_DRIVER, withLocalCache } from "./dual-logging.js";
import { defaultResolveOptions, type ChosenBy } from "./resolve-plugin.js";

/**
 * Finds a log driver by name; a name no plugin serves is an Error naming it, and so is a path a
 * client chose. (A path the operator chose is made once and kept under that path, so a client
 * that repeats the daemon's own `--log-driver` is given that driver and loads nothing.)
 */
export type LogDriverSource = (name: string, chosenBy: ChosenBy) => Promise<LogDriver>;

export function logDriverSource(host: PluginHost, defaults: () => Record<string, string> = () => ({})): LogDriverSource {
  const source: LogDriverSource = (name, chosenBy) =>
    host.drivers.driver("log", name, {
      chosenBy,
      context: () => ({ dataRoot: host.dataRoot, defaults: defaults() }),
      // A driver that cannot read is read through a local cache (dual logging), as in Docker;
      // not `none`, which Docker's daemon never caches (its `docker logs` is a 501).
      wrap: (driver) =>
        driver.capabilities.includes("read") || name === "none" ? driver : withLocalCache(driver, () => source(CACHE_DRIVER, "operator")),
    });
  return source;
}

/**
 * The supervisor's source: a plugin host of its own, logging to its stderr. Its names come from
 * engined, which checked them (a client's by name only) before it asked for a logger.
 */
export function supervisorLogDrivers(root: string): LogDriverSource {
  const log = createLogger({ level: "info", format: "text", rawLogs: true });
  const registry = new DriverRegistry({ hooks: createHooks(), log, host: readHostFacts(), dataRoot: root, execRoot: root, resolve: defaultResolveOptions() });
  return logDriverSource(registry.host());
}
