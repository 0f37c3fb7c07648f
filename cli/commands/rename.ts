/**
 * `engine rename`: give a container a new name. As the Docker CLI 28 does, a daemon's refusal is
 * printed, then a line naming the container, and the status is 1.
 */
import { ExitError, type Command } from "../command.js";
import { DaemonError } from "../connection.js";

export const command: Command = {
  usage: "CONTAINER NEW_NAME",
  flags: [],
  args: { min: 2, max: 2 },
  async run(ctx, { args }) {
    const oldName = args[0].trim();
    const newName = args[1].trim();
    if (oldName === "" || newName === "") throw new ExitError(1, "Error: Neither old nor new names may be empty");
    try {
      (await ctx.connection().call("POST", `/containers/${encodeURIComponent(oldName)}/rename`, { query: { name: newName } })).body.resume();
    } catch (e) {
      if (!(e instanceof DaemonError)) throw e;
      ctx.stderr(`${e.message}\n`);
      throw new ExitError(1, `Error: failed to rename container named ${oldName}`);
    }
    return 0;
  },
};
