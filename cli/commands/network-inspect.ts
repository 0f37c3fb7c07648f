/** `engine network inspect`: networks as JSON or through a template, as `docker network inspect`. */
import type { Command } from "../command.js";
import { readAll } from "../connection.js";
import { inspectObjects } from "../format/inspect.js";

export const command: Command = {
  usage: "[OPTIONS] NETWORK [NETWORK...]",
  flags: [
    { name: "format", short: "f", type: "string", description: "Format output using a custom template: 'json' or a Go template" },
    { name: "verbose", short: "v", type: "bool", description: "Verbose output for diagnostics" },
  ],
  args: { min: 1 },
  async run(ctx, { flags, args }) {
    const conn = ctx.connection();
    const getRaw = async (ref: string) => {
      const res = await conn.call("GET", `/networks/${encodeURIComponent(ref)}`, { query: { verbose: flags.verbose ? "true" : undefined } });
      return (await readAll(res.body)).toString("utf8");
    };
    return inspectObjects(args, flags.format as string, getRaw, ctx.stdout);
  },
};
