/**
 * Running the host's network tools (`ip`, `iptables`, `iptables-restore`, `sysctl` files) in a
 * given network namespace: the bridge driver and the host's adapter of network plugins
 * (host/network/remote-network-driver.ts). Everything the bridge driver changes goes through a
 * `CommandRunner`, so that the same code runs in the daemon's own namespace (`hostRunner`) and, in the tests, in
 * a namespace the test made (`netnsRunner`, through `nsenter --net=`): real commands, against
 * real interfaces and rules, never the host's when a test runs.
 */
import { execFile } from "node:child_process";

export interface RunOptions {
  /** Written to the command's stdin (`ip -batch -`, `iptables-restore`). */
  input?: string;
  /** Default 30 s: a tool that hangs must not hang the daemon. */
  timeoutMs?: number;
}

/** Runs `file args` and resolves with its stdout; rejects with its stderr in the message. */
export type CommandRunner = (file: string, args: readonly string[], opts?: RunOptions) => Promise<string>;

class CommandError extends Error {
  constructor(
    readonly command: string,
    readonly stderr: string,
    readonly exitCode: number | null,
  ) {
    super(`${command}: ${stderr.trim() || `exit ${exitCode}`}`);
    this.name = "CommandError";
  }
}

function run(file: string, args: readonly string[], opts: RunOptions = {}, shown = [file, ...args].join(" ")): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { timeout: opts.timeoutMs ?? 30_000, maxBuffer: 64 << 20, encoding: "utf8" }, (err, stdout, stderr) => {
      if (err) {
        const code = typeof (err as NodeJS.ErrnoException).code === "number" ? ((err as unknown as { code: number }).code) : null;
        reject(new CommandError(shown, stderr || err.message, code));
      } else resolve(stdout);
    });
    child.stdin?.on("error", () => undefined); // a tool that exits before reading its input
    child.stdin?.end(opts.input ?? "");
  });
}

/** Commands in the daemon's own network namespace. */
export const hostRunner: CommandRunner = (file, args, opts) => run(file, args, opts);

/** Commands in the network namespace bound at `path` (a file `unshare --net=` bound, or /proc/PID/ns/net). */
export function netnsRunner(path: string): CommandRunner {
  return (file, args, opts) => run("nsenter", [`--net=${path}`, "--", file, ...args], opts, [file, ...args].join(" "));
}
