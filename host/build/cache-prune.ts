/**
 * Prunes the build cache by rules (`POST /build/prune` runs one, `builder.gc` its policy's in
 * order): each rule's plan (core/build/cache-plan.ts) is made on the cache as it is then, and its
 * entries' images go through the image store, which removes the layers only they held. Prunes run
 * one at a time; an entry a build or a container took meanwhile stays.
 */
import { statfsSync } from "node:fs";
import { planPrune } from "../../core/build/cache-plan.js";
import type { CacheEntry, PruneRule } from "../../core/build/cache-rules.js";
import { cacheEntries, type CacheEntriesDeps } from "./cache-entries.js";

export interface PruneReport {
  /** The entries removed (bare hex IDs). */
  deleted: string[];
  /** Bytes of the layers that went with them. */
  reclaimed: number;
}

/** The size and free space of the disk holding `path` (undefined when it cannot be read). */
export function diskOf(path: string): { total: number; free: number } | undefined {
  try {
    const s = statfsSync(path);
    return { total: s.blocks * s.bsize, free: s.bavail * s.bsize };
  } catch {
    return undefined;
  }
}

export class BuildCachePruner {
  private queue: Promise<unknown> = Promise.resolve();

  /** `dataRoot`: where the disk's free space is measured. */
  constructor(private readonly deps: CacheEntriesDeps & { dataRoot: string }) {}

  /** The cache now. */
  entries(): CacheEntry[] {
    return cacheEntries(this.deps);
  }

  prune(rules: readonly PruneRule[]): Promise<PruneReport> {
    const run = this.queue.then(() => this.run(rules));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async run(rules: readonly PruneRule[]): Promise<PruneReport> {
    const { images, ledger, containerUses } = this.deps;
    const report: PruneReport = { deleted: [], reclaimed: 0 };
    for (const rule of rules) {
      const plan = planPrune(this.entries(), rule, diskOf(this.deps.dataRoot)?.free ?? Infinity, Date.now());
      if (plan.length === 0) continue;
      const removed = await images.removeUnnamed(
        plan.map((hex) => `sha256:${hex}`),
        (id) => !ledger.inUse(id) && !containerUses(id),
      );
      ledger.forget(removed.images);
      report.deleted.push(...removed.images.map((id) => id.slice("sha256:".length)));
      report.reclaimed += removed.layers.reduce((n, l) => n + l.size, 0);
    }
    return report;
  }
}
