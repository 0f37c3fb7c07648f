/**
 * The inspect commands of one kind of object (`container inspect`, `image inspect`, `volume
 * inspect`, `network inspect`): each name read at its endpoint, printed as `inspect` prints.
 */
import type { Command } from "../command.js";
import { readAll, type QueryValue } from "../connection.js";
import type { FlagSpec, Parsed } from "../flags.js";
import { inspectObjects } from "./inspect.js";

export const INSPECT_FORMAT_FLAG: FlagSpec = { name: "format", short: "f", type: "string", description: "Format output using a custom template: 'json' or a Go template" };

export interface InspectKind {
  usage: string;
  extraFlags?: FlagSpec[];
  /** The path of one object, and its query from the flags. */
  path(ref: string): string;
  query?(input: Parsed): Record<string, QueryValue>;
}

export function inspectKindCommand(kind: InspectKind): Command {
  return {
    usage: kind.usage,
    flags: [INSPECT_FORMAT_FLAG, ...(kind.extraFlags ?? [])].sort((a, b) => (a.name < b.name ? -1 : 1)),
    args: { min: 1 },
    async run(ctx, input) {
      const conn = ctx.connection();
      const query = kind.query?.(input);
      const getRaw = async (ref: string) => (await readAll((await conn.call("GET", kind.path(ref), { query })).body)).toString("utf8");
      return inspectObjects(input.args, input.flags.format as string, getRaw, ctx.stdout);
    },
  };
}
