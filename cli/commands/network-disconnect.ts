/** `engine network disconnect`: take a container off a network (-f even when the endpoint is gone). */
import type { Command } from "../command.js";

export const command: Command = {
  usage: "[OPTIONS] NETWORK CONTAINER",
  flags: [{ name: "force", short: "f", type: "bool", description: "Force the container to disconnect from a network" }],
  args: { min: 2, max: 2 },
  async run(ctx, { flags, args }) {
    const [network, container] = args;
    (await ctx.connection().call("POST", `/networks/${encodeURIComponent(network)}/disconnect`, { json: { Container: container, Force: Boolean(flags.force) } })).body.resume();
    return 0;
  },
};
