/**
 * Starts the real `bin/engined` as a child process, the way the README does, with its own
 * data root, exec root, pid file and socket in a temporary folder, and stops it again. Every
 * test daemon is ended by its pid and its folder removed.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { connect } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(fileURLToPath(import.meta.url), "../../../..");
export const ENGINED = join(ROOT, "bin/engined");

export interface TestDaemon {
  dir: string;
  /** The unix socket, as a path. */
  socket: string;
  pidfile: string;
  proc: ChildProcess;
  /** Everything the daemon wrote to stderr and stdout so far. */
  output(): string;
  /** The addresses it said it listens on (`API listen on ...`), real ports filled in. */
  addresses(): string[];
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. Removes the folder. */
  stop(graceMs?: number): Promise<number | null>;
}

export interface StartOptions {
  /** Extra flags. */
  args?: string[];
  /**
   * Run the daemon in the network namespace bound at this file (`nsenter --net=`; the pid stays
   * the daemon's), with its default bridge (without a namespace, test daemons get `--bridge none`).
   */
  netns?: string;
  /**
   * A command that runs engined (its path and flags are appended): e.g. `unshare --mount ...
   * sh -c '...; exec "$@"'` to give the daemon a mount namespace of its own. It must exec
   * engined, so that the pid stays the daemon's.
   */
  wrap?: string[];
  /** Replace the default `-H unix://<dir>/engine.sock`. */
  hosts?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Extra file descriptors for the child (socket activation). */
  stdio?: (number | "pipe" | "ignore")[];
  timeoutMs?: number;
  /** How readiness shows: the log line (default), or the socket answering (quiet log levels). */
  readyBy?: "log" | "socket";
}

const READY = "daemon has completed initialization";
const running = new Set<TestDaemon>();
const tempDirs = new Set<string>();

