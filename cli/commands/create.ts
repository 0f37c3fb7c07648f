/** `engine create`: create a container from an image (pulling it if missing) and print its id, as `docker create` does. */
import type { Command } from "../command.js";
import { buildContainerRequest, type ContainerRequest } from "../container/container-config.js";
import { CONTAINER_FLAGS } from "../container/container-flags.js";
import { createContainer } from "../container/create-container.js";
import { configFailure } from "../container/run-errors.js";

export const command: Command = {
  usage: "[OPTIONS] IMAGE [COMMAND] [ARG...]",
  flags: CONTAINER_FLAGS,
  stopAtFirstArg: true,
  args: { min: 1 },
  // The Docker CLI's `create` exits 1 when the daemon refuses (125 only for its own checks).
  async run(ctx, input) {
    let req: ContainerRequest;
    try {
      req = buildContainerRequest(input, { detach: false, env: ctx.env, consoleSize: process.stdout.isTTY ? [process.stdout.rows, process.stdout.columns] : undefined });
    } catch (e) {
      throw configFailure(e, "create");
    }
    ctx.stdout(`${await createContainer(ctx, req)}\n`);
    return 0;
  },
};
