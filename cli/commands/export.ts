/** `engine export`: a container's root filesystem as a tar, to a file (-o) or to stdout when it is not a terminal. */
import { outputTarget } from "../archive/output-file.js";
import type { Command } from "../command.js";

export const command: Command = {
  usage: "[OPTIONS] CONTAINER",
  flags: [{ name: "output", short: "o", type: "string", description: "Write to a file, instead of STDOUT" }],
  args: { min: 1, max: 1 },
  async run(ctx, { flags, args }) {
    const write = outputTarget(String(flags.output), "failed to export container");
    const res = await ctx.connection().call("GET", `/containers/${encodeURIComponent(args[0])}/export`);
    await write(res.body);
    return 0;
  },
};
