/**
 * The values Go templates see, as the Docker CLI gives them: plain JSON data (maps, lists,
 * strings, numbers) and "structs", objects made with `struct()` whose members are the fields
 * and methods a template may name, as the CLI's formatter contexts are. With them, how Go
 * prints (`%v`), marshals (`json`), tests (`if`) and names the type of such a value.
 */

export const STRUCT = Symbol("struct");

/** A value whose members are fields and methods (a Go struct); `typeName` is for errors. */
export interface GoStruct {
  [STRUCT]: string;
  [member: string]: unknown;
}

export function struct<T extends object>(typeName: string, members: T): T & GoStruct {
  return Object.assign(Object.create(null), members, { [STRUCT]: typeName }) as T & GoStruct;
}

const PLAIN = Symbol("plain");

/**
 * A struct without a MarshalJSON of its own (the API's types, `*events.Message`): `json` writes
 * it with the CLI's encoder, whose HTML escaping is off.
 */
export function plainStruct<T extends object>(typeName: string, members: T): T & GoStruct {
  return Object.assign(struct(typeName, members), { [PLAIN]: true });
}

export function isStruct(v: unknown): v is GoStruct {
  return typeof v === "object" && v !== null && STRUCT in v;
}

/** A Go map value (map[string]string from a struct), printed and marshalled with sorted keys. */
export class GoMap {
  constructor(readonly entries: Record<string, unknown>) {}
}

export const NO_VALUE = Symbol("no value");

/** Go's `%v`. */
export function goString(v: unknown): string {
  if (v === NO_VALUE || v === undefined) return "<no value>";
  if (v instanceof TypedNull) return v.text;
  if (v === null) return "<nil>";
  if (typeof v === "string") return v;
  if (typeof v === "number") return String(v);
  if (typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map(goString).join(" ")}]`;
  if (v instanceof GoMap) return `map[${Object.keys(v.entries).sort().map((k) => `${k}:${goString(v.entries[k])}`).join(" ")}]`;
  if (isStruct(v)) {
    if (typeof v.String === "function") return String((v.String as () => unknown)());
    return `{${Object.keys(v).filter((k) => typeof v[k] !== "function").map((k) => goString(v[k])).join(" ")}}`;
  }
  if (typeof v === "object") return `map[${Object.keys(v).sort().map((k) => `${k}:${goString((v as Record<string, unknown>)[k])}`).join(" ")}]`;
  return String(v);
}

/**
 * What a struct's own MarshalJSON wrote (a struct's toJSON may return one): `json` writes it as
 * it is. The CLI's types that marshal themselves with json.Marshal (a context's DockerContext)
 * escape HTML characters even inside an encoder that does not.
 */
export class MarshaledJson {
  constructor(readonly text: string) {}
}

const MARSHALED = "marshaled-json:";
/** The texts of the MarshaledJson values of the goJson call under way, by placeholder number. */
let marshaled: string[] = [];

/** What `json` makes of a value: structs marshal their fields and argument-less methods. */
function toJsonValue(v: unknown): unknown {
  if (v === NO_VALUE || v === undefined || v instanceof TypedNull) return null;
  // an int64 beyond 2^53 (an event's timeNano) is kept as a bigint and written digit for digit
  if (typeof v === "bigint") return (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON(String(v));
  // JSON a struct's own MarshalJSON wrote: a placeholder goJson puts the bytes back in for
  if (v instanceof MarshaledJson) return `\u0000${MARSHALED}${marshaled.push(v.text) - 1}\u0000`;
  if (v instanceof GoMap) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v.entries).sort()) out[k] = toJsonValue(v.entries[k]);
    return out;
  }
  if (isStruct(v)) {
    if (typeof v.toJSON === "function") return toJsonValue((v.toJSON as () => unknown)());
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const m = v[k];
      if (typeof m === "function") {
        if (m.length === 0 && /^[A-Z]/.test(k)) out[k] = toJsonValue((m as () => unknown).call(v));
      } else if (/^[A-Z]/.test(k)) out[k] = toJsonValue(m);
    }
    return out;
  }
  if (Array.isArray(v)) return v.map(toJsonValue);
  if (v && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toJsonValue(x);
    return out;
  }
  return v;
}

/** Go's encoding/json without HTML escaping, as the CLI's `json` function writes. */
export function goJson(v: unknown): string {
  marshaled = [];
  let text = (JSON.stringify(toJsonValue(v)) ?? "null").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
  if (marshaled.length) text = text.replace(new RegExp(`"\\\\u0000${MARSHALED}(\\d+)\\\\u0000"`, "g"), (_m, i: string) => marshaled[Number(i)]);
  // a struct marshals itself with json.Marshal, which escapes HTML characters; the CLI's
  // encoder (HTML escaping off) keeps what a Marshaler wrote
  if (isStruct(v) && !(PLAIN in v)) text = text.replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");
  return text;
}

export function truth(v: unknown): boolean {
  if (v === NO_VALUE || v === undefined || v === null || v instanceof TypedNull) return false;
  if (typeof v === "boolean") return v;
  if (typeof v === "number") return v !== 0;
  if (typeof v === "string") return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof GoMap) return Object.keys(v.entries).length > 0;
  if (isStruct(v)) return true;
  if (typeof v === "object") return Object.keys(v).length > 0;
  return true;
}

export function typeName(v: unknown): string {
  if (isStruct(v)) return v[STRUCT];
  if (v === null || v === NO_VALUE || v === undefined) return "interface {}";
  if (typeof v === "string") return "string";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float64";
  if (typeof v === "boolean") return "bool";
  if (Array.isArray(v)) return "[]interface {}";
  return "map[string]interface {}";
}

/** A JSON null that prints as the Go type behind it would ("[]", "map[]", "<nil>"). */
export class TypedNull {
  constructor(readonly text: string) {}
}
