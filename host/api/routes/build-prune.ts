/**
 * `POST /build/prune` (API 1.51): removes build cache entries by one rule (core/build/cache-rules.ts)
 * read from `all`, the space bounds (`reserved-space`, or its older name `keep-storage`;
 * `max-used-space`; `min-free-space`; bytes; before API 1.48 `keep-storage` alone) and `filters`. Answers what it removed, as Docker:
 * `{"CachesDeleted": [...] | null, "SpaceReclaimed": <bytes>}`.
 */
import type { FastifyInstance } from "fastify";
import { pruneRule } from "../../../core/build/cache-rules.js";
import { errors } from "../../../core/errors.js";
import type { BuildCachePruner } from "../../build/cache-prune.js";
import { makeEvent } from "../../../core/events/event.js";
import type { EngineHooks } from "../../../core/hooks.js";
import { queryBool, queryFilters, queryString, type Query } from "../query.js";
import { requestedApiVersion } from "../api-version.js";
import { compareApiVersions } from "../../../core/version.js";

/** A space bound in bytes, as Docker reads it (an integer); undefined when not given. */
function bytesParam(query: Query, name: string): number | undefined {
  const raw = queryString(query, name);
  if (raw === undefined || raw === "") return undefined;
  if (!/^[+-]?\d+$/.test(raw)) throw errors.buildCacheSpace(name, raw);
  return Math.max(0, Number(raw));
}

export function buildPruneRoute(pruner: BuildCachePruner, hooks: EngineHooks) {
  return (app: FastifyInstance) => {
    app.post("/build/prune", async (request) => {
      const query = request.query as Query;
      // as Docker's route reads them: before API 1.48 `keep-storage` alone; from 1.48 its new
      // name `reserved-space` (the old one when the new is absent or 0) and the other two bounds
      const bounds =
        compareApiVersions(requestedApiVersion(request.raw), "1.48") < 0
          ? { reservedSpace: bytesParam(query, "keep-storage") }
          : {
              reservedSpace: bytesParam(query, "reserved-space") || bytesParam(query, "keep-storage"),
              maxUsedSpace: bytesParam(query, "max-used-space"),
              minFreeSpace: bytesParam(query, "min-free-space"),
            };
      const rule = pruneRule(queryFilters(query), { all: queryBool(query, "all"), ...bounds }, Date.now());
      const report = await pruner.prune([rule]);
      // (the API's prune only: the cache's own collection logs none, as with Docker)
      hooks.event.call(makeEvent("builder", "prune", "", { reclaimed: String(report.reclaimed) }));
      return { CachesDeleted: report.deleted.length ? report.deleted : null, SpaceReclaimed: report.reclaimed };
    });
  };
}
