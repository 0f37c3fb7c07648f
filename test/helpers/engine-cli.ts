/**
 * Runs the `engine` client (bin/engine) as a user would, and the same under a pseudo-terminal
 * (util-linux `script`) where a terminal changes what it does: progress bars, `-t`, `-it`.
 * Each run gets a configuration folder of its own unless the test passes one, so nothing of the
 * machine's ~/.engine is read or changed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, runCommand, type RunResult } from "./engined.js";
import { inTerminal } from "./terminal.js";

export const ENGINE = join(ROOT, "bin/engine");

export interface EngineRunOptions {
  env?: NodeJS.ProcessEnv;
  /** Standard input (a pipe), all at once. */
  input?: string | Buffer;
  timeoutMs?: number;
  /** The working directory (the repository's root by default). */
  cwd?: string;
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
      cwd: opts.cwd,
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
  /**
   * Written to the terminal one after the other: a string; a wait in ms before the next; or
   * `{ after: text }`, a wait until the terminal shows `text` (20 s at most: a loaded machine
   * is slow to print, and a fixed wait would type too early).
   */
  keys?: (string | number | { after: string })[];
  timeoutMs?: number;
  /** The terminal's size, set with stty before the command runs. */
  cols?: number;
  rows?: number;
}

/**
 * Runs `argv` in a pseudo-terminal (test/helpers/terminal.ts): its stdin, stdout and stderr
 * are the terminal. `keys` are typed into it; the exit status is the command's.
 */
export async function inPty(argv: string[], opts: PtyOptions = {}): Promise<PtyRun> {
  const t = inTerminal(argv, { rows: opts.rows ?? 40, cols: opts.cols ?? 120, env: opts.env, cwd: ROOT, timeoutMs: opts.timeoutMs ?? 30_000 });
  for (const key of opts.keys ?? []) {
    if (typeof key === "number") await new Promise((r) => setTimeout(r, key));
    else if (typeof key === "string") t.type(key);
    else for (const end = Date.now() + 20_000; !t.shown().includes(key.after) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
  }
  const code = await t.exited;
  return { output: t.shown(), code };
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
