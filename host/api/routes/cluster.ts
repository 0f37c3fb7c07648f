/**
 * The cluster-mode endpoints (`/swarm`, `/nodes`, `/services`, `/tasks`, `/secrets`,
 * `/configs`), every method and path Docker's daemon serves, answered as a node outside a swarm
 * answers them (core/cluster/outside-swarm.ts). Served rather than left to the 404: clients
 * and SDK clean-ups that leave a swarm or list services read Docker's 503.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { join, leave, logs, objectVersion, requireManager, type ObjectKind } from "../../../core/cluster/outside-swarm.js";
import { queryBool, queryString, type Query } from "../query.js";

const query = (request: FastifyRequest) => request.query as Query;

/** List, inspect, remove, and update after its `version` is checked. */
function objects(app: FastifyInstance, path: string, kind: ObjectKind, opts: { create: boolean; remove: boolean; update: boolean }): void {
  app.get(path, async () => requireManager());
  app.get(`${path}/:id`, async () => requireManager());
  if (opts.create) app.post(`${path}/create`, async () => requireManager());
  if (opts.remove) app.delete(`${path}/:id`, async () => requireManager());
  if (opts.update) {
    app.post(`${path}/:id/update`, async (request) => {
      objectVersion(kind, queryString(query(request), "version"));
      return requireManager();
    });
  }
}

export function clusterRoutes() {
  return (app: FastifyInstance) => {
    app.get("/swarm", async () => requireManager());
    app.post("/swarm/init", async () => join());
    app.post("/swarm/join", async () => join());
    app.post("/swarm/leave", async () => leave());
    app.post("/swarm/update", async (request) => {
      objectVersion("swarm", queryString(query(request), "version"));
      return requireManager();
    });
    app.get("/swarm/unlockkey", async () => requireManager());
    app.post("/swarm/unlock", async () => requireManager());

    objects(app, "/nodes", "node", { create: false, remove: true, update: true });
    objects(app, "/services", "service", { create: true, remove: true, update: true });
    objects(app, "/tasks", "service", { create: false, remove: false, update: false });
    objects(app, "/secrets", "secret", { create: true, remove: true, update: true });
    objects(app, "/configs", "config", { create: true, remove: true, update: true });
    for (const path of ["/services/:id/logs", "/tasks/:id/logs"]) {
      app.get(path, async (request) => logs(queryBool(query(request), "stdout"), queryBool(query(request), "stderr")));
    }
  };
}