/** A temporary folder, removed after the run by the root hook if the test does not. */
export function makeTempDir(prefix = "engine-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

/**
 * The roots of a test daemon in `dir`, and `--bridge none`: a test daemon makes no bridge and no
 * iptables rule in the host's network namespace. Network tests run theirs inside a namespace of
 * their own and give `--bridge` (a later flag wins).
 */
export function daemonArgs(dir: string, opts: { bridge?: boolean } = {}): string[] {
  return ["--data-root", join(dir, "data"), "--exec-root", join(dir, "exec"), "--pidfile", join(dir, "engine.pid"), ...(opts.bridge ? [] : ["--bridge", "none"])];
}

export async function startEngined(opts: StartOptions = {}): Promise<TestDaemon> {
  const dir = makeTempDir();
  const socket = join(dir, "engine.sock");
  const hosts = opts.hosts ?? [`unix://${socket}`];
  const args = [...daemonArgs(dir, { bridge: !!opts.netns }), ...hosts.flatMap((h) => ["-H", h]), ...(opts.args ?? [])];
  const [command, argv] = opts.netns
    ? ["nsenter", [`--net=${opts.netns}`, "--", ENGINED, ...args]]
    : opts.wrap
      ? [opts.wrap[0], [...opts.wrap.slice(1), ENGINED, ...args]]
      : [ENGINED, args];
  const proc = spawn(command, argv, {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ["ignore", "pipe", "pipe", ...(opts.stdio ?? [])],
  });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((res) => proc.once("exit", (code) => res(code)));

  const daemon: TestDaemon = {
    dir,
    socket,
    pidfile: join(dir, "engine.pid"),
    proc,
    output: () => out,
    addresses: () => [...out.matchAll(/API listen on (\S+?)"/g)].map((m) => m[1]),
    async stop(graceMs = 10_000) {
      running.delete(daemon);
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGTERM");
        const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
        const code = await exited;
        clearTimeout(timer);
        unmountUnder(dir);
        rmSync(dir, { recursive: true, force: true });
        return code;
      }
      unmountUnder(dir);
      rmSync(dir, { recursive: true, force: true });
      return proc.exitCode;
    },
  };
  running.add(daemon);

  // a bound, not a measure: a machine loaded by other work may take many seconds
  const deadline = opts.timeoutMs ?? 60_000;
  const ready = await new Promise<boolean>((res) => {
    const timer = setTimeout(() => res(false), deadline);
    const check = () => {
      if (out.includes(READY)) {
        clearTimeout(timer);
        res(true);
      }
    };
    proc.stdout!.on("data", check);
    proc.stderr!.on("data", check);
    if (opts.readyBy === "socket") {
      const poll = setInterval(() => {
        const probe = connect(socket);
        probe.once("connect", () => {
          probe.destroy();
          clearInterval(poll);
          clearTimeout(timer);
          res(true);
        });
        probe.once("error", () => probe.destroy());
      }, 50);
      exited.then(() => clearInterval(poll));
      setTimeout(() => clearInterval(poll), deadline);
    }
    exited.then(() => {
      clearTimeout(timer);
      res(false);
    });
  });
  if (!ready) {
    await daemon.stop(1000);
    throw new Error(`engined did not start:\n${out}`);
  }
  return daemon;
}

/** Sends SIGHUP and waits until the daemon logged the outcome of that reload; resolves with what it logged. */
export async function sighup(d: TestDaemon): Promise<string> {
  const before = d.output().length;
  d.proc.kill("SIGHUP");
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    const out = d.output().slice(before);
    if (/reloaded |reload failed|reload: no reloadable option changed/.test(out)) {
      await new Promise((r) => setTimeout(r, 100));
      return d.output().slice(before);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no reload outcome logged:\n${d.output().slice(before)}`);
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `bin/engined` with these arguments until it exits (for starts that must fail). */
export function runEngined(args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return runCommand(ENGINED, args, opts);
}

export function runCommand(
  command: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; input?: string | Buffer } = {},
): Promise<RunResult> {
  return new Promise((res) => {
    const proc = spawn(command, args, { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env } });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    // a command that ends before reading its input (or is killed) makes the write fail: its result says why
    proc.stdin.on("error", () => {});
    if (opts.input !== undefined) proc.stdin.end(opts.input);
    else proc.stdin.end();
    const timer = setTimeout(() => proc.kill("SIGKILL"), opts.timeoutMs ?? 60_000);
    proc.once("close", (code) => {
      clearTimeout(timer);
      res({ code, stdout, stderr });
    });
  });
}

/**
 * Stops every daemon a test left running and removes every temporary folder (root hook). A
 * supervisor left behind (live restore, a daemon killed) is ended with its containers, and
 * whatever is still mounted under a folder is unmounted before the folder goes: removing
 * through a mount would reach into what is mounted.
 */
export async function cleanUpAfterTests(): Promise<void> {
  await Promise.all([...running].map((d) => d.stop(2000)));
  for (const dir of tempDirs) {
    // one folder that fails to go must not leave every later one behind
    try {
      await stopLeftoverSupervisors(dir);
      unmountUnder(dir);
      rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      console.error(`cleanup: ${dir} not removed: ${(err as Error).message}`);
    }
  }
  tempDirs.clear();
}

/** Ends each supervisor under `dir` and waits (bounded) until it is gone: one still exiting would write its folders again after they were removed. */
async function stopLeftoverSupervisors(dir: string): Promise<void> {
  for (const pidfile of findFiles(dir, "supervisor.pid", 4)) {
    const root = dirname(pidfile);
    // Its containers first (runc's state is under <root>/<namespace>/runtime), then the process.
    for (const ns of readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory())) {
      const runtimeRoot = join(root, ns.name, "runtime");
      if (!existsSync(runtimeRoot)) continue;
      for (const id of readdirSync(runtimeRoot)) spawnSync("runc", ["--root", runtimeRoot, "delete", "--force", id], { stdio: "ignore" });
    }
    const pid = Number(readFileSync(pidfile, "utf8").trim());
    if (!(Number.isInteger(pid) && pid > 0)) continue;
    const signal = (sig: NodeJS.Signals | 0): boolean => {
      try {
        process.kill(pid, sig);
        return true;
      } catch {
        return false; // gone
      }
    };
    if (!signal("SIGTERM")) continue;
    for (let i = 0; i < 50 && signal(0); i++) await new Promise((r) => setTimeout(r, 100));
    signal("SIGKILL");
  }
}

function unmountUnder(dir: string): void {
  const mounts = readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")[4]).filter((m) => m && (m === dir || m.startsWith(`${dir}/`)));
  for (const m of mounts.reverse()) spawnSync("umount", ["-l", m], { stdio: "ignore" });
}

function findFiles(dir: string, name: string, depth: number): string[] {
  if (depth < 0 || !existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isFile() && e.name === name) out.push(path);
    else if (e.isDirectory() && !e.isSymbolicLink()) out.push(...findFiles(path, name, depth - 1));
  }
  return out;
}
