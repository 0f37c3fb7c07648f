/**
 * The build cache's prune rules, as moby hands `POST /build/prune` and `builder.gc` to BuildKit.
 * A rule is: `all` (shared entries too), a keep duration (the `until` / `unused-for` filter: an
 * entry used more recently stays), three space bounds (`reservedSpace`: never below it;
 * `maxUsedSpace`: the most the cache may hold; `minFreeSpace`: the free space the disk should keep)
 * and filters on an entry's fields, which must all hold. cache-plan.ts says which entries a rule
 * removes and in what order; this file reads rules from the API's filters and from `builder.gc`.
 *
 * Vocabulary: an entry is an image a build step made that nothing names (host/build/cache-ledger.ts
 * records them); it is `shared` when a named image (or one no build made) descends from it, so
 * that its layers stay whoever removes it; `inUse` when a running build or a container holds it.
 */
import { parseGoDuration } from "../containers/healthcheck.js";
import { errors } from "../errors.js";

/** BuildKit's record types (API 1.51's enum). The classic builder's steps use two of them. */
export const CACHE_TYPES = ["internal", "frontend", "source.local", "source.git.checkout", "exec.cachemount", "regular"] as const;
export type CacheType = (typeof CACHE_TYPES)[number];

export interface CacheEntry {
  /** The image's ID, bare hex (BuildKit's IDs have no algorithm either). */
  id: string;
  parents: string[];
  type: CacheType;
  /** The step's history `created_by`. */
  description: string;
  inUse: boolean;
  shared: boolean;
  /** Bytes of the layer the step added (0 for a step that changed only the configuration). */
  size: number;
  /** Milliseconds since the epoch. */
  createdAt: number;
  lastUsedAt?: number;
  usageCount: number;
  labels: Record<string, string>;
}

export interface SpaceBounds {
  reservedSpace: number;
  maxUsedSpace: number;
  minFreeSpace: number;
}

export interface PruneRule extends SpaceBounds {
  /** Shared entries (and internal, frontend ones) may go too. */
  all: boolean;
  /** Milliseconds: an entry used within this long before the prune stays (0: no such limit). */
  keepDuration: number;
  /** Every filter but the duration. */
  match: (e: CacheEntry) => boolean;
}

/** The keys `POST /build/prune` takes in `filters` (moby's list; `label` is honoured here, Docker ignores it). */
const CACHE_FILTER_KEYS = ["until", "unused-for", "id", "parent", "type", "description", "inuse", "shared", "private", "label", "label!"] as const;

/** An `until` value: a Go duration back from `now`, Unix seconds (`1700000000.5`) or a date; milliseconds. */
function timeOf(raw: string, now: number): number | undefined {
  try {
    return now - parseGoDuration(raw) / 1e6;
  } catch {
    // not a duration
  }
  if (/^\d+(\.\d+)?$/.test(raw)) return Number(raw) * 1000;
  const ms = Date.parse(raw);
  return Number.isNaN(ms) ? undefined : ms;
}

function flag(key: string, raw: string): boolean {
  if (["", "1", "true", "t", "TRUE", "True"].includes(raw)) return true;
  if (["0", "false", "f", "FALSE", "False"].includes(raw)) return false;
  throw errors.buildCacheFilter(`invalid value for "${key}" filter: ${raw}`);
}

/** `label` / `label!` values: `k` (present) or `k=v`. */
function hasLabel(labels: Record<string, string>, filter: string): boolean {
  const eq = filter.indexOf("=");
  return eq < 0 ? filter in labels : labels[filter.slice(0, eq)] === filter.slice(eq + 1);
}

/**
 * A rule from the API's (or a policy's) filters, as moby reads them: each key at most once
 * (labels aside), `until` or its older name `unused-for` but not both, `id` a regular expression
 * (BuildKit's `~=`), the others equality. `parent` matches a parent by ID or ID prefix;
 * `inuse`, `shared` and `private` take an empty value or a boolean.
 */
export function pruneRule(filters: ReadonlyMap<string, readonly string[]>, opts: { all: boolean } & Partial<SpaceBounds>, now: number): PruneRule {
  for (const key of filters.keys()) {
    if (!(CACHE_FILTER_KEYS as readonly string[]).includes(key)) throw errors.buildCacheFilter(`invalid filter '${key}'`);
    if (!key.startsWith("label") && (filters.get(key)?.length ?? 0) > 1) throw errors.buildCacheFilter("filters expect only one value");
  }
  if (filters.has("until") && filters.has("unused-for")) throw errors.buildCacheFilter('conflicting filters: "until" and "unused-for"');
  const one = (key: string) => filters.get(key)?.[0];
  let keepDuration = 0;
  for (const key of ["until", "unused-for"]) {
    const raw = one(key);
    if (raw === undefined) continue;
    const time = timeOf(raw, now);
    if (time === undefined) throw errors.buildCacheFilter(`"${key}" filter expects a duration (e.g., '24h') or a timestamp`);
    keepDuration = now - time;
  }
  const tests: ((e: CacheEntry) => boolean)[] = [];
  const id = one("id");
  if (id !== undefined) {
    let re: RegExp;
    try {
      re = new RegExp(id);
    } catch (err) {
      throw errors.buildCacheFilter(`invalid "id" filter: ${(err as Error).message}`);
    }
    tests.push((e) => re.test(e.id));
  }
  const parent = one("parent")?.replace(/^sha256:/, "");
  if (parent !== undefined) tests.push((e) => parent !== "" && e.parents.some((p) => p.startsWith(parent)));
  const type = one("type");
  if (type !== undefined) tests.push((e) => e.type === type);
  const description = one("description");
  if (description !== undefined) tests.push((e) => e.description === description);
  for (const [key, field] of [["inuse", (e: CacheEntry) => e.inUse], ["shared", (e: CacheEntry) => e.shared], ["private", (e: CacheEntry) => !e.shared]] as const) {
    const raw = one(key);
    if (raw === undefined) continue;
    const want = flag(key, raw);
    tests.push((e) => field(e) === want);
  }
  const labels = filters.get("label") ?? [];
  const notLabels = filters.get("label!") ?? [];
  if (labels.length || notLabels.length) tests.push((e) => labels.every((l) => hasLabel(e.labels, l)) && !notLabels.some((l) => hasLabel(e.labels, l)));
  return {
    all: opts.all,
    keepDuration,
    reservedSpace: opts.reservedSpace ?? 0,
    maxUsedSpace: opts.maxUsedSpace ?? 0,
    minFreeSpace: opts.minFreeSpace ?? 0,
    match: (e) => tests.every((t) => t(e)),
  };
}

/** A policy's `filter`: `["unused-for=24h"]`, or the older map form `{"unused-for": {"24h": true}}`. */
export function policyFilters(filter: readonly string[] | Record<string, Record<string, boolean>> | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (Array.isArray(filter)) {
    for (const f of filter) {
      const eq = f.indexOf("=");
      const key = (eq < 0 ? f : f.slice(0, eq)).trim().toLowerCase();
      out.set(key, [...(out.get(key) ?? []), eq < 0 ? "" : f.slice(eq + 1).trim()]);
    }
  } else if (filter) {
    for (const [key, values] of Object.entries(filter)) out.set(key, Object.entries(values).filter(([, on]) => on).map(([v]) => v));
  }
  return out;
}
