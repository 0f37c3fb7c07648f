/**
 * Starting a program with posix_spawn(3) instead of Node's `child_process`: libuv forks the
 * whole process, copying its page tables, and waits for the child's exec, which the child's
 * teardown of that copy makes slower still. From the supervisor (some 80 MiB) each spawn held
 * its event loop 3-5 ms, and a container's start and removal spawn three programs (conmon,
 * `runc start`, `runc delete`: bench/README, "Where a cycle goes"). glibc's posix_spawn shares
 * the memory until the exec (CLONE_VM|CLONE_VFORK): about 0.1 ms, and no copy to tear down.
 *
 * What libuv does for its children that this does too: the child's signal dispositions are the
 * defaults and its signal mask is empty (Node ignores SIGPIPE; a runtime must not inherit
 * that); descriptors it is given are dup2'd to 0, 1, 2...; it may get a session of its own and
 * a working folder. Only descriptors without FD_CLOEXEC are inherited besides (Node opens its
 * own with it).
 *
 * libuv reaps only the children it made, each by its pid, so these are reaped here: at each
 * SIGCHLD (a listener while any is pending) and by a slow poll in case a signal came between
 * two looks, with waitpid(pid, WNOHANG) for each pending pid; until then the process does not
 * end for want of work, as with Node's own children. Where koffi or the C library's
 * calls cannot be had, `available()` says so and callers use Node's own spawn.
 */
import { closeSync, constants as fsConstants } from "node:fs";
import { Socket } from "node:net";
import { constants } from "node:os";
import { getSystemErrorName } from "node:util";
import { libc } from "./libc.js";

type Fn = (...args: unknown[]) => number;

interface Calls {
  spawn: Fn;
  spawnp: Fn;
  faInit: Fn;
  faDestroy: Fn;
  faDup2: Fn;
  faOpen: Fn;
  faChdir: Fn;
  attrInit: Fn;
  attrDestroy: Fn;
  attrFlags: Fn;
  attrSigmask: Fn;
  attrSigdefault: Fn;
  sigfillset: Fn;
  sigemptyset: Fn;
  pipe2: Fn;
  fcntl: Fn;
  waitpid: Fn;
}

let calls: Calls | null | undefined;

function declare(): Calls | null {
  if (calls !== undefined) return calls;
  try {
    const { lib } = libc();
    const f = (prototype: string) => lib.func(prototype) as Fn;
    calls = {
      spawn: f("int posix_spawn(int *pid, const char *path, void *fa, void *attr, const char **argv, const char **envp)"),
      spawnp: f("int posix_spawnp(int *pid, const char *file, void *fa, void *attr, const char **argv, const char **envp)"),
      faInit: f("int posix_spawn_file_actions_init(void *fa)"),
      faDestroy: f("int posix_spawn_file_actions_destroy(void *fa)"),
      faDup2: f("int posix_spawn_file_actions_adddup2(void *fa, int fd, int newfd)"),
      faOpen: f("int posix_spawn_file_actions_addopen(void *fa, int fd, const char *path, int oflag, uint32_t mode)"),
      faChdir: f("int posix_spawn_file_actions_addchdir_np(void *fa, const char *path)"),
      attrInit: f("int posix_spawnattr_init(void *attr)"),
      attrDestroy: f("int posix_spawnattr_destroy(void *attr)"),
      attrFlags: f("int posix_spawnattr_setflags(void *attr, short flags)"),
      attrSigmask: f("int posix_spawnattr_setsigmask(void *attr, const void *set)"),
      attrSigdefault: f("int posix_spawnattr_setsigdefault(void *attr, const void *set)"),
      sigfillset: f("int sigfillset(void *set)"),
      sigemptyset: f("int sigemptyset(void *set)"),
      pipe2: f("int pipe2(int *fds, int flags)"),
      fcntl: f("int fcntl(int fd, int cmd, int arg)"),
      waitpid: f("int waitpid(int pid, int *status, int options)"),
    };
  } catch {
    calls = null;
  }
  return calls;
}

