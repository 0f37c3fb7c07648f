/**
 * `engine context import NAME FILE|-`: a context exported by `context export` (or by the Docker
 * CLI: the same tar; a zip of the same files too), from a file or stdin, under a new name.
 */
import { open } from "node:fs/promises";
import type { Readable } from "node:stream";
import { pathError } from "../archive/go-errors.js";
import { ExitError, type Command } from "../command.js";
import { importArchive } from "../context/archive.js";
import { checkNewName, Contexts } from "../context/contexts.js";
import { parseMetadata } from "../context/metadata.js";

/** Past this an import is refused, as the Docker CLI refuses it; one byte more is read to tell. */
const LIMIT = 10 << 20;

export const command: Command = {
  usage: "CONTEXT FILE|-",
  flags: [],
  args: { min: 2, max: 2 },
  async run(ctx, { args }) {
    const [name, source] = args;
    const contexts = new Contexts(ctx);
    try {
      checkNewName(contexts.store, name);
      const archive = importArchive(await readUpTo(source, LIMIT + 1));
      const meta = parseMetadata(archive.meta.toString("utf8"), "meta.json");
      contexts.store.write({ ...meta, name });
      contexts.store.resetTls(name, archive.tls);
    } catch (e) {
      throw new ExitError(1, (e as Error).message);
    }
    ctx.stdout(`${name}\n`);
    ctx.stderr(`Successfully imported context "${name}"\n`);
    return 0;
  },
};

/** At most `max` bytes of the file, or of stdin for "-". */
async function readUpTo(source: string, max: number): Promise<Buffer> {
  let input: Readable;
  try {
    input = source === "-" ? process.stdin : await openedStream(source);
  } catch (e) {
    throw pathError("open", source, e);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of input) {
    chunks.push(chunk as Buffer);
    total += (chunk as Buffer).length;
    if (total >= max) break;
  }
  if (source !== "-") input.destroy();
  return Buffer.concat(chunks).subarray(0, max);
}

/** A file's stream once it is open (so that opening fails here, with its own error). */
async function openedStream(path: string): Promise<Readable> {
  const handle = await open(path, "r");
  return handle.createReadStream();
}
