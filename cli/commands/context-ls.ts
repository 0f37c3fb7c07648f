/**
 * `engine context ls`: every context, "default" among them, in natural order by name, the one
 * in use starred (in the table) or `.Current`; a context that cannot be used shows why in ERROR,
 * and a current context that does not exist is listed with its error. ENGINE_HOST set is warned
 * about, since it overrides the context in use.
 */
import { ExitError, type Command } from "../command.js";
import { Contexts, DEFAULT_DESCRIPTION } from "../context/contexts.js";
import { DEFAULT_CONTEXT } from "../context/current.js";
import { dockerEndpoint } from "../context/metadata.js";
import { CONTEXT_HEADERS, CONTEXT_ROW_TYPE, contextRow, type ContextRow } from "../format/context-context.js";
import { naturalLess } from "../format/network-context.js";
import { renderList } from "../format/render.js";
import { TemplateError } from "../format/template.js";

const TABLE = "table {{.Name}}{{if .Current}} *{{end}}\t{{.Description}}\t{{.DockerEndpoint}}\t{{.Error}}";

export const command: Command = {
  usage: "[OPTIONS]",
  flags: [
    { name: "format", type: "string", description: "Format output using a custom template: 'table', 'table TEMPLATE', 'json' or a Go template" },
    { name: "quiet", short: "q", type: "bool", description: "Only show context names" },
  ],
  args: { max: 0 },
  async run(ctx, { flags }) {
    const contexts = new Contexts(ctx);
    const current = contexts.current();
    let rows: ContextRow[];
    try {
      rows = contexts.list().map((meta) => {
        const endpoint = dockerEndpoint(meta);
        return {
          name: meta.name,
          current: meta.name === current,
          // the default context has no description of its own; the list gives it one
          description: meta.name === DEFAULT_CONTEXT ? DEFAULT_DESCRIPTION : meta.description,
          dockerEndpoint: endpoint?.Host ?? "",
          error: endpoint ? "" : "cannot find docker endpoint in context",
        };
      });
    } catch (e) {
      throw new ExitError(1, (e as Error).message);
    }
    if (!rows.some((r) => r.current)) {
      let error = "";
      try {
        contexts.get(current);
      } catch (e) {
        error = (e as Error).message;
      }
      rows.push({ name: current, current: true, description: "", dockerEndpoint: "", error });
    }
    rows.sort((a, b) => (naturalLess(a.name, b.name) ? -1 : naturalLess(b.name, a.name) ? 1 : 0));
    const format = flags.quiet ? "{{.Name}}" : !flags.format || flags.format === "table" ? TABLE : String(flags.format);
    try {
      ctx.stdout(renderList({ format, headers: CONTEXT_HEADERS, typeName: CONTEXT_ROW_TYPE }, rows.map(contextRow)));
    } catch (e) {
      if (e instanceof TemplateError) throw new ExitError(1, e.message);
      throw e;
    }
    if (ctx.env.ENGINE_HOST) {
      ctx.stderr("Warning: ENGINE_HOST environment variable overrides the active context. To use a context, either set the global --context flag, or unset ENGINE_HOST environment variable.\n");
    }
    return 0;
  },
};
