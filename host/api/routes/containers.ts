/**
 * The container endpoints about records: create, list, inspect, remove, prune. (Those that
 * touch a running process are in container-run.ts.) The work is the ContainerService's
 * (host/containers/container-service.ts); here are the request's checks and Docker's answers.
 */
import type { FastifyInstance } from "fastify";
import typia from "typia";
import type { StorageDriver } from "../../../core/contracts/storage.js";
import type { ContainerCreateRequest } from "../../../core/containers/container-config.js";
import type { ContainerRecord, ContainerStore } from "../../../core/containers/container-store.js";
import type { ImageStore } from "../../../core/images/image-store.js";
import { errors } from "../../../core/errors.js";
import { inspectDocument, listItem } from "../../containers/container-view.js";
import type { ContainerService } from "../../containers/container-service.js";
import { validateBody } from "../validate-body.js";
import { labelsMatch, untilTime } from "../filter-values.js";
import { checkFilterKeys, queryBool, queryFilters, queryString, type Query } from "../query.js";

const validateCreate = typia.createValidate<ContainerCreateRequest>();

export interface ContainerRouteDeps {
  containers: ContainerStore;
  images: ImageStore;
  driver: StorageDriver;
  service: ContainerService;
}

export function containerRoutes(deps: ContainerRouteDeps) {
  const { containers, images, driver, service } = deps;
  const sizes = (c: ContainerRecord) => sizesOf(c, driver, images);
  return (app: FastifyInstance) => {
    app.post("/containers/create", async (request, reply) => {
      const body = validateBody(validateCreate, request.body ?? {});
      const { record, warnings } = await service.create(body, queryString(request.query as Query, "name"));
      return reply.code(201).send({ Id: record.Id, Warnings: warnings });
    });

    app.get("/containers/json", async (request) => {
      const query = request.query as Query;
      const filters = queryFilters(query);
      checkFilterKeys(filters, ["id", "name", "status", "label", "ancestor", "health"]);
      for (const v of filters.get("health") ?? []) {
        if (!HEALTH_FILTER_VALUES.includes(v)) throw errors.apiInvalidBody(`Unrecognised filter value for health: ${v}`);
      }
      const all = queryBool(query, "all");
      const limit = Number(queryString(query, "limit") ?? "-1");
      let list = containers
        .list()
        .filter((c) => all || limit > 0 || c.State.Running)
        .filter((c) => matches(c, filters, images))
        .sort((a, b) => Date.parse(b.Created) - Date.parse(a.Created));
      if (limit > 0) list = list.slice(0, limit);
      if (!queryBool(query, "size")) return list.map(listItem);
      return Promise.all(list.map(async (c) => ({ ...listItem(c), ...(await sizes(c)) })));
    });

    app.get("/containers/:id/json", async (request) => {
      const c = containers.get((request.params as { id: string }).id);
      return queryBool(request.query as Query, "size") ? { ...inspectDocument(c), ...(await sizes(c)) } : inspectDocument(c);
    });

    app.delete("/containers/:id", async (request, reply) => {
      const c = containers.get((request.params as { id: string }).id);
      await service.remove(c, { force: queryBool(request.query as Query, "force"), volumes: queryBool(request.query as Query, "v") });
      return reply.code(204).send();
    });

    app.post("/containers/prune", async (request) => {
      const filters = queryFilters(request.query as Query);
      checkFilterKeys(filters, ["label", "label!", "until"]);
      const until = filters.get("until")?.[0];
      const before = until === undefined ? Infinity : untilTime(until);
      const { deleted, reclaimed } = await service.prune((c) => Date.parse(c.Created) <= before && labelsMatch(c.Config.Labels, filters));
      return { ContainersDeleted: deleted, SpaceReclaimed: reclaimed };
    });
  };
}

/** What `size=1` adds: the writable layer's bytes, and those plus the image's. */
export async function sizesOf(c: ContainerRecord, driver: StorageDriver, images: ImageStore): Promise<{ SizeRw: number; SizeRootFs: number }> {
  const rw = (await driver.usage(c.Id).catch(() => ({ size: 0 }))).size;
  let image = 0;
  try {
    image = images.resolve(c.Image).size;
  } catch {
    // removed with --force meanwhile: its size is unknown
  }
  return { SizeRw: rw, SizeRootFs: rw + image };
}

/** `until` of prune: Unix seconds, an RFC 3339 time, or a duration before now (`10m`, `24h`). */
/** Docker's values of the `health` filter: a check's status, or `none` for a container without one. */
const HEALTH_FILTER_VALUES = ["starting", "healthy", "unhealthy", "none"];

function matches(c: ContainerRecord, filters: Map<string, string[]>, images: ImageStore): boolean {
  const any = (key: string, test: (v: string) => boolean) => !filters.get(key)?.length || filters.get(key)!.some(test);
  return (
    any("id", (v) => c.Id.startsWith(v)) &&
    any("name", (v) => c.Name.slice(1).includes(v.replace(/^\//, ""))) &&
    any("status", (v) => c.State.Status === v) &&
    any("health", (v) => (c.State.Health?.Status ?? "none") === v) &&
    // every label filter must hold (Docker ANDs them), unlike the other keys, whose values are alternatives
    labelsMatch(c.Config.Labels, filters) &&
    any("ancestor", (v) => {
      try {
        return images.resolve(v).id === c.Image;
      } catch {
        return false;
      }
    })
  );
}
