/**
 * `engine`, the command-line client: global flags, then a command and its own flags.
 *   engine [-H HOST | -c CONTEXT] [--tls] [--tlsverify] [--tlscacert F] [--tlscert F] [--tlskey F] COMMAND
 * Exit statuses as the Docker CLI's: 0, 1 for a failure, 125 for a usage error (and for run and
 * create when the daemon refuses), the container's own for `run`, 126 and 127 from the runtime.
 */
import { ExitError, type CommandContext } from "./command.js";
import { commands, findCommand, GROUPS, groupCommands } from "./commands/index.js";
import { DaemonError, type Connection } from "./connection.js";
import { DEFAULT_CONTEXT } from "./context/current.js";
import { flagsHelp, parseFlags, UsageError, type FlagSpec, type Parsed } from "./flags.js";
import { configDirOf, CONTEXT_AND_HOST, contextAndHostGiven, currentContextOf, defaultSettings, GLOBAL_FLAGS, openConnection } from "./globals.js";
import { HostError } from "./transport/dial.js";

function usage(): string {
  const listed = commands.filter((c) => !c.hidden);
  const width = Math.max(...listed.map((c) => c.name.length));
  return `
Usage:  engine [OPTIONS] COMMAND

A client for engined, the container engine

Commands:
${listed.map((c) => `  ${c.name.padEnd(width)}  ${c.description}`).join("\n")}

Global Options:
${flagsHelp(GLOBAL_FLAGS)}

Run 'engine COMMAND --help' for more information on a command.
`;
}

const out = (t: string) => void process.stdout.write(t);

// The reader of our output went away (`| head`): the Docker CLI dies of SIGPIPE there, saying
// nothing, whatever it was doing (a `logs -f` too); Node ignores SIGPIPE, so the same by hand.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code === "EPIPE") process.exit(128 + 13);
});
const err = (t: string) => void process.stderr.write(t);

/**
 * Asks the daemon for its API version (`/_ping`, the first request of nearly every command)
 * while the command's code loads, which takes as long: the answer is there when the command
 * needs it. Only for the default context over unix or TCP (a stored context takes files to
 * read, an ssh:// host may ask for a passphrase); a failure here is the command's own later, as
 * it would have been, or nothing if the command does not connect after all (a usage error).
 * Resolves once the request is on its way: loading modules does not let the event loop turn,
 * so the connection must be made (and the request written) before.
 */
async function pingAhead(global: Parsed, currentContext: () => string, connect: () => Connection): Promise<void> {
  try {
    if (contextAndHostGiven(global) || currentContext() !== DEFAULT_CONTEXT || defaultSettings(global, process.env).target.proto === "ssh") return;
    connect()
      .apiVersion()
      .catch(() => undefined);
  } catch {
    // a bad -H: the command reports it when it connects
    return;
  }
  // one turn: the connection's completion comes in its poll phase, the request goes out with it
  await new Promise((resolve) => setImmediate(resolve));
}

