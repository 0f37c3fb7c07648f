/**
 * The supervisor's model: the containers of one namespace, each run by its own conmon, with
 * its state on disk under `<root>/<namespace>/<id>/`. Nothing here lives only in memory: a
 * supervisor that is killed and started again reads the state back, and a container that ran
 * (or ended) meanwhile is found as it is, its exit code in conmon's exit file and its output in
 * its log. Lifecycle of a container: run -> (running) -> exited -> remove.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import type { LoggerContext, LogResume, LogWriter } from "../../core/contracts/log.js";
import type { LogDriverSource } from "../plugins/log-drivers.js";
import { writeJsonAtomic } from "../../core/images/atomic-file.js";
import { cgroupDirOfSpecPath } from "../containers/cgroup-files.js";
import { drainState, LogDrain } from "./log-drain.js";
import { serialCtl } from "./ctl-serial.js";
import { rotatedSpool, Spool } from "./spool.js";
import { endSpoolGuard, startSpoolGuard } from "./spool-guard.js";
import { SpoolFollowers, type SpoolFollower } from "./spool-followers.js";
import { execExitCode, execPaths, startExec, waitExec, type ExecPaths } from "./conmon-exec.js";
import {
  conmonAlive,
  conmonPidfile,
  deleteContainer,
  killContainer,
  readExitCode,
  readK8sLog,
  reopenLog as reopenConmonLog,
  resizeTerminal,
  runtime,
  startContainer,
  stopContainer,
  waitExit,
  type RuntimeRef,
} from "./conmon.js";
import type { K8sLogLine } from "./k8s-file.js";

export interface RunRequest {
  id: string;
  /** Absolute path of the OCI bundle (config.json and, usually, the rootfs). */
  bundle: string;
  runtime: { path: string; args?: string[] };
  /** Where the container's output goes besides conmon's spool: a log driver and its logger's context. */
  log?: { driver: string; context: LoggerContext };
  /** Create without pivot_root(2) (ENGINE_RAMDISK: a root filesystem on a ramdisk). */
  noPivot?: boolean;
  /** A pseudo-terminal (the bundle's process.terminal says so too). */
  terminal?: boolean;
  /** Stdin open, fed through the attach socket. */
  stdin?: boolean;
  /** Stdin stays open when an attached client goes (else the first one's end closes it). */
  leaveStdinOpen?: boolean;
  /**
   * Where conmon writes its k8s-file log instead of the spool in the container's folder: the
   * CRI log file at the kubelet's path (which the kubelet rotates, then asks for a reopen).
   * Without `log` only: nothing drains or rotates it here.
   */
  logPath?: string;
}

/** An exec session to start in a running container (see conmon-exec.ts). */
export interface ExecRequest {
  execId: string;
  /** The OCI process (args, env, cwd, user, terminal, ...). */
  process: Record<string, unknown>;
  terminal?: boolean;
  stdin?: boolean;
  leaveStdinOpen?: boolean;
}

export interface ExecState extends ExecPaths {
  execId: string;
  pid: number;
}

/** Told to subscribers (engined) when a container has exited and its output has all reached its log driver. */
export interface ExitEvent {
  type: "exit";
  id: string;
  exitCode: number;
  /** The process that exited: a listener tells this run's exit from an earlier run's, announced late. */
  pid: number;
}


