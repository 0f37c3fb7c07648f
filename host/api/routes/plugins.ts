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

export function pluginRoutes(plugins: ManagedPlugins) {
  const nameOf = (request: { params: unknown }) => (request.params as { name: string }).name;
  return (app: FastifyInstance) => {
    app.get("/plugins", async (request) => {
      const filters = queryFilters(request.query as Query);
      checkFilterKeys(filters, ["capability", "enabled"]);
      return plugins.list({ enabled: filterBool(filters, "enabled"), capability: filters.get("capability") });
    });

    app.get("/plugins/:name/json", async (request) => plugins.inspect(nameOf(request)));

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

    app.post("/plugins/:name/set", async (request, reply) => {
      if (request.body === undefined) throw errors.apiInvalidBody("got EOF while reading request body");
      const args = request.body;
      if (args !== null && (!Array.isArray(args) || args.some((a) => typeof a !== "string"))) {
        throw errors.apiInvalidBody(`json: cannot unmarshal ${Array.isArray(args) ? "array element" : typeof args} into Go value of type []string`);
      }
      await plugins.set(nameOf(request), (args as string[] | null) ?? []);
      return reply.code(204).send();
    });

    app.post("/plugins/:name/enable", async (request, reply) => {
      const raw = queryString(request.query as Query, "timeout") ?? "";
      // Docker reads the timeout with strconv.Atoi: a missing one is refused (the CLI always sends its 30)
      if (!/^[+-]?\d+$/.test(raw)) throw errors.apiGoParseError(`strconv.Atoi: parsing ${JSON.stringify(raw)}: invalid syntax`);
      const timeout = Number(raw);
      await plugins.enable(nameOf(request), timeout > 0 ? timeout : DEFAULT_ENABLE_TIMEOUT);
      return reply.code(200).send();
    });

    app.post("/plugins/:name/disable", async (request, reply) => {
      await plugins.disable(nameOf(request), queryBool(request.query as Query, "force"));
      return reply.code(200).send();
    });

    app.delete("/plugins/:name", async (request, reply) => {
      await plugins.remove(nameOf(request), queryBool(request.query as Query, "force"));
      return reply.code(200).send();
    });
  };
}
