/** What every `engine` command is: a name, a line for the help, and `run`. */
import type { Connection } from "./connection.js";

export interface CommandContext {
  /** Opens the connection on first use: commands that need no daemon never connect. */
  connection(): Connection;
  stdout(text: string): void;
  stderr(text: string): void;
  args: string[];
}

export interface Command {
  name: string;
  description: string;
  /** Resolves with the exit status. */
  run(ctx: CommandContext): Promise<number>;
}
