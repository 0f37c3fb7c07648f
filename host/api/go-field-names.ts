/**
 * Go's encoding/json, which Docker's daemon reads request bodies with, matches an object's key to
 * a struct field without regard to case when no field has that exact name, at every depth; of
 * several keys for one field the last in the body wins (keys are decoded in order); a map's keys
 * are data and stay as they are. Clients lean on it: docker-py sends an exec's `detachKeys` and a
 * HostConfig's `CPURealtimeRuntime`, and dockerd 20.10 takes `{"image": ..., "cmd": [...]}` for a
 * create and `"RestartPolicy": {"name": ...}` (test/daemon-parity.test.ts, BODY_KEYS).
 *
 * `goFieldNames` reads typia's JSON schema of a body's type (`typia.json.schemas<[T], "3.1">()`)
 * for its objects' fields, and gives the function that puts a body's keys under those names
 * that way. A key that names no field stays as it is.
 */

/** The part of a JSON schema (as typia writes it) that says where fields are. */
export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
}

/** What `typia.json.schemas` gives, as far as read here (its schemas are read as JsonSchema). */
export interface JsonSchemaCollection {
  components: { schemas?: Record<string, object> };
  schemas: object[];
}

/** Deeper than any body of the API: a schema that refers to itself ends there. */
const MAX_DEPTH = 32;

export function goFieldNames(collection: JsonSchemaCollection): (body: unknown) => unknown {
  const defs = (collection.components.schemas ?? {}) as Record<string, JsonSchema>;
  const folded = new WeakMap<JsonSchema, Map<string, string>>();

  const resolve = (schema: JsonSchema | undefined): JsonSchema | undefined => {
    for (let i = 0; schema?.$ref && i < MAX_DEPTH; i++) schema = defs[schema.$ref.replace(/^#\/components\/schemas\//, "")];
    return schema;
  };
  const isKind = (schema: JsonSchema, kind: string) => (Array.isArray(schema.type) ? schema.type.includes(kind) : schema.type === kind);
  /** The branch of a union that describes the value's kind (an object, an array). */
  const branchFor = (schema: JsonSchema | undefined, value: unknown): JsonSchema | undefined => {
    const s = resolve(schema);
    const branches = s?.oneOf ?? s?.anyOf;
    if (!branches) return s;
    const kind = Array.isArray(value) ? "array" : "object";
    for (const b of branches) {
      const found = branchFor(b, value);
      if (found && (isKind(found, kind) || (kind === "object" && found.properties))) return found;
    }
    return undefined;
  };
  const namesOf = (schema: JsonSchema, properties: Record<string, JsonSchema>): Map<string, string> => {
    let names = folded.get(schema);
    if (!names) {
      names = new Map();
      // the first of two fields that differ in case only, as Go's field cache keeps it
      for (const name of Object.keys(properties)) if (!names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
      folded.set(schema, names);
    }
    return names;
  };

  const rename = (value: unknown, schema: JsonSchema | undefined, depth: number): unknown => {
    if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return value;
    const s = branchFor(schema, value);
    if (!s) return value;
    if (Array.isArray(value)) return value.map((v, i) => rename(v, s.prefixItems?.[i] ?? s.items, depth + 1));
    const properties = s.properties;
    const values = typeof s.additionalProperties === "object" ? s.additionalProperties : undefined;
    if (!properties) return values ? mapValues(value as Record<string, unknown>, (v) => rename(v, values, depth + 1)) : value;
    const names = namesOf(s, properties);
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const field = Object.hasOwn(properties, key) ? key : names.get(key.toLowerCase());
      if (field) setOwn(out, field, rename(v, properties[field], depth + 1));
      else setOwn(out, key, values ? rename(v, values, depth + 1) : v);
    }
    return out;
  };
  const top = collection.schemas[0] as JsonSchema;
  return (body) => rename(body, top, 0);
}

function mapValues(obj: Record<string, unknown>, f: (v: unknown) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) setOwn(out, k, f(v));
  return out;
}

/** `obj[key] = value` that makes an own property whatever the key (`__proto__` included). */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
