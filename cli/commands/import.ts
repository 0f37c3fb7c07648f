/** `engine import`: make an image from a tarball's contents (a file, a URL or stdin), streamed to the daemon. */
import type { Command } from "../command.js";
import { parseNormalizedNamed } from "../reference.js";
import { openInput } from "../progress/open-input.js";
import { followProgress } from "../progress/stream-output.js";

export const command: Command = {
  usage: "[OPTIONS] file|URL|- [REPOSITORY[:TAG]]",
  flags: [
    { name: "change", short: "c", type: "list", description: "Apply Dockerfile instruction to the created image" },
    { name: "message", short: "m", type: "string", description: "Set commit message for imported image" },
    { name: "platform", type: "string", description: "Set platform if server is multi-platform capable" },
  ],
  args: { min: 1, max: 2 },
  async run(ctx, { flags, args }) {
    const [source, repository = ""] = args;
    if (repository) parseNormalizedNamed(repository); // a bad name exits 1 before anything is sent
    // a URL is fetched by the daemon itself; a file or stdin is the request's body
    const url = /^https?:\/\//.test(source);
    const body = url ? undefined : openInput(source);
    const res = await ctx.connection().call("POST", "/images/create", {
      query: {
        fromSrc: url ? source : "-",
        repo: repository || undefined,
        message: flags.message ? String(flags.message) : undefined,
        platform: flags.platform ? String(flags.platform) : undefined,
        changes: flags.change as string[],
      },
      raw: body,
      contentType: "application/x-tar",
    });
    await followProgress(ctx, res.body);
    return 0;
  },
};
