/** `engine kill`: send a signal (SIGKILL by default) to running containers, printing each name as given. */
import { ExitError, type Command } from "../command.js";
import { drain, eachContainer } from "../container/each-container.js";

export const command: Command = {
  usage: "[OPTIONS] CONTAINER [CONTAINER...]",
  flags: [{ name: "signal", short: "s", type: "string", description: "Signal to send to the container" }],
  args: { min: 1 },
  async run(ctx, { flags, args }) {
    const conn = ctx.connection();
    const errors = await eachContainer(
      args,
      async (name) => drain(await conn.call("POST", `/containers/${encodeURIComponent(name)}/kill`, { query: { signal: String(flags.signal) || undefined } })),
      (name) => ctx.stdout(`${name}\n`),
    );
    if (errors.length) throw new ExitError(1, errors.map((e) => e.message).join("\n"));
    return 0;
  },
};
