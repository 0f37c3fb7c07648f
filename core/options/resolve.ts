/**
 * Turns what the operator gave into the typed daemon configuration. Each option takes its
 * value from the first source that sets it: a flag, the configuration file, an environment
 * variable, the table's default. An option set both by a flag and in the file is an error
 * whatever the values, naming every such option with both values in Docker's words: the file
 * key (a member of an object by its own name: `http-proxy`, not `proxies.http-proxy`), a string
 * as it is (Go's `%v`), other values as JSON, credentials masked.
 */
import { errors } from "../errors.js";
import { definitionOf, optionNames, type DaemonConfig, type OptionDefinition, type OptionName } from "./table.js";
import { ValueError } from "./value-types.js";
import { shownValue } from "./mask-credentials.js";

export interface ResolvedOptions {
  config: DaemonConfig;
  /** Options given as flags. */
  given: ReadonlySet<OptionName>;
  /** Options set in the configuration file. */
  fromFile: ReadonlySet<OptionName>;
}

export function resolveOptions(
  flags: ReadonlyMap<OptionName, readonly string[]>,
  env: NodeJS.ProcessEnv,
  file: ReadonlyMap<OptionName, unknown> = new Map(),
  source = "the configuration file",
): ResolvedOptions {
  // in the flags' names' order, as Docker lists them (pflag visits its flags sorted)
  const conflicts = [...flags.keys()].filter((name) => file.has(name) && !definitionOf(name).action).sort();
  if (conflicts.length > 0) {
    const detail = conflicts.map((name) => {
      const def = definitionOf(name);
      const fromFlag = parseFlag(def, flags.get(name)!);
      const key = (def.key ?? name).split(".").pop();
      return `${key}: (from flag: ${show(def, fromFlag)}, from file: ${show(def, file.get(name))})`;
    });
    throw errors.configConflict(source, detail);
  }
  const config = {} as Record<OptionName, unknown>;
  for (const name of optionNames) {
    const def = definitionOf(name);
    const raw = flags.get(name);
    const envName = envNames(def).find((v) => env[v]);
    if (raw && raw.length > 0) config[name] = parseFlag(def, raw);
    else if (file.has(name)) config[name] = file.get(name);
    else if (envName) config[name] = parseValue(def, env[envName]!, undefined, envName);
    else config[name] = typeof def.default === "function" ? def.default(env) : structuredClone(def.default);
  }
  return {
    config: config as DaemonConfig,
    given: new Set(flags.keys()),
    fromFile: new Set([...file.keys()]),
  };
}

function envNames(def: OptionDefinition<unknown>): readonly string[] {
  return def.env === undefined ? [] : typeof def.env === "string" ? [def.env] : def.env;
}

function parseFlag(def: OptionDefinition<unknown>, raw: readonly string[]): unknown {
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

function show(def: OptionDefinition<unknown>, value: unknown): string {
  const shown = shownValue(def, value);
  return typeof shown === "string" ? shown : JSON.stringify(shown);
}
