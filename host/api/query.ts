/**
 * Query parameters as Docker's API reads them: booleans where "", 0, no, false and none are
 * false (and a missing parameter is its default); `filters` as JSON in either the
 * `{"key":["v"]}` or the older `{"key":{"v":true}}` form. A parameter given twice is read as Go's
 * `url.Values.Get` reads it, by its first value (docker-py sends an out-of-context Dockerfile as
 * `dockerfile=<name in the context>&dockerfile=<its content>`).
 */
import { errors } from "../../core/errors.js";

export type Query = Record<string, string | string[] | undefined>;

export function queryBool(query: Query, name: string, fallback = false): boolean {
  const raw = query[name];
  if (raw === undefined) return fallback;
  const value = (Array.isArray(raw) ? raw[0] : raw).trim().toLowerCase();
  return !["", "0", "no", "false", "none"].includes(value);
}

export function queryString(query: Query, name: string): string | undefined {
  const raw = query[name];
  return Array.isArray(raw) ? raw[0] : raw;
}

export function queryList(query: Query, name: string): string[] {
  const raw = query[name];
  return raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
}

export function queryFilters(query: Query): Map<string, string[]> {
  const raw = queryString(query, "filters");
  const out = new Map<string, string[]>();
  if (!raw) return out;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw errors.apiInvalidBody(`invalid filters: ${raw}`);
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw errors.apiInvalidBody(`invalid filters: ${raw}`);
  for (const [key, value] of Object.entries(json)) {
    if (Array.isArray(value)) out.set(key, value.map(String));
    else if (value && typeof value === "object") out.set(key, Object.entries(value).filter(([, on]) => on).map(([v]) => v));
    else throw errors.apiInvalidBody(`invalid filter "${key}"`);
  }
  return out;
}

/** Refuses filter keys a route does not know, as Docker does. */
export function checkFilterKeys(filters: Map<string, string[]>, allowed: readonly string[]): void {
  for (const key of filters.keys()) {
    if (!allowed.includes(key)) throw errors.apiInvalidBody(`invalid filter '${key}'`);
  }
}

/**
 * A filter that is true or false, as Go's `filters.Args.GetBoolOrDefault` reads it (Docker 28's
 * `dangling` of images and volumes): `true`/`1` or `false`/`0`, exactly; anything else, or both,
 * or none, is refused with the values listed as Go prints a list (`invalid filter 'dangling=[maybe]'`).
 */
export function filterBool(filters: Map<string, string[]>, key: string): boolean | undefined {
  const values = filters.get(key);
  if (values === undefined) return undefined;
  if (values.length === 0) throw errors.apiInvalidBody(`invalid filter '${key}'`);
  const isTrue = values.includes("true") || values.includes("1");
  const isFalse = values.includes("false") || values.includes("0");
  if (isTrue === isFalse) throw errors.apiInvalidBody(`invalid filter '${key}=[${values.join(" ")}]'`);
  return isTrue;
}
