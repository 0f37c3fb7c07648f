/**
 * One conmon per container: conmon (2.1.6, the monitor Podman and CRI-O use) double-forks,
 * creates the container with the OCI runtime (`runc create`), reaps it, spools its output to
 * a k8s-file log and writes the exit code to `<exitDir>/<id>`. None of that depends on the
 * process that started it, so a supervisor (or engined) may die and come back without losing
 * a line of output or an exit code. This module starts conmon, reads the sync pipe, starts the
 * created container, waits for exit files, parses the log, and kills and deletes containers.
 *
 * Facts measured on conmon 2.1.6 + runc 1.1 here:
 * - the sync pipe is whatever fd `_OCI_SYNCPIPE` names; with `--api-version 1` it carries one
 *   line `{"data": <pid>}` or `{"data": -1, "message": "<runtime error>"}` and nothing after.
 * - conmon only runs `runc create`; the caller runs `runc start`.
 * - `-b` must be absolute; conmon puts `ctl` and `winsz` FIFOs in the bundle, and with
 *   `--full-attach` the SOCK_SEQPACKET `attach` socket too (removed again when conmon exits).
 * - the container is PID 1 of its own pid namespace: SIGTERM does nothing to a process that
 *   installs no handler (e.g. `sleep`), so stop = SIGTERM, grace, SIGKILL (exit code 137).
 * - the exit file holds the exit status as decimal text, 128+N for death by signal N.
 */
import { execFile, spawn } from "node:child_process";
import { closeSync, constants as fsConstants, existsSync, mkdirSync, openSync, readFileSync, watch, writeSync, type FSWatcher } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, join } from "node:path";
import { signalNumberText } from "../../core/containers/signals.js";
import { available as posixSpawnAvailable, execFileLight, posixSpawn } from "../../core/posix-spawn.js";
import { parseK8sLog, type K8sLogLine } from "./k8s-file.js";
import { processAlive } from "../process-alive.js";

/** conmon as PATH finds it, unless the daemon's `conmon` option (ENGINE_CONMON) names another. */
export const DEFAULT_CONMON = "conmon";

/** Where an OCI runtime keeps its state: enough to run `start`, `kill`, `delete`, `state`. */
export interface RuntimeRef {
  runtimePath: string;
  /** Its `--root` (absolute). */
  runtimeRoot: string;
  /** Extra global flags, before the subcommand. */
  runtimeArgs?: string[];
}

export interface StartContainerOptions extends RuntimeRef {
  id: string;
  /** Absolute path of a directory with config.json (and its rootfs). */
  bundle: string;
  exitDir: string;
  /** conmon's `-0`: also where this module keeps the pid files and conmon's own stderr. */
  persistDir: string;
  /** The k8s-file log. */
  logPath: string;
  /** Short-path attach sockets: `<dir>/<id>` links to the bundle. Default: `<bundle>/attach`. */
  attachSocketDir?: string;
  /**
   * A pseudo-terminal (`-t`): conmon takes the pty master from runc (its console socket), logs
   * what the container writes to it as stdout, and forwards attached input into it. The
   * bundle's process.terminal must say true as well.
   */
  terminal?: boolean;
  /** A pipe for the container's stdin (`-i`), fed from the attach socket. */
  stdin?: boolean;
  /**
   * Keep stdin open when the attached client goes (`--leave-stdin-open`). Without it the
   * container's stdin ends with its first attached client: Docker's StdinOnce.
   */
  leaveStdinOpen?: boolean;
  /** The conmon to run: a name looked up in PATH or a path (default `conmon`; the supervisor's `--conmon`). */
  conmon?: string;
  /** Bound on conmon + `runc create` (default 30 s). */
  timeoutMs?: number;
  /** conmon's `--no-pivot`: runc creates without pivot_root(2) (a root filesystem on a ramdisk). */
  noPivot?: boolean;
  /**
   * Called once the runtime has created the container (conmon runs, with its `ctl` FIFO) and
   * before it starts the container's process: what must see its output from the first byte is
   * set up here. A failure deletes the container.
   */
  created?: (ctlPath: string) => Promise<void>;
}

export interface StartedContainer {
  /** The container's init process, as seen from the host. */
  pid: number;
  /** The long-lived conmon process (the one that monitors the container). */
  conmonPid: number;
  /** The SOCK_SEQPACKET attach socket. */
  attachPath: string;
  /** conmon's control FIFO (resize and log-reopen commands). */
  ctlPath: string;
  conmonPidfile: string;
}

export function conmonPidfile(persistDir: string): string {
  return join(persistDir, "conmon.pid");
}

function containerPidfile(persistDir: string): string {
  return join(persistDir, "pidfile");
}

