/** `engine history`: the layers' history of an image, as `docker history` lists it. */
import { ExitError, type Command } from "../command.js";
import { HISTORY_HEADERS, HISTORY_TYPE, historyContext, type HistoryItem } from "../format/history-context.js";
import { renderList } from "../format/render.js";
import { TemplateError } from "../format/template.js";
import { platformQuery } from "../progress/platform.js";

const TABLE = "table {{.ID}}\t{{.CreatedSince}}\t{{.CreatedBy}}\t{{.Size}}\t{{.Comment}}";
const TABLE_NOT_HUMAN = "table {{.ID}}\t{{.CreatedAt}}\t{{.CreatedBy}}\t{{.Size}}\t{{.Comment}}";

export const command: Command = {
  usage: "[OPTIONS] IMAGE",
  flags: [
    { name: "format", type: "string", description: "Format output using a custom template: 'table', 'table TEMPLATE', 'json' or a Go template" },
    { name: "human", short: "H", type: "bool", description: "Print sizes and dates in human readable format", default: true },
    { name: "no-trunc", type: "bool", description: "Don't truncate output" },
    { name: "platform", type: "string", description: `Show history for the given platform. Formatted as "os[/arch[/variant]]" (e.g., "linux/amd64")` },
    { name: "quiet", short: "q", type: "bool", description: "Only show image IDs" },
  ],
  args: { min: 1, max: 1 },
  async run(ctx, { flags, args }) {
    const human = flags.human as boolean;
    const format = String(flags.format) || "table";
    const final = format === "table" ? (flags.quiet ? "{{.ID}}" : human ? TABLE : TABLE_NOT_HUMAN) : format;
    const list = await ctx.connection().getJson<HistoryItem[]>(`/images/${encodeURIComponent(args[0])}/history`, { query: { platform: platformQuery(String(flags.platform)) } });
    const trunc = !flags["no-trunc"];
    try {
      ctx.stdout(renderList({ format: final, headers: HISTORY_HEADERS, typeName: HISTORY_TYPE }, list.map((h) => historyContext(h, trunc, human))));
    } catch (e) {
      if (e instanceof TemplateError) throw new ExitError(1, e.message);
      throw e;
    }
    return 0;
  },
};
