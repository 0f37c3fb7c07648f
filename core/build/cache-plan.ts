/**
 * Which entries of the build cache a rule (cache-rules.ts) removes, and in what order, by
 * BuildKit's prune (its cache manager's `prune`):
 * - the cache's size is the sum of its unshared entries (a shared one's layers stay anyway);
 * - with a space bound, the rule keeps `keepBytes` (the most used, lowered to leave the disk its
 *   free space, never below the reserved space) and does nothing while the cache is within it;
 *   over it, it removes one entry at a time, the least recently and least often used first,
 *   until the cache is within the bound (BuildKit stops only below it, and so with a free-space
 *   bound the disk already meets it removes one entry each time: not copied);
 * - without one, it removes every entry it may;
 * - it may remove an entry that nothing holds (not in use), that is not shared (unless `all`),
 *   that was not used within the keep duration, that the filters match, and that no other entry
 *   was made from (the last of a chain first: BuildKit's parents are held by their children).
 * Pure: the caller removes what the plan names.
 */
import type { CacheEntry, PruneRule } from "./cache-rules.js";

/** The bytes a rule keeps (0: no bound), from BuildKit's rule. */
export function keepBytes(total: number, diskFree: number, rule: PruneRule): number {
  if (!rule.maxUsedSpace && !rule.reservedSpace && !rule.minFreeSpace) return 0;
  let keep = rule.maxUsedSpace;
  const excess = rule.minFreeSpace - diskFree;
  if (rule.minFreeSpace && excess > 0) keep = keep ? Math.min(keep, total - excess) : total - excess;
  else if (rule.minFreeSpace && !keep) keep = total; // only a free-space bound, and the disk has it
  return Math.max(keep, rule.reservedSpace);
}

/**
 * BuildKit's order of removal: ranks by last use (never used first) and by use count, each
 * scaled to 0..1, summed; the smallest goes first. Ranks rather than values, so that neither a
 * very old nor a very often used entry outweighs the other measure.
 */
function removalOrder(entries: readonly CacheEntry[]): CacheEntry[] {
  const rank = (key: (e: CacheEntry) => number) => {
    const sorted = [...entries].sort((a, b) => key(a) - key(b));
    const ranks = new Map<CacheEntry, number>();
    let r = 1;
    let last: number | undefined;
    for (const e of sorted) {
      if (last !== undefined && key(e) > last) r++;
      last = key(e);
      ranks.set(e, r);
    }
    return { ranks, max: r };
  };
  const used = rank((e) => e.lastUsedAt ?? -Infinity);
  const count = rank((e) => e.usageCount);
  const score = (e: CacheEntry) => used.ranks.get(e)! / used.max + count.ranks.get(e)! / count.max;
  return [...entries].sort((a, b) => score(a) - score(b));
}

/** The cache's size as a prune measures it: its unshared entries. */
export const cacheSize = (entries: readonly CacheEntry[]) => entries.reduce((n, e) => n + (e.shared ? 0 : e.size), 0);

/** The IDs `rule` removes from `entries` at time `now`, in order; `diskFree` is the data root's free bytes. */
export function planPrune(entries: readonly CacheEntry[], rule: PruneRule, diskFree: number, now: number): string[] {
  const remaining = new Map(entries.map((e) => [e.id, e]));
  let total = cacheSize(entries);
  const keep = keepBytes(total, diskFree, rule);
  const removed: string[] = [];
  const cutoff = now - rule.keepDuration;
  const allowed = (e: CacheEntry) =>
    !e.inUse &&
    (rule.all || (!e.shared && e.type !== "internal" && e.type !== "frontend")) &&
    !(rule.keepDuration && e.lastUsedAt !== undefined && e.lastUsedAt > cutoff) &&
    rule.match(e);
  // bounded: each round removes at least one entry or stops
  for (let round = 0; round <= entries.length; round++) {
    if (keep && total <= keep) break;
    const parents = new Set([...remaining.values()].flatMap((e) => e.parents));
    const candidates = [...remaining.values()].filter((e) => !parents.has(e.id) && allowed(e));
    if (candidates.length === 0) break;
    for (const e of keep ? removalOrder(candidates).slice(0, 1) : candidates) {
      remaining.delete(e.id);
      removed.push(e.id);
      if (!e.shared) total -= e.size;
    }
  }
  return removed;
}
