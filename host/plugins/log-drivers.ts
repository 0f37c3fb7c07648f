/**
 * Log drivers by name, loaded as plugins on first use (built-in `plugins/log-<name>`, a package
 * `engine-plugin-log-<name>`, or, when the operator chose it, a path), each once: engined uses
 * them to check a container's log options and to read logs back, the supervisor process to
 * write them.
 */
import type { LogDriver } from "../../core/contracts/log.js";
import { parsePluginId } from "../../core/contracts/plugin.js";
import { errors } from "../../core/errors.js";
import { createHooks } from "../../core/hooks.js";
import { readHostFacts } from "../host-facts.js";
import { createLogger } from "../logger.js";
import { CACHE_DRIVER, withLocalCache } from "./dual-logging.js";
import { loadPlugins, type LoaderDeps } from "./plugin-loader.js";
import { defaultResolveOptions, isPathReference, type ChosenBy } from "./resolve-plugin.js";

/**
 * Finds a log driver by name; a name no plugin serves is an Error naming it, and so is a path a
 * client chose. (A path the operator chose is made once and cached under that path, so a client
 * that repeats the daemon's own `--log-driver` is given that driver and loads nothing.)
 */
export type LogDriverSource = (name: string, chosenBy: ChosenBy) => Promise<LogDriver>;

export function logDriverSource(loader: LoaderDeps, defaults: () => Record<string, string> = () => ({})): LogDriverSource {
  const drivers = new Map<string, Promise<LogDriver>>();
  const load = async (name: string, chosenBy: ChosenBy): Promise<LogDriver> => {
    const applied = await loadPlugins([{ kind: "log", name, chosenBy }], loader);
    // a plugin loaded from a path taps the hook under its own name
    const own = applied.find((p) => p.plugin.manifest.kind === "log");
    const key = isPathReference(name) && own ? parsePluginId(own.id).name : name;
    const driver = await loader.hooks.createLogDriver.get(key)?.promise({ dataRoot: loader.dataRoot, defaults: defaults() });
    if (!driver) throw new Error(`log driver ${name} was loaded but made no driver`);
    // A driver that cannot read is read through a local cache (dual logging), as in Docker.
    const readable = driver.capabilities.includes("read") ? driver : withLocalCache(driver, () => source(CACHE_DRIVER, "operator"));
    return withStartErrors(readable);
  };
  const source: LogDriverSource = (name, chosenBy) => {
    if (!drivers.has(name)) {
      if (chosenBy === "client" && isPathReference(name)) return Promise.reject(errors.pluginPathFromClient("log", name));
      drivers.set(name, load(name, chosenBy).catch((err: Error) => {
        drivers.delete(name);
        throw err;
      }));
    }
    return drivers.get(name)!;
  };
  return source;
}

/**
 * Docker's prefix of a logger that cannot be made; the supervisor's answer carries it to
 * engined as text, which turns it into ENGINE_ERR_CONTAINER_LOG_INIT_FAILED.
 */
export const LOG_INIT_FAILED = "failed to initialize logging driver: ";

/** A logger that cannot be made fails the container's start with Docker's words. */
function withStartErrors(driver: LogDriver): LogDriver {
  return {
    ...driver,
    async createLogger(ctx) {
      try {
        return await driver.createLogger(ctx);
      } catch (err) {
        throw new Error(`${LOG_INIT_FAILED}${(err as Error).message}`);
      }
    },
  };
}

/**
 * The supervisor's source: a plugin host of its own, logging to its stderr. Its names come from
 * engined, which checked them (a client's by name only) before it asked for a logger.
 */
export function supervisorLogDrivers(root: string): LogDriverSource {
  const log = createLogger({ level: "info", format: "text", rawLogs: true });
  return logDriverSource({ hooks: createHooks(), log, host: readHostFacts(), dataRoot: root, execRoot: root, resolve: defaultResolveOptions() });
}
