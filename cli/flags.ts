/**
 * Command-line flags as the Docker CLI reads them (Go's pflag): `--name value`, `--name=value`,
 * `-n value`, `-nvalue`, `-n=value`, boolean groups (`-it`, `-dit`), `--bool=false`,
 * repeatable flags (`-e A -e B`), `--` ending the flags, and flags anywhere among the arguments
 * unless a command stops at its first argument (`run IMAGE CMD -l`: `-l` is the container's).
 * Parse errors are UsageErrors: the CLI prints them with a pointer to `--help` and exits 125.
 */
import { goQuote } from "../core/build/go-text.js";

export type FlagType = "bool" | "string" | "int" | "list";

export interface FlagSpec {
  /** The long name, without dashes. */
  name: string;
  short?: string;
  type: FlagType;
  description: string;
  /** What the help shows after the name (`string`, `list`, `int` by default). */
  valueName?: string;
  default?: string | number | boolean;
  /** Parsed but not shown in the help. */
  hidden?: boolean;
  /**
   * Another name of the flag `into` names (pflag's hidden aliases, `--net` for `--network`): its
   * values go to that flag's, in command-line order.
   */
  into?: string;
  /**
   * pflag's value check, run as each value is read: returns the value to keep (a normalised form)
   * or throws; the parse fails with `invalid argument "V" for "--name" flag: MESSAGE`.
   */
  check?: (value: string) => string;
}

export type FlagValue = string | number | boolean | string[];

export interface Parsed {
  /** By long name; a flag not given has its default (lists: []). */
  flags: Record<string, FlagValue>;
  /** Flags given on the command line (by long name), for "was it set". */
  given: Set<string>;
  args: string[];
}

export class UsageError extends Error {}

/** pflag's message for a value a flag refuses (Go's `%q` quoting of the value). */
export function invalidArgument(value: string, shown: string, why: string): UsageError {
  return new UsageError(`invalid argument ${goQuote(value)} for "${shown}" flag: ${why}`);
}

export function parseFlags(argv: readonly string[], specs: readonly FlagSpec[], interspersed = true): Parsed {
  const byLong = new Map(specs.map((s) => [s.name, s]));
  const byShort = new Map(specs.filter((s) => s.short).map((s) => [s.short!, s]));
  const flags: Record<string, FlagValue> = {};
  for (const s of specs) if (!s.into) flags[s.name] = s.type === "list" ? [] : s.type === "bool" ? (s.default ?? false) : (s.default ?? (s.type === "int" ? 0 : ""));
  const given = new Set<string>();
  const args: string[] = [];
  // pflag names a flag in a bad-value error as "-n, --last" whichever form was typed
  const set = (typed: FlagSpec, value: string | undefined, missing: string) => {
    const shown = typed.short ? `-${typed.short}, --${typed.name}` : `--${typed.name}`;
    const spec = typed.into ? byLong.get(typed.into)! : typed;
    given.add(spec.name);
    if (spec.type === "bool") {
      if (value === undefined) flags[spec.name] = true;
      else if (/^(1|t|true|TRUE|True)$/.test(value)) flags[spec.name] = true;
      else if (/^(0|f|false|FALSE|False)$/.test(value)) flags[spec.name] = false;
      else throw invalidArgument(value, shown, `strconv.ParseBool: parsing ${goQuote(value)}: invalid syntax`);
      return;
    }
    if (value === undefined) throw new UsageError(`flag needs an argument: ${missing}`);
    if (typed.check) {
      try {
        value = typed.check(value);
      } catch (e) {
        throw invalidArgument(value, shown, (e as Error).message);
      }
    }
    if (spec.type === "int") {
      if (!/^-?\d+$/.test(value)) throw invalidArgument(value, shown, `strconv.ParseInt: parsing ${goQuote(value)}: invalid syntax`);
      flags[spec.name] = Number(value);
    } else if (spec.type === "list") {
      (flags[spec.name] as string[]).push(value);
    } else {
      flags[spec.name] = value;
    }
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      args.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith("--") && arg.length > 2) {
      const eq = arg.indexOf("=");
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      const spec = byLong.get(name);
      if (!spec) throw new UsageError(`unknown flag: --${name}`);
      let value = eq < 0 ? undefined : arg.slice(eq + 1);
      if (value === undefined && spec.type !== "bool") {
        if (i + 1 >= argv.length) throw new UsageError(`flag needs an argument: --${name}`);
        value = argv[++i];
      }
      set(spec, value, `--${name}`);
      continue;
    }
    if (arg.startsWith("-") && arg.length > 1) {
      // a group of shorthands; the first that takes a value takes the rest (or the next argument)
      for (let j = 1; j < arg.length; j++) {
        const c = arg[j];
        const spec = byShort.get(c);
        if (!spec) throw new UsageError(`unknown shorthand flag: '${c}' in ${arg}`);
        const shown = `'${c}' in ${arg}`;
        if (spec.type === "bool") {
          if (arg[j + 1] === "=") {
            set(spec, arg.slice(j + 2), shown);
            break;
          }
          set(spec, undefined, shown);
          continue;
        }
        let value = arg.slice(j + 1).replace(/^=/, "");
        if (value === "") {
          if (i + 1 >= argv.length) throw new UsageError(`flag needs an argument: ${shown}`);
          value = argv[++i];
        }
        set(spec, value, shown);
        break;
      }
      continue;
    }
    args.push(arg);
    if (!interspersed) {
      args.push(...argv.slice(i + 1));
      break;
    }
  }
  return { flags, given, args };
}

