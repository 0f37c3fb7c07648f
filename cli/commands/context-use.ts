/**
 * `engine context use NAME`: the context later commands use, kept as `currentContext` in
 * config.json (no key for "default", and the file left alone when nothing changes).
 */
import { ExitError, type Command } from "../command.js";
import { saveCurrentContext } from "../context/config-current.js";
import { Contexts, invalidName } from "../context/contexts.js";
import { DEFAULT_CONTEXT } from "../context/current.js";

export const command: Command = {
  usage: "CONTEXT",
  flags: [],
  async run(ctx, { args }) {
    // the Docker CLI checks this command's arguments with cobra's own words
    if (args.length !== 1) throw new ExitError(1, `accepts 1 arg(s), received ${args.length}`);
    const name = args[0];
    try {
      if (name !== DEFAULT_CONTEXT) {
        const invalid = invalidName(name);
        if (invalid) throw new Error(invalid);
        new Contexts(ctx).store.get(name);
      }
      saveCurrentContext(ctx.configDir, name);
    } catch (e) {
      throw new ExitError(1, (e as Error).message);
    }
    ctx.stdout(`${name}\n`);
    ctx.stderr(`Current context is now "${name}"\n`);
    if (name !== DEFAULT_CONTEXT && ctx.env.ENGINE_HOST) {
      ctx.stderr(`Warning: ENGINE_HOST environment variable overrides the active context. To use "${name}", either set the global --context flag, or unset ENGINE_HOST environment variable.\n`);
    }
    return 0;
  },
};
