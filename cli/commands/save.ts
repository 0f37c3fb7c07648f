/** `engine save`: write images to a tar archive, to a file (-o) or to stdout when it is not a terminal. */
import { createWriteStream, mkdtempSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import { ExitError, type Command } from "../command.js";
import { platformQuery } from "../progress/platform.js";

/** The folder must exist and the path be a file or a folder, as the Docker CLI checks before asking the daemon. */
function checkOutput(path: string): void {
  const dir = dirname(path);
  if (dir !== ".") {
    try {
      statSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") throw new ExitError(1, `failed to save image: invalid output path: stat ${dir}: no such file or directory`);
      throw e;
    }
  }
  try {
    const st = statSync(path);
    if (!st.isFile() && !st.isDirectory()) throw new ExitError(1, `failed to save image: invalid output path: "${path}" must be a directory or a regular file`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
}

export const command: Command = {
  usage: "[OPTIONS] IMAGE [IMAGE...]",
  flags: [
    { name: "output", short: "o", type: "string", description: "Write to a file, instead of STDOUT" },
    { name: "platform", type: "string", description: `Save only the given platform variant. Formatted as "os[/arch[/variant]]" (e.g., "linux/amd64")` },
  ],
  args: { min: 1 },
  async run(ctx, { flags, args }) {
    const output = String(flags.output);
    if (output === "" && process.stdout.isTTY) throw new ExitError(1, "cowardly refusing to save to a terminal. Use the -o flag or redirect");
    if (output) checkOutput(output);
    const res = await ctx.connection().call("GET", "/images/get", { query: { names: args, platform: platformQuery(String(flags.platform)) } });
    if (!output) {
      await pipeline(res.body, process.stdout, { end: false });
      return 0;
    }
    // a temporary file beside the target, renamed once complete: no half-written archive under the name
    const target = resolve(output);
    const temp = mkdtempSync(join(dirname(target), `.${basename(target)}.engine-save-`));
    try {
      const file = join(temp, "archive.tar");
      await pipeline(res.body, createWriteStream(file, { mode: 0o600 }));
      renameSync(file, target);
    } finally {
      rmSync(temp, { recursive: true, force: true });
    }
    return 0;
  },
};
