/**
 * Value types of daemon options: each turns the text an operator wrote (a flag's value, or a
 * `daemon.json` value rendered as text) into a typed value, or throws a message that says what
 * was expected. The option table names one per option.
 */

export interface ValueType<T> {
  /** Shown in `--help` and in errors: "bool", "int", "list", "map". */
  readonly name: string;
  /** Parses one occurrence; `previous` is the value so far, for types that accumulate. */
  parse(raw: string, previous: T | undefined): T;
  /** Renders a value for `--help` defaults. */
  show(value: T): string;
}

export class ValueError extends Error {}

const TRUE = new Set(["1", "t", "true", "TRUE", "True"]);
const FALSE = new Set(["0", "f", "false", "FALSE", "False"]);

/** Go's strconv.ParseBool forms, which Docker's flags accept. */
export const bool: ValueType<boolean> = {
  name: "bool",
  parse(raw) {
    if (TRUE.has(raw)) return true;
    if (FALSE.has(raw)) return false;
    throw new ValueError("expected a boolean (true or false)");
  },
  show: (v) => String(v),
};

export const int: ValueType<number> = {
  name: "int",
  parse(raw) {
    if (!/^-?\d+$/.test(raw.trim())) throw new ValueError("expected an integer");
    const n = Number(raw);
    if (!Number.isSafeInteger(n)) throw new ValueError("integer out of range");
    return n;
  },
  show: (v) => String(v),
};

export const string: ValueType<string> = {
  name: "string",
  parse: (raw) => raw,
  show: (v) => v,
};

/** A string restricted to some words. */
export function oneOf<const W extends string>(...words: W[]): ValueType<W> {
  return {
    name: "string",
    parse(raw) {
      if (!(words as string[]).includes(raw)) throw new ValueError(`expected one of: ${words.join(", ")}`);
      return raw as W;
    },
    show: (v) => v,
  };
}

/** A repeatable flag: each occurrence adds one element (checked by `element`). */
export function list(element: ValueType<string> = string): ValueType<string[]> {
  return {
    name: "list",
    parse: (raw, previous) => [...(previous ?? []), element.parse(raw, undefined)],
    show: (v) => (v.length ? `[${v.join(", ")}]` : "[]"),
  };
}

/** `key=value`, repeatable, into a map. */
export const map: ValueType<Record<string, string>> = {
  name: "map",
  parse(raw, previous) {
    const eq = raw.indexOf("=");
    if (eq <= 0) throw new ValueError("expected key=value");
    return { ...previous, [raw.slice(0, eq)]: raw.slice(eq + 1) };
  },
  show: (v) => `map[${Object.entries(v).map(([k, x]) => `${k}:${x}`).join(" ")}]`,
};

/** `key=value` with a non-empty key, kept as the text (daemon labels). */
export const keyValue: ValueType<string> = {
  name: "string",
  parse(raw) {
    if (raw.indexOf("=") <= 0) throw new ValueError("expected key=value");
    return raw;
  },
  show: (v) => v,
};
