/** `engine inspect`: containers, images and networks as JSON or through a template, as `docker inspect`. */
import { ExitError, type Command } from "../command.js";
import { DaemonError, readAll } from "../connection.js";
import { inspectObjects } from "../format/inspect.js";

const ALL_TYPES = ["config", "container", "image", "network", "node", "plugin", "secret", "service", "task", "volume"];

/** Where each kind of object is read, in the order the Docker CLI tries them without --type. */
const LOOKUPS: { type: string; path: (ref: string, size: boolean) => string; size?: boolean; swarm?: boolean }[] = [
  { type: "container", path: (r, size) => `/containers/${encodeURIComponent(r)}/json${size ? "?size=1" : ""}`, size: true },
  { type: "image", path: (r) => `/images/${encodeURIComponent(r)}/json` },
  { type: "network", path: (r) => `/networks/${encodeURIComponent(r)}` },
  { type: "volume", path: (r) => `/volumes/${encodeURIComponent(r)}` },
  { type: "plugin", path: (r) => `/plugins/${encodeURIComponent(r)}/json` },
  // swarm objects: asked for only with --type (the daemon is never a swarm manager)
  { type: "service", path: (r) => `/services/${encodeURIComponent(r)}?insertDefaults=true`, swarm: true },
  { type: "task", path: (r) => `/tasks/${encodeURIComponent(r)}`, swarm: true },
  { type: "node", path: (r) => `/nodes/${encodeURIComponent(r)}`, swarm: true },
  { type: "secret", path: (r) => `/secrets/${encodeURIComponent(r)}`, swarm: true },
  { type: "config", path: (r) => `/configs/${encodeURIComponent(r)}`, swarm: true },
];

/** Errors that mean "not this kind of object" (the Docker CLI's isErrSkippable). */
const skippable = (e: DaemonError) => e.status === 404 || /not supported|invalid reference format/.test(e.message);

export const command: Command = {
  usage: "[OPTIONS] NAME|ID [NAME|ID...]",
  flags: [
    { name: "format", short: "f", type: "string", description: "Format output using a custom template: 'json' or a Go template" },
    { name: "size", short: "s", type: "bool", description: "Display total file sizes if the type is container" },
    { name: "type", type: "string", description: "Only inspect objects of the given type" },
  ],
  args: { min: 1 },
  async run(ctx, { flags, args, given }) {
    const type = flags.type as string;
    const size = flags.size as boolean;
    const list = `"${ALL_TYPES.join('", "')}"`;
    if (given.has("type") && type === "") throw new ExitError(1, `type is empty: must be one of ${list}`);
    if (type !== "" && !ALL_TYPES.includes(type)) throw new ExitError(1, `unknown type: "${type}": must be one of ${list}`);
    const conn = ctx.connection();
    const getRaw = async (ref: string): Promise<string> => {
      for (const lookup of LOOKUPS) {
        if (type !== "" ? lookup.type !== type : lookup.swarm) continue;
        try {
          const res = await conn.call("GET", lookup.path(ref, size));
          const raw = (await readAll(res.body)).toString("utf8");
          if (size && !lookup.size) ctx.stderr(`WARNING: --size ignored for ${lookup.type}\n`);
          return raw;
        } catch (e) {
          if (e instanceof DaemonError && type === "" && skippable(e)) continue;
          throw e;
        }
      }
      throw new Error(`Error: No such object: ${ref}`);
    };
    return inspectObjects(args, flags.format as string, getRaw, ctx.stdout);
  },
};
