/** `engine tag SOURCE TARGET`: another name for an image, as `docker tag`. */
import { ExitError, type Command } from "../command.js";
import { parseNormalizedNamed, ReferenceError, repositoryName } from "../reference.js";

export const command: Command = {
  usage: "SOURCE_IMAGE[:TAG] TARGET_IMAGE[:TAG]",
  flags: [],
  args: { min: 2, max: 2 },
  async run(ctx, { args }) {
    const [source, target] = args;
    let ref;
    try {
      ref = parseNormalizedNamed(target);
    } catch (e) {
      if (e instanceof ReferenceError) throw new ExitError(1, `Error parsing reference: "${target}" is not a valid repository/tag: ${e.message}`);
      throw e;
    }
    if (ref.digest) throw new ExitError(1, "refusing to create a tag with a digest reference");
    const res = await ctx.connection().call("POST", `/images/${encodeURIComponent(source)}/tag`, { query: { repo: repositoryName(ref), tag: ref.tag ?? "latest" } });
    res.body.resume();
    return 0;
  },
};