async function main(argv: string[]): Promise<number> {
  let global;
  try {
    global = parseFlags(argv, GLOBAL_FLAGS, false);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`${e.message}\nSee 'engine --help'.\n`);
    return 125;
  }
  const g = global.flags;
  if (g.version) {
    const { ENGINE_VERSION, GIT_COMMIT } = await import("../core/version.js");
    out(`engine version ${ENGINE_VERSION}, build ${GIT_COMMIT.slice(0, 7)}\n`);
    return 0;
  }
  const words = global.args;
  const found = findCommand(words);
  if (!found) {
    const group = words[0] ? groupCommands(words[0]) : [];
    if (group.length > 0) {
      const help = words[1] === undefined || words[1] === "--help";
      if (!help) {
        err(`engine: unknown command: engine ${words[0]} ${words[1]}\n\nUsage:  engine ${words[0]} COMMAND\n\nRun 'engine ${words[0]} --help' for more information\n`);
        return 1;
      }
      const width = Math.max(11, ...group.map((c) => c.name.length));
      const lines = group.map((c) => `  ${c.name.padEnd(width)} ${c.entry.description}`).join("\n");
      // asked for (--help) on stdout; the group alone, as the Docker CLI does, on stderr
      (words[1] === "--help" ? out : err)(`Usage:  engine ${words[0]} COMMAND\n\n${GROUPS[words[0]] ?? ""}\n\nCommands:\n${lines}\n\nRun 'engine ${words[0]} COMMAND --help' for more information on a command.\n`);
      return 0;
    }
    if (!words[0]) {
      out(usage());
      return 0;
    }
    err(`engine: unknown command: engine ${words[0]}\n\nRun 'engine --help' for more information\n`);
    return 1;
  }
  const name = found.entry.name;
  const env = process.env;
  const configDir = configDirOf(global, env);
  let contextName: string | undefined;
  const currentContext = () => (contextName ??= currentContextOf(global, env, configDir));
  let connection: Connection | undefined;
  const connect = () => (connection ??= openConnection(global, env, configDir, currentContext()));
  if (found.entry.daemon) await pingAhead(global, currentContext, connect);
  const command = await found.entry.load();
  const specs: FlagSpec[] = [...command.flags, { name: "help", type: "bool", description: "Print usage", hidden: true }];
  const usageLine = `engine ${name}${command.usage ? ` ${command.usage}` : ""}`;
  const names = [name, ...(found.entry.aliases ?? [])];
  const aliases = names.length > 1 ? `\nAliases:\n  ${names.map((n) => `engine ${n}`).join(", ")}\n` : "";
  const helpText = () => `Usage:  ${usageLine}\n\n${command.long ?? found.entry.description}\n${aliases}${command.flags.length ? `\nOptions:\n${flagsHelp(command.flags)}\n` : ""}`;
  let input;
  try {
    input = parseFlags(words.slice(found.used), specs, !command.stopAtFirstArg);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    err(`${e.message}\n\nUsage:  ${usageLine}\n\nRun 'engine ${name} --help' for more information\n`);
    return 125;
  }
  if (input.flags.help) {
    out(helpText());
    return 0;
  }
  const { min = 0, max = Infinity } = command.args ?? {};
  if (input.args.length < min || input.args.length > max) {
    // the Docker CLI's two argument checks word their last line differently ("Run" / "See")
    const plural = (n: number) => `${n} argument${n === 1 ? "" : "s"}`;
    const want =
      max === 0
        ? "accepts no arguments"
        : min === max
          ? `requires ${plural(min)}`
          : max === Infinity
            ? `requires at least ${plural(min)}`
            : min > 0
              ? `requires at least ${min} and at most ${plural(max)}`
              : `requires at most ${plural(max)}`;
    err(`engine: 'engine ${name}' ${want}\n\nUsage:  ${usageLine}\n\n${max === Infinity && min > 0 ? "See" : "Run"} 'engine ${name} --help' for more information\n`);
    return 1;
  }

  if (contextAndHostGiven(global)) {
    err(`${CONTEXT_AND_HOST}\n`);
    return 1;
  }
  const ctx: CommandContext = {
    name,
    env,
    configDir,
    stdout: out,
    stderr: err,
    currentContext,
    defaultConnection: () => defaultSettings(global, env),
    connection: connect,
  };
  try {
    return await command.run(ctx, input);
  } catch (e) {
    if (e instanceof ExitError) {
      if (e.message) err(`${e.message}\n`);
      return e.status;
    }
    if (e instanceof DaemonError || e instanceof HostError) {
      err(`${e.message}\n`);
      return e instanceof DaemonError ? (command.failureStatus ?? 1) : 1;
    }
    if (e instanceof UsageError) {
      err(`${e.message}\n\nUsage:  ${usageLine}\n\nRun 'engine ${name} --help' for more information\n`);
      return 125;
    }
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ECONNRESET" || code === "EPIPE" || (e as Error).name === "ConnectionClosed") {
      err(`error during connect: the connection to the engine daemon was lost: ${(e as Error).message}\n`);
      return 1;
    }
    throw e;
  } finally {
    await connection?.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // stdout may still be draining into a pipe: exit once it is flushed
    process.stdout.write("", () => process.exit(code));
  },
  (e) => {
    err(`engine: ${(e as Error).stack ?? e}\n`);
    process.exit(1);
  },
);
