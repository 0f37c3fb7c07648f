/** `engine commit`: make an image from a container's changes (POST /commit, as `docker commit`). */
import { ExitError, type Command } from "../command.js";
import { DaemonError, errorMessage, readAll } from "../connection.js";
import { familiarString, parseNormalizedNamed } from "../reference.js";

export const command: Command = {
  usage: "[OPTIONS] CONTAINER [REPOSITORY[:TAG]]",
  flags: [
    { name: "author", short: "a", type: "string", description: `Author (e.g., "John Hannibal Smith <hannibal@a-team.com>")` },
    { name: "change", short: "c", type: "list", description: "Apply Dockerfile instruction to the created image" },
    { name: "message", short: "m", type: "string", description: "Commit message" },
    { name: "pause", short: "p", type: "bool", description: "Pause container during commit", default: true },
  ],
  args: { min: 1, max: 2 },
  async run(ctx, { flags, args }) {
    const [container, reference] = args;
    let repo: string | undefined;
    let tag: string | undefined;
    if (reference) {
      const ref = parseNormalizedNamed(reference);
      if (ref.digest) throw new ExitError(1, "refusing to create a tag with a digest reference");
      tag = ref.tag;
      repo = familiarString({ ...ref, tag: undefined });
    }
    const res = await ctx.connection().request("POST", "/commit", {
      query: {
        container,
        repo,
        tag,
        comment: flags.message ? String(flags.message) : undefined,
        author: flags.author ? String(flags.author) : undefined,
        pause: flags.pause ? undefined : "0",
        changes: flags.change as string[],
      },
    });
    if (res.status >= 400) {
      const message = await errorMessage(res);
      // the daemon's router answers a path it does not know with "page not found"; a missing container is "No such container"
      if (res.status === 404 && /^(page )?not found$/i.test(message)) {
        throw new ExitError(1, `engine commit: the daemon does not support commit (POST /commit answered 404 ${message})`);
      }
      throw new DaemonError(res.status, message);
    }
    const answer = JSON.parse((await readAll(res.body)).toString("utf8")) as { Id?: string; ID?: string };
    ctx.stdout(`${answer.Id ?? answer.ID ?? ""}\n`);
    return 0;
  },
};
