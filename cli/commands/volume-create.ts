/** `engine volume create`: make a volume (named, or with a random name) and print its name. */
import { ExitError, type Command } from "../command.js";
import { keyValueMap, validLabel } from "../container/units.js";
import { readEach } from "../flags.js";

export const command: Command = {
  usage: "[OPTIONS] [VOLUME]",
  flags: [
    { name: "driver", short: "d", type: "string", description: "Specify volume driver name", default: "local" },
    { name: "label", type: "list", description: "Set metadata for a volume" },
    { name: "name", type: "string", description: "Specify volume name", hidden: true },
    { name: "opt", short: "o", type: "list", valueName: "map", description: "Set driver specific options (default map[])" },
  ],
  args: { max: 1 },
  async run(ctx, { flags, args, given }) {
    let name = String(flags.name);
    if (args.length === 1) {
      if (given.has("name")) throw new ExitError(1, "conflicting options: cannot specify a volume-name through both --name and as a positional arg");
      name = args[0];
    }
    // Go marshals a map with its keys sorted
    const sorted = (m: Record<string, string>) => Object.fromEntries(Object.keys(m).sort().map((k) => [k, m[k]]));
    const labels = sorted(keyValueMap(readEach(flags.label as string[], "--label", validLabel)));
    const body: Record<string, unknown> = { Driver: String(flags.driver) };
    const opts = flags.opt as string[];
    if (opts.length) body.DriverOpts = sorted(keyValueMap(opts));
    if (Object.keys(labels).length) body.Labels = labels;
    if (name !== "") body.Name = name;
    const volume = await ctx.connection().json<{ Name: string }>("POST", "/volumes/create", { json: body });
    ctx.stdout(`${volume.Name}\n`);
    return 0;
  },
};
