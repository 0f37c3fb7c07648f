/**
 * A command in a pseudo-terminal, for the tests of what only a terminal shows (`-it`, detach
 * keys, window sizes): util-linux's `script` makes the pty and runs the command in it; what the
 * test writes goes to the terminal as typed keys, and what the terminal shows comes back.
 */
import { spawn } from "node:child_process";

export interface TerminalSession {
  /** Types `keys` (a carriage return is Enter, "\x10\x11" is ctrl-p ctrl-q). */
  type(keys: string): void;
  /** Resolves with everything shown so far once `pattern` has been shown; rejects after `ms`. */
  waitFor(pattern: RegExp, ms?: number): Promise<string>;
  /** The command's exit code (script passes it on). */
  exited: Promise<number | null>;
  shown(): string;
  /** Ends it (the terminal's process group gets SIGKILL). */
  kill(): void;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export interface TerminalOptions {
  rows?: number;
  cols?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** The command is killed after this (default 60 s). */
  timeoutMs?: number;
}

export function inTerminal(command: string[], opts: TerminalOptions = {}): TerminalSession {
  const shell = `stty rows ${opts.rows ?? 24} cols ${opts.cols ?? 80} 2>/dev/null; exec ${command.map(quote).join(" ")}`;
  const proc = spawn("script", ["-q", "-e", "-f", "-c", shell, "/dev/null"], {
    cwd: opts.cwd,
    env: { ...process.env, TERM: "xterm", ...opts.env },
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  proc.stdin.on("error", () => {}); // keys typed after the command ended go nowhere
  let out = "";
  const waiters = new Set<() => void>();
  const onOutput = (d: Buffer) => {
    out += d.toString("utf8");
    for (const w of waiters) w();
  };
  proc.stdout.on("data", onOutput);
  proc.stderr.on("data", onOutput);
  const deadline = setTimeout(() => kill(), opts.timeoutMs ?? 60_000);
  const kill = () => {
    try {
      process.kill(-proc.pid!, "SIGKILL");
    } catch {
      // gone already
    }
  };
  const exited = new Promise<number | null>((resolve) => {
    proc.once("close", (code) => {
      clearTimeout(deadline);
      for (const w of waiters) w();
      resolve(code);
    });
  });
  return {
    type: (keys) => {
      if (!proc.stdin.destroyed) proc.stdin.write(keys);
    },
    waitFor(pattern, ms = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (pattern.test(out)) {
            cleanup();
            resolve(out);
          } else if (proc.exitCode !== null) {
            cleanup();
            reject(new Error(`the terminal's command ended (${proc.exitCode}) without showing ${pattern}; it showed: ${JSON.stringify(out)}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${pattern} not shown within ${ms} ms; the terminal showed: ${JSON.stringify(out)}`));
        }, ms);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    exited,
    shown: () => out,
    kill,
  };
}
