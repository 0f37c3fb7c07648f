/** `engine volume ls`: the volumes, as `docker volume ls` lists them (sorted by name). */
import { ExitError, type Command } from "../command.js";
import { configFormat, filtersJson } from "../format/filters.js";
import { renderList } from "../format/render.js";
import { TemplateError } from "../format/template.js";
import { byVolumeName, VOLUME_HEADERS, VOLUME_TYPE, volumeContext, type VolumeSummary } from "../format/volume-context.js";

const TABLE = "table {{.Driver}}\t{{.Name}}";
const CLUSTER_TABLE = "table {{.Name}}\t{{.Group}}\t{{.Driver}}\t{{.Availability}}\t{{.Status}}";

export const command: Command = {
  usage: "[OPTIONS]",
  flags: [
    { name: "cluster", type: "bool", description: "Display only cluster volumes, and use cluster volume list formatting" },
    { name: "filter", short: "f", type: "list", valueName: "filter", description: `Provide filter values (e.g. "dangling=true")` },
    { name: "format", type: "string", description: "Format output using a custom template: 'table', 'table TEMPLATE', 'json' or a Go template" },
    { name: "quiet", short: "q", type: "bool", description: "Only display volume names" },
  ],
  args: { max: 0 },
  async run(ctx, { flags }) {
    const quiet = flags.quiet as boolean;
    const filters = filtersJson(flags.filter as string[]);
    const list = await ctx.connection().getJson<{ Volumes: VolumeSummary[] | null }>("/volumes", { query: { filters } });
    let volumes = list.Volumes ?? [];
    let format = String(flags.format);
    if (flags.cluster) {
      // engined serves no cluster volumes: the list is empty, in the cluster columns
      volumes = [];
      format = quiet ? "table" : CLUSTER_TABLE;
    } else if (format === "") {
      const configured = configFormat(ctx.configDir, "volumesFormat");
      format = configured && !quiet ? configured : "table";
    }
    volumes.sort(byVolumeName);
    const final = format === "table" ? (quiet ? "{{.Name}}" : TABLE) : format === "raw" ? (quiet ? "name: {{.Name}}" : "name: {{.Name}}\ndriver: {{.Driver}}\n") : format;
    try {
      ctx.stdout(renderList({ format: final, headers: VOLUME_HEADERS, typeName: VOLUME_TYPE }, volumes.map(volumeContext)));
    } catch (e) {
      if (e instanceof TemplateError) throw new ExitError(1, e.message);
      throw e;
    }
    return 0;
  },
};
