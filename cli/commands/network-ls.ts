/** `engine network ls`: the networks, as `docker network ls` lists them (sorted by name). */
import { ExitError, type Command } from "../command.js";
import { configFormat, filtersJson } from "../format/filters.js";
import { naturalLess, NETWORK_HEADERS, NETWORK_TYPE, networkContext, type NetworkSummary } from "../format/network-context.js";
import { renderList } from "../format/render.js";
import { TemplateError } from "../format/template.js";

const TABLE = "table {{.ID}}\t{{.Name}}\t{{.Driver}}\t{{.Scope}}";
const RAW = "network_id: {{.ID}}\nname: {{.Name}}\ndriver: {{.Driver}}\nscope: {{.Scope}}\n";

export const command: Command = {
  usage: "[OPTIONS]",
  flags: [
    { name: "filter", short: "f", type: "list", valueName: "filter", description: `Provide filter values (e.g. "driver=bridge")` },
    { name: "format", type: "string", description: "Format output using a custom template: 'table', 'table TEMPLATE', 'json' or a Go template" },
    { name: "no-trunc", type: "bool", description: "Do not truncate the output" },
    { name: "quiet", short: "q", type: "bool", description: "Only display network IDs" },
  ],
  args: { max: 0 },
  async run(ctx, { flags }) {
    const quiet = flags.quiet as boolean;
    const filters = filtersJson(flags.filter as string[]);
    let format = flags.format as string;
    if (format === "") {
      const configured = configFormat(ctx.configDir, "networksFormat");
      format = configured && !quiet ? configured : "table";
    }
    const final = format === "table" ? (quiet ? "{{.ID}}" : TABLE) : format === "raw" ? (quiet ? "network_id: {{.ID}}" : RAW) : format;
    const list = await ctx.connection().getJson<NetworkSummary[]>("/networks", { query: { filters } });
    list.sort((a, b) => (naturalLess(a.Name, b.Name) ? -1 : naturalLess(b.Name, a.Name) ? 1 : 0));
    const trunc = !flags["no-trunc"];
    try {
      ctx.stdout(renderList({ format: final, headers: NETWORK_HEADERS, typeName: NETWORK_TYPE }, list.map((n) => networkContext(n, trunc))));
    } catch (e) {
      if (e instanceof TemplateError) throw new ExitError(1, e.message);
      throw e;
    }
    return 0;
  },
};
