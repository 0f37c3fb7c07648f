/**
 * Runs the `engine` client (bin/engine) as a user would, and the same under a pseudo-terminal
 * (util-linux `script`) where a terminal changes what it does: progress bars, `-t`, `-it`.
 * Each run gets a configuration folder of its own unless the test passes one, so nothing of the
 * machine's ~/.engine is read or changed.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, runCommand, type RunResult } from "./engined.js";

export const ENGINE = join(ROOT, "bin/engine");

export interface EngineRunOptions {
  env?: NodeJS.ProcessEnv;
  /** Standard input (a pipe), all at once. */
  input?: string;
  timeoutMs?: number;
  /** ENGINE_CONFIG; a fresh temporary folder otherwise. */
  configDir?: string;
}

/** `engine -H host ARGS...` with stdin, stdout and stderr on pipes. */
export async function engine(host: string, args: string[], opts: EngineRunOptions = {}): Promise<RunResult> {
  const config = opts.configDir ?? mkdtempSync(join(tmpdir(), "engine-cli-config-"));
  try {
    return await runCommand(ENGINE, ["-H", host, ...args], {
      env: { ENGINE_HOST: undefined, ENGINE_TLS_VERIFY: undefined, ENGINE_CERT_PATH: undefined, ENGINE_API_VERSION: undefined, ENGINE_CONFIG: config, ...opts.env },
      input: opts.input,
      timeoutMs: opts.timeoutMs ?? 30_000,
    });
  } finally {
    if (!opts.configDir) rmSync(config, { recursive: true, force: true });
  }
}

export interface PtyRun {
  /** Everything the terminal showed (output and echoed input), with \r\n line ends. */
  output: string;
  code: number | null;
}

export interface PtyOptions {
  env?: NodeJS.ProcessEnv;
  /** Written to the terminal one after the other: a string, or a wait in ms before the next. */
  keys?: (string | number)[];
  timeoutMs?: number;
  /** The terminal's size, set with stty before the command runs. */
  cols?: number;
  rows?: number;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs `argv` in a pseudo-terminal (`script -qfec CMD /dev/null`): its stdin, stdout and stderr
 * are the terminal. `keys` are typed into it; the exit status is the command's (`-e`).
 */
export function inPty(argv: string[], opts: PtyOptions = {}): Promise<PtyRun> {
  const size = `stty cols ${opts.cols ?? 120} rows ${opts.rows ?? 40} 2>/dev/null; `;
  const cmd = `${size}exec ${argv.map(quote).join(" ")}`;
  return new Promise((resolve) => {
    const proc = spawn("script", ["-qfec", cmd, "/dev/null"], { cwd: ROOT, env: { ...process.env, TERM: "xterm", ...opts.env }, stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    proc.stdout.on("data", (d: Buffer) => (output += d.toString()));
    proc.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs ?? 30_000);
    void (async () => {
      for (const key of opts.keys ?? []) {
        if (typeof key === "number") await new Promise((r) => setTimeout(r, key));
        else if (!proc.stdin.destroyed) proc.stdin.write(key);
      }
    })();
    proc.once("close", (code) => {
      clearTimeout(timer);
      resolve({ output, code });
    });
  });
}

/** `engine` in a pseudo-terminal, with its own configuration folder as `engine()` has. */
export async function engineInPty(host: string, args: string[], opts: PtyOptions & { configDir?: string } = {}): Promise<PtyRun> {
  const config = opts.configDir ?? mkdtempSync(join(tmpdir(), "engine-cli-config-"));
  try {
    return await inPty([ENGINE, "-H", host, ...args], { ...opts, env: { ENGINE_CONFIG: config, ...opts.env } });
  } finally {
    if (!opts.configDir) rmSync(config, { recursive: true, force: true });
  }
}
