/** `/_ping`, `/version`, `/info` and `OPTIONS` of any path: what every client asks first. */
import type { FastifyInstance, FastifyReply } from "fastify";
import type { SystemInfo, VersionInfo } from "../../../core/system-info.js";
import { requestedApiVersion } from "../api-version.js";
import { infoAtVersion } from "./info-versions.js";

export interface SystemRouteDeps {
  systemInfo(): Promise<SystemInfo>;
  versionInfo(): Promise<VersionInfo>;
}

function pingHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header("Cache-Control", "no-cache, no-store, must-revalidate")
    .header("Pragma", "no-cache")
    // The classic builder: the Docker CLI then sends `POST /build` without asking for BuildKit.
    // Docker 28 sends 2 (BuildKit) unless its daemon.json says `"features": {"buildkit": false}`,
    // and then 1, as here: this engine has no BuildKit.
    .header("Builder-Version", "1")
    // The node's cluster state, as Docker's ping reports it (`inactive`, or `active/manager`...):
    // this engine joins no cluster (docs/cluster.md), so its node stays `inactive`, as /info's
    // Swarm.LocalNodeState says.
    .header("Swarm", "inactive")
    .type("text/plain; charset=utf-8");
}

export function systemRoutes(deps: SystemRouteDeps) {
  return async (app: FastifyInstance) => {
    app.get("/_ping", async (_request, reply) => pingHeaders(reply).send("OK"));
    app.head("/_ping", async (_request, reply) => pingHeaders(reply).header("Content-Length", "0").send());
    app.get("/version", async () => deps.versionInfo());
    app.get("/info", async (request) => infoAtVersion(await deps.systemInfo(), requestedApiVersion(request.raw)));
    // Docker's router answers OPTIONS on every path with an empty 200 (CORS headers came only
    // with its `--api-cors-header`, removed in Docker 28 and absent here). A route like any
    // other: the authorization plugins are asked about it first.
    app.options("/*", async (_request, reply) => reply.code(200).send());
  };
}