/** The conmon command line for a container; exported so the supervisor can log it. */
function conmonArgs(opts: StartContainerOptions): string[] {
  const args = [
    "--api-version", "1",
    "-c", opts.id,
    "-u", opts.id,
    "-n", opts.id,
    "-r", opts.runtimePath,
    "-b", opts.bundle,
    "-p", containerPidfile(opts.persistDir),
    "-P", conmonPidfile(opts.persistDir),
    "-0", opts.persistDir,
    "--exit-dir", opts.exitDir,
    "-l", `k8s-file:${opts.logPath}`,
    "--runtime-arg", "--root",
    "--runtime-arg", opts.runtimeRoot,
  ];
  for (const a of opts.runtimeArgs ?? []) args.push("--runtime-arg", a);
  if (opts.noPivot) args.push("--no-pivot");
  if (opts.terminal) args.push("-t");
  if (opts.stdin) args.push("-i");
  if (opts.stdin && opts.leaveStdinOpen) args.push("--leave-stdin-open");
  if (opts.attachSocketDir) args.push("--socket-dir-path", opts.attachSocketDir);
  else args.push("--socket-dir-path", opts.persistDir, "--full-attach");
  return args;
}

/**
 * Starts conmon for a container (which runs `runtime create`), waits for the container's pid
 * on the sync pipe, then runs `runtime start`. Throws with the runtime's message when the
 * container cannot be created or started; the half-made container is deleted again.
 */
export async function startContainer(opts: StartContainerOptions): Promise<StartedContainer> {
  for (const [name, p] of [["bundle", opts.bundle], ["runtimeRoot", opts.runtimeRoot], ["exitDir", opts.exitDir],
    ["persistDir", opts.persistDir], ["logPath", opts.logPath]] as const) {
    if (!isAbsolute(p)) throw new Error(`conmon: ${name} must be an absolute path, got ${JSON.stringify(p)}`);
  }
  mkdirSync(opts.exitDir, { recursive: true });
  mkdirSync(opts.persistDir, { recursive: true });
  mkdirSync(opts.runtimeRoot, { recursive: true });
  if (opts.attachSocketDir) mkdirSync(opts.attachSocketDir, { recursive: true });

  const stderrPath = join(opts.persistDir, "conmon.stderr");
  const message = await spawnConmon(opts.conmon ?? DEFAULT_CONMON, conmonArgs(opts), stderrPath, opts.timeoutMs);

  if (message.data <= 0) {
    await deleteContainer(opts, opts.id).catch(() => {});
    const why = message.message ? runtimeMessage(message.message) : conmonStderr(stderrPath);
    // containerd's words for the same failure, which Docker's clients show (and users search for)
    throw new Error(`failed to create shim task: OCI runtime create failed: ${why}: unknown`);
  }

  const ctlPath = join(opts.bundle, "ctl");
  try {
    await opts.created?.(ctlPath);
  } catch (e) {
    await deleteContainer(opts, opts.id).catch(() => {});
    throw e;
  }
  try {
    await runtime(opts, ["start", opts.id]);
  } catch (e) {
    await deleteContainer(opts, opts.id).catch(() => {});
    throw new Error(`OCI runtime start failed: ${(e as Error).message}: unknown`);
  }
  const conmonPid = readPid(conmonPidfile(opts.persistDir));
  return {
    pid: message.data,
    conmonPid: conmonPid ?? 0,
    attachPath: opts.attachSocketDir ? join(opts.attachSocketDir, opts.id, "attach") : join(opts.bundle, "attach"),
    ctlPath,
    conmonPidfile: conmonPidfile(opts.persistDir),
  };
}

/** What conmon says on its sync pipe: the container's (or exec's) pid, or -1 and the runtime's message. */
export interface SyncMessage {
  data: number;
  message?: string;
}

/**
 * Starts `conmon` (a name in PATH or a path) with `args` and resolves with the first message of its sync pipe (fd 3), the
 * pid of what it ran. conmon's own output goes to `stderrPath`, quoted in the error when it
 * says nothing on the pipe.
 */
