/**
 * The record of the build cache: every image a build step made or found in the cache, with when
 * it was made and last used, how often it was used, what made it (its history's `created_by`), its
 * type and its parent, in `<data-root>/builder/cache.json` (private, rewritten whole and atomically:
 * core/images/atomic-file.ts). A step's image is written down when it is committed; the uses of
 * cached steps are written when the build ends, one write per build rather than one per step.
 * Records whose image is gone (`rmi`, `image prune`, a cache prune) drop out when next read.
 * It also knows which images running builds hold: those are in use, and no prune takes them.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CACHE_TYPES, type CacheType } from "../../core/build/cache-rules.js";
import { writeJsonAtomic } from "../../core/images/atomic-file.js";
import type { Image } from "../../core/images/image-store.js";

export interface LedgerRecord {
  /** RFC 3339. */
  created: string;
  lastUsed?: string;
  usageCount: number;
  description: string;
  type: CacheType;
  parent?: string;
}

/** What one build does with the cache: the images it found or made, held until it ends. */
export interface CacheUse {
  /** A step found `image` in the cache: one use more. */
  hit(image: Image): void;
  /** A step made `image`. */
  made(image: Image): void;
  /** The build stands on `id` (a stage's base): nothing prunes it meanwhile. */
  hold(id: string): void;
  /** The build is over: its holds go, the uses are written. Safe to repeat. */
  end(): void;
}

/**
 * BuildKit's closest types: COPY and ADD write files from outside the image (the context, a
 * stage, a URL) as BuildKit's `source.local` records hold a context's files; every other step
 * (RUN, WORKDIR, the configuration's) is `regular`.
 */
function cacheTypeOf(createdBy: string): CacheType {
  return /#\(nop\) (COPY|ADD) /.test(createdBy) ? "source.local" : "regular";
}

function load(file: string): Map<string, LedgerRecord> {
  try {
    const saved = JSON.parse(readFileSync(file, "utf8")) as { entries?: Record<string, LedgerRecord> };
    const ok = (r: LedgerRecord) => typeof r?.created === "string" && typeof r.usageCount === "number" && typeof r.description === "string" && CACHE_TYPES.includes(r.type);
    return new Map(Object.entries(saved.entries ?? {}).filter(([id, r]) => /^sha256:[0-9a-f]{64}$/.test(id) && ok(r)));
  } catch {
    return new Map(); // none yet, or unreadable: the cache is then recorded afresh
  }
}

export class BuildCacheLedger {
  private readonly file: string;
  private readonly records: Map<string, LedgerRecord>;
  private dirty = false;
  /** The images each running build holds. */
  private readonly builds = new Set<Set<string>>();
  private readonly endListeners: (() => void)[] = [];

  /** `home`: `<data-root>/builder`; `warn` hears of a record that could not be written. */
  constructor(home: string, private readonly warn: (message: string, err: unknown) => void) {
    this.file = join(home, "cache.json");
    this.records = load(this.file);
  }

  private fresh(image: Image, now: string): LedgerRecord {
    const description = image.config.history?.at(-1)?.created_by ?? "";
    return { created: image.config.created ?? now, usageCount: 0, description, type: cacheTypeOf(description), ...(image.parent ? { parent: image.parent } : {}) };
  }

  /** A step's new image: recorded at once (used once, by the build that made it). */
  made(image: Image): void {
    const now = new Date().toISOString();
    this.records.set(image.id, { ...this.fresh(image, now), lastUsed: now, usageCount: 1 });
    this.dirty = true;
    this.flush();
  }

  /** A cache hit (an image made before this ledger existed is recorded now). */
  used(image: Image): void {
    const now = new Date().toISOString();
    const rec = this.records.get(image.id) ?? this.fresh(image, now);
    this.records.set(image.id, { ...rec, lastUsed: now, usageCount: rec.usageCount + 1 });
    this.dirty = true;
  }

  /** Writes what changed since the last write. */
  flush(): void {
    if (!this.dirty) return;
    try {
      writeJsonAtomic(this.file, { entries: Object.fromEntries(this.records) });
      this.dirty = false;
    } catch (err) {
      this.warn("could not write the build cache's record", err); // kept dirty: written with the next change
    }
  }

  /** The records of images that still exist (`exists`); the others are dropped for good. */
  current(exists: (id: string) => boolean): ReadonlyMap<string, LedgerRecord> {
    const gone = [...this.records.keys()].filter((id) => !exists(id));
    if (gone.length) this.forget(gone);
    return this.records;
  }

  /** A prune removed these images. */
  forget(ids: readonly string[]): void {
    for (const id of ids) this.dirty = this.records.delete(id) || this.dirty;
    this.flush();
  }

  inUse(id: string): boolean {
    for (const held of this.builds) if (held.has(id)) return true;
    return false;
  }

  /** Called after each build (host/build/cache-gc.ts checks the cache's size then). */
  onBuildEnd(listener: () => void): void {
    this.endListeners.push(listener);
  }

  /** One build's use of the cache. */
  track(): CacheUse {
    const held = new Set<string>();
    this.builds.add(held);
    const hold = (id: string) => void (this.builds.has(held) && held.add(id));
    return {
      hit: (image) => {
        hold(image.id);
        this.used(image);
      },
      made: (image) => {
        hold(image.id);
        this.made(image);
      },
      hold,
      end: () => {
        if (!this.builds.delete(held)) return;
        this.flush();
        for (const listener of this.endListeners) listener();
      },
    };
  }
}
