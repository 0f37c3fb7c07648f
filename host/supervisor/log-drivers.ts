/**
 * Log drivers for the supervisor process, loaded as plugins the way engined loads them
 * (built-in `plugins/log-<name>`, a package `engine-plugin-log-<name>`, or a path), each once.
 */
import type { LogDriver } from "../../core/contracts/log.js";
import { createHooks } from "../../core/hooks.js";
import { readHostFacts } from "../host-facts.js";
import { createLogger } from "../logger.js";
import { loadPlugins } from "../plugins/plugin-loader.js";
import { defaultResolveOptions } from "../plugins/resolve-plugin.js";
import type { LogDriverSource } from "./supervisor.js";

export function logDriverLoader(root: string): LogDriverSource {
  const hooks = createHooks();
  const log = createLogger({ level: "info", format: "text", rawLogs: true });
  const drivers = new Map<string, Promise<LogDriver>>();
  const load = async (name: string): Promise<LogDriver> => {
    await loadPlugins([{ kind: "log", name }], { hooks, log, host: readHostFacts(), dataRoot: root, execRoot: root, resolve: defaultResolveOptions() });
    const driver = await hooks.createLogDriver.get(name)?.promise({ dataRoot: root, defaults: {} });
    if (!driver) throw new Error(`log driver ${name} was loaded but made no driver`);
    return driver;
  };
  return (name) => {
    if (!drivers.has(name)) drivers.set(name, load(name).catch((err: Error) => {
      drivers.delete(name);
      throw err;
    }));
    return drivers.get(name)!;
  };
}
