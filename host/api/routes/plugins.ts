/**
 * The managed plugins API (Docker Engine API v1.51 `/plugins`): list, inspect, create, set,
 * enable, disable, remove; and with registries: privileges, pull, push, upgrade. The plugins
 * themselves are the managed plugins service's (host/managed-plugins/).
 */
import { PassThrough } from "node:stream";
import type { FastifyInstance } from "fastify";
import { errors } from "../../../core/errors.js";
import type { PluginPrivilege } from "../../managed-plugins/plugin-distribution.js";
import type { ManagedPlugins } from "../../managed-plugins/plugin-service.js";
import { decodeAuthHeader } from "../../registry/auth-header.js";
import { progressStream } from "../progress-stream.js";
import { DEFAULT_ENABLE_TIMEOUT } from "../../managed-plugins/plugin-service.js";
import { checkFilterKeys, filterBool, queryBool, queryFilters, queryString, type Query } from "../query.js";

/**
 * A plugin's name may hold slashes (`team/plugin:1`, `docker.io/library/p`), as Docker's router
 * takes `{name:.*}`: the name is what comes before the action that ends the path.
 */
function target(request: { params: unknown }, actions: readonly string[]): { name: string; action: string } {
  const rest = (request.params as { "*": string })["*"];
  const action = actions.find((a) => rest.endsWith(`/${a}`));
  return action ? { name: rest.slice(0, -action.length - 1), action } : { name: rest, action: "" };
}

/** How long a privileges look-up may take (a registry that does not answer). */
const PRIVILEGES_MS = 120_000;

/** The privileges a client accepted (a pull's or an upgrade's body), as Docker decodes them. */
function privilegesBody(body: unknown): PluginPrivilege[] | null {
  if (body === undefined) throw errors.apiInvalidBody("failed to parse privileges: EOF");
  if (body === null) return null;
  const ok =
    Array.isArray(body) &&
    body.every((p) => p && typeof p === "object" && (p.Name === undefined || typeof p.Name === "string") && (p.Value == null || (Array.isArray(p.Value) && p.Value.every((v: unknown) => typeof v === "string"))));
  if (!ok) throw errors.apiInvalidBody("failed to parse privileges: json: cannot unmarshal into Go value of type types.PluginPrivileges");
  return (body as PluginPrivilege[]).map((p) => ({ Name: p.Name ?? "", Description: p.Description ?? "", Value: p.Value ?? [] }));
}

export function pluginRoutes(plugins: ManagedPlugins) {
  return (app: FastifyInstance) => {
    app.get("/plugins", async (request) => {
      const filters = queryFilters(request.query as Query);
      checkFilterKeys(filters, ["capability", "enabled"]);
      return plugins.list({ enabled: filterBool(filters, "enabled"), capability: filters.get("capability") });
    });

    app.get("/plugins/*", async (request) => {
      const { name, action } = target(request, ["json"]);
      if (action !== "json") throw errors.apiPageNotFound();
      return plugins.inspect(name);
    });

    // the body is the tar of the plugin's folder (`docker plugin create`), read as it comes
    app.post("/plugins/create", async (request, reply) => {
      const body = new PassThrough();
      request.raw.pipe(body);
      try {
        await plugins.create(queryString(request.query as Query, "name") ?? "", body);
      } catch (err) {
        // the rest of a refused body is read and dropped: the client gets the answer, not a broken pipe
        request.raw.unpipe(body);
        request.raw.resume();
        throw err;
      }
      return reply.code(204).send();
    });

    app.get("/plugins/privileges", async (request) => {
      const remote = queryString(request.query as Query, "remote") ?? "";
      return plugins.privileges(remote, { credentials: decodeAuthHeader(request.headers["x-registry-auth"]), signal: AbortSignal.timeout(PRIVILEGES_MS) });
    });

    app.post("/plugins/pull", async (request, reply) => {
      const query = request.query as Query;
      const remote = queryString(query, "remote") ?? "";
      const accepted = privilegesBody(request.body);
      const name = plugins.pullName(remote, queryString(query, "name") ?? "");
      const credentials = decodeAuthHeader(request.headers["x-registry-auth"]);
      reply.header("Docker-Plugin-Name", name);
      return progressStream(reply, async (w) => {
        await plugins.pull(remote, name, accepted, { credentials, signal: w.signal, emit: w.emit });
      });
    });

    app.post("/plugins/*", async (request, reply) => {
      const { name, action } = target(request, ["set", "enable", "disable", "push", "upgrade"]);
      const query = request.query as Query;
      if (action === "push") {
        const credentials = decodeAuthHeader(request.headers["x-registry-auth"]);
        return progressStream(reply, (w) => plugins.push(name, { credentials, signal: w.signal, emit: w.emit }));
      }
      if (action === "upgrade") {
        const accepted = privilegesBody(request.body);
        const remote = queryString(query, "remote") ?? "";
        const credentials = decodeAuthHeader(request.headers["x-registry-auth"]);
        plugins.resolve(name);
        reply.header("Docker-Plugin-Name", name);
        return progressStream(reply, (w) => plugins.upgrade(name, remote, accepted, { credentials, signal: w.signal, emit: w.emit }));
      }
      if (action === "set") {
        if (request.body === undefined) throw errors.apiInvalidBody("got EOF while reading request body");
        const args = request.body;
        if (args !== null && (!Array.isArray(args) || args.some((a) => typeof a !== "string"))) {
          throw errors.apiInvalidBody(`json: cannot unmarshal ${Array.isArray(args) ? "array element" : typeof args} into Go value of type []string`);
        }
        await plugins.set(name, (args as string[] | null) ?? []);
        return reply.code(204).send();
      }
      if (action === "enable") {
        const raw = queryString(query, "timeout") ?? "";
        // Docker reads the timeout with strconv.Atoi: a missing one is refused (the CLI always sends its 30)
        if (!/^[+-]?\d+$/.test(raw)) throw errors.apiGoParseError(`strconv.Atoi: parsing ${JSON.stringify(raw)}: invalid syntax`);
        const timeout = Number(raw);
        await plugins.enable(name, timeout > 0 ? timeout : DEFAULT_ENABLE_TIMEOUT);
        return reply.code(200).send();
      }
      if (action === "disable") {
        await plugins.disable(name, queryBool(query, "force"));
        return reply.code(200).send();
      }
      throw errors.apiPageNotFound();
    });

    app.delete("/plugins/*", async (request, reply) => {
      await plugins.remove(target(request, []).name, queryBool(request.query as Query, "force"));
      return reply.code(200).send();
    });
  };
}
