/**
 * The build cache's parts, put together for the daemon: the record of the steps' images
 * (cache-ledger.ts, which the builder writes to), the pruner (`POST /build/prune`, the gc) and
 * `builder.gc`, started now and reloadable; `close` stops the gc and writes what is unwritten.
 */
import { join } from "node:path";
import type { Logger } from "pino";
import type { EngineHooks } from "../../core/hooks.js";
import type { ImageStore } from "../../core/images/image-store.js";
import type { BuilderConfig } from "../../core/options/value-types-structured.js";
import { BuildCacheGc } from "./cache-gc.js";
import { BuildCacheLedger } from "./cache-ledger.js";
import { BuildCachePruner } from "./cache-prune.js";

export interface BuildCacheDeps {
  images: ImageStore;
  containerUses: (imageId: string) => boolean;
  hooks: EngineHooks;
  config: () => BuilderConfig;
  dataRoot: string;
  log: Logger;
}

export interface BuildCacheParts {
  ledger: BuildCacheLedger;
  pruner: BuildCachePruner;
  gc: BuildCacheGc;
  close(): Promise<void>;
}

export function openBuildCache(deps: BuildCacheDeps): BuildCacheParts {
  const ledger = new BuildCacheLedger(join(deps.dataRoot, "builder"), (message, err) => deps.log.warn({ err }, message));
  const pruner = new BuildCachePruner({ ledger, images: deps.images, containerUses: deps.containerUses, dataRoot: deps.dataRoot });
  const gc = new BuildCacheGc({ pruner, ledger, config: deps.config, dataRoot: deps.dataRoot, log: deps.log });
  gc.start();
  gc.tapReload(deps.hooks);
  return {
    ledger,
    pruner,
    gc,
    close: async () => {
      await gc.stop();
      ledger.flush();
    },
  };
}
