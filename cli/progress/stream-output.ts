/**
 * Where a command's progress stream goes: the terminal (bars), a pipe (status lines), or nowhere
 * (`-q`); and a stream error turned into the CLI's exit (its message alone, status 1).
 */
import type { Readable } from "node:stream";
import { ExitError, type CommandContext } from "../command.js";
import { showProgress } from "./show-progress.js";

export async function followProgress(ctx: CommandContext, body: Readable, quiet = false): Promise<void> {
  const out = quiet ? { stdout: () => undefined, isTTY: false } : { stdout: ctx.stdout, isTTY: Boolean(process.stdout.isTTY) };
  try {
    await showProgress(body, out);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code || (e as Error).name === "ConnectionClosed") throw e;
    throw new ExitError(1, (e as Error).message);
  }
}
