/**
 * A container's log driver and options, the way Docker chooses them: HostConfig.LogConfig.Type,
 * else `--log-driver`; the daemon's `--log-opt` defaults apply only to a container that uses
 * the daemon's driver, under the container's own options.
 */
import type { LoggerContext } from "../../core/contracts/log.js";
import type { ContainerRecord } from "../../core/containers/container-store.js";
import { EngineError, errors } from "../../core/errors.js";
import type { DaemonConfig } from "../../core/options/table.js";
import type { LogDriverSource } from "../plugins/log-drivers.js";
import type { ChosenBy } from "../plugins/resolve-plugin.js";

export interface LogSettings {
  driver: string;
  /**
   * Who chose the driver: the container's own LogConfig.Type is a client's choice (by name
   * only), unless it repeats the daemon's `--log-driver`, which is the operator's.
   */
  chosenBy: ChosenBy;
  options: Record<string, string>;
}

export function logSettings(hostConfig: ContainerRecord["HostConfig"], config: DaemonConfig): LogSettings {
  const own = hostConfig.LogConfig;
  const driver = own?.Type || config["log-driver"];
  const defaults = driver === config["log-driver"] ? config["log-opt"] : {};
  return { driver, chosenBy: driver === config["log-driver"] ? "operator" : "client", options: { ...defaults, ...(own?.Config ?? {}) } };
}

/** Loads the driver and checks the options: a 400 naming what is wrong (at create, before anything is made). */
export async function checkLogSettings(settings: LogSettings, drivers: LogDriverSource): Promise<void> {
  let driver;
  try {
    driver = await drivers(settings.driver, settings.chosenBy);
  } catch (err) {
    if (err instanceof EngineError && err.code === errors.pluginPathFromClient.code) throw err;
    // A driver that is nowhere is Docker's unknown logging plugin: the folders searched are no business of the client's.
    if (err instanceof EngineError && err.code === errors.pluginNotFound.code) throw errors.containerLogDriverNotFound(settings.driver);
    throw errors.containerLogConfigInvalid(`log driver "${settings.driver}": ${(err as Error).message}`);
  }
  try {
    driver.validateOptions(settings.options);
  } catch (err) {
    throw errors.containerLogConfigInvalid((err as Error).message);
  }
}

/** What a logger or reader of this container is made with. */
export function loggerContext(c: ContainerRecord, logDir: string, options: Record<string, string>): LoggerContext {
  return {
    containerId: c.Id,
    containerName: c.Name,
    imageName: c.Config.Image,
    imageId: c.Image,
    labels: { ...(c.Config.Labels ?? {}) },
    env: [...(c.Config.Env ?? [])],
    logDir,
    options,
  };
}
