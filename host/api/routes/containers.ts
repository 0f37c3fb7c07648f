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
import { inspectDocument, listItem } from "../../containers/container-view.js";
import type { ContainerService } from "../../containers/container-service.js";
import { containerListFilter, statusImpliesAll } from "../../containers/container-filters.js";
import { adaptCreateToVersion, readOnlyBindsNonRecursive } from "../../containers/create-versions.js";
import { bodyCheck, checkJsonType, validateBody } from "../validate-body.js";
import { requestedApiVersion } from "../api-version.js";
import { compareApiVersions } from "../../../core/version.js";
import { labelsMatch, untilTime } from "../filter-values.js";
import { checkFilterKeys, queryBool, queryFilters, queryString, type Query } from "../query.js";
import { initLinkBytes } from "../../containers/init-layer.js";
import { graphDriverData } from "../graph-driver.js";
import { errors } from "../../../core/errors.js";
import { goAtoi } from "../../../core/options/go-values.js";

const validateCreate = bodyCheck(typia.createValidate<ContainerCreateRequest>(), typia.json.schemas<[ContainerCreateRequest], "3.1">());

export interface ContainerRouteDeps {
  containers: ContainerStore;
  images: ImageStore;
  driver: StorageDriver;
  service: ContainerService;
  /** The host's cgroup version (1 or 2): what an older client's create means depends on it. */
  cgroupVersion: number;
}

