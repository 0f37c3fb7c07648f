/**
 * `engine search`: the daemon's search of the registry the term names (Docker Hub's index when it
 * names none), as `docker search` shows it: in the registry's order, descriptions cut at 45
 * columns, "[OK]" for an official image. The registry's credentials from config.json go along.
 */
import { ExitError, type Command } from "../command.js";
import { authKeyFor, encodeAuthConfig } from "../auth/registry-auth.js";
import { credentialsFor } from "../auth/config.js";
import { filtersJson } from "../format/filters.js";
import { ellipsis, renderList } from "../format/render.js";
import { struct, TemplateError, type GoStruct } from "../format/template.js";

interface SearchResult {
  name: string;
  description?: string;
  star_count?: number;
  is_official?: boolean;
}

const TABLE = "table {{.Name}}\t{{.Description}}\t{{.StarCount}}\t{{.IsOfficial}}";
const HEADERS = { Name: "NAME", Description: "DESCRIPTION", StarCount: "STARS", IsOfficial: "OFFICIAL" };
const TYPE = "*registry.searchContext";

function searchContext(r: SearchResult, trunc: boolean): GoStruct {
  const description = () => {
    const d = (r.description ?? "").replace(/[\n\r]/g, " ");
    return trunc ? ellipsis(d, 45) : d;
  };
  return struct(TYPE, {
    Name: () => r.name,
    Description: description,
    StarCount: () => String(r.star_count ?? 0),
    IsOfficial: () => (r.is_official ? "[OK]" : ""),
    // `{{json .}}` writes the booleans as "true"/"false"
    toJSON: () => ({ Description: description(), IsOfficial: String(Boolean(r.is_official)), Name: r.name, StarCount: String(r.star_count ?? 0) }),
  });
}

/** The registry a term names: its first part when that looks like a host, else Docker Hub (the daemon's rule too). */
function searchDomain(term: string): string {
  const slash = term.indexOf("/");
  const first = slash < 0 ? "" : term.slice(0, slash);
  return slash < 0 || (!first.includes(".") && !first.includes(":") && first !== "localhost") ? "docker.io" : first;
}

export const command: Command = {
  usage: "[OPTIONS] TERM",
  flags: [
    { name: "filter", short: "f", type: "list", valueName: "filter", description: "Filter output based on conditions provided" },
    { name: "format", type: "string", description: "Pretty-print search using a Go template" },
    { name: "limit", type: "int", description: "Max number of search results" },
    { name: "no-trunc", type: "bool", description: "Don't truncate output" },
  ],
  args: { min: 1, max: 1 },
  async run(ctx, { flags, args }) {
    const key = authKeyFor(searchDomain(args[0]));
    const creds = credentialsFor(ctx.configDir, key, ctx.stderr);
    // with nothing saved the Docker CLI sends an empty AuthConfig ("{}")
    const auth = creds ? encodeAuthConfig(key, creds) : "e30=";
    const limit = flags.limit as number;
    const results = await ctx.connection().getJson<SearchResult[]>("/images/search", {
      // in the Go client's (sorted) order
      query: { filters: filtersJson(flags.filter as string[]), limit: limit !== 0 ? limit : undefined, term: args[0] },
      headers: { "X-Registry-Auth": auth },
    });
    const format = String(flags.format);
    try {
      ctx.stdout(renderList({ format: format === "" || format === "table" ? TABLE : format, headers: HEADERS, typeName: TYPE }, results.map((r) => searchContext(r, !flags["no-trunc"]))));
    } catch (e) {
      if (e instanceof TemplateError) throw new ExitError(1, e.message);
      throw e;
    }
    return 0;
  },
};
