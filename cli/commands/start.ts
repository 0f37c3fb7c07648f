/**
 * `engine start`: start stopped containers, printing each name as given; with -a (or -i) one
 * container, attached: its output, signals forwarded, and its exit status as the client's.
 */
import { ExitError, type Command } from "../command.js";
import type { Connection } from "../connection.js";

export const command: Command = {
  usage: "[OPTIONS] CONTAINER [CONTAINER...]",
  flags: [
    { name: "attach", short: "a", type: "bool", description: "Attach STDOUT/STDERR and forward signals" },
    { name: "detach-keys", type: "string", description: "Override the key sequence for detaching a container" },
    { name: "interactive", short: "i", type: "bool", description: "Attach container's STDIN" },
  ],
  args: { min: 1 },
  async run(ctx, { flags, given, args }) {
    const conn = ctx.connection();
    if (!flags.attach && !flags.interactive) return startEach(ctx, conn, args);
    if (args.length > 1) throw new ExitError(1, "you cannot start and attach multiple containers at once");
    const { inspectContainer } = await import("../container/inspect-brief.js");
    const { configDetachKeys } = await import("../container/detach-keys.js");
    const { startAndFollow } = await import("../container/start-and-follow.js");
    const c = await inspectContainer(conn, args[0]);
    const tty = Boolean(c.Config.Tty);
    const end = await startAndFollow(ctx, {
      id: c.Id,
      attach: {
        tty,
        stdin: Boolean(flags.interactive) && Boolean(c.Config.OpenStdin),
        stdout: true,
        stderr: true,
        detachKeys: given.has("detach-keys") ? String(flags["detach-keys"]) : configDetachKeys(ctx.configDir),
      },
      // With a TTY the keys typed are the container's own signals.
      sigProxy: !tty,
      wait: c.HostConfig.AutoRemove ? "removed" : "next-exit",
    });
    return "status" in end ? end.status : 0;
  },
};

async function startEach(ctx: Parameters<Command["run"]>[0], conn: Connection, names: string[]): Promise<number> {
  const failed: string[] = [];
  for (const name of names) {
    try {
      (await conn.call("POST", `/containers/${encodeURIComponent(name)}/start`)).body.resume();
      ctx.stdout(`${name}\n`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code || (e as Error).name === "ConnectionClosed") throw e;
      ctx.stderr(`${(e as Error).message}\n`);
      failed.push(name);
    }
  }
  if (failed.length) throw new ExitError(1, `Error: failed to start containers: ${failed.join(", ")}`);
  return 0;
}
