/**
 * Turns what the operator gave (flag occurrences as text, and the environment) into the typed
 * daemon configuration, and remembers which options were given on the command line: later
 * sources (the configuration file) may set only the others.
 */
import { errors } from "../errors.js";
import { optionNames, optionTable, type DaemonConfig, type OptionDefinition, type OptionName } from "./table.js";
import { ValueError } from "./value-types.js";

export interface ResolvedOptions {
  config: DaemonConfig;
  /** Options given as flags. */
  given: ReadonlySet<OptionName>;
}

/** `occurrences` holds, for each option given as a flag, its values as text in order. */
export function resolveOptions(
  occurrences: ReadonlyMap<OptionName, readonly string[]>,
  env: NodeJS.ProcessEnv,
): ResolvedOptions {
  const config = {} as Record<OptionName, unknown>;
  for (const name of optionNames) {
    const def = optionTable[name] as OptionDefinition<unknown>;
    const raw = occurrences.get(name);
    if (raw && raw.length > 0) {
      config[name] = parseOccurrences(def, raw);
    } else if (def.env && env[def.env] && typeof def.default !== "function") {
      config[name] = parseValue(def, env[def.env]!, undefined, def.env);
    } else {
      config[name] = typeof def.default === "function" ? def.default(env) : structuredClone(def.default);
    }
  }
  return { config: config as DaemonConfig, given: new Set([...occurrences.keys()]) };
}

function parseOccurrences(def: OptionDefinition<unknown>, raw: readonly string[]): unknown {
  let value: unknown;
  for (const text of raw) value = parseValue(def, text, value, `--${def.flag}`);
  return value;
}

function parseValue(def: OptionDefinition<unknown>, text: string, previous: unknown, where: string): unknown {
  try {
    return def.type.parse(text, previous);
  } catch (err) {
    if (err instanceof ValueError) throw errors.optionInvalidValue(where, text, err.message);
    throw err;
  }
}
