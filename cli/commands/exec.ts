/**
 * `engine exec`: run a command in a running container. Attached (the default) the output comes
 * back demultiplexed (raw with -t), stdin with -i, the terminal raw and kept sized with -it,
 * the detach keys leaving the command running; the client's exit status is the command's
 * (126 when the daemon could not start it). -d starts it and returns at once.
 */
import { ExitError, type Command } from "../command.js";
import { AttachSession } from "../container/attach-session.js";
import { configDetachKeys } from "../container/detach-keys.js";
import { readEnvFile } from "../container/env-file.js";
import { validEnv } from "../container/units.js";
import { readEach } from "../flags.js";

export const command: Command = {
  usage: "[OPTIONS] CONTAINER COMMAND [ARG...]",
  flags: [
    { name: "detach", short: "d", type: "bool", description: "Detached mode: run command in the background" },
    { name: "detach-keys", type: "string", description: "Override the key sequence for detaching a container" },
    { name: "env", short: "e", type: "list", description: "Set environment variables" },
    { name: "env-file", type: "list", description: "Read in a file of environment variables" },
    { name: "interactive", short: "i", type: "bool", description: "Keep STDIN open even if not attached" },
    { name: "privileged", type: "bool", description: "Give extended privileges to the command" },
    { name: "tty", short: "t", type: "bool", description: "Allocate a pseudo-TTY" },
    { name: "user", short: "u", type: "string", description: `Username or UID (format: "<name|uid>[:<group|gid>]")` },
    { name: "workdir", short: "w", type: "string", description: "Working directory inside the container" },
  ],
  stopAtFirstArg: true,
  args: { min: 2 },
  async run(ctx, { flags, args }) {
    const [container, ...cmd] = args;
    const env = readEach(flags.env as string[], "-e, --env", validEnv(ctx.env));
    let fromFiles: string[];
    try {
      fromFiles = (flags["env-file"] as string[]).flatMap((p) => readEnvFile(p, ctx.env));
    } catch (e) {
      throw new ExitError(1, (e as Error).message);
    }
    const detach = Boolean(flags.detach);
    const tty = Boolean(flags.tty);
    const stdin = !detach && Boolean(flags.interactive);
    const detachKeys = String(flags["detach-keys"]) || (configDetachKeys(ctx.configDir) ?? "");
    const conn = ctx.connection();
    // the container's absence is the first error, as with the Docker CLI (no exec is left behind)
    await conn.getJson(`/containers/${encodeURIComponent(container)}/json`);
    if (!detach && tty && stdin && !process.stdin.isTTY) throw new ExitError(1, "the input device is not a TTY");
    const consoleSize: [number, number] | undefined = tty ? (process.stdout.isTTY ? [process.stdout.rows, process.stdout.columns] : [0, 0]) : undefined;
    const allEnv = [...fromFiles, ...env];
    // every field, in the order the Docker CLI sends them
    const body = {
      User: String(flags.user),
      Privileged: Boolean(flags.privileged),
      Tty: tty,
      ...(consoleSize ? { ConsoleSize: consoleSize } : {}),
      AttachStdin: stdin,
      AttachStderr: !detach,
      AttachStdout: !detach,
      Detach: detach,
      DetachKeys: detachKeys,
      Env: allEnv.length ? allEnv : null,
      WorkingDir: String(flags.workdir),
      Cmd: cmd,
    };
    const created = await conn.json<{ Id: string }>("POST", `/containers/${encodeURIComponent(container)}/exec`, { json: body });
    if (!created?.Id) throw new ExitError(1, "exec ID empty");
    if (detach) {
      (await conn.call("POST", `/exec/${created.Id}/start`, { json: { Detach: true, Tty: tty, ...(consoleSize ? { ConsoleSize: consoleSize } : {}) } })).body.resume();
      return 0;
    }
    const session = await AttachSession.startExec(conn, created.Id, { tty, stdin, stdout: true, stderr: true, detachKeys: detachKeys || undefined, consoleSize }, ctx.stderr);
    let stopResize = () => {};
    if (tty && process.stdin.isTTY) stopResize = (await import("../container/resize.js")).monitorTtySize(conn, `/exec/${created.Id}`);
    try {
      if ((await session.run()) === "detached") return 0;
    } finally {
      stopResize();
    }
    const inspected = await conn.getJson<{ ExitCode?: number | null }>(`/exec/${created.Id}/json`);
    return inspected.ExitCode ?? 0;
  },
};
