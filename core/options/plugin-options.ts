/**
 * The options a plugin declares in its manifest (`manifest.options`), read with the value types
 * of the option table. One function reads them for every kind and every source (a storage
 * driver's `--storage-opt`, a log driver's `--log-opt` and `LogConfig.Config`, a network's and a
 * volume's `-o`): `parsePluginOptions` refuses a key the manifest does not declare and a value
 * its type cannot read, and returns the values typed, with the declared defaults filled. It
 * says what is wrong as a `PluginOptionProblem`; the host words it as each kind's API does
 * (host/plugins/plugin-options.ts).
 *
 * A type is named, not given as an object, so that a manifest stays plain data (JSON in a
 * package, validated by the loader) and a third-party plugin needs nothing of the engine's code
 * to declare one.
 */
import type { PluginManifest, PluginOptionSpec } from "../contracts/plugin.js";
import { bytes, parseBytes } from "./value-types-structured.js";
import { bool, int, oneOf, string, ValueError, type ValueType } from "./value-types.js";

/** A size in bytes above zero (`10G`): `bytes`, which takes 0. */
const size: ValueType<number> = {
  ...bytes,
  name: "size",
  parse(raw) {
    const n = parseBytes(raw);
    if (!(n > 0)) throw new ValueError("must be larger than 0");
    return n;
  },
  fromFile: (value) => size.parse(String(value), undefined),
};

/** The value types an option may name, each one of the option table's. */
export const PLUGIN_OPTION_TYPES = {
  /** Any text (the default). */
  string: string(),
  /** Go's ParseBool words: true, false, 1, 0, t, f. */
  bool,
  /** An integer. */
  int: int(),
  /** An integer of at least 0. */
  uint: int(0),
  /** A size in bytes, 0 allowed: `512k`, `64m`, `1.5G` (1024-based). */
  bytes,
  /** A size in bytes above 0. */
  size,
} as const;

export type PluginOptionTypeName = keyof typeof PLUGIN_OPTION_TYPES;

/** The values of a plugin's options as their types read them (numbers, booleans, text). */
export type PluginOptionValues = Record<string, unknown>;

/** Why an option was refused: a key nobody declared, or a value its type cannot read. */
export class PluginOptionProblem extends Error {
  constructor(
    readonly problem: "unknown" | "invalid",
    readonly key: string,
    /** The keys the plugin declares, in the manifest's order. */
    readonly known: readonly string[],
    readonly value?: string,
    /** What the type expected (`expected an integer`). */
    readonly why?: string,
  ) {
    super(problem === "unknown" ? `unknown option ${key}` : `invalid ${key} ${JSON.stringify(value)}: ${why}`);
  }
}

/** The value type of one declared option: `values` makes it one of those words. */
export function typeOfOption(spec: PluginOptionSpec): ValueType<unknown> {
  if (spec.values && spec.values.length > 0) return oneOf(...spec.values) as ValueType<unknown>;
  return PLUGIN_OPTION_TYPES[spec.type ?? "string"] as ValueType<unknown>;
}

/** The name of an option's type for people: `bool`, `size`, or `one of a, b`. */
export function typeNameOfOption(spec: PluginOptionSpec): string {
  return spec.values && spec.values.length > 0 ? `one of ${spec.values.join(", ")}` : (spec.type ?? "string");
}

/**
 * Reads `given` against what `manifest` declares. A manifest without `options` declares
 * nothing: the plugin takes any key, and the values are returned as given. With `options`,
 * every key must be declared, or be one of `implied` (keys every plugin of the kind takes, such
 * as the log options Docker's daemon reads for all drivers, which pass as text); each declared
 * value is read by its type, and a declared `default` fills an option not given.
 * Throws a PluginOptionProblem for the first key (in the order given) that is wrong.
 */
export function parsePluginOptions(
  manifest: Pick<PluginManifest, "options">,
  given: Readonly<Record<string, string>>,
  implied: readonly string[] = [],
): PluginOptionValues {
  const declared = manifest.options;
  if (!declared) return { ...given };
  const known = Object.keys(declared);
  const values: PluginOptionValues = {};
  for (const [key, raw] of Object.entries(given)) {
    const spec = Object.hasOwn(declared, key) ? declared[key] : undefined;
    if (!spec) {
      if (!implied.includes(key)) throw new PluginOptionProblem("unknown", key, known);
      values[key] = raw;
      continue;
    }
    values[key] = readValue(spec, key, raw, known);
  }
  for (const [key, spec] of Object.entries(declared)) {
    if (!(key in values) && spec.default !== undefined) values[key] = readValue(spec, key, spec.default, known);
  }
  return values;
}

function readValue(spec: PluginOptionSpec, key: string, raw: string, known: readonly string[]): unknown {
  try {
    return typeOfOption(spec).parse(raw, undefined);
  } catch (err) {
    if (err instanceof ValueError) throw new PluginOptionProblem("invalid", key, known, raw, err.message);
    throw err;
  }
}
