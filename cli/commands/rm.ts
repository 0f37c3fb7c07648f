/**
 * `engine rm`: remove containers, printing each name as given. As with the Docker CLI, a
 * container that does not exist is only reported (on stderr) under --force; other failures make
 * the exit status 1 once the rest are done.
 */
import { ExitError, type Command } from "../command.js";
import { DaemonError } from "../connection.js";
import { drain, eachContainer } from "../container/each-container.js";

export const command: Command = {
  usage: "[OPTIONS] CONTAINER [CONTAINER...]",
  flags: [
    { name: "force", short: "f", type: "bool", description: "Force the removal of a running container (uses SIGKILL)" },
    { name: "link", short: "l", type: "bool", description: "Remove the specified link" },
    { name: "volumes", short: "v", type: "bool", description: "Remove anonymous volumes associated with the container" },
  ],
  args: { min: 1 },
  async run(ctx, { flags, args }) {
    const conn = ctx.connection();
    const force = Boolean(flags.force);
    const failures = await eachContainer(
      args,
      async (given) => {
        const name = given.replace(/^\/+|\/+$/g, "");
        if (name === "") throw new Error("Container name cannot be empty");
        drain(await conn.call("DELETE", `/containers/${encodeURIComponent(name)}`, { query: { v: flags.volumes || undefined, link: flags.link || undefined, force: force || undefined } }));
      },
      (name) => ctx.stdout(`${name}\n`),
    );
    const errors = failures.filter((e) => {
      if (!(force && e instanceof DaemonError && e.status === 404)) return true;
      ctx.stderr(`${e.message}\n`);
      return false;
    });
    if (errors.length) throw new ExitError(1, errors.map((e) => e.message).join("\n"));
    return 0;
  },
};
