/**
 * The volumes API: create, list, inspect, remove, prune (Docker Engine API v1.51). The volumes
 * themselves are the volume service's (host/volumes/volume-service.ts).
 */
import type { FastifyInstance } from "fastify";
import typia from "typia";
import { EngineError, errors } from "../../../core/errors.js";
import { compareApiVersions } from "../../../core/version.js";
import { requestedApiVersion } from "../api-version.js";
import { filterMatches, hasLabel, labelsMatch } from "../filter-values.js";
import { checkFilterKeys, filterBool, queryBool, queryFilters, type Query } from "../query.js";
import { bodyCheck, validateBody } from "../validate-body.js";
import { isAnonymous, type VolumeService } from "../../volumes/volume-service.js";
import { volumeDocument } from "../../volumes/volume-view.js";
import type { VolumeRecord } from "../../volumes/volume-store.js";

/** `POST /volumes/create` body. */
interface VolumeCreateRequest {
  Name?: string;
  Driver?: string;
  DriverOpts?: Record<string, string> | null;
  Labels?: Record<string, string> | null;
  [key: string]: unknown;
}

const validateCreate = bodyCheck(typia.createValidate<VolumeCreateRequest>(), typia.json.schemas<[VolumeCreateRequest], "3.1">());

/** A boolean filter value as Docker reads them (`true`, `1`, `false`, `0`). */
function boolFilter(key: string, values: string[] | undefined): boolean | undefined {
  if (!values?.length) return undefined;
  const v = values[values.length - 1].toLowerCase();
  if (v === "true" || v === "1") return true;
  if (v === "false" || v === "0") return false;
  throw errors.apiInvalidBody(`invalid filter '${key}=${values[values.length - 1]}'`);
}

export function volumeRoutes(volumes: VolumeService) {
  const nameOf = (request: { params: unknown }) => (request.params as { name: string }).name;
  return (app: FastifyInstance) => {
    app.post("/volumes/create", async (request, reply) => {
      const body = validateBody(validateCreate, request.body ?? {}, request);
      const { volume } = await volumes.create({ name: body.Name, driver: body.Driver ?? "", options: body.DriverOpts, labels: body.Labels });
      return reply.code(201).send(volumeDocument(volume, undefined, { scope: (await volumes.driver(volume.Driver)).scope }));
    });

    app.get("/volumes", async (request) => {
      const filters = queryFilters(request.query as Query);
      checkFilterKeys(filters, ["dangling", "driver", "label", "name"]);
      const dangling = filterBool(filters, "dangling");
      const any = (key: string, test: (v: string) => boolean) => !filters.get(key)?.length || filters.get(key)!.some(test);
      const { volumes: live, warnings } = await volumes.listLive();
      const list = live
        .filter(({ record: v }) =>
          any("name", (n) => filterMatches(n, v.Name)) &&
          any("driver", (d) => v.Driver === d) &&
          (filters.get("label") ?? []).every((l) => hasLabel(v.Labels, l)) &&
          (dangling === undefined || dangling === !volumes.inUse(v.Name)),
        )
        .sort((a, b) => a.record.Name.localeCompare(b.record.Name));
      // (without warnings null, as Docker's volume service leaves its list of them nil)
      return { Volumes: list.map(({ record, ...live }) => volumeDocument(record, undefined, live)), Warnings: warnings.length > 0 ? warnings : null };
    });

    app.get("/volumes/:name", async (request) => {
      const { record, ...live } = await volumes.inspect(nameOf(request));
      return volumeDocument(record, undefined, live);
    });

    app.delete("/volumes/:name", async (request, reply) => {
      const force = queryBool(request.query as Query, "force");
      try {
        await volumes.remove(nameOf(request));
      } catch (err) {
        // `docker volume rm -f` of a volume that is not there is not an error; one in use still is.
        if (!(force && err instanceof EngineError && err.code === errors.volumeNotFound.code)) throw err;
      }
      return reply.code(204).send();
    });

    app.post("/volumes/prune", async (request) => {
      const filters = queryFilters(request.query as Query);
      checkFilterKeys(filters, ["label", "label!", "all"]);
      // Since API 1.42 a prune takes anonymous volumes only, unless `all` says otherwise.
      const all = boolFilter("all", filters.get("all")) ?? compareApiVersions(requestedApiVersion(request.raw), "1.42") < 0;
      const pick = (v: VolumeRecord) => (all || isAnonymous(v)) && labelsMatch(v.Labels, filters);
      const { deleted, reclaimed } = await volumes.prune(pick);
      return { VolumesDeleted: deleted, SpaceReclaimed: reclaimed };
    });
  };
}
