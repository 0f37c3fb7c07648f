/** `/_ping`, `/version` and `/info`: what every client asks first. */
import type { FastifyInstance, FastifyReply } from "fastify";
import type { SystemInfo, VersionInfo } from "../../../core/system-info.js";

export interface SystemRouteDeps {
  systemInfo(): Promise<SystemInfo>;
  versionInfo(): Promise<VersionInfo>;
}

function pingHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header("Cache-Control", "no-cache, no-store, must-revalidate")
    .header("Pragma", "no-cache")
    // the classic builder: the Docker CLI then sends `POST /build` without asking for BuildKit
    .header("Builder-Version", "1")
    .type("text/plain; charset=utf-8");
}

export function systemRoutes(deps: SystemRouteDeps) {
  return async (app: FastifyInstance) => {
    app.get("/_ping", async (_request, reply) => pingHeaders(reply).send("OK"));
    app.head("/_ping", async (_request, reply) => pingHeaders(reply).header("Content-Length", "0").send());
    app.get("/version", async () => deps.versionInfo());
    app.get("/info", async () => deps.systemInfo());
  };
}
