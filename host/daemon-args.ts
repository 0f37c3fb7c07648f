/**
 * The command line of `engined`, read as Go's pflag reads dockerd's, from the option table:
 * `--name value`, `--name=value`, `-x value`, `-xvalue`, `-x=value`; a boolean is `--name` or
 * `--name=<bool>` (never a separate word), and boolean shorthands group (`-Dv`); `--` ends the
 * flags. Every value is kept as text, in order, and parsed later by the table's value types, so
 * that a bad value is an error that names the flag. engined takes no arguments, only flags.
 *
 * Its own parser rather than a general one: dockerd's grammar is small, and a general parser
 * brings its own (negations such as `--no-proxy` read as "proxy is false", camel-cased keys)
 * that must then be undone, and was the largest cost of a start after the HTTP client.
 */
import { errors } from "../core/errors.js";
import { definitionOf, optionNames, type OptionDefinition, type OptionName } from "../core/options/table.js";
import { bool, ValueError } from "../core/options/value-types.js";

const isBool = (def: OptionDefinition<unknown>) => def.type === bool;

/** Options that have a flag (some are set only in the configuration file), by long and short name. */
const byLong = new Map<string, OptionName>();
const byShort = new Map<string, OptionName>();
for (const name of optionNames) {
  const def = definitionOf(name);
  if (def.flag === undefined) continue;
  byLong.set(def.flag, name);
  if (def.short) byShort.set(def.short, name);
}

/** Parses argv (without the node and script paths) into option occurrences as text. */
export function parseDaemonArgs(given: readonly string[]): Map<OptionName, string[]> {
  const seen = new Map<OptionName, string[]>();
  const add = (name: OptionName, value: string) => seen.set(name, [...(seen.get(name) ?? []), value]);
  const args: string[] = [];
  for (let i = 0; i < given.length; i++) {
    const arg = given[i];
    if (arg === "--") {
      args.push(...given.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const long = arg.slice(2, eq < 0 ? undefined : eq);
      const name = byLong.get(long);
      if (name === undefined) throw errors.optionUnknown(`--${long}`);
      const def = definitionOf(name);
      if (eq >= 0) add(name, checkedBool(def, `--${long}`, arg.slice(eq + 1)));
      else if (isBool(def)) add(name, "true");
      else if (i + 1 < given.length) add(name, given[++i]);
      else throw errors.optionNeedsArgument(`--${long}`);
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      i = readShorthands(given, i, add);
      continue;
    }
    args.push(arg);
  }
  if (args.length > 0) throw errors.optionInvalidValue("command line", args.join(" "), "engined takes no arguments, only flags");
  // in the option table's order (what reports of several flags list them by), whatever the
  // command line's; as with Docker's flags, a single-valued flag given twice keeps its last value
  const out = new Map<OptionName, string[]>();
  for (const name of byLong.values()) {
    const values = seen.get(name);
    if (values) out.set(name, definitionOf(name).type.repeatable ? values : values.slice(-1));
  }
  return out;
}

/** `-Dv`, `-H unix://...`, `-Hunix://...`, `-H=unix://...`; the index of the last word it used. */
function readShorthands(given: readonly string[], at: number, add: (name: OptionName, value: string) => void): number {
  const arg = given[at];
  for (let k = 1; k < arg.length; k++) {
    const letter = arg[k];
    const name = byShort.get(letter);
    if (name === undefined) throw errors.optionUnknownShorthand(letter, arg);
    const def = definitionOf(name);
    const rest = arg.slice(k + 1);
    if (rest.startsWith("=")) {
      add(name, checkedBool(def, `-${letter}`, rest.slice(1)));
      return at;
    }
    if (isBool(def)) {
      add(name, "true");
      continue;
    }
    if (rest !== "") {
      add(name, rest);
      return at;
    }
    if (at + 1 >= given.length) throw errors.optionNeedsArgument(`-${letter}`);
    add(name, given[at + 1]);
    return at + 1;
  }
  return at;
}

/** A boolean's `=value` must be one (`--debug=maybe` is refused, as pflag refuses it). */
function checkedBool(def: OptionDefinition<unknown>, spelled: string, value: string): string {
  if (!isBool(def)) return value;
  try {
    bool.parse(value, undefined);
  } catch (err) {
    if (err instanceof ValueError) throw errors.optionInvalidValue(spelled, value, err.message);
    throw err;
  }
  return value;
}
