/** `engine ps`: the containers, as `docker ps` lists them (columns, filters, templates). */
import { ExitError, type Command } from "../command.js";
import { CONTAINER_HEADERS, CONTAINER_TYPE, containerContext, containerFields, type ContainerSummary } from "../format/container-context.js";
import { configFormat, filtersJson } from "../format/filters.js";
import { renderList, renderTable } from "../format/render.js";
import { parseTemplate, TemplateError } from "../format/template.js";

/** The default table's columns: rendered without the template engine (render.ts: renderTable). */
const COLUMNS = ["ID", "Image", "Command", "RunningFor", "Status", "Ports", "Names"] as const;
const TABLE = `table ${COLUMNS.map((c) => `{{.${c}}}`).join("\t")}`;
const RAW = `container_id: {{.ID}}
image: {{.Image}}
command: {{.Command}}
created_at: {{.CreatedAt}}
state: {{- pad .State 1 0}}
status: {{- pad .Status 1 0}}
names: {{.Names}}
labels: {{- pad .Labels 1 0}}
ports: {{- pad .Ports 1 0}}
`;

/** Docker's NewContainerFormat: what a format name (or none) means. */
function containerFormat(source: string, quiet: boolean, size: boolean): string {
  if (source === "table" || source === "") return quiet ? "{{.ID}}" : size ? `${TABLE}\t{{.Size}}` : TABLE;
  if (source === "raw") return quiet ? "container_id: {{.ID}}" : size ? `${RAW}size: {{.Size}}\n` : RAW;
  return quiet ? "{{.ID}}" : source;
}

/** Whether a template uses .Size (then the list is asked for sizes, as the Docker CLI does). */
function usesSize(format: string): boolean {
  let used = false;
  let tmpl;
  try {
    tmpl = parseTemplate(format);
  } catch (e) {
    if (e instanceof TemplateError) throw new ExitError(1, `failed to parse template: ${e.message}`);
    throw e;
  }
  try {
    tmpl.execute(containerContext({ Id: "" }, true, () => (used = true)));
  } catch (e) {
    if (e instanceof TemplateError) throw new ExitError(1, `failed to execute template: ${e.message}`);
    throw e;
  }
  return used;
}

export const command: Command = {
  usage: "[OPTIONS]",
  flags: [
    { name: "all", short: "a", type: "bool", description: "Show all containers (default shows just running)" },
    { name: "filter", short: "f", type: "list", valueName: "filter", description: "Filter output based on conditions provided" },
    { name: "format", type: "string", description: "Format output using a custom template: 'table', 'table TEMPLATE', 'json' or a Go template" },
    { name: "last", short: "n", type: "int", description: "Show n last created containers (includes all states)", default: -1 },
    { name: "latest", short: "l", type: "bool", description: "Show the latest created container (includes all states)" },
    { name: "no-trunc", type: "bool", description: "Don't truncate output" },
    { name: "quiet", short: "q", type: "bool", description: "Only display container IDs" },
    { name: "size", short: "s", type: "bool", description: "Display total file sizes" },
  ],
  args: { max: 0 },
  async run(ctx, { flags, given }) {
    const quiet = flags.quiet as boolean;
    let format = flags.format as string;
    if (format === "") format = configFormat(ctx.configDir, "psFormat");
    else if (quiet) ctx.stderr("WARNING: Ignoring custom format, because both --format and --quiet are set.\n");
    let size = flags.size as boolean;
    let limit = flags.last as number;
    if (flags.latest && limit === -1) limit = 1;
    const filters = filtersJson(flags.filter as string[]);
    if (format !== "") {
      const needed = usesSize(format);
      if (!quiet && !size && !given.has("size") && needed) size = true;
    }
    const list = await ctx.connection().getJson<ContainerSummary[]>("/containers/json", {
      query: { all: flags.all ? "1" : undefined, limit: limit > 0 ? limit : undefined, size: size ? "1" : undefined, filters },
    });
    const trunc = !flags["no-trunc"];
    if ((format === "" || format === "table") && !quiet) {
      ctx.stdout(renderTable(size ? [...COLUMNS, "Size" as const] : COLUMNS, CONTAINER_HEADERS, list.map((c) => containerFields(c, trunc))));
      return 0;
    }
    try {
      ctx.stdout(renderList({ format: containerFormat(format, quiet, size), headers: CONTAINER_HEADERS, typeName: CONTAINER_TYPE }, list.map((c) => containerContext(c, trunc))));
    } catch (e) {
      if (e instanceof TemplateError) throw new ExitError(1, e.message);
      throw e;
    }
    return 0;
  },
};