/** The "Options:" block of a help text, aligned as the Docker CLI aligns it. */
export function flagsHelp(specs: readonly FlagSpec[]): string {
  const rows = specs
    .filter((s) => !s.hidden)
    .map((s) => {
      const value = s.type === "bool" ? "" : ` ${s.valueName ?? s.type}`;
      const names = s.short ? `-${s.short}, --${s.name}${value}` : `    --${s.name}${value}`;
      const dflt = s.default !== undefined && s.default !== "" && s.default !== false ? ` (default ${typeof s.default === "string" ? `"${s.default}"` : s.default})` : "";
      return [names, `${s.description}${dflt}`];
    });
  const width = Math.max(0, ...rows.map((r) => r[0].length));
  return rows.map(([n, d]) => `  ${n.padEnd(width)}   ${d}`).join("\n");
}

/**
 * A flag's values through `read`, as pflag checks a flag with a validator: a value `read`
 * refuses is a usage error naming the flag as `shown` ("-e, --env").
 */
export function readEach<T>(values: readonly string[], shown: string, read: (v: string) => T): T[] {
  return values.map((v) => {
    try {
      return read(v);
    } catch (e) {
      throw invalidArgument(v, shown, (e as Error).message);
    }
  });
}

/**
 * One line of comma-separated fields as Go's encoding/csv reads it (`a,"b,c"` is two fields);
 * a bad quote throws csv's own message.
 */
export function csvFields(value: string): string[] {
  const out: string[] = [];
  let field = "";
  let quoted = false;
  let i = 0;
  const fail = (why: string) => {
    throw new Error(`parse error on line 1, column ${i + 1}: ${why}`);
  };
  let atStart = true;
  for (; i < value.length; i++) {
    const c = value[i];
    if (quoted) {
      if (c !== '"') field += c;
      else if (value[i + 1] === '"') field += value[++i];
      else {
        quoted = false;
        if (i + 1 < value.length && value[i + 1] !== ",") fail(`extraneous or missing " in quoted-field`);
      }
    } else if (c === ",") {
      out.push(field);
      field = "";
      atStart = true;
      continue;
    } else if (c === '"' && atStart) quoted = true;
    else if (c === '"') fail(`bare " in non-quoted-field`);
    else field += c;
    atStart = false;
  }
  if (quoted) fail(`extraneous or missing " in quoted-field`);
  out.push(field);
  return out;
}

/**
 * pflag's StringToString (`--docker host=x,ca=y`, repeatable): a value with one "=" is one pair
 * (its value may hold commas); with more, a line of comma-separated pairs as encoding/csv reads
 * it. Later pairs replace earlier ones of the same key.
 */
export function stringToString(values: readonly string[], shown: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const value of values) {
    const count = value.split("=").length - 1;
    const fail = (why: string) => new UsageError(`invalid argument "${value}" for "${shown}" flag: ${why}`);
    if (count === 0) throw fail(`${value} must be formatted as key=value`);
    const pairs = count === 1 ? [value.replace(/^"+|"+$/g, "")] : stringSlice([value], shown);
    for (const pair of pairs) {
      const eq = pair.indexOf("=");
      if (eq < 0) throw fail(`${pair} must be formatted as key=value`);
      out[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  }
  return out;
}

/** pflag's StringSlice: each value is a CSV line (csvFields), all values' fields in order. */
export function stringSlice(values: readonly string[], shown: string): string[] {
  return values.filter((v) => v !== "").flatMap((value) => readEach([value], shown, csvFields)[0]);
}
