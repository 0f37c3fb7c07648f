/**
 * Value types of daemon options. Each turns what an operator wrote into a typed value, from
 * either source: the text of a flag (`parse`) or the JSON value of a `daemon.json` key
 * (`fromFile`). A wrong value throws a ValueError that says what was expected; the caller adds
 * which option and which source. `toFile` writes a value back in the file's form (for
 * `--help`, examples and tests).
 */

export interface ValueType<T> {
  /** Shown in `--help` and in errors: "bool", "int", "list", "map", "bytes". */
  readonly name: string;
  /** Parses one occurrence of a flag; `previous` is the value so far, for repeatable types. */
  parse(raw: string, previous: T | undefined): T;
  /** Reads the value of a file key. */
  fromFile(value: unknown): T;
  /** The value as the file writes it. */
  toFile(value: T): unknown;
  /** Renders a value for `--help` defaults. */
  show(value: T): string;
  /** Whether each flag occurrence adds to the value (lists, maps). */
  readonly repeatable?: boolean;
}

export class ValueError extends Error {}

const TRUE = new Set(["1", "t", "true", "TRUE", "True"]);
const FALSE = new Set(["0", "f", "false", "FALSE", "False"]);

export function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `${typeof value} ${JSON.stringify(value)}`;
}

function expectType<K extends "string" | "number" | "boolean">(value: unknown, kind: K, what: string): void {
  if (typeof value !== kind) throw new ValueError(`expected ${what}, got ${describeJson(value)}`);
}

function stringsOf(value: unknown): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    throw new ValueError(`expected an array of strings, got ${describeJson(value)}`);
  }
  return value as string[];
}

function recordOf(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ValueError(`expected an object, got ${describeJson(value)}`);
  }
  return value as Record<string, unknown>;
}

/** Go's strconv.ParseBool forms, which Docker's flags accept. */
export const bool: ValueType<boolean> = {
  name: "bool",
  parse(raw) {
    if (TRUE.has(raw)) return true;
    if (FALSE.has(raw)) return false;
    throw new ValueError("expected a boolean (true or false)");
  },
  fromFile(value) {
    expectType(value, "boolean", "a boolean");
    return value as boolean;
  },
  toFile: (v) => v,
  show: (v) => String(v),
};

function checkInt(n: number, min: number, max: number): number {
  if (!Number.isSafeInteger(n)) throw new ValueError("expected an integer");
  if (n < min) throw new ValueError(`expected an integer of at least ${min}`);
  if (n > max) throw new ValueError(`expected an integer of at most ${max}`);
  return n;
}

/** An integer, at least `min` (and at most `max`). */
export function int(min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): ValueType<number> {
  return {
    name: "int",
    parse(raw) {
      if (!/^-?\d+$/.test(raw.trim())) throw new ValueError("expected an integer");
      return checkInt(Number(raw), min, max);
    },
    fromFile(value) {
      expectType(value, "number", "an integer");
      return checkInt(value as number, min, max);
    },
    toFile: (v) => v,
    show: (v) => String(v),
  };
}

/** A string, with an optional check that throws a ValueError. */
export function string(check?: (value: string) => void, name = "string"): ValueType<string> {
  return {
    name,
    parse(raw) {
      check?.(raw);
      return raw;
    },
    fromFile(value) {
      expectType(value, "string", "a string");
      check?.(value as string);
      return value as string;
    },
    toFile: (v) => v,
    show: (v) => v,
  };
}

/** A string restricted to some words. */
export function oneOf<const W extends string>(...words: W[]): ValueType<W> {
  return string((raw) => {
    if (!(words as string[]).includes(raw)) throw new ValueError(`expected one of: ${words.join(", ")}`);
  }) as ValueType<W>;
}

/** A repeatable flag, an array in the file: each occurrence adds one element. */
export function list(check?: (element: string) => void): ValueType<string[]> {
  return {
    name: "list",
    repeatable: true,
    parse(raw, previous) {
      check?.(raw);
      return [...(previous ?? []), raw];
    },
    fromFile(value) {
      const items = stringsOf(value);
      items.forEach((item) => check?.(item));
      return [...items];
    },
    toFile: (v) => v,
    show: (v) => (v.length ? `[${v.join(", ")}]` : "[]"),
  };
}

/** `key=value`, repeatable, into a map; an object of strings in the file. */
export const map: ValueType<Record<string, string>> = {
  name: "map",
  repeatable: true,
  parse(raw, previous) {
    const eq = raw.indexOf("=");
    if (eq <= 0) throw new ValueError("expected key=value");
    return { ...previous, [raw.slice(0, eq)]: raw.slice(eq + 1) };
  },
  fromFile(value) {
    const record = recordOf(value);
    for (const [k, v] of Object.entries(record)) {
      if (typeof v !== "string") throw new ValueError(`expected a string for "${k}", got ${describeJson(v)}`);
    }
    return { ...(record as Record<string, string>) };
  },
  toFile: (v) => v,
  show: (v) => `map[${Object.entries(v).map(([k, x]) => `${k}:${x}`).join(" ")}]`,
};

/** An environment switch: set to anything non-empty means on (`ENGINE_RAMDISK=1`). */
export const envSwitch: ValueType<boolean> = {
  name: "env",
  parse: (raw) => raw !== "",
  fromFile: (value) => bool.fromFile(value),
  toFile: (v) => v,
  show: (v) => String(v),
};

/** `key=value` kept as text (daemon labels, generic resources). */
export function checkKeyValue(raw: string): void {
  if (raw.indexOf("=") <= 0) throw new ValueError("expected key=value");
}

export { recordOf, stringsOf };
