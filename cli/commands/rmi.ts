/** `engine rmi`: removes images, printing "Untagged:" and "Deleted:" lines as `docker rmi`. */
import type { Command } from "../command.js";
import { ExitError } from "../command.js";
import { DaemonError } from "../connection.js";

export const command: Command = {
  usage: "[OPTIONS] IMAGE [IMAGE...]",
  flags: [
    { name: "force", short: "f", type: "bool", description: "Force removal of the image" },
    { name: "no-prune", type: "bool", description: "Do not delete untagged parents" },
  ],
  args: { min: 1 },
  async run(ctx, { flags, args }) {
    const errors: string[] = [];
    let fatal = false;
    for (const name of args) {
      try {
        const items = await ctx.connection().json<{ Untagged?: string; Deleted?: string }[]>("DELETE", `/images/${encodeURIComponent(name)}`, {
          query: { force: flags.force ? "1" : undefined, noprune: flags["no-prune"] ? "1" : undefined },
        });
        ctx.stdout((items ?? []).map((i) => (i.Deleted ? `Deleted: ${i.Deleted}\n` : `Untagged: ${i.Untagged ?? ""}\n`)).join(""));
      } catch (e) {
        if (!(e instanceof DaemonError)) throw e;
        if (e.status !== 404) fatal = true;
        errors.push(e.message);
      }
    }
    if (errors.length === 0) return 0;
    // with --force, images that are not there are no failure (as with `rm -f`)
    if (!fatal && flags.force) {
      ctx.stderr(`${errors.join("\n")}\n`);
      return 0;
    }
    throw new ExitError(1, errors.join("\n"));
  },
};