export function containerRoutes(deps: ContainerRouteDeps) {
  const { containers, images, driver, service } = deps;
  const sizes = (c: ContainerRecord) => sizesOf(c, driver, images);
  return (app: FastifyInstance) => {
    app.post("/containers/create", async (request, reply) => {
      // a body with none of the container's own settings (none, `{}`, `null`, a HostConfig
      // alone; Go's keys match in any case): Docker's decoder has no Config then, and says so
      // once the body's type is taken
      checkJsonType(request);
      const raw = request.body;
      const wrapperOnly = (k: string) => ["hostconfig", "networkingconfig"].includes(k.toLowerCase());
      if (raw === undefined || raw === null || (typeof raw === "object" && !Array.isArray(raw) && Object.keys(raw).every(wrapperOnly))) {
        throw errors.containerConfigEmpty();
      }
      const body = validateBody(validateCreate, request.body ?? {}, request);
      // what the request means at its version (dropped, refused, moved), before the daemon's checks
      const version = requestedApiVersion(request.raw);
      const early = adaptCreateToVersion(body, version, { cgroupVersion: deps.cgroupVersion });
      const query = request.query as Query;
      const { record, warnings } = await service.create(body, queryString(query, "name"), {
        // (a platform is read from API 1.41, as Docker's route reads it)
        platform: compareApiVersions(version, "1.41") >= 0 ? queryString(query, "platform") : undefined,
        readOnlyBindsNonRecursive: readOnlyBindsNonRecursive(version),
      });
      return reply.code(201).send({ Id: record.Id, Warnings: [...warnings, ...early] });
    });

    app.get("/containers/json", async (request) => {
      const query = request.query as Query;
      const filters = queryFilters(query);
      const wanted = containerListFilter(filters, containers, images);
      const all = queryBool(query, "all") || statusImpliesAll(filters);
      const limit = listLimit(queryString(query, "limit"));
      // newest first; each creation time read once, not at each comparison of the sort
      let list = containers
        .list()
        .filter((c) => (all || limit > 0 || c.State.Running) && wanted(c))
        .map((c) => ({ c, created: Date.parse(c.Created) }))
        .sort((a, b) => b.created - a.created)
        .map(({ c }) => c);
      if (limit > 0) list = list.slice(0, limit);
      const linkNames = service.linkNames();
      const imageNamed = (name: string) => images.idNamed(name);
      // a container's annotations are listed from API 1.46, as Docker's route lists them
      const annotations = compareApiVersions(requestedApiVersion(request.raw), "1.46") >= 0;
      const item = (c: ContainerRecord) => withoutAnnotations(listItem(c, linkNames.get(c.Id), imageNamed), annotations);
      if (!queryBool(query, "size")) return list.map(item);
      // (a list item's sizes are left out when 0, as Go's omitempty leaves them; inspect shows them)
      return Promise.all(
        list.map(async (c) => {
          const { SizeRw, SizeRootFs } = await sizes(c);
          return { ...item(c), ...(SizeRw ? { SizeRw } : {}), ...(SizeRootFs ? { SizeRootFs } : {}) };
        }),
      );
    });

    const inspect = async (ref: string, query: Query, apiVersion: string) => {
      const c = containers.get(ref);
      const doc = olderAliases(inspectDocument(c, service.inspectLinks(c), service.execIds(c)), c, apiVersion);
      // the driver's folders of the container's layer, and where its root is mounted (Docker's MergedDir)
      const layer = await driver.metadata?.(c.Id).catch(() => undefined);
      doc.GraphDriver = { Name: c.Driver, Data: graphDriverData(layer && { ...layer, MergedDir: service.rootfsPath(c.Id) }) };
      return queryBool(query, "size") ? { ...doc, ...(await sizes(c)) } : doc;
    };
    app.get("/containers/:id/json", async (request) => inspect((request.params as { id: string }).id, request.query as Query, requestedApiVersion(request.raw)));
    // a link's name has a slash in it (`/containers/web/db/json`), as Docker's `{name:.*}` routes allow
    app.get("/containers/*", async (request, reply) => {
      const path = (request.params as { "*": string })["*"];
      if (!path.endsWith("/json")) return reply.callNotFound();
      return inspect(path.slice(0, -"/json".length), request.query as Query, requestedApiVersion(request.raw));
    });

    // `*`: a link's name (`DELETE /containers/web/db?link=1`, `docker rm --link`) has a slash in it
    app.delete("/containers/*", async (request, reply) => {
      const ref = (request.params as { "*": string })["*"];
      const query = request.query as Query;
      if (queryBool(query, "link")) await service.removeLink(ref);
      else await service.remove(containers.get(ref), { force: queryBool(query, "force"), volumes: queryBool(query, "v") });
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
  const rw = Math.max(0, (await driver.usage(c.Id).catch(() => ({ size: 0 }))).size - initLinkBytes(driver.diffDir?.(c.Id)));
  let image = 0;
  try {
    image = images.resolve(c.Image).size;
  } catch {
    // removed with --force meanwhile: its size is unknown
  }
  return { SizeRw: rw, SizeRootFs: rw + image };
}

/** The networks Docker counts as user-defined: not bridge, host, none, default, nor another container's. */
const BUILT_IN_MODES = new Set(["bridge", "host", "none", "default"]);

/**
 * Below API 1.45 Docker's inspect lists, on each user-defined network, the container's short ID
 * and hostname among its aliases (they were aliases then; 1.45 moved them to DNSNames), as
 * clients of those versions read them.
 */
function olderAliases(doc: Record<string, unknown>, c: ContainerRecord, apiVersion: string): Record<string, unknown> {
  if (compareApiVersions(apiVersion, "1.45") >= 0) return doc;
  const settings = doc.NetworkSettings as { Networks: Record<string, { Aliases: string[] | null }> };
  const networks = Object.fromEntries(
    Object.entries(settings.Networks).map(([name, ep]) => {
      if (BUILT_IN_MODES.has(name) || name.startsWith("container:")) return [name, ep];
      const added = [c.Id.slice(0, 12), c.Config.Hostname ?? ""].filter((a) => a !== "");
      return [name, { ...ep, Aliases: [...new Set([...(ep.Aliases ?? []), ...added])] }];
    }),
  );
  return { ...doc, NetworkSettings: { ...settings, Networks: networks } };
}

/** A list item as an older client had it: its HostConfig without `Annotations`, when not `keep`. */
function withoutAnnotations(item: Record<string, unknown>, keep: boolean): Record<string, unknown> {
  const hostConfig = item.HostConfig as Record<string, unknown> | undefined;
  if (keep || !hostConfig || !("Annotations" in hostConfig)) return item;
  const rest = { ...hostConfig };
  delete rest.Annotations;
  return { ...item, HostConfig: rest };
}

/** `limit` as Docker's route reads it (strconv.Atoi; its refusal a 400 here, a 500 there); none when absent or empty. */
function listLimit(raw: string | undefined): number {
  if (raw === undefined || raw === "") return -1;
  try {
    return goAtoi(raw);
  } catch (err) {
    throw errors.apiGoParseError((err as Error).message);
  }
}
