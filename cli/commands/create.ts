/** `engine create`: create a container from an image (pulling it if missing) and print its id, as `docker create` does. */
import { ExitError, type Command } from "../command.js";
import { CONTAINER_FLAGS } from "../container/container-flags.js";
import { createContainer, CreateError } from "../container/create-container.js";
import { containerRequest } from "../container/run-errors.js";

export const command: Command = {
  usage: "[OPTIONS] IMAGE [COMMAND] [ARG...]",
  flags: CONTAINER_FLAGS,
  stopAtFirstArg: true,
  args: { min: 1 },
  // The Docker CLI's `create` exits 1 when the daemon refuses (125 only for its own checks).
  async run(ctx, input) {
    const req = await containerRequest(ctx, input, "create", { detach: false });
    try {
      ctx.stdout(`${await createContainer(ctx, req)}\n`);
    } catch (e) {
      if (e instanceof CreateError) throw new ExitError(1, e.message);
      throw e;
    }
    return 0;
  },
};
