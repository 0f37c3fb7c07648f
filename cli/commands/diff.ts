/** `engine diff`: what a container changed in its filesystem, a line each ("A /tmp/x"), as `docker diff`. */
import type { Command } from "../command.js";

const KINDS = ["C", "A", "D"];

export const command: Command = {
  usage: "CONTAINER",
  flags: [],
  args: { min: 1, max: 1 },
  async run(ctx, { args }) {
    const changes = await ctx.connection().getJson<{ Kind: number; Path: string }[] | null>(`/containers/${encodeURIComponent(args[0])}/changes`);
    ctx.stdout((changes ?? []).map((c) => `${KINDS[c.Kind] ?? ""} ${c.Path}\n`).join(""));
    return 0;
  },
};
