/**
 * The smaller container calls of Docker's API: pause and unpause (the runtime's freezer),
 * rename, update (limits and restart policy), top (`ps` over the container's processes) and
 * stats (from its cgroup: one-shot, one sample against the one a second before, or a stream
 * of one object a second).
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import typia from "typia";
import type { ContainerRecord, ContainerStore } from "../../../core/containers/container-store.js";
import { containerTarget } from "./container-target.js";
import { errors } from "../../../core/errors.js";
import { emptyStats, sampleStats, type StatsSample } from "../../containers/container-stats.js";
import { containerTop } from "../../containers/container-top.js";
import type { ContainerUpdateRequest } from "../../containers/resource-update.js";
import type { ContainerService } from "../../containers/container-service.js";
import { queryBool, queryString, type Query } from "../query.js";
import { rawResponse } from "../raw-response.js";
import { ClientStream } from "../client-stream.js";
import { bodyCheck, validateBody } from "../validate-body.js";
import { requestedApiVersion } from "../api-version.js";
import { compareApiVersions } from "../../../core/version.js";

const validateUpdate = bodyCheck(typia.createValidate<ContainerUpdateRequest>(), typia.json.schemas<[ContainerUpdateRequest], "3.1">());

export interface ContainerOpsDeps {
  containers: ContainerStore;
  service: ContainerService;
}

const STATS_INTERVAL_MS = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function containerOpsRoutes(deps: ContainerOpsDeps) {
  const { containers, service } = deps;
  const target = (request: FastifyRequest) => containerTarget(containers, request);

  return (app: FastifyInstance) => {
    app.post("/containers/:id/pause", async (request, reply) => {
      const { ref, c } = target(request);
      await service.pause(c, ref);
      return reply.code(204).send();
    });

    app.post("/containers/:id/unpause", async (request, reply) => {
      const { ref, c } = target(request);
      await service.unpause(c, ref);
      return reply.code(204).send();
    });

    app.post("/containers/:id/rename", async (request, reply) => {
      const { c } = target(request);
      await service.rename(c, queryString(request.query as Query, "name") ?? "");
      return reply.code(204).send();
    });

    app.post("/containers/:id/update", async (request) => {
      // the body before the container, as Docker's router reads them; a pids limit is read from API 1.40
      const body = validateBody(validateUpdate, request.body ?? {}, request);
      if (compareApiVersions(requestedApiVersion(request.raw), "1.40") < 0) delete body.PidsLimit;
      const { c } = target(request);
      const warnings = await service.update(c, body);
      return { Warnings: warnings.length ? warnings : null };
    });

    app.get("/containers/:id/top", async (request) => {
      const { c } = target(request);
      if (!c.State.Running) throw errors.containerStateNotRunning(c.Id);
      if (c.State.Restarting) throw errors.containerRestarting(c.Id);
      const psArgs = queryString(request.query as Query, "ps_args") || "-ef";
      return containerTop(c.Id, c.State.Pid, psArgs);
    });

    app.get("/containers/:id/stats", async (request, reply) => {
      const { c } = target(request);
      const query = request.query as Query;
      const stream = queryBool(query, "stream", true);
      // (one-shot is read from API 1.41, as Docker's route reads it)
      const oneShot = compareApiVersions(requestedApiVersion(request.raw), "1.41") >= 0 && queryBool(query, "one-shot");
      if (oneShot && stream) throw errors.apiInvalidBody("cannot have stream=true and one-shot=true");
      const res = rawResponse(reply, 200, { "content-type": "application/json" });
      const client = new ClientStream(res);
      if (!stream) {
        // Without one-shot, Docker samples twice so that the CPU share can be computed.
        let sample = take(c);
        if (!oneShot && sample) {
          await sleep(STATS_INTERVAL_MS);
          sample = take(c, sample);
        }
        return void client.end(`${JSON.stringify(sample ?? emptyStats(c))}\n`);
      }
      let previous: StatsSample | undefined;
      while (!client.closed && containers.has(c.Id)) {
        previous = take(c, previous);
        // a sample the client has no room for is dropped (Docker's stats publisher drops them for a slow reader)
        client.offer(`${JSON.stringify(previous ?? emptyStats(c))}\n`);
        await sleep(STATS_INTERVAL_MS);
      }
      client.end();
    });
  };
}

/** A sample of a running container; undefined when it does not run (its process may just have gone). */
function take(c: ContainerRecord, previous?: StatsSample): StatsSample | undefined {
  if (!c.State.Running || c.State.Restarting || c.State.Pid <= 0) return undefined;
  try {
    return sampleStats(c, previous);
  } catch {
    return undefined;
  }
}