export function spawnConmon(conmon: string, args: string[], stderrPath: string, timeoutMs = 30_000): Promise<SyncMessage> {
  const errFd = openSync(stderrPath, "a", 0o600);
  let child: ConmonChild;
  try {
    child = startConmon(conmon, args, errFd, dirname(stderrPath));
  } catch (e) {
    return Promise.reject(new Error(`conmon: cannot run ${conmon}: ${(e as Error).message}`));
  } finally {
    closeSync(errFd);
  }
  const sync = child.sync;

  return new Promise<SyncMessage>((resolve, reject) => {
    let buf = "";
    let exitCode: number | null | undefined;
    const timer = setTimeout(() => finish(new Error(`conmon: no answer on the sync pipe within ${timeoutMs} ms`)), timeoutMs);
    const finish = (err: Error | null, msg?: SyncMessage) => {
      clearTimeout(timer);
      sync.removeAllListeners("data");
      sync.destroy();
      if (err) reject(err);
      else resolve(msg!);
    };
    sync.on("data", (d: Buffer) => {
      buf += d.toString("utf8");
      const nl = buf.indexOf("\n");
      const line = nl >= 0 ? buf.slice(0, nl) : buf;
      try {
        const msg = JSON.parse(line) as { data?: unknown; message?: unknown };
        if (typeof msg.data === "number") {
          finish(null, { data: msg.data, ...(typeof msg.message === "string" ? { message: msg.message } : {}) });
        }
      } catch {
        // incomplete: wait for more
      }
    });
    sync.on("error", () => {});
    sync.on("end", () => {
      // The first conmon process exits quickly; the sync pipe ends when the monitor closes it.
      setTimeout(() => finish(new Error(`conmon exited without reporting a pid (exit ${exitCode ?? "?"}): ${conmonStderr(stderrPath)}`)), 50);
    });
    child.onExit((code) => (exitCode = code));
    child.onError((e) => finish(new Error(`conmon: cannot run ${conmon}: ${e.message}`)));
  });

}

/** A conmon process of ours: its sync pipe, its end, and (Node's spawn) a failure to start. */
interface ConmonChild {
  sync: NodeJS.ReadableStream & { destroy(): void };
  onExit(fn: (code: number | null) => void): void;
  onError(fn: (e: Error) => void): void;
}

/**
 * conmon started with fd 3 its sync pipe. stdout and stderr go to a file (`errFd`), never to a
 * pipe of ours: conmon outlives this process and must not get EPIPE when we are gone. It gets
 * a session of its own (a signal to our process group does not reach it) and its own folder to
 * work in (it writes an `oom` file there when the OOM killer acts in the container's cgroup),
 * never the daemon's. Through posix_spawn where it can (core/posix-spawn.ts: no fork of this
 * process); throws when the program cannot be started that way.
 */
function startConmon(conmon: string, args: string[], errFd: number, cwd: string): ConmonChild {
  const env = { ...process.env, _OCI_SYNCPIPE: "3" };
  if (posixSpawnAvailable()) {
    const p = posixSpawn(conmon, args, { env, cwd, setsid: true, stdio: ["ignore", errFd, errFd, "pipe"] });
    return { sync: p.pipes.get(3)!, onExit: (fn) => void p.exited.then((e) => fn(e.code)), onError: () => undefined };
  }
  const child = spawn(conmon, args, { stdio: ["ignore", errFd, errFd, "pipe"], env, detached: true, cwd });
  return {
    sync: child.stdio[3] as NodeJS.ReadableStream & { destroy(): void },
    onExit: (fn) => void child.once("exit", fn),
    onError: (fn) => void child.once("error", fn),
  };
}

export function conmonStderr(path: string): string {
  try {
    return readFileSync(path, "utf8").trim().split("\n").slice(-5).join("; ") || "(no message)";
  } catch {
    return "(no message)";
  }
}

/** runc logs in logfmt (`time=... level=error msg="..."`): keep the msg, else the text. */
export function runtimeMessage(text: string): string {
  const msgs = [...text.matchAll(/msg="((?:[^"\\]|\\.)*)"/g)].map((m) => m[1].replace(/\\(.)/g, "$1"));
  return (msgs.length ? msgs.join("; ") : text).trim();
}

