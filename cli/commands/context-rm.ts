/**
 * `engine context rm NAME...`: removes each context (its metadata and TLS files), printing its
 * name. The one in use only with `-f`, which also makes "default" the current one; "default"
 * never. Failures are reported together at the end, each on a line, and make the status 1.
 */
import { ExitError, type Command } from "../command.js";
import { saveCurrentContext } from "../context/config-current.js";
import { Contexts } from "../context/contexts.js";
import { DEFAULT_CONTEXT } from "../context/current.js";

export const command: Command = {
  usage: "CONTEXT [CONTEXT...]",
  flags: [{ name: "force", short: "f", type: "bool", description: "Force the removal of a context in use" }],
  args: { min: 1 },
  async run(ctx, { flags, args }) {
    const contexts = new Contexts(ctx);
    const current = contexts.current();
    const force = flags.force as boolean;
    const errors: string[] = [];
    for (const name of args) {
      try {
        if (name === DEFAULT_CONTEXT) throw new Error(`context "default" cannot be removed`);
        if (name === current) {
          if (!force) throw new Error(`context "${name}" is in use, set -f flag to force remove`);
          // back to the default context (ENGINE_HOST, -H or the default socket)
          saveCurrentContext(ctx.configDir, DEFAULT_CONTEXT, true);
        }
        if (!force && !contexts.store.exists(name)) throw new Error(`context "${name}" does not exist`);
        contexts.store.remove(name);
        ctx.stdout(`${name}\n`);
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    if (errors.length) throw new ExitError(1, errors.join("\n"));
    return 0;
  },
};
