/** `engine images`: the images, as `docker images` lists them. */
import { ExitError, type Command } from "../command.js";
import { configFormat, filtersJson } from "../format/filters.js";
import { IMAGE_HEADERS, IMAGE_TYPE, imageRows, type ImageSummary } from "../format/image-context.js";
import { renderList } from "../format/render.js";
import { TemplateError } from "../format/template.js";

const TABLE = "table {{.Repository}}\t{{.Tag}}\t{{.ID}}\t{{if .CreatedSince }}{{.CreatedSince}}{{else}}N/A{{end}}\t{{.Size}}";
const TABLE_DIGEST = "table {{.Repository}}\t{{.Tag}}\t{{.Digest}}\t{{.ID}}\t{{if .CreatedSince }}{{.CreatedSince}}{{else}}N/A{{end}}\t{{.Size}}";
const RAW = "repository: {{ .Repository }}\ntag: {{.Tag}}\nimage_id: {{.ID}}\ncreated_at: {{.CreatedAt}}\nvirtual_size: {{.Size}}\n";
const RAW_DIGEST = "repository: {{ .Repository }}\ntag: {{.Tag}}\ndigest: {{.Digest}}\nimage_id: {{.ID}}\ncreated_at: {{.CreatedAt}}\nvirtual_size: {{.Size}}\n";

/** Docker's NewImageFormat. */
function imageFormat(source: string, quiet: boolean, digest: boolean): string {
  if (source === "table") return quiet ? "{{.ID}}" : digest ? TABLE_DIGEST : TABLE;
  if (source === "raw") return quiet ? "image_id: {{.ID}}" : digest ? RAW_DIGEST : RAW;
  if (source.startsWith("table") && digest && !source.includes("{{.Digest}}")) return `${source}\t{{.Digest}}`;
  return source;
}

export const command: Command = {
  usage: "[OPTIONS] [REPOSITORY[:TAG]]",
  flags: [
    { name: "all", short: "a", type: "bool", description: "Show all images (default hides intermediate images)" },
    { name: "digests", type: "bool", description: "Show digests" },
    { name: "filter", short: "f", type: "list", valueName: "filter", description: "Filter output based on conditions provided" },
    { name: "format", type: "string", description: "Format output using a custom template: 'table', 'table TEMPLATE', 'json' or a Go template" },
    { name: "no-trunc", type: "bool", description: "Don't truncate output" },
    { name: "quiet", short: "q", type: "bool", description: "Only show image IDs" },
  ],
  args: { max: 1 },
  async run(ctx, { flags, args }) {
    const quiet = flags.quiet as boolean;
    const filterArgs = [...(flags.filter as string[])];
    const filters = filtersJson(filterArgs);
    let query = filters;
    if (args[0]) {
      const parsed = filters ? (JSON.parse(filters) as Record<string, Record<string, boolean>>) : {};
      (parsed.reference ??= {})[args[0]] = true;
      query = JSON.stringify(parsed);
    }
    let format = flags.format as string;
    if (format === "") {
      const configured = configFormat(ctx.configDir, "imagesFormat");
      format = configured && !quiet ? configured : "table";
    }
    const digests = flags.digests as boolean;
    const list = await ctx.connection().getJson<ImageSummary[]>("/images/json", { query: { all: flags.all ? "1" : undefined, filters: query } });
    const finalFormat = imageFormat(format, quiet, digests);
    const rows = imageRows(list, !flags["no-trunc"], digests, digests || finalFormat.includes("{{.Digest}}"));
    try {
      ctx.stdout(renderList({ format: finalFormat, headers: IMAGE_HEADERS, typeName: IMAGE_TYPE }, rows));
    } catch (e) {
      if (e instanceof TemplateError) throw new ExitError(1, e.message);
      throw e;
    }
    return 0;
  },
};
