/**
 * Questions to a registry that store nothing: `GET /distribution/{name}/json` (the descriptor
 * and platforms of a name, for `docker manifest inspect`-like clients and docker-py's
 * `get_registry_data`) and `GET /images/search` (`docker search`). Credentials come from
 * `X-Registry-Auth`; as Docker, a header that cannot be read counts as none.
 */
import type { FastifyInstance } from "fastify";
import { errors } from "../../../core/errors.js";
import { parseReference } from "../../../core/images/reference.js";
import type { Credentials } from "../../registry/auth.js";
import { decodeAuthHeader } from "../../registry/auth-header.js";
import type { RegistryService } from "../../registry/registry.js";
import { checkFilterKeys, queryFilters, queryString, type Query } from "../query.js";

const inspecting = () => import("../../registry/distribution.js");
const searching = () => import("../../registry/search.js");

function credentialsOf(header: string | string[] | undefined): Credentials | undefined {
  try {
    return decodeAuthHeader(header);
  } catch {
    return undefined;
  }
}

/** Docker's boolean filter values. */
function filterBool(values: string[] | undefined, key: string): boolean | undefined {
  if (!values || values.length === 0) return undefined;
  const v = values.at(-1)!.toLowerCase();
  if (["1", "true"].includes(v)) return true;
  if (["0", "false"].includes(v)) return false;
  throw errors.apiInvalidBody(`invalid filter '${key}=${values.at(-1)}'`);
}

export function distributionRoutes(deps: { registry: RegistryService }) {
  return (app: FastifyInstance) => {
    app.get("/distribution/*", async (request) => {
      // (the router has decoded it: a second decoding would read `%25` as a broken escape)
      const path = (request.params as { "*": string })["*"];
      if (!path.endsWith("/json")) throw errors.apiPageNotFound();
      const name = path.slice(0, -"/json".length);
      if (/^(sha256:)?[a-f0-9]{64}$/.test(name)) throw errors.apiInvalidBody("no manifest found for full image ID");
      const ref = parseReference(name);
      const { distributionInspect } = await inspecting();
      return distributionInspect(deps.registry, ref, credentialsOf(request.headers["x-registry-auth"]));
    });

    app.get("/images/search", async (request) => {
      const query = request.query as Query;
      const term = queryString(query, "term") ?? "";
      const limitText = queryString(query, "limit");
      const limit = limitText ? Number(limitText) : 25;
      if (!Number.isInteger(limit)) throw errors.apiInvalidParameter("limit", limitText!);
      if (limit < 1 || limit > 100) throw errors.apiInvalidBody(`Limit ${limit} is outside the range of [1, 100]`);
      const filters = queryFilters(query);
      checkFilterKeys(filters, ["is-automated", "is-official", "stars"]);
      let stars = 0;
      for (const s of filters.get("stars") ?? []) {
        if (!/^-?\d+$/.test(s)) throw errors.apiInvalidBody(`invalid filter 'stars=${s}'`);
        stars = Math.max(stars, Number(s));
      }
      const { searchRegistry } = await searching();
      return searchRegistry(
        deps.registry,
        term,
        limit,
        { isOfficial: filterBool(filters.get("is-official"), "is-official"), stars, automatedOnly: filterBool(filters.get("is-automated"), "is-automated") === true },
        credentialsOf(request.headers["x-registry-auth"]),
      );
    });
  };
}
