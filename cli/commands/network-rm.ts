/** `engine network rm`: removes networks, printing each name removed, as `docker network rm`. */
import { ExitError, type Command } from "../command.js";
import { DaemonError } from "../connection.js";

export const command: Command = {
  usage: "NETWORK [NETWORK...]",
  flags: [{ name: "force", short: "f", type: "bool", description: "Do not error if the network does not exist" }],
  args: { min: 1 },
  async run(ctx, { flags, args }) {
    let failed = false;
    for (const name of args) {
      try {
        const res = await ctx.connection().call("DELETE", `/networks/${encodeURIComponent(name)}`);
        res.body.resume();
        ctx.stdout(`${name}\n`);
      } catch (e) {
        if (!(e instanceof DaemonError)) throw e;
        if (flags.force && e.status === 404) continue;
        // each failure is told at once; the status says that one failed (Docker: "exit status 1")
        ctx.stderr(`${e.message}\n`);
        failed = true;
      }
    }
    if (failed) throw new ExitError(1, "exit status 1");
    return 0;
  },
};
