/** `engine push`: upload an image to a registry, with the daemon's progress as `docker push` shows it. */
import { ExitError, type Command } from "../command.js";
import { registryAuthFor } from "../auth/registry-auth.js";
import { referenceString, repositoryName, transferReference } from "../reference.js";
import { followProgress } from "../progress/stream-output.js";

export const command: Command = {
  usage: "[OPTIONS] NAME[:TAG]",
  flags: [
    { name: "all-tags", short: "a", type: "bool", description: "Push all tags of an image to the repository" },
    { name: "quiet", short: "q", type: "bool", description: "Suppress verbose output" },
  ],
  args: { min: 1, max: 1 },
  async run(ctx, { flags, args }) {
    const all = Boolean(flags["all-tags"]);
    const quiet = Boolean(flags.quiet);
    const { ref, defaulted } = transferReference(args[0], all);
    if (ref.digest) throw new ExitError(1, "cannot push a digest reference");
    if (defaulted && !quiet) ctx.stdout("Using default tag: latest\n");
    const res = await ctx.connection().call("POST", `/images/${repositoryName(ref)}/push`, {
      query: { tag: all ? undefined : ref.tag },
      headers: { "X-Registry-Auth": registryAuthFor(ctx.configDir, ref, ctx.stderr) },
    });
    await followProgress(ctx, res.body, quiet);
    if (quiet) ctx.stdout(`${referenceString(ref)}\n`);
    return 0;
  },
};
