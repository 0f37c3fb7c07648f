/**
 * `engine stats`: the containers' resource usage, a table redrawn every half second (or once
 * with --no-stream). Without names it follows the daemon's events: a container that starts is
 * added (one that is created too, with -a), one that dies is dropped (unless -a).
 */
import { ExitError, type Command, type CommandContext } from "../command.js";
import { StatsCollector } from "../container/stats-collector.js";
import { configFormat } from "../format/filters.js";
import { jsonLines } from "../format/json-stream.js";
import { renderList } from "../format/render.js";
import { STATS_HEADERS, STATS_TABLE, STATS_TYPE, statsContext } from "../format/stats-context.js";
import { TemplateError } from "../format/template.js";

const REFRESH_MS = 500;

/** The containers followed, in the order they were added. */
class Followed {
  readonly list: StatsCollector[] = [];
  constructor(
    private readonly ctx: CommandContext,
    private readonly stream: boolean,
  ) {}

  add(container: string): void {
    if (this.list.some((c) => c.container === container)) return;
    const c = new StatsCollector(container);
    this.list.push(c);
    void c.collect(this.ctx.connection(), this.stream);
  }

  remove(container: string): void {
    const i = this.list.findIndex((c) => c.container === container);
    if (i >= 0) this.list.splice(i, 1)[0].stop();
  }

  firstReadings(): Promise<void> {
    return Promise.all(this.list.map((c) => c.first)).then(() => undefined);
  }

  stopAll(): void {
    for (const c of this.list) c.stop();
  }
}

export const command: Command = {
  usage: "[OPTIONS] [CONTAINER...]",
  flags: [
    { name: "all", short: "a", type: "bool", description: "Show all containers (default shows just running)" },
    { name: "format", type: "string", description: "Format output using a custom template: 'table', 'table TEMPLATE', 'json' or a Go template" },
    { name: "no-stream", type: "bool", description: "Disable streaming stats and only pull the first result" },
    { name: "no-trunc", type: "bool", description: "Do not truncate output" },
  ],
  async run(ctx, { flags, args }) {
    const stream = !flags["no-stream"];
    const all = Boolean(flags.all);
    const conn = ctx.connection();
    const followed = new Followed(ctx, stream);
    let eventsFailed: Promise<Error> | undefined;
    if (args.length === 0) {
      // subscribed before the list is read, so that no start in between is missed
      const events = await conn.call("GET", "/events", { query: { filters: JSON.stringify({ type: { container: true } }) } });
      eventsFailed = (async () => {
        try {
          for await (const { value } of jsonLines<{ Action?: string; Actor?: { ID?: string } }>(events.body)) {
            const id = (value.Actor?.ID ?? "").slice(0, 12);
            if (value.Action === "start" || (value.Action === "create" && all)) followed.add(id);
            else if (value.Action === "die" && !all) followed.remove(id);
          }
          return new Error("EOF");
        } catch (e) {
          return e as Error;
        }
      })();
      const list = await conn.getJson<{ Id: string }[]>("/containers/json", { query: { all: all ? "1" : undefined } });
      for (const c of list) followed.add(c.Id.slice(0, 12));
      await followed.firstReadings();
    } else {
      for (const name of args) followed.add(name);
      await followed.firstReadings();
      const errors = followed.list.filter((c) => c.error).map((c) => c.error!.message);
      if (errors.length) {
        followed.stopAll();
        throw new ExitError(1, errors.join("\n"));
      }
    }
    let format = String(flags.format);
    if (format === "") format = configFormat(ctx.configDir, "statsFormat") || "table";
    const spec = { format: format === "table" ? STATS_TABLE : format, headers: STATS_HEADERS, typeName: STATS_TYPE };
    const trunc = !flags["no-trunc"];
    const render = () => {
      let text: string;
      try {
        text = renderList(spec, followed.list.map((c) => statsContext(c.entry, trunc)));
      } catch (e) {
        followed.stopAll();
        if (e instanceof TemplateError) throw new ExitError(1, e.message);
        throw e;
      }
      if (!stream) return ctx.stdout(text);
      // Docker CLI 28: home, the table, then the table again with each line cleared to its
      // end (the second copy is what stays), then the rest of the screen cleared
      const screen = `\x1b[H${text}`;
      ctx.stdout(`${screen}${screen.split("\n").map((l) => `${l} \x1b[K\n`).join("")}\x1b[J`);
    };
    if (!stream) {
      render();
      followed.stopAll();
      return 0;
    }
    for (;;) {
      const tick = new Promise<"tick">((r) => setTimeout(() => r("tick"), REFRESH_MS));
      const outcome = await (eventsFailed ? Promise.race([tick, eventsFailed]) : tick);
      render();
      if (outcome instanceof Error) {
        // the events' end (the daemon going away) ends the client quietly, as Docker's does
        followed.stopAll();
        if (outcome.message === "EOF") return 0;
        throw new ExitError(1, outcome.message);
      }
    }
  },
};
