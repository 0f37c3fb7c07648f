/**
 * `engine events`: the daemon's events as they happen (or between --since and --until), a line
 * each as `docker events` prints them, or through a Go template on Docker's `events.Message`.
 */
import { ExitError, type Command } from "../command.js";
import { timestampFlag } from "../container/timestamps.js";
import { eventContext, eventLine, timeNanoOf, type EventMessage } from "../format/event-context.js";
import { filtersJson } from "../format/filters.js";
import { jsonLines } from "../format/json-stream.js";
import { parseTemplate, TemplateError, type Template } from "../format/template.js";

/** The template, checked on an empty event as the Docker CLI checks it (status 64 when bad). */
function makeTemplate(format: string): Template | undefined {
  if (format === "") return undefined;
  try {
    const tmpl = parseTemplate(format === "json" ? "{{json .}}" : format);
    tmpl.execute(eventContext({}, 0n));
    return tmpl;
  } catch (e) {
    if (e instanceof TemplateError) throw new ExitError(64, `Error parsing format: ${e.message}`);
    throw e;
  }
}

export const command: Command = {
  usage: "[OPTIONS]",
  flags: [
    { name: "filter", short: "f", type: "list", valueName: "filter", description: "Filter output based on conditions provided" },
    { name: "format", type: "string", description: "Format output using a custom template: 'json' or a Go template" },
    { name: "since", type: "string", description: "Show all events created since timestamp" },
    { name: "until", type: "string", description: "Stream events until this timestamp" },
  ],
  args: { max: 0 },
  async run(ctx, { flags }) {
    const tmpl = makeTemplate(String(flags.format));
    const time = (name: "since" | "until") => timestampFlag(String(flags[name]), (why) => why);
    const query = { filters: filtersJson(flags.filter as string[]), since: time("since"), until: time("until") };
    const res = await ctx.connection().call("GET", "/events", { query });
    for await (const { value, raw } of jsonLines<EventMessage>(res.body)) {
      const timeNano = timeNanoOf(raw);
      if (!tmpl) {
        ctx.stdout(`${eventLine(value, timeNano)}\n`);
        continue;
      }
      try {
        ctx.stdout(`${tmpl.execute(eventContext(value, timeNano))}\n`);
      } catch (e) {
        if (e instanceof TemplateError) throw new ExitError(1, e.message);
        throw e;
      }
    }
    return 0;
  },
};
