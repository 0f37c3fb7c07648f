/**
 * The command line of `engined`, parsed with meow from the option table. Every value is taken
 * as text and parsed by the table's value types, so that a bad value is an error that names
 * the flag (meow alone would turn `--mtu abc` into null).
 */
import meow from "meow";
import { errors } from "../core/errors.js";
import { optionNames, optionTable, type OptionDefinition, type OptionName } from "../core/options/table.js";
import { bool, ValueError } from "../core/options/value-types.js";

type MeowFlag = { type: "string" | "boolean"; shortFlag?: string; isMultiple?: boolean };

const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
const isBool = (def: OptionDefinition<unknown>) => def.type === bool;

/** Parses argv (without the node and script paths) into option occurrences as text. */
export function parseDaemonArgs(argv: readonly string[]): Map<OptionName, string[]> {
  checkBooleanValues(argv);
  const flags: Record<string, MeowFlag> = {};
  for (const name of optionNames) {
    const def = optionTable[name] as OptionDefinition<unknown>;
    flags[camel(def.flag)] = {
      type: isBool(def) ? "boolean" : "string",
      ...(def.short ? { shortFlag: def.short } : {}),
      // Every non-boolean is collected as a list; meow would refuse a repeated single flag.
      ...(isBool(def) ? {} : { isMultiple: true }),
    };
  }
  const known = new Set(Object.keys(flags));
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
    if (!known.has(key)) throw errors.optionUnknown(unknownFlagSpelling(argv, key));
  }
  for (const name of optionNames) {
    const def = optionTable[name] as OptionDefinition<unknown>;
    const value = (cli.flags as Record<string, unknown>)[camel(def.flag)];
    if (value === undefined) continue;
    if (isBool(def)) {
      out.set(name, [String(value)]);
      continue;
    }
    const values = value as string[];
    if (values.length === 0) continue;
    // As with Docker's flags, a single-valued flag given twice keeps its last value.
    const repeatable = def.type.name === "list" || def.type.name === "map";
    out.set(name, repeatable ? values : values.slice(-1));
  }
  return out;
}

/** meow reads `--debug=maybe` as false; Docker's flags refuse it. */
function checkBooleanValues(argv: readonly string[]): void {
  for (const arg of argv) {
    const m = /^--([a-z0-9-]+)=(.*)$/.exec(arg);
    if (!m) continue;
    const def = Object.values(optionTable).find((d) => d.flag === m[1]) as OptionDefinition<unknown> | undefined;
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
