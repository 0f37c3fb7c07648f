/**
 * The command line of `engined`, parsed with meow from the option table. Every value is taken
 * as text and parsed by the table's value types, so that a bad value is an error that names
 * the flag (meow alone would turn `--mtu abc` into null).
 */
import meow from "meow";
import { errors } from "../core/errors.js";
import { definitionOf, optionNames, type OptionDefinition, type OptionName } from "../core/options/table.js";
import { bool, ValueError } from "../core/options/value-types.js";

type MeowFlag = { type: "string" | "boolean"; shortFlag?: string; isMultiple?: boolean };

/**
 * meow hands flags to yargs-parser, which reads `--no-X` as "X is false" and camel-cases keys
 * its own way (`ip6tables` -> `ip6Tables`). Docker's flags know neither: `--no-proxy` is a
 * flag of its own, and `--no-icc` is unknown. So flags that start with `no-` travel under an
 * alias, other `--no-` words are refused, and keys are compared without case and dashes.
 */
const NO_ALIAS = "engine-literal-";
const norm = (key: string) => key.replace(/[^a-z0-9]/gi, "").toLowerCase();
const meowKey = (flag: string) => (flag.startsWith("no-") ? NO_ALIAS + flag : flag).replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
/** Options that have a flag (some are set only in the configuration file). */
const flagOptions = optionNames.filter((name) => definitionOf(name).flag !== undefined);
const isBool = (def: OptionDefinition<unknown>) => def.type === bool;

/** Parses argv (without the node and script paths) into option occurrences as text. */
export function parseDaemonArgs(given: readonly string[]): Map<OptionName, string[]> {
  const argv = protectNoFlags(given);
  checkBooleanValues(given);
  const flags: Record<string, MeowFlag> = {};
  for (const name of flagOptions) {
    const def = definitionOf(name);
    flags[meowKey(def.flag!)] = {
      type: isBool(def) ? "boolean" : "string",
      ...(def.short ? { shortFlag: def.short } : {}),
      // Every non-boolean is collected as a list; meow would refuse a repeated single flag.
      ...(isBool(def) ? {} : { isMultiple: true }),
    };
  }
  const known = new Set(Object.keys(flags).map(norm));
  let cli;
  try {
    cli = meow({
      importMeta: import.meta,
      argv: [...argv],
      flags,
      autoHelp: false,
      autoVersion: false,
      allowUnknownFlags: true,
      booleanDefault: undefined,
      help: false,
    });
  } catch (err) {
    throw errors.optionInvalidValue("command line", argv.join(" "), (err as Error).message);
  }
  if (cli.input.length > 0) {
    throw errors.optionInvalidValue("command line", cli.input.join(" "), "engined takes no arguments, only flags");
  }
  const out = new Map<OptionName, string[]>();
  for (const key of Object.keys(cli.flags)) {
    if (!known.has(norm(key))) throw errors.optionUnknown(unknownFlagSpelling(given, key));
  }
  for (const name of flagOptions) {
    const def = definitionOf(name);
    const wanted = norm(meowKey(def.flag!));
    const key = Object.keys(cli.flags).find((k) => norm(k) === wanted);
    const value = key === undefined ? undefined : (cli.flags as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (isBool(def)) {
      out.set(name, [String(value)]);
      continue;
    }
    const values = value as string[];
    if (values.length === 0) continue;
    // As with Docker's flags, a single-valued flag given twice keeps its last value.
    out.set(name, def.type.repeatable ? values : values.slice(-1));
  }
  return out;
}

function protectNoFlags(argv: readonly string[]): string[] {
  return argv.map((arg) => {
    const m = /^--(no-[a-z0-9-]+)(=.*)?$/.exec(arg);
    if (!m) return arg;
    if (!flagOptions.some((n) => definitionOf(n).flag === m[1])) throw errors.optionUnknown(`--${m[1]}`);
    return `--${NO_ALIAS}${m[1]}${m[2] ?? ""}`;
  });
}

/** meow reads `--debug=maybe` as false; Docker's flags refuse it. */
function checkBooleanValues(argv: readonly string[]): void {
  for (const arg of argv) {
    const m = /^--([a-z0-9-]+)=(.*)$/.exec(arg);
    if (!m) continue;
    const name = flagOptions.find((n) => definitionOf(n).flag === m[1]);
    const def = name === undefined ? undefined : definitionOf(name);
    if (!def || !isBool(def)) continue;
    try {
      bool.parse(m[2], undefined);
    } catch (err) {
      if (err instanceof ValueError) throw errors.optionInvalidValue(`--${def.flag}`, m[2], err.message);
    }
  }
}

function unknownFlagSpelling(argv: readonly string[], key: string): string {
  const kebab = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  const seen = argv.find((a) => a === `--${kebab}` || a.startsWith(`--${kebab}=`) || a === `-${key}`);
  return seen?.split("=")[0] ?? (key.length === 1 ? `-${key}` : `--${kebab}`);
}