export function readPid(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `<runtime> --root <root> [args...] <sub...>`; rejects with the runtime's message. */
export function runtime(rt: RuntimeRef, sub: string[], timeoutMs = 30_000): Promise<string> {
  const args = ["--root", rt.runtimeRoot, ...(rt.runtimeArgs ?? []), ...sub];
  const failed = (err: Error & { stderr?: string }) => new Error(`${rt.runtimePath} ${sub[0]}: ${runtimeMessage(err.stderr || err.message)}`);
  // (posix_spawn where it can: a container's start and removal run the runtime twice)
  if (posixSpawnAvailable()) return execFileLight(rt.runtimePath, args, timeoutMs).then(({ stdout }) => stdout, (err: Error) => Promise.reject(failed(err)));
  return new Promise((resolve, reject) => {
    execFile(rt.runtimePath, args, { timeout: timeoutMs, encoding: "utf8" }, (err, stdout, stderr) => {
      if (err) reject(failed(Object.assign(err, { stderr })));
      else resolve(stdout);
    });
  });
}

/** Reads the exit code conmon wrote, or undefined when the container has not exited. */
export function readExitCode(exitDir: string, id: string): number | undefined {
  const path = join(exitDir, id);
  // the common answer (it runs) without an exception: the drain of every running container asks 4 times a second
  if (!existsSync(path)) return undefined;
  try {
    const text = readFileSync(path, "utf8").trim();
    return /^-?\d+$/.test(text) ? Number(text) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Resolves with the exit code when conmon writes `<exitDir>/<id>`. Watches the directory and
 * polls too (watch events can be missed or coalesced); rejects when `signal` aborts.
 */
export function waitExit(exitDir: string, id: string, signal?: AbortSignal, pollMs = 200): Promise<number> {
  return new Promise((resolve, reject) => {
    let watcher: FSWatcher | undefined;
    let timer: NodeJS.Timeout | undefined;
    const done = (err: Error | null, code?: number) => {
      watcher?.close();
      clearInterval(timer);
      signal?.removeEventListener("abort", onAbort);
      if (err) reject(err);
      else resolve(code!);
    };
    const check = () => {
      const code = readExitCode(exitDir, id);
      if (code !== undefined) done(null, code);
    };
    const onAbort = () => done(signal!.reason instanceof Error ? signal!.reason : new Error(`waiting for ${id} to exit: aborted`));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      mkdirSync(exitDir, { recursive: true });
      watcher = watch(exitDir, (_ev, name) => {
        if (!name || name === id) check();
      });
      watcher.on("error", () => {});
    } catch {
      // polling alone
    }
    timer = setInterval(check, pollMs);
    check();
  });
}

export async function readK8sLog(path: string): Promise<K8sLogLine[]> {
  try {
    return parseK8sLog(await readFile(path));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
}

/**
 * `<runtime> kill <id> <signal>`; signal as a name (`TERM`, `SIGKILL`, `SIGRTMIN+3`) or a number,
 * given to the runtime as its number (runc knows no real-time signal by name).
 */
export async function killContainer(rt: RuntimeRef, id: string, signal: string | number = "KILL"): Promise<void> {
  await runtime(rt, ["kill", id, signalNumberText(String(signal))]);
}

/**
 * SIGTERM (or `signal`), then SIGKILL after `graceMs` if it has not exited; resolves with the
 * exit code. A container that already exited just gives its code.
 */
export async function stopContainer(
  rt: RuntimeRef,
  id: string,
  exitDir: string,
  opts: { signal?: string | number; graceMs?: number; killWaitMs?: number } = {},
): Promise<number> {
  const already = readExitCode(exitDir, id);
  if (already !== undefined) return already;
  await killContainer(rt, id, opts.signal ?? "TERM").catch(ignoreGone);
  try {
    return await waitExit(exitDir, id, AbortSignal.timeout(opts.graceMs ?? 10_000));
  } catch {
    await killContainer(rt, id, "KILL").catch(ignoreGone);
    return await waitExit(exitDir, id, AbortSignal.timeout(opts.killWaitMs ?? 10_000));
  }
}

function ignoreGone(e: Error): void {
  if (!/not running|does not exist|process already finished/i.test(e.message)) throw e;
}

/** `<runtime> delete -f <id>`: a container that does not exist is not an error. */
export async function deleteContainer(rt: RuntimeRef, id: string): Promise<void> {
  try {
    await runtime(rt, ["delete", "-f", id]);
  } catch (e) {
    if (!/does not exist/i.test((e as Error).message)) throw e;
  }
}

/**
 * Writes one command to conmon's `ctl` FIFO (`"<type> <height> <width>\n"`: 1 = resize the
 * tty, 2 = reopen the log file, e.g. after it was rotated away). Opened non-blocking: when no
 * conmon reads the FIFO any more this fails with ENXIO instead of hanging.
 */
function sendCtl(ctlPath: string, type: 1 | 2, height = 0, width = 0): void {
  const fd = openSync(ctlPath, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
  try {
    writeSync(fd, `${type} ${height} ${width}\n`);
  } finally {
    closeSync(fd);
  }
}

/** Makes conmon reopen its k8s-file log (the old one was renamed away). */
export function reopenLog(ctlPath: string): void {
  sendCtl(ctlPath, 2);
}

/** Resizes a tty container's terminal (no effect without a tty). */
export function resizeTerminal(ctlPath: string, height: number, width: number): void {
  sendCtl(ctlPath, 1, height, width);
}

/** conmon's pid, when its pid file names a live conmon (never another process that took the pid since). */
export function liveConmonPid(pidfile: string): number | undefined {
  const pid = readPid(pidfile);
  try {
    return pid !== undefined && readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "conmon" ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** True when the pid in conmon's pid file is alive (conmon still monitors the container). */
export function conmonAlive(persistDir: string): boolean {
  return processAlive(readPid(conmonPidfile(persistDir)));
}
