/** `engine context show`: the name of the context in use (`--context`, ENGINE_CONTEXT, config.json, "default"). */
import type { Command } from "../command.js";

export const command: Command = {
  usage: "",
  flags: [],
  args: { max: 0 },
  async run(ctx) {
    ctx.stdout(`${ctx.currentContext()}\n`);
    return 0;
  },
};
