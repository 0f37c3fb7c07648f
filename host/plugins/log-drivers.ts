/**
 * Log drivers by name, loaded as plugins on first use (built-in `plugins/log-<name>`, a package
 * `engine-plugin-log-<name>`, or a path), each once: engined uses them to check a container's
 * log options and to read logs back, the supervisor process to write them.
 */
import type { LogDriver } from "../../core/contracts/log.js";
import { createHooks } from "../../core/hooks.js";
import { readHostFacts } from "../host-facts.js";
import { createLogger } from "../logger.js";
import { loadPlugins, type LoaderDeps } from "./plugin-loader.js";
import { defaultResolveOptions } from "./resolve-plugin.js";

/** Finds a log driver by name; a name no plugin serves is an Error naming it. */
export type LogDriverSource = (name: string) => Promise<LogDriver>;

export function logDriverSource(loader: LoaderDeps, defaults: () => Record<string, string> = () => ({})): LogDriverSource {
  const drivers = new Map<string, Promise<LogDriver>>();
  const load = async (name: string): Promise<LogDriver> => {
    await loadPlugins([{ kind: "log", name }], loader);
    const driver = await loader.hooks.createLogDriver.get(name)?.promise({ dataRoot: loader.dataRoot, defaults: defaults() });
    if (!driver) throw new Error(`log driver ${name} was loaded but made no driver`);
    return driver;
  };
  return (name) => {
    if (!drivers.has(name)) {
      drivers.set(name, load(name).catch((err: Error) => {
        drivers.delete(name);
        throw err;
      }));
    }
    return drivers.get(name)!;
  };
}

/** The supervisor's source: a plugin host of its own, logging to its stderr. */
export function supervisorLogDrivers(root: string): LogDriverSource {
  const log = createLogger({ level: "info", format: "text", rawLogs: true });
  return logDriverSource({ hooks: createHooks(), log, host: readHostFacts(), dataRoot: root, execRoot: root, resolve: defaultResolveOptions() });
}
