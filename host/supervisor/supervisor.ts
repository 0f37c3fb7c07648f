/**
 * The supervisor's model: the containers of one namespace, each run by its own conmon, with
 * its state on disk under `<root>/<namespace>/<id>/`. Nothing here lives only in memory: a
 * supervisor that is killed and started again reads the state back, and a container that ran
 * (or ended) meanwhile is found as it is, its exit code in conmon's exit file and its output in
 * its log. Lifecycle of a container: run -> (running) -> exited -> remove.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import type { LoggerContext, LogWriter } from "../../core/contracts/log.js";
import type { LogDriverSource } from "../plugins/log-drivers.js";
import { writeJsonAtomic } from "../../core/images/atomic-file.js";
import { drainState, LogDrain } from "./log-drain.js";
import {
  conmonAlive,
  deleteContainer,
  killContainer,
  readExitCode,
  readK8sLog,
  startContainer,
  stopContainer,
  waitExit,
  type K8sLogLine,
  type RuntimeRef,
} from "./conmon.js";

export interface RunRequest {
  id: string;
  /** Absolute path of the OCI bundle (config.json and, usually, the rootfs). */
  bundle: string;
  runtime: { path: string; args?: string[] };
  /** Where the container's output goes besides conmon's spool: a log driver and its logger's context. */
  log?: { driver: string; context: LoggerContext };
  /** Create without pivot_root(2) (ENGINE_RAMDISK: a root filesystem on a ramdisk). */
  noPivot?: boolean;
}

/** Told to subscribers (engined) when a container has exited and its output has all reached its log driver. */
export interface ExitEvent {
  type: "exit";
  id: string;
  exitCode: number;
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
  log?: RunRequest["log"];
}

const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export class Supervisor {
  private readonly dir: string;
  private readonly exitDir: string;
  private readonly drains = new Map<string, LogDrain>();
  private readonly subscribers = new Set<(event: ExitEvent) => void>();
  /** Exits announced by this process (a new supervisor announces the unremoved ones again). */
  private readonly announced = new Set<string>();
  private exitWatcher?: FSWatcher;
  private exitPoll?: NodeJS.Timeout;

  constructor(
    root: string,
    readonly namespace: string,
    private readonly logDrivers?: LogDriverSource,
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
      if (state.log && !drainState(this.paths(state.id).drain).done) await this.startDrain(state.id, state.log);
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

  /** Stops watching for exits (the process is ending). */
  close(): void {
    this.exitWatcher?.close();
    clearInterval(this.exitPoll);
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
      const event: ExitEvent = { type: "exit", id, exitCode: state.exitCode! };
      for (const fn of this.subscribers) fn(event);
    });
  }

  /** The container's logger; bad log settings are refused before anything runs. */
  private async logger(log: NonNullable<RunRequest["log"]>): Promise<LogWriter> {
    if (!this.logDrivers) throw new SupervisorError(400, "this supervisor has no log drivers");
    try {
      return await (await this.logDrivers(log.driver)).createLogger(log.context);
    } catch (err) {
      throw new SupervisorError(400, (err as Error).message);
    }
  }

  private async startDrain(id: string, log: NonNullable<RunRequest["log"]>, made?: LogWriter): Promise<void> {
    const p = this.paths(id);
    const writer = made ?? (await this.logger(log));
    const drain = new LogDrain({
      source: p.log,
      statePath: p.drain,
      writer,
      exited: () => readExitCode(this.exitDir, id) !== undefined || !conmonAlive(p.persist),
    });
    this.drains.set(id, drain);
    drain.finished.then(
      () => this.drains.delete(id),
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
    const writer = req.log ? await this.logger(req.log) : undefined;
    mkdirSync(p.persist, { recursive: true });
    const runtime: RuntimeRef = { runtimePath: req.runtime.path, runtimeRoot: join(this.dir, "runtime"), runtimeArgs: req.runtime.args };
    try {
      const started = await startContainer({
        ...runtime, id: req.id, bundle: req.bundle, exitDir: this.exitDir, persistDir: p.persist, logPath: p.log, noPivot: req.noPivot,
      });
      const state: ContainerState = {
        id: req.id,
        bundle: req.bundle,
        runtime,
        pid: started.pid,
        conmonPid: started.conmonPid,
        startedAt: new Date().toISOString(),
        status: "running",
        ...(req.log ? { log: req.log } : {}),
      };
      writeJsonAtomic(p.state, state);
      if (req.log) await this.startDrain(req.id, req.log, writer);
      return state;
    } catch (err) {
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
    if (code !== undefined) return { ...state, status: "exited", exitCode: code };
    // No exit file and no conmon: conmon died with the container unreported (kill -9 of both).
    if (!conmonAlive(p.persist)) return { ...state, status: "exited", exitCode: 255 };
    return state;
  }

  list(): ContainerState[] {
    return readdirSync(this.dir)
      .filter((name) => ID.test(name) && existsSync(join(this.dir, name, "state.json")))
      .map((name) => this.get(name));
  }

  /** The exit code, once the container has exited and its output has all reached its log driver. */
  async wait(id: string, signal?: AbortSignal): Promise<number> {
    const state = this.get(id);
    const code = state.exitCode ?? (await waitExit(this.exitDir, id, signal));
    await this.drained(id);
    return code;
  }

  async kill(id: string, sig: string): Promise<void> {
    const state = this.get(id);
    if (state.status !== "running") throw new SupervisorError(409, `container ${id} is not running`);
    await killContainer(state.runtime, id, sig);
  }

  /** `signal` (default TERM), then SIGKILL after `graceMs` (never, when negative); resolves with the exit code. */
  async stop(id: string, graceMs: number, signal = "TERM"): Promise<number> {
    const state = this.get(id);
    if (state.exitCode !== undefined) return state.exitCode;
    return stopContainer(state.runtime, id, this.exitDir, { graceMs: graceMs < 0 ? 2 ** 31 - 1 : graceMs, signal });
  }

  async remove(id: string, force: boolean): Promise<void> {
    const state = this.get(id);
    if (state.status === "running" && !force) throw new SupervisorError(409, `container ${id} is running`);
    if (state.status === "running") await stopContainer(state.runtime, id, this.exitDir, { signal: "KILL", graceMs: 5000 });
    // It has exited: the drain finishes once the spool is read to its end, so no line is cut.
    await this.drained(id);
    this.announced.delete(id);
    await deleteContainer(state.runtime, id);
    rmSync(join(this.exitDir, id), { force: true });
    rmSync(this.paths(id).base, { recursive: true, force: true });
  }

  logs(id: string): Promise<K8sLogLine[]> {
    this.get(id);
    return readK8sLog(this.paths(id).log);
  }
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
