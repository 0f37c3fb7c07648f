/**
 * The container endpoints that need no running process: create, list, inspect, remove.
 * (Start, wait, logs, attach, stop and kill come with the supervisor's wiring.)
 */
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import typia from "typia";
import type { StorageDriver } from "../../../core/contracts/storage.js";
import type { ContainerCreateRequest } from "../../../core/containers/container-config.js";
import { mergeEnv, resolveCommand } from "../../../core/containers/command.js";
import { newState, type ContainerRecord, type ContainerStore } from "../../../core/containers/container-store.js";
import { errors } from "../../../core/errors.js";
import type { ImageStore } from "../../../core/images/image-store.js";
import { inspectDocument, listItem } from "../../containers/container-view.js";
import { validateBody } from "../validate-body.js";
import { checkFilterKeys, queryBool, queryFilters, queryString, type Query } from "../query.js";

const validateCreate = typia.createValidate<ContainerCreateRequest>();

export interface ContainerRouteDeps {
  containers: ContainerStore;
  images: ImageStore;
  driver: StorageDriver;
}

export function containerRoutes(deps: ContainerRouteDeps) {
  const { containers, images, driver } = deps;
  return (app: FastifyInstance) => {
    app.post("/containers/create", async (request, reply) => {
      const body = validateBody(validateCreate, request.body ?? {});
      const image = images.resolve(body.Image);
      const name = containers.claimName(queryString(request.query as Query, "name"));
      const base = image.config.config ?? {};
      const { entrypoint, cmd } = resolveCommand(body, base);
      const args = [...entrypoint, ...cmd];
      if (args.length === 0 || args[0] === "") throw errors.containerNoCommand();
      const id = containers.newId();
      const { HostConfig, NetworkingConfig: _networking, ...config } = body;
      const record: ContainerRecord = {
        Id: id,
        Name: name,
        Created: new Date().toISOString(),
        Path: args[0],
        Args: args.slice(1),
        Config: {
          ...config,
          Hostname: config.Hostname || id.slice(0, 12),
          User: config.User ?? base.User ?? "",
          Env: mergeEnv(base.Env ?? [], (config.Env ?? []).filter((e) => e.includes("="))),
          Cmd: cmd,
          Entrypoint: entrypoint.length ? entrypoint : null,
          WorkingDir: config.WorkingDir || base.WorkingDir || "",
          Labels: { ...(base.Labels ?? {}), ...(config.Labels ?? {}) },
          ExposedPorts: { ...(base.ExposedPorts ?? {}), ...(config.ExposedPorts ?? {}) },
          Volumes: { ...(base.Volumes ?? {}), ...(config.Volumes ?? {}) },
          StopSignal: config.StopSignal ?? base.StopSignal,
        },
        HostConfig: { NetworkMode: "none", ...(HostConfig ?? {}) },
        Image: image.id,
        Driver: driver.name,
        LogPath: join(containers.dir(id), `${id}-json.log`),
        State: newState(),
      };
      // The writable layer first: a container is listed only when it has one.
      const top = image.chain[image.chain.length - 1];
      await driver.create(id, top?.slice("sha256:".length), { writable: true });
      try {
        containers.save(record);
      } catch (err) {
        await driver.remove(id);
        throw err;
      }
      return reply.code(201).send({ Id: id, Warnings: [] });
    });

    app.get("/containers/json", async (request) => {
      const query = request.query as Query;
      const filters = queryFilters(query);
      checkFilterKeys(filters, ["id", "name", "status", "label", "ancestor"]);
      const all = queryBool(query, "all");
      const limit = Number(queryString(query, "limit") ?? "-1");
      let list = containers
        .list()
        .filter((c) => all || limit > 0 || c.State.Running)
        .filter((c) => matches(c, filters, images))
        .sort((a, b) => Date.parse(b.Created) - Date.parse(a.Created));
      if (limit > 0) list = list.slice(0, limit);
      return list.map(listItem);
    });

    app.get("/containers/:id/json", async (request) => inspectDocument(containers.get((request.params as { id: string }).id)));

    app.delete("/containers/:id", async (request, reply) => {
      const c = containers.get((request.params as { id: string }).id);
      if (c.State.Running && !queryBool(request.query as Query, "force")) throw errors.containerRunning(c.Id);
      await driver.remove(c.Id);
      containers.remove(c.Id);
      return reply.code(204).send();
    });
  };
}

function matches(c: ContainerRecord, filters: Map<string, string[]>, images: ImageStore): boolean {
  const any = (key: string, test: (v: string) => boolean) => !filters.get(key)?.length || filters.get(key)!.some(test);
  return (
    any("id", (v) => c.Id.startsWith(v)) &&
    any("name", (v) => c.Name.slice(1).includes(v.replace(/^\//, ""))) &&
    any("status", (v) => c.State.Status === v) &&
    any("label", (v) => {
      const [k, val] = v.split("=", 2);
      return val === undefined ? k in (c.Config.Labels ?? {}) : c.Config.Labels?.[k] === val;
    }) &&
    any("ancestor", (v) => {
      try {
        return images.resolve(v).id === c.Image;
      } catch {
        return false;
      }
    })
  );
}
