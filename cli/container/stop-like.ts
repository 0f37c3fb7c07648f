/**
 * `stop` and `restart`: the same flags (--signal, --timeout and the hidden --time) and the same
 * loop over the containers named; only the endpoint differs.
 */
import { ExitError, type Command } from "../command.js";
import { drain, eachContainer } from "./each-container.js";

export function stopLikeCommand(action: "stop" | "restart"): Command {
  return {
    usage: "[OPTIONS] CONTAINER [CONTAINER...]",
    flags: [
      { name: "signal", short: "s", type: "string", description: "Signal to send to the container" },
      { name: "timeout", short: "t", type: "int", description: "Seconds to wait before killing the container" },
      { name: "time", type: "int", description: "Seconds to wait before killing the container (deprecated: use --timeout)", hidden: true },
    ],
    args: { min: 1 },
    async run(ctx, { flags, given, args }) {
      const conn = ctx.connection();
      const t = given.has("timeout") ? flags.timeout : given.has("time") ? flags.time : undefined;
      const errors = await eachContainer(
        args,
        async (name) => drain(await conn.call("POST", `/containers/${encodeURIComponent(name)}/${action}`, { query: { t: t as number | undefined, signal: String(flags.signal) || undefined } })),
        (name) => ctx.stdout(`${name}\n`),
      );
      if (errors.length) throw new ExitError(1, errors.map((e) => e.message).join("\n"));
      return 0;
    },
  };
}
