/**
 * The container endpoints about records: create, list, inspect, remove, prune. (Those that
 * touch a running process are in container-run.ts.)
 */
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import typia from "typia";
import type { StorageDriver } from "../../../core/contracts/storage.js";
import type { ContainerCreateRequest } from "../../../core/containers/container-config.js";
import type { EndpointConfigRequest } from "../../../core/network/network-request.js";
import { createEnv, resolveCommand } from "../../../core/containers/command.js";
import { newState, type ContainerRecord, type ContainerStore } from "../../../core/containers/container-store.js";
import { errors } from "../../../core/errors.js";
import type { ImageStore } from "../../../core/images/image-store.js";
import { inspectDocument, listItem } from "../../containers/container-view.js";
import type { DaemonConfig } from "../../../core/options/table.js";
import { checkLogSettings, logSettings } from "../../containers/log-settings.js";
import type { ContainerRunner } from "../../containers/runner.js";
import type { ContainerNetworks } from "../../network/container-networks.js";
import { checkRuntimeName } from "../../containers/runtime-select.js";
import { checkCreatePolicy } from "../../../core/containers/restart-policy.js";
import type { LogDriverSource } from "../../plugins/log-drivers.js";
import { validateBody } from "../validate-body.js";
import { hasLabel, labelsMatch, untilTime } from "../filter-values.js";
import { checkFilterKeys, queryBool, queryFilters, queryString, type Query } from "../query.js";
import type { EngineHooks } from "../../../core/hooks.js";
import { containerEvent } from "../../containers/container-events.js";
import type { ContainerVolumes } from "../../volumes/container-volumes.js";
import { checkUsernsSettings, type UsernsRemap } from "../../userns/remap.js";

const validateCreate = typia.createValidate<ContainerCreateRequest>();

export interface ContainerRouteDeps {
  containers: ContainerStore;
  images: ImageStore;
  driver: StorageDriver;
  runner: ContainerRunner;
  logDrivers: LogDriverSource;
  config: () => DaemonConfig;
  network: ContainerNetworks;
  hooks: EngineHooks;
  /** Binds, volumes and tmpfs mounts of a create; `rm -v`. */
  volumes?: ContainerVolumes;
  /** `--userns-remap`: what a user namespace cannot give a container is refused at create. */
  remap?: UsernsRemap;
}

/**
 * The mode a create records: `default` (or none given) is the default network, `bridge`, as
 * newer Docker records it, or `none` on a daemon without one (`--bridge=none`).
 */
function networkModeOf(asked: string | undefined, config: DaemonConfig): string {
  if (asked && asked !== "default") return asked;
  return config.bridge === "none" ? "none" : "bridge";
}

/** EndpointsConfig by network, `default` (as some clients write it) read as the default network's mode. */
function endpointsConfig(body: ContainerCreateRequest, networkMode: string): Record<string, EndpointConfigRequest | null> {
  const given = body.NetworkingConfig?.EndpointsConfig ?? {};
  return Object.fromEntries(Object.entries(given).map(([k, v]) => [k === "default" ? networkMode : k, v]));
}