export interface ContainerState {
  id: string;
  bundle: string;
  runtime: RuntimeRef;
  pid: number;
  conmonPid: number;
  startedAt: string;
  status: "running" | "exited";
  exitCode?: number;
  /** Exited, and conmon saw the kernel's OOM killer act in its cgroup (the `oom` file it writes in its persist dir). */
  oomKilled?: boolean;
  /**
   * The file of the container's memory cgroup that counts the OOM killer's kills in it (v1
   * `memory.oom_control`, v2 `memory.events`), found from the bundle's cgroupsPath at the start:
   * conmon's `oom` file on cgroup v1 comes from an event it may not read before the exit ends
   * its loop.
   */
  oomCounter?: string;
  log?: RunRequest["log"];
  /** conmon's SOCK_SEQPACKET attach socket: input for stdin, output as it comes. */
  attachPath?: string;
  /** conmon's control FIFO (terminal resize). */
  ctlPath?: string;
  /** conmon's k8s-file spool of the output: attach follows it when the log driver cannot read. */
  logPath?: string;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** How the message of a run refused because its logger could not be made begins. */
export const LOGGER_FAILED = "failed to initialize logging driver: ";

/**
 * Where the OOM killer's kills in the memory cgroup of the container in `bundle` are counted,
 * from its config's cgroupsPath (its process may be gone by the time the start returns).
 */
function oomCounterOf(bundle: string): { oomCounter?: string } {
  try {
    const config = JSON.parse(readFileSync(join(bundle, "config.json"), "utf8")) as { linux?: { cgroupsPath?: string } };
    const cg = config.linux?.cgroupsPath ? cgroupDirOfSpecPath(config.linux.cgroupsPath, "memory") : undefined;
    return cg ? { oomCounter: join(cg.dir, cg.version === 1 ? "memory.oom_control" : "memory.events") } : {};
  } catch {
    return {}; // (no readable config: conmon's file alone tells)
  }
}

/** The `oom_kill` count of such a file; 0 when it is gone (the cgroup removed) or has none (an older kernel). */
function oomKills(file: string | undefined): number {
  if (!file) return 0;
  try {
    return Number(/^oom_kill (\d+)$/m.exec(readFileSync(file, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * A runtime's refusal of a command for a container that is running by the supervisor's record:
 * 409 when the runtime finds it ended meanwhile (its exit not reported yet), which callers take
 * as a stopped container; 500 for anything else.
 */
function runtimeRefusal(err: Error): SupervisorError {
  return new SupervisorError(/not running|does not exist|stopped/i.test(err.message) ? 409 : 500, err.message);
}

export class Supervisor {
  private readonly dir: string;
  private readonly exitDir: string;
  private readonly drains = new Map<string, LogDrain>();
  /** engined's followers of a container's spool, by container id (they may come before its run). */
  private readonly followers = new Map<string, SpoolFollowers>();
  private readonly subscribers = new Set<(event: ExitEvent) => void>();
  /** Exits announced by this process (a new supervisor announces the unremoved ones again). */
  private readonly announced = new Set<string>();
  private exitWatcher?: FSWatcher;
  private exitPoll?: NodeJS.Timeout;
  /**
   * Stops and waits under way, by container: each reads conmon's exit file once it shows up.
   * A removal lets them read it before the file goes (see `remove`).
   */
  private readonly exitReaders = new Map<string, Set<Promise<unknown>>>();

  constructor(
    root: string,
    readonly namespace: string,
    private readonly logDrivers?: LogDriverSource,
    /** The conmon to run (`--conmon`, from the daemon's `conmon` option); PATH's `conmon` when absent. */
    private readonly conmon?: string,
  ) {
    this.dir = join(root, namespace);
    this.exitDir = join(this.dir, "exits");
    mkdirSync(this.exitDir, { recursive: true });
  }

  /**
   * Takes up the drains a previous supervisor left unfinished (it was killed, or stopped), and
   * starts watching for exits: conmon's exit files, and (once a second) conmons that died
   * without writing one.
   */
  async resume(): Promise<void> {
    for (const state of this.list()) {
      if (state.log && !drainState(this.paths(state.id).drain).done) await this.startDrain(state, state.log);
    }
    try {
      this.exitWatcher = watch(this.exitDir, (_event, name) => {
        if (name && ID.test(name)) this.noticeExit(name);
      });
      this.exitWatcher.on("error", () => {});
    } catch {
      // polling alone
    }
    this.exitPoll = setInterval(() => {
      for (const state of this.list()) if (state.status === "exited") this.noticeExit(state.id);
    }, 1000);
    this.exitPoll.unref();
    for (const state of this.list()) if (state.status === "exited") this.noticeExit(state.id);
  }

  /** Stops watching for exits (the process is ending); no conmon stays stopped for want of a drain. */
  async close(): Promise<void> {
    this.exitWatcher?.close();
    clearInterval(this.exitPoll);
    await endSpoolGuard();
    for (const drain of this.drains.values()) drain.releaseConmon();
  }

  /** Calls `fn` with every exit from now on; returns the unsubscribe function. */
  subscribe(fn: (event: ExitEvent) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  /** Announces an exit once, after the container's output has all reached its log driver. */
  private noticeExit(id: string): void {
    if (this.announced.has(id)) return;
    let state: ContainerState;
    try {
      state = this.get(id);
    } catch {
      return; // removed meanwhile, or an exit file of no container of ours
    }
    if (state.exitCode === undefined) return;
    this.announced.add(id);
    void this.drained(id).then(() => {
      const event: ExitEvent = { type: "exit", id, exitCode: state.exitCode!, pid: state.pid };
      for (const fn of this.subscribers) fn(event);
    });
  }

  /** The container's logger; bad log settings are refused before anything runs. */
  private async logger(log: NonNullable<RunRequest["log"]>, resume: LogResume): Promise<LogWriter> {
    if (!this.logDrivers) throw new SupervisorError(400, "this supervisor has no log drivers");
    try {
      return await (await this.logDrivers(log.driver, "operator")).createLogger(log.context, resume);
    } catch (err) {
      // Docker's words for a logger that cannot be made; engined answers the start with them.
      throw new SupervisorError(400, `${LOGGER_FAILED}${(err as Error).message}`);
    }
  }

  /** The container's spool, under the spool guard from now on. */
  private spoolOf(id: string, ctlPath: string | undefined): Spool {
    const p = this.paths(id);
    return new Spool({ path: p.log, ctlPath, conmonPidfile: conmonPidfile(p.persist), followers: this.followersOf(id) });
  }

  /** `made`: the logger made (fresh) and the spool watched before the container ran; else a logger resumed from the drain's mark. */
  private async startDrain(state: Pick<ContainerState, "id" | "ctlPath">, log: NonNullable<RunRequest["log"]>, made?: { writer: LogWriter; resume: LogResume; spool: Spool }): Promise<void> {
    const id = state.id;
    const p = this.paths(id);
    const resume: LogResume = made?.resume ?? { mark: drainState(p.drain).mark };
    const writer = made?.writer ?? (await this.logger(log, resume));
    const drain = new LogDrain({
      spool: made?.spool ?? this.spoolOf(id, state.ctlPath),
      statePath: p.drain,
      writer,
      resume,
      exited: () => readExitCode(this.exitDir, id) !== undefined || !conmonAlive(p.persist),
    });
    this.drains.set(id, drain);
    drain.finished.then(
      () => {
        this.drains.delete(id);
        if (this.followers.get(id)?.size === 0) this.followers.delete(id);
      },
      (err: Error) => process.stderr.write(`supervisor: log drain of ${id} failed: ${err.message}\n`),
    );
  }

  /**
   * Once the container has exited: settles when its output has all reached its log driver (the
   * drain is woken now rather than at its next poll). A failed drain settles it too.
   */
  async drained(id: string): Promise<void> {
    const drain = this.drains.get(id);
    drain?.poke();
    await drain?.finished.catch(() => {});
  }

  private paths(id: string) {
    if (!ID.test(id)) throw new SupervisorError(400, `invalid container id "${id}"`);
    const base = join(this.dir, id);
    return {
      base,
      state: join(base, "state.json"),
      persist: join(base, "conmon"),
      log: join(base, "output.log"),
      drain: join(base, "drain.json"),
    };
  }

  async run(req: RunRequest): Promise<ContainerState> {
    const p = this.paths(req.id);
    if (existsSync(p.state)) throw new SupervisorError(409, `container ${req.id} exists already`);
    const resume: LogResume = {};
    const writer = req.log ? await this.logger(req.log, resume) : undefined;
    mkdirSync(p.persist, { recursive: true });
    const runtime: RuntimeRef = { runtimePath: req.runtime.path, runtimeRoot: join(this.dir, "runtime"), runtimeArgs: req.runtime.args };
    let spool: Spool | undefined;
    // (up while the runtime creates the container: its start waits for the guard's look)
    if (req.log) startSpoolGuard();
    try {
      const started = await startContainer({
        ...runtime, id: req.id, bundle: req.bundle, exitDir: this.exitDir, persistDir: p.persist, logPath: req.logPath ?? p.log, noPivot: req.noPivot,
        terminal: req.terminal, stdin: req.stdin, leaveStdinOpen: req.leaveStdinOpen, conmon: this.conmon,
        // The spool is under its guard before the container's first byte: the guard's bound
        // holds from the start, not from its first look (spool-guard.ts).
        created: req.log
          ? async (ctlPath) => {
              spool = this.spoolOf(req.id, ctlPath);
              await spool.watching;
            }
          : undefined,
      });
      // The container's first output comes now: the guard looks often.
      spool?.hot();
      const state: ContainerState = {
        id: req.id,
        bundle: req.bundle,
        runtime,
        pid: started.pid,
        conmonPid: started.conmonPid,
        startedAt: new Date().toISOString(),
        status: "running",
        ...(req.log ? { log: req.log } : {}),
        attachPath: started.attachPath,
        ctlPath: started.ctlPath,
        logPath: req.logPath ?? p.log,
        ...oomCounterOf(req.bundle),
      };
      writeJsonAtomic(p.state, state);
      if (req.log) await this.startDrain(state, req.log, { writer: writer!, resume, spool: spool! });
      // An exit file written before the state above (a command that ends at once) was seen by
      // the watcher when there was no container to announce: without this look, only the
      // once-a-second poll would find it.
      this.noticeExit(req.id);
      return state;
    } catch (err) {
      spool?.close();
      await writer?.close();
      rmSync(p.base, { recursive: true, force: true });
      throw new SupervisorError(500, (err as Error).message);
    }
  }

  /** The state as it is now: a running container whose exit file appeared has exited. */
  get(id: string): ContainerState {
    const p = this.paths(id);
    let state: ContainerState;
    try {
      state = JSON.parse(readFileSync(p.state, "utf8")) as ContainerState;
    } catch {
      throw new SupervisorError(404, `no such container: ${id}`);
    }
    const code = readExitCode(this.exitDir, id);
    if (code !== undefined) {
      const oom = existsSync(join(p.persist, "oom")) || (code === 137 && oomKills(state.oomCounter) > 0);
      return { ...state, status: "exited", exitCode: code, ...(oom ? { oomKilled: true } : {}) };
    }
    // No exit file and no conmon: conmon died with the container unreported (kill -9 of both).
    if (!conmonAlive(p.persist)) return { ...state, status: "exited", exitCode: 255 };
    return state;
  }

  list(): ContainerState[] {
    return readdirSync(this.dir)
      .filter((name) => ID.test(name) && existsSync(join(this.dir, name, "state.json")))
      .map((name) => this.get(name));
  }

  /**
   * Runs `read` (which waits for the container's exit file) as one of its exit readers: from
   * this call on, with no wait before, a removal of the container waits for it to end.
   */
  private readingExit<T>(id: string, read: () => Promise<T>): Promise<T> {
    let readers = this.exitReaders.get(id);
    if (!readers) this.exitReaders.set(id, (readers = new Set()));
    const reading = read();
    readers.add(reading);
    const done = () => {
      readers.delete(reading);
      if (readers.size === 0 && this.exitReaders.get(id) === readers) this.exitReaders.delete(id);
    };
    reading.then(done, done);
    return reading;
  }

  /** Settles once the stops and waits of the container under way have ended (it has exited: they read its exit file). */
  private async exitRead(id: string): Promise<void> {
    for (let turns = 0; this.exitReaders.has(id) && turns < 100; turns++) await Promise.allSettled([...this.exitReaders.get(id)!]);
  }

  /** The exit code, once the container has exited and its output has all reached its log driver. */
  wait(id: string, signal?: AbortSignal): Promise<number> {
    const state = this.get(id);
    return this.readingExit(id, async () => {
      const code = state.exitCode ?? (await waitExit(this.exitDir, id, signal));
      await this.drained(id);
      return code;
    });
  }

  async kill(id: string, sig: string): Promise<void> {
    const state = this.get(id);
    if (state.status !== "running") throw new SupervisorError(409, `container ${id} is not running`);
    // A container told to end must not wait on a full spool for its exit to be seen.
    this.drains.get(id)?.releaseConmon();
    await killContainer(state.runtime, id, sig).catch((err: Error) => {
      throw runtimeRefusal(err);
    });
  }

  /** `signal` (default TERM), then SIGKILL after `graceMs` (never, when negative); resolves with the exit code. */
  async stop(id: string, graceMs: number, signal = "TERM"): Promise<number> {
    const state = this.get(id);
    if (state.exitCode !== undefined) return state.exitCode;
    this.drains.get(id)?.releaseConmon();
    return this.readingExit(id, () => stopContainer(state.runtime, id, this.exitDir, { graceMs: graceMs < 0 ? 2 ** 31 - 1 : graceMs, signal }));
  }

  async remove(id: string, force: boolean): Promise<void> {
    const state = this.get(id);
    if (state.status === "running" && !force) throw new SupervisorError(409, `container ${id} is running`);
    this.drains.get(id)?.releaseConmon();
    if (state.status === "running") await this.readingExit(id, () => stopContainer(state.runtime, id, this.exitDir, { signal: "KILL", graceMs: 5000 }));
    // It has exited: the drain finishes once the spool is read to its end, so no line is cut.
    await this.drained(id);
    // A stop or wait that began before the exit reads the exit file when it is done with what
    // it was doing (a stop's kill may still be running): the file goes only once they have read
    // it. (engined removes a container as soon as its exit is announced, while its own stop,
    // a force removal's, may still be sending the second SIGKILL: gone before that stop looked,
    // the file would never show up, and the stop would fail after its 10 s.)
    await this.exitRead(id);
    await deleteContainer(state.runtime, id);
    rmSync(join(this.exitDir, id), { force: true });
    rmSync(this.paths(id).base, { recursive: true, force: true });
    // Only now, with the exit file gone: forgotten earlier, the exit watcher (or its poll) would
    // announce the old exit again and mark it announced, and the next run's exit, under the
    // same id (a restart), would never be told.
    this.announced.delete(id);
  }

  /**
   * Holds the running container's output: its conmon waits (the container blocks once its pipe
   * is full) until the returned function is called, or the container is told to end (kill,
   * stop, removal) or the supervisor ends. Several holds may stand at once.
   */
  hold(id: string): () => void {
    const state = this.get(id);
    if (state.status !== "running") throw new SupervisorError(409, `container ${id} is not running`);
    return this.drains.get(id)?.holdConmon() ?? (() => {});
  }

  /**
   * Registers a follower of the container's spool (engined's attach when the log driver cannot
   * read): the spool keeps the files it has not read (spool-followers.ts). `ino`: the file it
   * reads; without it, it needs every file there is. The container need not run yet: the next
   * run's spool keeps its files. `drop` ends the follower's connection (silent too long).
   */
  follow(id: string, ino: number | undefined, drop: () => void): SpoolFollower {
    const followers = this.followersOf(id);
    const follower = followers.add(ino, drop);
    return {
      report: follower.report,
      close: () => {
        follower.close();
        if (followers.size === 0 && !this.drains.has(id) && this.followers.get(id) === followers) this.followers.delete(id);
      },
    };
  }

  private followersOf(id: string): SpoolFollowers {
    let followers = this.followers.get(id);
    if (!followers) this.followers.set(id, (followers = new SpoolFollowers(`${this.paths(id).log}`)));
    return followers;
  }

  /** Resizes the container's terminal (nothing happens without one). */
  async resize(id: string, height: number, width: number): Promise<void> {
    const state = this.running(id);
    if (state.ctlPath) await resizeCtl(state.ctlPath, height, width);
  }

  /**
   * Has conmon reopen the log at the run request's `logPath` (the kubelet renamed the file
   * away to rotate it): settles once the new file is there (up to 2 s). A container whose
   * output goes to a log driver is rotated by its drain instead (409).
   */
  async reopenLog(id: string): Promise<void> {
    const state = this.running(id);
    if (state.log) throw new SupervisorError(409, `container ${id} logs to a log driver, whose drain rotates its spool`);
    if (!state.ctlPath || !state.logPath) throw new SupervisorError(409, `container ${id} has no log to reopen`);
    const { ctlPath, logPath } = state;
    await serialCtl(ctlPath, () => reopenConmonLog(ctlPath));
    for (let i = 0; i < 100 && !existsSync(logPath); i++) await new Promise((r) => setTimeout(r, 20));
  }

  /** Freezes (`pause`) or thaws (`resume`) the running container's processes: the runtime's freezer cgroup. */
  async freeze(id: string, action: "pause" | "resume"): Promise<void> {
    const state = this.running(id);
    await runtime(state.runtime, [action, id]).catch((err: Error) => {
      throw runtimeRefusal(err);
    });
  }

  /** Applies new limits to the running container (`runtime update -r`): OCI LinuxResources. */
  async update(id: string, resources: Record<string, unknown>): Promise<void> {
    const state = this.running(id);
    const file = join(this.paths(id).base, "resources.json");
    writeJsonAtomic(file, resources);
    try {
      await runtime(state.runtime, ["update", "--resources", file, id]);
    } catch (err) {
      throw runtimeRefusal(err as Error);
    } finally {
      rmSync(file, { force: true });
    }
  }

  // --- exec sessions (their folders live in the container's, and go with it) ---------------------

  private execDir(id: string, execId: string): string {
    if (!ID.test(execId)) throw new SupervisorError(400, `invalid exec id "${execId}"`);
    return join(this.paths(id).base, "execs", execId);
  }

  private running(id: string): ContainerState {
    const state = this.get(id);
    if (state.status !== "running") throw new SupervisorError(409, `container ${id} is not running`);
    return state;
  }

  async exec(id: string, req: ExecRequest): Promise<ExecState> {
    const state = this.running(id);
    const dir = this.execDir(id, req.execId);
    if (existsSync(dir)) throw new SupervisorError(409, `exec ${req.execId} exists already`);
    mkdirSync(dir, { recursive: true });
    try {
      const started = await startExec({
        ...state.runtime, containerId: id, execId: req.execId, dir, process: req.process,
        terminal: req.terminal, stdin: req.stdin, leaveStdinOpen: req.leaveStdinOpen, conmon: this.conmon,
      });
      return { execId: req.execId, ...started };
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw new SupervisorError(500, (err as Error).message);
    }
  }

  /** The session's exit code once its process has exited (the answer waits). */
  async execWait(id: string, execId: string, signal?: AbortSignal): Promise<number> {
    const dir = this.execDir(id, execId);
    if (!existsSync(dir)) throw new SupervisorError(404, `no such exec: ${execId}`);
    return execExitCode(dir, id) ?? (await waitExec(dir, id, signal));
  }

  async execResize(id: string, execId: string, height: number, width: number): Promise<void> {
    const dir = this.execDir(id, execId);
    if (!existsSync(dir)) throw new SupervisorError(404, `no such exec: ${execId}`);
    await resizeCtl(execPaths(dir).ctlPath, height, width);
  }

  /** Forgets a session that has ended (its folder goes). */
  execRemove(id: string, execId: string): void {
    rmSync(this.execDir(id, execId), { recursive: true, force: true });
  }

  /** What the spool holds now: its rotated file (not yet drained to its end) and its live one. */
  async logs(id: string): Promise<K8sLogLine[]> {
    this.get(id);
    const path = this.paths(id).log;
    return [...(await readK8sLog(rotatedSpool(path))), ...(await readK8sLog(path))];
  }
}

/**
 * A resize through conmon's FIFO (one command at a time, see ctl-serial.ts); a conmon that is
 * gone (ENXIO, ENOENT) means the process is not running.
 */
function resizeCtl(ctlPath: string, height: number, width: number): Promise<void> {
  return serialCtl(ctlPath, () => {
    try {
      resizeTerminal(ctlPath, height, width);
    } catch (err) {
      throw new SupervisorError(409, `cannot resize: the process is not running (${(err as Error).message})`);
    }
  });
}

/** A refusal with the HTTP status the supervisor's API answers with. */
export class SupervisorError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
