/**
 * `engine context export NAME [FILE|-]`: the context as the Docker CLI's tar (context/archive.ts),
 * to FILE (NAME.dockercontext by default; never over an existing file, 0600) or, with "-", to
 * stdout unless that is a terminal. "default" exports what it stands for in this run.
 */
import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import { pathError } from "../archive/go-errors.js";
import { ExitError, type Command } from "../command.js";
import { exportArchive } from "../context/archive.js";
import { Contexts, invalidName } from "../context/contexts.js";
import { DEFAULT_CONTEXT } from "../context/current.js";
import { marshalMetadata } from "../context/metadata.js";
import { goQuote } from "../format/render.js";

export const command: Command = {
  usage: "[OPTIONS] CONTEXT [FILE|-]",
  flags: [],
  args: { min: 1, max: 2 },
  async run(ctx, { args }) {
    const [name, dest = `${name}.dockercontext`] = args;
    const contexts = new Contexts(ctx);
    const archive = () => exportArchive({ meta: Buffer.from(marshalMetadata(contexts.get(name))), tls: contexts.readAllTls(name) });
    try {
      const invalid = name === DEFAULT_CONTEXT ? undefined : invalidName(name);
      if (invalid) throw new Error(invalid);
      if (dest === "-") {
        if (process.stdout.isTTY) throw new Error("cowardly refusing to export to a terminal, specify a file path");
        process.stdout.write(archive());
        return 0;
      }
      // the file first, as the Docker CLI opens it first ("file exists" before anything else);
      // unlike the CLI, a failed export does not leave it behind empty
      let fd: number;
      try {
        fd = openSync(dest, "wx", 0o600);
      } catch (e) {
        throw pathError("open", dest, e);
      }
      try {
        writeSync(fd, archive());
      } catch (e) {
        rmSync(dest, { force: true });
        throw e;
      } finally {
        closeSync(fd);
      }
    } catch (e) {
      throw new ExitError(1, (e as Error).message);
    }
    ctx.stderr(`Written file ${goQuote(dest)}\n`);
    return 0;
  },
};
