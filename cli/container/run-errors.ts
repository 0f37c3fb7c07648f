/**
 * How `run` and `create` report what goes wrong, as the Docker CLI does: a bad flag value is a
 * usage error; a flag the daemon's API version or OS cannot take is refused before anything
 * (status 1); a configuration error or the daemon's refusal of `run` is printed as
 * `engine: MESSAGE` with a pointer to the help, and the status says why: 127 when the command
 * is not found, 126 when it cannot be invoked, 125 for anything else.
 */
import { ExitError, type CommandContext } from "../command.js";
import { configObject } from "../config-file.js";
import { UsageError, type Parsed } from "../flags.js";
import { buildContainerRequest, FlagValueError, type BuildOptions, type ContainerRequest } from "./container-config.js";

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

/**
 * The `proxies` of the client's config.json as the container's variables (HTTP_PROXY and
 * http_proxy...), from the file as read once at start (config-file.ts).
 */
function proxyEnv(configDir: string): Record<string, string> {
  const proxies = (configObject(configDir, "proxies")?.default ?? {}) as Record<string, string>;
  const out: Record<string, string> = {};
  for (const [key, name] of [["httpProxy", "HTTP_PROXY"], ["httpsProxy", "HTTPS_PROXY"], ["noProxy", "NO_PROXY"], ["ftpProxy", "FTP_PROXY"], ["allProxy", "ALL_PROXY"]]) {
    if (proxies[key]) out[name] = out[name.toLowerCase()] = proxies[key];
  }
  return out;
}

/** The create request of `run` or `create`, every check of the Docker CLI's done in its order. */
export async function containerRequest(ctx: CommandContext, input: Parsed, command: "run" | "create", opts: Pick<BuildOptions, "detach">): Promise<ContainerRequest> {
  const { checkFlagSupport } = await import("./flag-support.js");
  await checkFlagSupport(ctx.connection(), input);
  try {
    return buildContainerRequest(input, {
      ...opts,
      env: ctx.env,
      proxyEnv: proxyEnv(ctx.configDir),
      consoleSize: process.stdout.isTTY ? [process.stdout.rows, process.stdout.columns] : undefined,
      warn: ctx.stderr,
    });
  } catch (e) {
    throw configFailure(e, command);
  }
}
