/**
 * A container's files: `HEAD`/`GET`/`PUT /containers/{id}/archive` (`docker cp` both ways),
 * `GET /containers/{id}/export` and `GET /containers/{id}/changes` (`docker diff`). The work is
 * in host/containers/files; this file speaks HTTP.
 */
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { StorageDriver } from "../../../core/contracts/storage.js";
import { ZERO_TIME, type ContainerStore } from "../../../core/containers/container-store.js";
import { containerTarget } from "./container-target.js";
import { errors } from "../../../core/errors.js";
import type { EngineHooks } from "../../../core/hooks.js";
import { containerChanges } from "../../containers/files/changes.js";
import { ContainerFiles, type RootfsSource } from "../../containers/files/container-files.js";
import { statHeader } from "../../containers/files/path-stat.js";
import { skippedText, skippedWarning } from "../../containers/files/skipped-entries.js";
import type { VolumeHolder } from "../../containers/files/view-mounts.js";
import { queryBool, queryString, type Query } from "../query.js";
import { rawResponse } from "../raw-response.js";
import type { IdMap } from "../../../core/userns/id-map.js";

export interface ContainerFileRouteDeps {
  containers: ContainerStore;
  runner: RootfsSource;
  storage: StorageDriver;
  hooks: EngineHooks;
  /** The daemon's exec root: image chains are mounted under it for `changes`. */
  execRoot: string;
  disablePigz: () => boolean;
  /** The daemon's user namespace map (`--userns-remap`), for the tars of `docker cp` and export. */
  idMap?: IdMap;
  /** The containers' volumes, held for a copy that reaches into them. */
  volumes?: VolumeHolder;
  /** Where a copy in that left entries out says so. */
  log?: Logger;
}

const STAT_HEADER = "X-Docker-Container-Path-Stat";

export function containerFileRoutes(deps: ContainerFileRouteDeps) {
  const containerDir = (ref: string) => {
    try {
      return deps.containers.dir(deps.containers.get(ref).Id);
    } catch {
      return undefined; // gone (a network's container, since)
    }
  };
  const mounts = { volumes: deps.volumes, containerDir };
  const files = new ContainerFiles({ runner: deps.runner, hooks: deps.hooks, disablePigz: deps.disablePigz, idMap: deps.idMap, mounts, scratch: join(deps.execRoot, "cp") });

  const target = (request: FastifyRequest) => {
    const { ref, c } = containerTarget(deps.containers, request);
    const path = queryString(request.query as Query, "path") ?? "";
    if (path === "") throw errors.containerPathEmpty();
    return { ref, c, path };
  };

  /** Streams a tar as the whole answer; headers go out first, a failure later cuts the connection. */
  const sendTar = async (reply: import("fastify").FastifyReply, tar: Readable, headers: Record<string, string> = {}) => {
    const res = rawResponse(reply, 200, { "Content-Type": "application/x-tar", ...headers });
    await pipeline(tar, res).catch(() => res.destroy());
  };

  return (app: FastifyInstance) => {
    app.head("/containers/:id/archive", async (request, reply) => {
      const { ref, c, path } = target(request);
      const stat = await files.stat(c, ref, path);
      return reply.header(STAT_HEADER, statHeader(stat)).code(200).send();
    });

    app.get("/containers/:id/archive", async (request, reply) => {
      const { ref, c, path } = target(request);
      await files.archive(c, ref, path, (stat, tar) => sendTar(reply, tar, { [STAT_HEADER]: statHeader(stat) }));
      return reply;
    });

    app.put("/containers/:id/archive", async (request, reply) => {
      const { ref, c, path } = target(request);
      const query = request.query as Query;
      const { skipped } = await files.extract(c, ref, {
        path,
        noOverwriteDirNonDir: queryBool(query, "noOverwriteDirNonDir", false),
        copyUIDGID: queryBool(query, "copyUIDGID", false),
        body: request.raw as Readable,
      });
      // Docker's answer (200, no body) for every client; what was left out in a header and the log
      if (skipped.count > 0) {
        reply.header("Warning", skippedWarning(skipped));
        deps.log?.warn({ container: c.Id, path, skipped: skipped.count }, `docker cp into container ${c.Id.slice(0, 12)}: ${skippedText(skipped)}`);
      }
      return reply.code(200).send();
    });

    // The copy endpoint of API 1.23 and before (the archive's since): Docker's route still
    // answers it, a 404 without a body at API 1.24 and later, the versions served here.
    app.post("/containers/:id/copy", async (_request, reply) => reply.code(404).send());

    app.get("/containers/:id/export", async (request, reply) => {
      const c = deps.containers.get((request.params as { id: string }).id);
      await files.export(c, (tar) => sendTar(reply, tar));
      return reply;
    });

    app.get("/containers/:id/changes", async (request, reply) => {
      const ref = (request.params as { id: string }).id;
      const c = deps.containers.get(ref);
      const changes = await containerChanges(deps.storage, c.Id, join(deps.execRoot, "container-files"), c.State.StartedAt !== ZERO_TIME).catch((err: unknown) => {
        // removed while its layer was read (a `docker rm` at the same moment): as if it had not been found
        throw deps.containers.present(c.Id) ? err : errors.containerNotFound(ref);
      });
      // no change is `null`, as Docker's daemon answers (its empty list is Go's nil slice); the
      // serializer (host/api/app.ts) would not be asked for a string, so the newline is written here
      return reply.type("application/json").send(`${changes.length > 0 ? JSON.stringify(changes) : "null"}\n`);
    });
  };
}
