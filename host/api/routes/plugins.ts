/**
 * The managed plugins API (Docker Engine API v1.51 `/plugins`): list, inspect, create, set,
 * enable, disable, remove. The plugins themselves are the managed plugins service's
 * (host/managed-plugins/). Pull, push, upgrade and privileges (a registry's plugins) are not
 * served: their routes answer 404 as for any route that does not exist.
 */
import { PassThrough } from "node:stream";
import type { FastifyInstance } from "fastify";
import { errors } from "../../../core/errors.js";
import type { ManagedPlugins } from "../../managed-plugins/plugin-service.js";
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

    app.post("/plugins/*", async (request, reply) => {
      const { name, action } = target(request, ["set", "enable", "disable"]);
      const query = request.query as Query;
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
