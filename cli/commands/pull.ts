/** `engine pull`: download an image from a registry, with the daemon's progress as `docker pull` shows it. */
import type { Command } from "../command.js";
import { registryAuthFor } from "../auth/registry-auth.js";
import { referenceString, repositoryName, transferReference } from "../reference.js";
import { followProgress } from "../progress/stream-output.js";

export const command: Command = {
  usage: "[OPTIONS] NAME[:TAG|@DIGEST]",
  flags: [
    { name: "all-tags", short: "a", type: "bool", description: "Download all tagged images in the repository" },
    { name: "platform", type: "string", description: "Set platform if server is multi-platform capable" },
    { name: "quiet", short: "q", type: "bool", description: "Suppress verbose output" },
  ],
  args: { min: 1, max: 1 },
  async run(ctx, { flags, args }) {
    const all = Boolean(flags["all-tags"]);
    const quiet = Boolean(flags.quiet);
    const { ref, defaulted } = transferReference(args[0], all);
    if (defaulted && !quiet) ctx.stdout("Using default tag: latest\n");
    const res = await ctx.connection().call("POST", "/images/create", {
      query: { fromImage: repositoryName(ref), tag: all ? undefined : (ref.digest ?? ref.tag), platform: flags.platform ? String(flags.platform) : undefined },
      headers: { "X-Registry-Auth": registryAuthFor(ctx.configDir, ref, ctx.stderr) },
    });
    await followProgress(ctx, res.body, quiet);
    ctx.stdout(`${referenceString(ref)}\n`);
    return 0;
  },
};
