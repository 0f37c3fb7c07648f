/**
 * `engine attach`: attach the terminal to a running container: its output from now on, stdin
 * (unless --no-stdin or the container has none), signals forwarded (--sig-proxy), and its exit
 * status as the client's once it stops. The detach keys leave it running.
 */
import { ExitError, type Command } from "../command.js";
import { AttachSession } from "../container/attach-session.js";
import { configDetachKeys } from "../container/detach-keys.js";
import { inspectContainer } from "../container/inspect-brief.js";
import { forwardSignals } from "../container/signals.js";
import { waitForExit } from "../container/wait-exit.js";

export const command: Command = {
  usage: "[OPTIONS] CONTAINER",
  flags: [
    { name: "detach-keys", type: "string", description: "Override the key sequence for detaching a container" },
    { name: "no-stdin", type: "bool", description: "Do not attach STDIN" },
    { name: "sig-proxy", type: "bool", description: "Proxy all received signals to the process", default: true },
  ],
  args: { min: 1, max: 1 },
  async run(ctx, { flags, given, args }) {
    const conn = ctx.connection();
    const c = await inspectContainer(conn, args[0]);
    if (!c.State.Running) throw new ExitError(1, "You cannot attach to a stopped container, start it first");
    if (c.State.Paused) throw new ExitError(1, "You cannot attach to a paused container, unpause it first");
    if (c.State.Restarting) throw new ExitError(1, "You cannot attach to a restarting container, wait until it is running");
    const tty = Boolean(c.Config.Tty);
    const stdin = !flags["no-stdin"] && Boolean(c.Config.OpenStdin);
    if (stdin && tty && !process.stdin.isTTY) throw new ExitError(1, "the input device is not a TTY");
    const detachKeys = given.has("detach-keys") ? String(flags["detach-keys"]) : configDetachKeys(ctx.configDir);
    const session = await AttachSession.open(conn, args[0], { tty, stdin, stdout: true, stderr: true, detachKeys }, ctx.stderr);
    const status = await waitForExit(conn, args[0], "not-running", ctx.stderr);
    const stopSignals = flags["sig-proxy"] && !tty ? forwardSignals(conn, c.Id) : () => undefined;
    let stopResize = () => {};
    if (tty && process.stdout.isTTY) stopResize = (await import("../container/resize.js")).monitorTtySize(conn, `/containers/${c.Id}`);
    try {
      if ((await session.run()) === "detached") return 0;
      return await status();
    } finally {
      stopResize();
      stopSignals();
    }
  },
};
