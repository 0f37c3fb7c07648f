/** `engine top`: the processes of a running container, `ps` options passed to the daemon, in the Docker CLI's columns. */
import type { Command } from "../command.js";
import { alignColumns } from "../format/table.js";

export const command: Command = {
  usage: "CONTAINER [ps OPTIONS]",
  flags: [],
  stopAtFirstArg: true,
  args: { min: 1 },
  async run(ctx, { args }) {
    const [name, ...psArgs] = args;
    const list = await ctx.connection().getJson<{ Titles: string[]; Processes: string[][] | null }>(`/containers/${encodeURIComponent(name)}/top`, {
      query: { ps_args: psArgs.length ? psArgs.join(" ") : undefined },
    });
    const lines = [list.Titles.join("\t"), ...(list.Processes ?? []).map((p) => p.join("\t"))];
    ctx.stdout(alignColumns(`${lines.join("\n")}\n`, { minWidth: 20, padding: 3 }));
    return 0;
  },
};
