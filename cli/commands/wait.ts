/** `engine wait`: block until each container stops, then print its exit code (one line each, in order). */
import { ExitError, type Command } from "../command.js";
import { readAll } from "../connection.js";

export const command: Command = {
  usage: "CONTAINER [CONTAINER...]",
  flags: [],
  args: { min: 1 },
  async run(ctx, { args }) {
    const conn = ctx.connection();
    const errors: string[] = [];
    for (const name of args) {
      try {
        const res = await conn.call("POST", `/containers/${encodeURIComponent(name)}/wait`);
        const result = JSON.parse((await readAll(res.body)).toString("utf8")) as { StatusCode: number };
        ctx.stdout(`${result.StatusCode}\n`);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code || (e as Error).name === "ConnectionClosed") throw e;
        errors.push((e as Error).message);
      }
    }
    if (errors.length) throw new ExitError(1, errors.join("\n"));
    return 0;
  },
};
