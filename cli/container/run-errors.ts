/**
 * How `run` and `create` report what goes wrong, as the Docker CLI does: a bad flag value is a
 * usage error; a configuration error or the daemon's refusal of `run` is printed as
 * `engine: MESSAGE` with a pointer to the help, and the status says why: 127 when the command
 * is not found, 126 when it cannot be invoked, 125 for anything else.
 */
import { ExitError } from "../command.js";
import { UsageError } from "../flags.js";
import { FlagValueError } from "./container-config.js";

export function withHelp(message: string, command: string): string {
  return `engine: ${message}\n\nRun 'engine ${command} --help' for more information`;
}

/** The status for a start (or create) the daemon refused, from the words of its message. */
export function startFailureStatus(message: string): number {
  if (/executable file not found|no such file or directory|system cannot find the file specified/.test(message)) return 127;
  if (/permission denied|is a directory/.test(message)) return 126;
  return 125;
}

/** A flag value error is the parser's; anything else becomes the command's own failure. */
export function configFailure(e: unknown, command: string): Error {
  if (e instanceof FlagValueError) return new UsageError(e.message);
  return new ExitError(125, withHelp((e as Error).message, command));
}
