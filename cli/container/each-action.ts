/**
 * Commands that post one action to each container named and print each name as given once it
 * succeeded (`pause`, `unpause`): no flags, the failures reported together, exit status 1.
 */
import { ExitError, type Command } from "../command.js";
import { drain, eachContainer } from "./each-container.js";

export function eachActionCommand(action: "pause" | "unpause"): Command {
  return {
    usage: "CONTAINER [CONTAINER...]",
    flags: [],
    args: { min: 1 },
    async run(ctx, { args }) {
      const conn = ctx.connection();
      const errors = await eachContainer(
        args,
        async (name) => drain(await conn.call("POST", `/containers/${encodeURIComponent(name)}/${action}`)),
        (name) => ctx.stdout(`${name}\n`),
      );
      if (errors.length) throw new ExitError(1, errors.map((e) => e.message).join("\n"));
      return 0;
    },
  };
}
