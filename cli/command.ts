/**
 * What an `engine` command is. The registry (commands/index.ts) holds each command's name, its
 * one-line description and how to load it; the command's own file holds its usage, flags and
 * `run`, and is loaded only when that command runs (the client loads nothing a command does not
 * use: `engine ps` must start about as fast as Node itself).
 */
import type { Connection, ConnectionSettings } from "./connection.js";
import type { FlagSpec, Parsed } from "./flags.js";

export interface CommandContext {
  /** The command as typed in the help and errors: "ps", "network ls". */
  name: string;
  /** Opens the connection on first use: commands that need no daemon never connect. */
  connection(): Connection;
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  /** The client's configuration folder (`--config`, ENGINE_CONFIG, default ~/.engine). */
  configDir: string;
  /** The context connections go through: `--context`, ENGINE_CONTEXT, config.json's; "default" with `-H` / ENGINE_HOST. */
  currentContext(): string;
  /** Where the "default" context points: `-H`, ENGINE_HOST or the default socket, with the TLS flags' files. */
  defaultConnection(): ConnectionSettings;
}

export interface Command {
  /** After the command's name in "Usage:": "[OPTIONS] IMAGE [COMMAND] [ARG...]". */
  usage: string;
  /** The help's text under "Usage:" when it says more than the one-line description. */
  long?: string;
  flags: FlagSpec[];
  /** The flags end at the first argument (run, create, exec: the rest is the container's command). */
  stopAtFirstArg?: boolean;
  /** How many arguments the command takes; the errors are the Docker CLI's. */
  args?: { min?: number; max?: number };
  /** The exit status when the daemon refuses (run and create: 125). */
  failureStatus?: number;
  /** Resolves with the exit status. */
  run(ctx: CommandContext, input: Parsed): Promise<number>;
}

export interface CommandEntry {
  name: string;
  description: string;
  /** Other names (`container ls` and `ps`, `rmi` and `image rm`). */
  aliases?: string[];
  /** Left out of the help and of completion (`__complete`, which the completion scripts call). */
  hidden?: boolean;
  /** Whether it talks to the daemon: then engine.ts pings it while the command's code loads. */
  daemon: boolean;
  load(): Promise<Command>;
}

/** A failure that sets the exit status itself (a container's code for `run`, 126, 127). */
export class ExitError extends Error {
  constructor(
    readonly status: number,
    message = "",
  ) {
    super(message);
  }
}
