/** `engine save`: write images to a tar archive, to a file (-o) or to stdout when it is not a terminal. */
import { outputTarget } from "../archive/output-file.js";
import type { Command } from "../command.js";
import { platformQuery } from "../progress/platform.js";

export const command: Command = {
  usage: "[OPTIONS] IMAGE [IMAGE...]",
  flags: [
    { name: "output", short: "o", type: "string", description: "Write to a file, instead of STDOUT" },
    { name: "platform", type: "string", description: `Save only the given platform variant. Formatted as "os[/arch[/variant]]" (e.g., "linux/amd64")` },
  ],
  args: { min: 1 },
  async run(ctx, { flags, args }) {
    const write = outputTarget(String(flags.output), "failed to save image");
    const res = await ctx.connection().call("GET", "/images/get", { query: { names: args, platform: platformQuery(String(flags.platform)) } });
    await write(res.body);
    return 0;
  },
};
