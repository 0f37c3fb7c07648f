/**
 * The supervisor's model: the containers of one namespace, each run by its own conmon, with
 * its state on disk under `<root>/<namespace>/<id>/`. Nothing here lives only in memory: a
 * supervisor that is killed and started again reads the state back, and a container that ran
 * (or ended) meanwhile is found as it is, its exit code in conmon's exit file and its output in
 * its log. Lifecycle of a container: run -> (running) -> exited -> remove.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { LogDriver, LoggerContext, LogWriter } from "../../core/contracts/log.js";
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
}

/** Finds a log driver by name (the supervisor process loads them as plugins). */
export type LogDriverSource = (name: string) => Promise<LogDriver>;

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

  constructor(
    root: string,
    readonly namespace: string,
    private readonly logDrivers?: LogDriverSource,
  ) {
    this.dir = join(root, namespace);
    this.exitDir = join(this.dir, "exits");
    mkdirSync(this.exitDir, { recursive: true });
  }

  /** Takes up the drains a previous supervisor left unfinished (it was killed, or stopped). */
  async resume(): Promise<void> {
    for (const state of this.list()) {
      if (state.log && !drainState(this.paths(state.id).drain).done) await this.startDrain(state.id, state.log);
    }
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

  /** Settles when the container's output has all reached its log driver. */
  async drained(id: string): Promise<void> {
    await this.drains.get(id)?.finished;
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
      const started = await startContainer({ ...runtime, id: req.id, bundle: req.bundle, exitDir: this.exitDir, persistDir: p.persist, logPath: p.log });
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

  async wait(id: string, signal?: AbortSignal): Promise<number> {
    const state = this.get(id);
    if (state.exitCode !== undefined) return state.exitCode;
    return waitExit(this.exitDir, id, signal);
  }

  async kill(id: string, sig: string): Promise<void> {
    const state = this.get(id);
    if (state.status !== "running") throw new SupervisorError(409, `container ${id} is not running`);
    await killContainer(state.runtime, id, sig);
  }

  async stop(id: string, graceMs: number): Promise<number> {
    const state = this.get(id);
    if (state.exitCode !== undefined) return state.exitCode;
    return stopContainer(state.runtime, id, this.exitDir, { graceMs });
  }

  async remove(id: string, force: boolean): Promise<void> {
    const state = this.get(id);
    if (state.status === "running" && !force) throw new SupervisorError(409, `container ${id} is running`);
    if (state.status === "running") await stopContainer(state.runtime, id, this.exitDir, { signal: "KILL", graceMs: 5000 });
    await this.drains.get(id)?.stop();
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