/** Whether programs can be started here this way (koffi and glibc's calls load). */
export function available(): boolean {
  return declare() !== null;
}

// glibc's values (x86_64 and aarch64 alike)
const POSIX_SPAWN_SETSIGDEF = 0x04;
const POSIX_SPAWN_SETSIGMASK = 0x08;
const POSIX_SPAWN_SETSID = 0x80;
const O_CLOEXEC = 0o2000000;
const F_DUPFD_CLOEXEC = 1030;
const WNOHANG = 1;
/** Room for glibc's opaque structures (posix_spawn_file_actions_t 80 bytes, posix_spawnattr_t 336, sigset_t 128). */
const STRUCT_ROOM = 1024;

/** What a child's descriptor N is: /dev/null, a descriptor of ours, or a new pipe whose other end we keep. */
export type ChildFd = "ignore" | "pipe" | number;

export interface SpawnOptions {
  /** The child's environment (absent values left out). */
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** A session (and process group) of its own: a signal to ours does not reach it. */
  setsid?: boolean;
  /** The child's descriptors 0, 1, 2, ... */
  stdio: ChildFd[];
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SpawnedProgram {
  pid: number;
  /** Our ends of the `pipe` entries, by child descriptor (readable sockets). */
  pipes: Map<number, Socket>;
  /** Settles when the child has ended and been reaped. */
  exited: Promise<Exit>;
}

/** Thrown when the program cannot be started; `code` is the errno's name (ENOENT...). */
export class SpawnError extends Error {
  constructor(
    readonly code: string,
    file: string,
  ) {
    super(`spawn ${file} ${code}`);
  }
}

/** Starts `file` (a path, or a name looked up in PATH) with `args`. Throws SpawnError. */
export function posixSpawn(file: string, args: string[], opts: SpawnOptions): SpawnedProgram {
  const c = declare();
  if (!c) throw new Error("posix_spawn is not available here");
  const fa = Buffer.alloc(STRUCT_ROOM);
  const attr = Buffer.alloc(STRUCT_ROOM);
  const sigs = Buffer.alloc(STRUCT_ROOM);
  const ours: number[] = [];
  const childEnds: number[] = [];
  const moved: number[] = [];
  const pipes = new Map<number, number>();
  check(c.faInit(fa), "posix_spawn_file_actions_init", file);
  check(c.attrInit(attr), "posix_spawnattr_init", file);
  try {
    opts.stdio.forEach((spec, target) => {
      if (spec === "ignore") {
        check(c.faOpen(fa, target, "/dev/null", fsConstants.O_RDWR, 0), "addopen", file);
        return;
      }
      let source: number;
      if (spec === "pipe") {
        const fds = new Int32Array(2);
        if (c.pipe2(fds, O_CLOEXEC) !== 0) throw new Error(`pipe2: cannot make a pipe for ${file}`);
        // the child writes, we read (the only use here: a program's output)
        pipes.set(target, fds[0]);
        ours.push(fds[0]);
        childEnds.push(fds[1]);
        source = fds[1];
      } else {
        source = spec;
      }
      // a source numbered like a later target would be overwritten first: moved above them
      if (source < opts.stdio.length && source !== target) {
        const high = c.fcntl(source, F_DUPFD_CLOEXEC, opts.stdio.length);
        if (high < 0) throw new Error(`fcntl: cannot move descriptor ${source} for ${file}`);
        moved.push(high);
        source = high;
      }
      check(c.faDup2(fa, source, target), "adddup2", file);
    });
    if (opts.cwd) check(c.faChdir(fa, opts.cwd), "addchdir", file);
    c.sigfillset(sigs);
    check(c.attrSigdefault(attr, sigs), "setsigdefault", file);
    c.sigemptyset(sigs);
    check(c.attrSigmask(attr, sigs), "setsigmask", file);
    check(c.attrFlags(attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | (opts.setsid ? POSIX_SPAWN_SETSID : 0)), "setflags", file);
    const env = Object.entries(opts.env).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`);
    const pid = new Int32Array(1);
    const err = (file.includes("/") ? c.spawn : c.spawnp)(pid, file, fa, attr, [file, ...args, null], [...env, null]);
    if (err !== 0) throw new SpawnError(errnoName(err), file);
    const readable = new Map<number, Socket>();
    for (const [target, fd] of pipes) {
      readable.set(target, new Socket({ fd, readable: true, writable: false }));
      ours.splice(ours.indexOf(fd), 1);
    }
    return { pid: pid[0], pipes: readable, exited: reaped(pid[0]) };
  } catch (err) {
    for (const fd of ours) closeSync(fd);
    throw err;
  } finally {
    for (const fd of [...childEnds, ...moved]) closeSync(fd);
    c.faDestroy(fa);
    c.attrDestroy(attr);
  }
}

function check(rc: number, call: string, file: string): void {
  if (rc !== 0) throw new Error(`${call}: ${errnoName(rc)} (starting ${file})`);
}

/** posix_spawn and its helpers return the error number itself (not -1 and errno). */
const errnoName = (errno: number): string => getSystemErrorName(-errno);

// --- reaping -------------------------------------------------------------------------------------

const pending = new Map<number, (exit: Exit) => void>();
let poll: NodeJS.Timeout | undefined;
const POLL_MS = 100;

function reaped(pid: number): Promise<Exit> {
  return new Promise((resolve) => {
    pending.set(pid, resolve);
    if (pending.size === 1) {
      process.on("SIGCHLD", reap);
      // (kept referenced, as Node's own child handles are: the process waits for its children's
      // ends, and the SIGCHLD listener alone does not keep it alive)
      poll = setInterval(reap, POLL_MS);
    }
    // it may have ended already, before the listener
    reap();
  });
}

function reap(): void {
  const c = declare()!;
  for (const [pid, resolve] of pending) {
    const status = new Int32Array(1);
    const rc = c.waitpid(pid, status, WNOHANG);
    if (rc === 0) continue; // still running
    pending.delete(pid);
    // (rc < 0: someone else reaped it; its status is not known)
    resolve(rc < 0 ? { code: null, signal: null } : decode(status[0]));
  }
  if (pending.size === 0) {
    process.off("SIGCHLD", reap);
    clearInterval(poll);
    poll = undefined;
  }
}

function decode(status: number): Exit {
  const sig = status & 0x7f;
  if (sig === 0) return { code: (status >> 8) & 0xff, signal: null };
  const name = Object.entries(constants.signals).find(([, n]) => n === sig)?.[0] as NodeJS.Signals | undefined;
  return { code: null, signal: name ?? null };
}

/**
 * `file args` to its end, as child_process.execFile: its stdout, or a rejection with an error
 * carrying `stderr` (and `code` or `signal`); killed with SIGTERM after `timeoutMs`.
 */
export function execFileLight(file: string, args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  let child: SpawnedProgram;
  try {
    child = posixSpawn(file, args, { env: process.env, stdio: ["ignore", "pipe", "pipe"] });
  } catch (err) {
    return Promise.reject(err);
  }
  const collect = (s: Socket) =>
    new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      s.on("data", (d: Buffer) => chunks.push(d));
      s.on("error", () => undefined);
      s.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    });
  const out = collect(child.pipes.get(1)!);
  const err = collect(child.pipes.get(2)!);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      process.kill(child.pid, "SIGTERM");
    } catch {
      // ended meanwhile
    }
  }, timeoutMs);
  return Promise.all([child.exited, out, err]).then(([exit, stdout, stderr]) => {
    clearTimeout(timer);
    if (exit.code === 0) return { stdout, stderr };
    const why = timedOut ? `timed out after ${timeoutMs} ms` : exit.signal ? `killed by ${exit.signal}` : `exit status ${exit.code}`;
    throw Object.assign(new Error(`Command failed (${why}): ${file} ${args.join(" ")}`), { stdout, stderr, code: exit.code, signal: exit.signal });
  });
}
