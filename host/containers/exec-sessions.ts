/**
 * Docker's exec instances: a command to run in a running container, created first
 * (`POST /containers/{id}/exec`), then started once (`POST /exec/{id}/start`), inspected until
 * its container goes. The process runs under a conmon of its own through the supervisor
 * (host/supervisor/conmon-exec.ts); its output is read from that conmon's log, its stdin given
 * through that conmon's attach socket.
 *
 * Lifecycle of an instance: created -> running (pid known) -> exited (ExitCode) -> forgotten
 * with its container. The records live in memory only, as Docker's do: a daemon restart
 * forgets them (the processes, if any, go on under their conmon).
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "pino";
import type { OciSpec, RuntimeDriver } from "../../core/contracts/runtime.js";
import type { ContainerRecord } from "../../core/containers/container-store.js";
import { errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import type { ExecState } from "../supervisor/supervisor.js";
import { containerEvent } from "./container-events.js";
import { detachKeysOf } from "./detach-keys.js";
import { execStartError } from "./start-failure.js";
import type { ContainerRunner } from "./runner.js";

/** The body of `POST /containers/{id}/exec`. */
export interface ExecCreateRequest {
  AttachStdin?: boolean;
  AttachStdout?: boolean;
  AttachStderr?: boolean;
  DetachKeys?: string;
  Tty?: boolean;
  Env?: string[] | null;
  Cmd?: string[] | null;
  Privileged?: boolean;
  User?: string;
  WorkingDir?: string;
  ConsoleSize?: [number, number] | null;
}

export interface ExecInstance {
  id: string;
  container: ContainerRecord;
  request: ExecCreateRequest & { Cmd: string[] };
  running: boolean;
  exitCode: number | null;
  pid: number;
  /** Set once started: where its output and input are, and its exit code when it comes. */
  started?: { state: ExecState; exit: Promise<number> };
  /** Settles when a start has run its course: true once the process runs, false when it could not start (or the container went). */
  ready: Promise<boolean>;
}

/** How long a resize waits for the exec's start, as Docker's ContainerExecResize. */
const RESIZE_READY_MS = 10_000;

/** `GET /exec/{id}/json`, as Docker answers it. */
export function execInspect(e: ExecInstance) {
  const [entrypoint, ...args] = e.request.Cmd;
  return {
    ID: e.id,
    Running: e.running,
    ExitCode: e.exitCode,
    ProcessConfig: {
      tty: e.request.Tty === true,
      entrypoint,
      arguments: args,
      privileged: e.request.Privileged === true,
      // (omitempty in Docker's ExecProcessConfig)
      ...(e.request.User ? { user: e.request.User } : {}),
    },
    OpenStdin: e.request.AttachStdin === true,
    OpenStderr: e.request.AttachStderr === true,
    OpenStdout: e.request.AttachStdout === true,
    CanRemove: false,
    ContainerID: e.container.Id,
    // the parsed key bytes, base64 as Go writes a []byte (Docker's "EA==" for ctrl-p); "" when none were asked
    DetachKeys: e.request.DetachKeys ? detachKeysOf(e.request.DetachKeys).toString("base64") : "",
    Pid: e.pid,
  };
}

export interface ExecDeps {
  runner: ContainerRunner;
  runtime: RuntimeDriver;
  hooks: EngineHooks;
  log: Logger;
}

export class ExecSessions {
  private readonly instances = new Map<string, ExecInstance>();
  /** What settles each instance's `ready`, until it is settled. */
  private readonly readiness = new Map<string, (ok: boolean) => void>();

  constructor(private readonly deps: ExecDeps) {
    // Docker's daemon unregisters a container's execs when it stops (its Cleanup), not only when
    // it goes: an exec of a stopped container is "No such exec instance" to start, resize and
    // inspect. Sessions streaming meanwhile keep their instance.
    deps.hooks.event.tap("exec-sessions", (event) => {
      if (event.Type === "container" && (event.Action === "die" || event.Action === "destroy")) this.forget(event.Actor.ID);
    });
  }

  /** `ref` is how the client named the container: Docker's paused refusal at create repeats it (at start, the id). */
  create(c: ContainerRecord, request: ExecCreateRequest, ref = c.Id): ExecInstance {
    const cmd = request.Cmd ?? [];
    if (cmd.length === 0) throw errors.execNoCommand();
    if (!c.State.Running) throw errors.containerStateNotRunning(c.Id);
    if (c.State.Paused) throw errors.execContainerPaused(ref);
    // waiting for its restart policy's start: Docker's daemon refuses it in these words
    if (c.State.Restarting) throw errors.containerRestarting(c.Id);
    const id = randomBytes(32).toString("hex");
    const ready = new Promise<boolean>((resolve) => this.readiness.set(id, resolve));
    const e: ExecInstance = { id, container: c, request: { ...request, Cmd: cmd }, running: false, exitCode: null, pid: 0, ready };
    this.instances.set(e.id, e);
    // Docker's action: the entrypoint, a space, the arguments (a trailing space when there are none)
    this.event(e, `exec_create: ${cmd[0]} ${cmd.slice(1).join(" ")}`);
    return e;
  }

  /** Why `e` cannot start now, as Docker's 409s: for a route to ask before it takes the client's stream. */
  checkStartable(e: ExecInstance): void {
    if (e.started || e.running) throw errors.execAlreadyStarted(e.id, e.exitCode !== null);
    if (!e.container.State.Running) throw errors.containerStateNotRunning(e.container.Id);
    if (e.container.State.Paused) throw errors.execContainerPaused(e.container.Id);
  }

