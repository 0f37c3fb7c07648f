/**
 * Docker's checkpoint endpoints (`GET`/`POST /containers/{id}/checkpoints`, `DELETE
 * /containers/{id}/checkpoints/{checkpoint}`). Docker serves them only in experimental mode,
 * answering 501 with its words otherwise, before it looks at the container; clients (dockerode,
 * the CLI's `docker checkpoint`) read that answer. In experimental mode Docker checkpoints
 * through CRIU, which this daemon does not drive: the container is looked up (404 as anywhere
 * else), then the answer is a 501 that says so, never a checkpoint that did not happen.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ContainerStore } from "../../../core/containers/container-store.js";
import { errors } from "../../../core/errors.js";
import type { DaemonConfig } from "../../../core/options/table.js";
import { containerTarget } from "./container-target.js";

export interface CheckpointDeps {
  containers: ContainerStore;
  config: () => DaemonConfig;
}

export function checkpointRoutes(deps: CheckpointDeps) {
  const refuse = async (request: FastifyRequest) => {
    if (!deps.config().experimental) throw errors.apiExperimentalDisabled();
    containerTarget(deps.containers, request);
    throw errors.apiCheckpointUnsupported();
  };
  return (app: FastifyInstance) => {
    app.get("/containers/:id/checkpoints", refuse);
    app.post("/containers/:id/checkpoints", refuse);
    app.delete("/containers/:id/checkpoints/:checkpoint", refuse);
  };
}
