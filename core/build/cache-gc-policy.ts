/**
 * `builder.gc` as rules (cache-rules.ts): the policy of the configuration file, or Docker's
 * default one, and the bounds it sets.
 */
import { parseBytes, type BuilderConfig } from "../options/value-types-structured.js";
import { policyFilters, pruneRule, type PruneRule, type SpaceBounds } from "./cache-rules.js";

const HOUR = 3_600_000;
const size = (raw: string | undefined) => (raw ? parseBytes(raw) : 0);

/** GB as BuildKit rounds a share of the disk: whole GiB up, counted in 10^9 bytes. */
const diskShare = (total: number, percent: number) => (Math.floor((total * percent) / 100 / 2 ** 30) + 1) * 1e9;

/**
 * Docker's default policy (moby's builder-next/worker/gc.go): easily made again data unused for
 * two days once the cache passes a small share; anything unused for 60 days; then unshared entries;
 * then all of them, each under the space bounds. With no bound configured, the bounds are shares
 * of the data root's disk: 10% reserved, 80% the most used, 20% kept free.
 */
function defaultPolicy(bounds: SpaceBounds, diskTotal: number | undefined, now: number): PruneRule[] {
  let b = bounds;
  if (!b.reservedSpace && !b.maxUsedSpace && !b.minFreeSpace) {
    b = diskTotal ? { reservedSpace: diskShare(diskTotal, 10), maxUsedSpace: diskShare(diskTotal, 80), minFreeSpace: diskShare(diskTotal, 20) } : { reservedSpace: 2e9, maxUsedSpace: 0, minFreeSpace: 0 };
  }
  const temporary = Math.max(Math.round((b.reservedSpace / 100) * Math.E * Math.PI * ((1 + Math.sqrt(5)) / 2)), 512e6);
  // BuildKit's first rule names three types joined as one filter (which then matches none); the
  // classic builder's easily made again entries are its COPY and ADD steps, `source.local`
  const local = pruneRule(new Map([["type", ["source.local"]]]), { all: false, maxUsedSpace: temporary }, now);
  return [
    { ...local, keepDuration: 48 * HOUR },
    { ...pruneRule(new Map(), { all: false, ...b }, now), keepDuration: 60 * 24 * HOUR },
    pruneRule(new Map(), { all: false, ...b }, now),
    pruneRule(new Map(), { all: true, ...b }, now),
  ];
}

/**
 * The rules `builder.gc` runs now: none when it is turned off (`enabled: false`; it is on by
 * default, as Docker's), the policy's (each entry a prune), or Docker's default policy with the
 * `default*` bounds. `keepStorage` and `defaultKeepStorage` are the older names of the reserved
 * space, as in Docker 28. Throws the catalogue's error for a filter Docker would refuse.
 */
export function gcRules(config: BuilderConfig, diskTotal: number | undefined, now: number): PruneRule[] {
  const gc = config.gc ?? {};
  if (gc.enabled === false) return [];
  if (!gc.policy) {
    const bounds = { reservedSpace: size(gc.defaultReservedSpace ?? gc.defaultKeepStorage), maxUsedSpace: size(gc.defaultMaxUsedSpace), minFreeSpace: size(gc.defaultMinFreeSpace) };
    return defaultPolicy(bounds, diskTotal, now);
  }
  return gc.policy.map((p) =>
    pruneRule(policyFilters(p.filter), { all: p.all ?? false, reservedSpace: size(p.reservedSpace ?? p.keepStorage), maxUsedSpace: size(p.maxUsedSpace), minFreeSpace: size(p.minFreeSpace) }, now),
  );
}
