/** `engine volume rm`: remove volumes, printing each name as given; -f ignores those that do not exist. */
import { ExitError, type Command } from "../command.js";
import { drain } from "../container/each-container.js";

export const command: Command = {
  usage: "[OPTIONS] VOLUME [VOLUME...]",
  flags: [{ name: "force", short: "f", type: "bool", description: "Force the removal of one or more volumes" }],
  args: { min: 1 },
  async run(ctx, { flags, args }) {
    const conn = ctx.connection();
    const errors: string[] = [];
    // one after the other, as the Docker CLI removes them
    for (const name of args) {
      try {
        drain(await conn.call("DELETE", `/volumes/${encodeURIComponent(name)}`, { query: { force: flags.force ? "1" : undefined } }));
        ctx.stdout(`${name}\n`);
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    if (errors.length) throw new ExitError(1, errors.join("\n"));
    return 0;
  },
};
