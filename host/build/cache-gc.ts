/**
 * `builder.gc`: the build cache's garbage collection. When it is on (Docker's default), its
 * policy (core/build/cache-gc-policy.ts) runs as prunes (cache-prune.ts):
 * - every hour;
 * - after a build, when the cache has passed a space bound of the policy (a rule with one would
 *   remove something), so that a burst of builds cannot fill the disk for an hour;
 * - after a reload (SIGHUP) changed `builder`, so that a new policy takes effect at once.
 * One run at a time: a reason to run that comes during a run makes one more run after it.
 * A reload whose policy a prune would refuse fails, and the old policy stays.
 */
import type { Logger } from "pino";
import { gcRules } from "../../core/build/cache-gc-policy.js";
import { cacheSize, keepBytes } from "../../core/build/cache-plan.js";
import type { EngineHooks } from "../../core/hooks.js";
import type { BuilderConfig } from "../../core/options/value-types-structured.js";
import type { BuildCacheLedger } from "./cache-ledger.js";
import { diskOf, type BuildCachePruner } from "./cache-prune.js";

/** How often the policy runs without a build to prompt it. */
const GC_INTERVAL_MS = 3_600_000;

export interface CacheGcDeps {
  pruner: BuildCachePruner;
  ledger: BuildCacheLedger;
  /** `builder` of the configuration in effect. */
  config: () => BuilderConfig;
  dataRoot: string;
  log: Logger;
}

export class BuildCacheGc {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(private readonly deps: CacheGcDeps) {}

  start(): void {
    this.timer = setInterval(() => void this.run("interval"), GC_INTERVAL_MS);
    this.timer.unref();
    // after the build's answer is on its way: the check reads every image
    this.deps.ledger.onBuildEnd(() => void setImmediate(() => void this.afterBuild()));
  }

  /** Reloads: a policy a prune would refuse fails the reload; a new one runs once it is in effect. */
  tapReload(hooks: EngineHooks): void {
    hooks.reload.tap("builder-gc", (ctx) => {
      if (ctx.changed.has("builder")) gcRules(ctx.next.builder, undefined, Date.now());
    });
    hooks.reloaded.tap("builder-gc", (ctx) => {
      if (ctx.changed.has("builder")) void this.run("reload");
    });
  }

  private rules() {
    return gcRules(this.deps.config(), diskOf(this.deps.dataRoot)?.total, Date.now());
  }

  /** After a build: a run when a rule's space bound is passed. */
  private async afterBuild(): Promise<void> {
    if (this.stopped) return;
    try {
      const rules = this.rules().filter((r) => r.reservedSpace || r.maxUsedSpace || r.minFreeSpace);
      if (rules.length === 0) return;
      const total = cacheSize(this.deps.pruner.entries());
      const free = diskOf(this.deps.dataRoot)?.free ?? Infinity;
      if (rules.some((r) => total > keepBytes(total, free, r))) await this.run("build");
    } catch (err) {
      this.deps.log.warn({ err }, "build cache garbage collection: checking the cache's size failed");
    }
  }

  /** Runs the policy now, or once more after the run under way. */
  run(reason: string): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          const rules = this.rules();
          if (rules.length === 0) return;
          const report = await this.deps.pruner.prune(rules);
          if (report.deleted.length) this.deps.log.info({ reason, entries: report.deleted.length, reclaimed: report.reclaimed }, "build cache garbage collection removed entries");
        } catch (err) {
          this.deps.log.warn({ err, reason }, "build cache garbage collection failed");
        }
      } while (this.again && !this.stopped);
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Stops the timer and waits for a run under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
