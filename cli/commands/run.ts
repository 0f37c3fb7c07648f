/** `engine run`: create a container, start it and stay with it (its output, signals, exit status) as `docker run` does. */
import { ExitError, type Command } from "../command.js";
import { DaemonError } from "../connection.js";
import { CONTAINER_FLAGS, RUN_FLAGS, sortedFlags } from "../container/container-flags.js";
import { createContainer, CreateError } from "../container/create-container.js";
import { containerRequest, startFailureStatus, withHelp } from "../container/run-errors.js";
import { configDetachKeys } from "../container/detach-keys.js";
import { startAndFollow } from "../container/start-and-follow.js";

export const command: Command = {
  usage: "[OPTIONS] IMAGE [COMMAND] [ARG...]",
  // (the Docker CLI's `run` words `--pull` for running)
  flags: sortedFlags(CONTAINER_FLAGS.map((f) => (f.name === "pull" ? { ...f, description: f.description.replace("creating", "running") } : f)), RUN_FLAGS),
  stopAtFirstArg: true,
  args: { min: 1 },
  failureStatus: 125,
  async run(ctx, input) {
    const detach = Boolean(input.flags.detach);
    const req = await containerRequest(ctx, input, "run", { detach });
    if (detach && (input.flags.attach as string[]).length > 0) throw new ExitError(1, "conflicting options: cannot specify both --attach and --detach");
    const { body } = req;
    if (!detach && body.Tty && body.AttachStdin && !process.stdin.isTTY) throw new ExitError(1, "the input device is not a TTY");

    const refused = (e: unknown): never => {
      if (e instanceof CreateError) throw new ExitError(startFailureStatus(e.message), withHelp(e.message, "run"));
      if (!(e instanceof DaemonError)) throw e;
      throw new ExitError(startFailureStatus(e.daemonMessage), withHelp(e.message, "run"));
    };
    const id = await createContainer(ctx, req).catch(refused);
    const attached = body.AttachStdin || body.AttachStdout || body.AttachStderr;
    const detachKeys = input.given.has("detach-keys") ? String(input.flags["detach-keys"]) : configDetachKeys(ctx.configDir);
    const end = await startAndFollow(ctx, {
      id,
      attach: attached ? { tty: body.Tty, stdin: body.AttachStdin, stdout: body.AttachStdout, stderr: body.AttachStderr, detachKeys } : undefined,
      sigProxy: Boolean(input.flags["sig-proxy"]),
      wait: body.HostConfig.AutoRemove ? "removed" : attached ? "next-exit" : undefined,
      beforeStart: body.AttachStdout || body.AttachStderr ? undefined : () => ctx.stdout(`${id}\n`),
    }).catch(refused);
    return "status" in end ? end.status : 0;
  },
};

