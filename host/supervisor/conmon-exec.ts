/**
 * Exec sessions: a further process in a running container, under a conmon of its own
 * (`conmon --exec`, which runs `runc exec --detach --process <spec>`), so that an exec, like
 * the container itself, needs no process of ours to stay alive: its output goes to its own
 * k8s-file log, its exit code to its own exit file, and its stdin and terminal are reached the
 * same way as the container's (the attach socket, the ctl FIFO).
 *
 * Facts measured on conmon 2.1.6 here:
 * - with `--exec`, the folder given as `-b` only receives conmon's `ctl` and `winsz` FIFOs and,
 *   with `--full-attach`, the `attach` socket: each session gets a folder of its own;
 * - the exit file is named after the container (`-c`), not the session (`-u`): each session
 *   gets an exit folder of its own too;
 * - the sync pipe carries the pid, then (if still open) the exit code; only the pid is read.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { conmonStderr, DEFAULT_CONMON, readExitCode, runtimeMessage, spawnConmon, waitExit, type RuntimeRef } from "./conmon.js";

export interface StartExecOptions extends RuntimeRef {
  containerId: string;
  execId: string;
  /** The session's own folder (absolute): FIFOs, socket, log, exit file, pid files. */
  dir: string;
  /** The OCI process to run (`args`, `env`, `cwd`, `user`, `terminal`, capabilities...). */
  process: Record<string, unknown>;
  terminal?: boolean;
  stdin?: boolean;
  /** See StartContainerOptions.leaveStdinOpen. */
  leaveStdinOpen?: boolean;
  /** See StartContainerOptions.conmon. */
  conmon?: string;
  timeoutMs?: number;
}

export interface ExecPaths {
  attachPath: string;
  ctlPath: string;
  logPath: string;
  exitDir: string;
}

export function execPaths(dir: string): ExecPaths {
  return { attachPath: join(dir, "attach"), ctlPath: join(dir, "ctl"), logPath: join(dir, "output.log"), exitDir: join(dir, "exits") };
}

function execArgs(opts: StartExecOptions): string[] {
  const p = execPaths(opts.dir);
  const args = [
    "--api-version", "1",
    "-c", opts.containerId,
    "-u", opts.execId,
    "-r", opts.runtimePath,
    "-b", opts.dir,
    "-p", join(opts.dir, "pidfile"),
    "-P", join(opts.dir, "conmon.pid"),
    "-0", opts.dir,
    "--exit-dir", p.exitDir,
    "-l", `k8s-file:${p.logPath}`,
    "--exec",
    "--exec-process-spec", join(opts.dir, "process.json"),
    "--socket-dir-path", opts.dir,
    "--full-attach",
    "--runtime-arg", "--root",
    "--runtime-arg", opts.runtimeRoot,
  ];
  for (const a of opts.runtimeArgs ?? []) args.push("--runtime-arg", a);
  if (opts.terminal) args.push("-t");
  if (opts.stdin) args.push("-i");
  if (opts.stdin && opts.leaveStdinOpen) args.push("--leave-stdin-open");
  return args;
}

/** Starts the session; resolves with its pid once the process runs, throws with the runtime's message. */
export async function startExec(opts: StartExecOptions): Promise<{ pid: number } & ExecPaths> {
  if (!isAbsolute(opts.dir)) throw new Error(`conmon: the exec folder must be an absolute path, got ${JSON.stringify(opts.dir)}`);
  const p = execPaths(opts.dir);
  mkdirSync(p.exitDir, { recursive: true });
  writeFileSync(join(opts.dir, "process.json"), JSON.stringify(opts.process), { mode: 0o600 });
  const stderrPath = join(opts.dir, "conmon.stderr");
  const message = await spawnConmon(opts.conmon ?? DEFAULT_CONMON, execArgs(opts), stderrPath, opts.timeoutMs);
  if (message.data <= 0) {
    const why = message.message ? runtimeMessage(message.message) : conmonStderr(stderrPath);
    throw new Error(why);
  }
  return { pid: message.data, ...p };
}

/** The session's exit code, or undefined while it runs. */
export function execExitCode(dir: string, containerId: string): number | undefined {
  return readExitCode(execPaths(dir).exitDir, containerId);
}

/** Resolves with the exit code when the session's process has exited. */
export function waitExec(dir: string, containerId: string, signal?: AbortSignal): Promise<number> {
  return waitExit(execPaths(dir).exitDir, containerId, signal);
}