  get(id: string): ExecInstance {
    const e = this.instances.get(id) ?? [...this.instances.values()].find((x) => id.length >= 12 && x.id.startsWith(id));
    if (!e) throw errors.execNotFound(id);
    return e;
  }

  /**
   * Starts the process; resolves once it runs. `exit` settles with its code (and the record says
   * so). The process gets a terminal when the instance was created with `Tty`, as Docker's does:
   * the start's own `Tty` only says how the output is streamed (raw or in frames), not whether a
   * terminal is made.
   */
  async start(e: ExecInstance, opts: { consoleSize?: [number, number] | null } = {}): Promise<NonNullable<ExecInstance["started"]>> {
    this.checkStartable(e);
    const c = e.container;
    const tty = e.request.Tty === true;
    const paths = this.deps.runner.paths(c.Id);
    let process;
    try {
      const spec = JSON.parse(readFileSync(join(paths.bundle, "config.json"), "utf8")) as OciSpec;
      process = this.deps.runtime.execProcess({
        spec,
        rootfs: paths.rootfs,
        groupAdd: c.HostConfig.GroupAdd ?? [],
        exec: { ...e.request, Env: e.request.Env ?? [], Tty: tty, ConsoleSize: opts.consoleSize ?? e.request.ConsoleSize ?? null },
      });
    } catch (err) {
      e.exitCode = 126;
      this.settle(e.id, false);
      if ((err as Error).name === "SpecError") throw errors.containerInvalidSpec((err as Error).message);
      throw errors.execStartFailed((err as Error).message);
    }
    const sup = await this.deps.runner.supervisor().catch((err: Error) => {
      this.settle(e.id, false);
      throw err;
    });
    // Placeholder while starting: a second start is refused at once.
    e.running = true;
    let state: ExecState;
    try {
      state = await sup.exec(c.Id, { execId: e.id, process, terminal: tty, stdin: e.request.AttachStdin === true, leaveStdinOpen: tty });
    } catch (err) {
      e.running = false;
      this.settle(e.id, false);
      // as Docker's exec records it: 127 for a command not found (not a working directory's
      // absence, runc's chdir), 126 for any other failure to run it
      const message = (err as Error).message;
      e.exitCode = /executable file not found/.test(message) || (/no such file or directory/.test(message) && !/chdir/.test(message)) ? 127 : 126;
      throw execStartError(message);
    }
    e.pid = state.pid;
    this.event(e, `exec_start: ${e.request.Cmd[0]} ${e.request.Cmd.slice(1).join(" ")}`);
    const exit = sup.execWait(c.Id, e.id).catch((err: Error) => {
      this.deps.log.warn({ err, exec: e.id }, "lost track of an exec process");
      return 255;
    });
    e.started = { state, exit };
    this.settle(e.id, true);
    void exit.then((code) => {
      e.running = false;
      e.exitCode = code;
      this.event(e, "exec_die", { exitCode: String(code) });
    });
    return e.started;
  }

  /**
   * Resizes the exec's terminal. As Docker's daemon, one not started yet is waited for (a client
   * resizes right after its start, which may still be under way), at most 10 s: a 500 then, and
   * a 400 when it could not start.
   */
  async resize(e: ExecInstance, height: number, width: number): Promise<void> {
    if (!e.started) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), RESIZE_READY_MS)));
      const ok = await Promise.race([e.ready, late]).finally(() => clearTimeout(timer));
      if (ok === undefined) throw errors.execNotReady();
      if (!ok || !e.started) throw errors.execNotStarted();
    }
    if (!e.running) throw errors.containerStateNotRunning(e.container.Id);
    await (await this.deps.runner.supervisor()).execResize(e.container.Id, e.id, height, width).catch(() => {
      throw errors.containerStateNotRunning(e.container.Id);
    });
  }

  /** Its conmon's folder goes once nobody reads its output any more (the record stays). */
  async release(e: ExecInstance): Promise<void> {
    if (!e.started) return;
    await e.started.exit;
    await (await this.deps.runner.supervisor()).execRemove(e.container.Id, e.id).catch(() => {});
  }

  /**
   * The container's instances that have not exited (created or running), or null when none: its
   * inspect's `ExecIDs`, as Docker's container keeps them (an exited one is inspectable by its id
   * but no longer the container's).
   */
  idsOf(containerId: string): string[] | null {
    const ids = [...this.instances.values()].filter((e) => e.container.Id === containerId && e.exitCode === null).map((e) => e.id);
    return ids.length ? ids : null;
  }

  /** Forgets one instance (a health probe's, once its output is read). */
  drop(e: ExecInstance): void {
    this.instances.delete(e.id);
  }

  /** The container stopped or is gone: so are its exec instances. */
  forget(containerId: string): void {
    for (const [id, e] of this.instances) {
      if (e.container.Id !== containerId) continue;
      this.instances.delete(id);
      this.settle(id, false);
    }
  }

  /** Settles the instance's `ready` (once). */
  private settle(id: string, ok: boolean): void {
    this.readiness.get(id)?.(ok);
    this.readiness.delete(id);
  }

  private event(e: ExecInstance, action: string, extra: Record<string, string> = {}): void {
    this.deps.hooks.event.call(containerEvent(e.container, action, { execID: e.id, ...extra }));
  }
}