export function containerRoutes(deps: ContainerRouteDeps) {
  const { containers, images, driver, runner } = deps;
  const sizes = (c: ContainerRecord) => sizesOf(c, driver, images);
  return (app: FastifyInstance) => {
    app.post("/containers/create", async (request, reply) => {
      const body = validateBody(validateCreate, request.body ?? {});
      const image = images.resolve(body.Image);
      // What the start would refuse is refused now, before a layer or a name is taken.
      checkRuntimeName(deps.config(), body.HostConfig?.Runtime);
      checkCreatePolicy(body.HostConfig);
      const { warnings } = await deps.hooks.checkContainerCreate.promise({ request: { ...body, HostConfig: (body.HostConfig ??= {}) }, warnings: [] });
      const log = logSettings(body.HostConfig ?? {}, deps.config());
      await checkLogSettings(log, deps.logDrivers);
      const networkMode = networkModeOf(body.HostConfig?.NetworkMode, deps.config());
      checkUsernsSettings(deps.remap, { ...(body.HostConfig ?? {}), NetworkMode: networkMode });
      const networks = deps.network.attachmentsFor(networkMode, endpointsConfig(body, networkMode));
      const mounts = await deps.volumes?.plan(body.HostConfig ?? {}, Object.keys({ ...(image.config.config?.Volumes ?? {}), ...(body.Volumes ?? {}) }));
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
          Env: createEnv(base.Env ?? [], config.Env ?? []),
          Cmd: cmd,
          Entrypoint: entrypoint.length ? entrypoint : null,
          WorkingDir: config.WorkingDir || base.WorkingDir || "",
          Labels: { ...(base.Labels ?? {}), ...(config.Labels ?? {}) },
          ExposedPorts: { ...(base.ExposedPorts ?? {}), ...(config.ExposedPorts ?? {}) },
          Volumes: { ...(base.Volumes ?? {}), ...(config.Volumes ?? {}) },
          StopSignal: config.StopSignal ?? base.StopSignal,
        },
        // Docker records the log driver in effect at create (the daemon's default unless one was asked for).
        HostConfig: { ...(HostConfig ?? {}), NetworkMode: networkMode, LogConfig: { Type: log.driver, Config: { ...(HostConfig?.LogConfig?.Config ?? {}) } } },
        ...(networks ? { Networks: networks } : {}),
        Image: image.id,
        Driver: driver.name,
        LogPath: join(containers.dir(id), `${id}-json.log`),
        State: newState(),
      };
      // Its volumes are made now, and held against removal until the record names them.
      const made = mounts?.length ? await deps.volumes!.realize(mounts) : undefined;
      if (made) record.Mounts = made.mounts;
      try {
        // The writable layer first: a container is listed only when it has one.
        const top = image.chain[image.chain.length - 1];
        // A driver refuses options it cannot honour (a 400 naming them) before it makes anything.
        const storageOpts = { ...(HostConfig?.StorageOpt ?? {}) };
        await driver.create(id, top?.slice("sha256:".length), { writable: true, storageOpts });
        try {
          containers.save(record);
        } catch (err) {
          await driver.remove(id);
          throw err;
        }
      } catch (err) {
        made?.release();
        await deps.volumes?.discard(record.Mounts ?? []);
        throw err;
      } finally {
        made?.release();
      }
      deps.hooks.event.call(containerEvent(record, "create"));
      return reply.code(201).send({ Id: id, Warnings: warnings });
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
      if (!queryBool(query, "size")) return list.map(listItem);
      return Promise.all(list.map(async (c) => ({ ...listItem(c), ...(await sizes(c)) })));
    });

    app.get("/containers/:id/json", async (request) => {
      const c = containers.get((request.params as { id: string }).id);
      return queryBool(request.query as Query, "size") ? { ...inspectDocument(c), ...(await sizes(c)) } : inspectDocument(c);
    });

    app.delete("/containers/:id", async (request, reply) => {
      const c = containers.get((request.params as { id: string }).id);
      await runner.remove(c, queryBool(request.query as Query, "force"), queryBool(request.query as Query, "v"));
      return reply.code(204).send();
    });

    app.post("/containers/prune", async (request) => {
      const filters = queryFilters(request.query as Query);
      checkFilterKeys(filters, ["label", "label!", "until"]);
      const until = filters.get("until")?.[0];
      const before = until === undefined ? Infinity : untilTime(until);
      const deleted: string[] = [];
      let reclaimed = 0;
      for (const c of containers.list()) {
        if (c.State.Running || Date.parse(c.Created) > before || !labelsMatch(c.Config.Labels, filters)) continue;
        reclaimed += (await driver.usage(c.Id).catch(() => ({ size: 0 }))).size;
        await runner.remove(c, false);
        deleted.push(c.Id);
      }
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
function matches(c: ContainerRecord, filters: Map<string, string[]>, images: ImageStore): boolean {
  const any = (key: string, test: (v: string) => boolean) => !filters.get(key)?.length || filters.get(key)!.some(test);
  return (
    any("id", (v) => c.Id.startsWith(v)) &&
    any("name", (v) => c.Name.slice(1).includes(v.replace(/^\//, ""))) &&
    any("status", (v) => c.State.Status === v) &&
    any("label", (v) => hasLabel(c.Config.Labels, v)) &&
    any("ancestor", (v) => {
      try {
        return images.resolve(v).id === c.Image;
      } catch {
        return false;
      }
    })
  );
}
