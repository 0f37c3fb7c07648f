/**
 * The one path every plugin option goes through (see core/contracts/plugin.ts, Vocabulary):
 * the manifest's declarations read the given options (core/options/plugin-options.ts), and a
 * refusal is worded as the kind's API words it, with Docker's message where Docker has one:
 *   storage  `<driver>: unknown option <key>`, `<driver>: invalid <key> "<value>": <why>`
 *            (catalogue 400s; at daemon start they stop the daemon);
 *   log      `unknown log opt '<key>' for <driver> log driver` (Docker's json-file words);
 *   volume   `invalid option: "<key>"` (Docker's local driver), with the keys the driver knows;
 *   network  `unknown option for the <driver> driver: <key>`.
 * The per-call kinds throw plain Errors, which the host answers as the check's 400
 * (`create <volume>: <message>`, a container create's log options, a network create).
 */
import type { LogDriver } from "../../core/contracts/log.js";
import type { NetworkDriver, NetworkSpec } from "../../core/contracts/network.js";
import type { PluginKind, PluginManifest } from "../../core/contracts/plugin.js";
import type { VolumeDriver } from "../../core/contracts/volume.js";
import { errors } from "../../core/errors.js";
import { checkCommonLogOptions, COMMON_LOG_OPTIONS } from "../../core/log-options.js";
import { parsePluginOptions, PluginOptionProblem, type PluginOptionValues } from "../../core/options/plugin-options.js";

/** `a, b and c`. */
function listed(keys: readonly string[]): string {
  return keys.length < 2 ? keys.join("") : `${keys.slice(0, -1).join(", ")} and ${keys.at(-1)}`;
}

function worded(kind: PluginKind, driver: string, p: PluginOptionProblem): Error {
  const unknown = p.problem === "unknown";
  switch (kind) {
    case "storage":
      return unknown ? errors.storageDriverOptionUnknown(driver, p.key, p.known) : errors.storageDriverOptionInvalid(driver, p.key, p.value!, p.why!);
    case "log":
      return new Error(unknown ? `unknown log opt '${p.key}' for ${driver} log driver` : `invalid value for log opt '${p.key}' (${JSON.stringify(p.value)}): ${p.why}`);
    case "volume":
      return new Error(
        unknown
          ? `invalid option: ${JSON.stringify(p.key)} (the ${driver} driver knows ${p.known.length ? listed(p.known) : "no options"})`
          : `invalid option ${JSON.stringify(p.key)}: ${JSON.stringify(p.value)}: ${p.why}`,
      );
    default:
      return new Error(unknown ? `unknown option for the ${driver} driver: ${p.key}` : `invalid value for option ${p.key} (${JSON.stringify(p.value)}): ${p.why}`);
  }
}

/**
 * The options as the plugin's manifest reads them (typed, defaults filled); throws the kind's
 * error for an undeclared key or a value its type cannot read.
 */
export function checkPluginOptions(kind: PluginKind, driver: string, manifest: PluginManifest, given: Readonly<Record<string, string>>): PluginOptionValues {
  // Docker's daemon reads these for every log driver but `none`, before the driver's own.
  if (kind === "log" && manifest.options) checkCommonLogOptions(given);
  try {
    return parsePluginOptions(manifest, given, kind === "log" ? COMMON_LOG_OPTIONS : []);
  } catch (err) {
    throw err instanceof PluginOptionProblem ? worded(kind, driver, err) : err;
  }
}

/**
 * A driver whose option checks include its manifest's: its own `validateOptions` runs first
 * (its words win where it has them: Docker's drivers each word an unknown key their way), then
 * the declarations, so that no key or value the manifest refuses reaches it. A volume driver's
 * `create` is checked alike and given the typed values.
 */
export function withDeclaredOptions<D extends LogDriver | VolumeDriver | NetworkDriver>(kind: PluginKind, name: string, manifest: PluginManifest, driver: D): D {
  if (!manifest.options) return driver;
  const check = (options: Record<string, string>) => checkPluginOptions(kind, name, manifest, options);
  const overrides: Record<string, unknown> = {};
  if ("validateOptions" in driver) {
    overrides.validateOptions = (options: Record<string, string>): PluginOptionValues => {
      driver.validateOptions(options);
      return check(options);
    };
  }
  if (kind === "volume") {
    const volume = driver as VolumeDriver;
    overrides.create = async (volumeName: string, options: Record<string, string>) => {
      const values = (overrides.validateOptions as (o: Record<string, string>) => PluginOptionValues)(options);
      return volume.create(volumeName, options, values);
    };
  }
  if (kind === "network") {
    const network = driver as NetworkDriver;
    overrides.checkNetwork = (net: NetworkSpec, others: readonly NetworkSpec[]) => {
      network.checkNetwork?.(net, others);
      check(net.options);
    };
  }
  // A proxy, not a copy: the driver's own methods run on the driver itself (its private state).
  return new Proxy(driver, {
    get(target, prop, receiver) {
      if (typeof prop === "string" && Object.hasOwn(overrides, prop)) return overrides[prop];
      const value = Reflect.get(target, prop, receiver === target ? receiver : target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
