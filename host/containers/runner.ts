/**
 * Runs the daemon's containers through the supervisor (host/supervisor/README.md): start,
 * stop, kill, the handling of each exit, removal, and the reconciliation of the records on
 * disk with what is really running when engined (or the supervisor) starts again.
 *
 * Lifecycle of a container's run, as engined sees it:
 *   start: storage mounts the root filesystem at `<exec-root>/containers/<id>/rootfs` -> the
 *   runtime driver writes `<exec-root>/containers/<id>/bundle` -> the supervisor runs it ->
 *   the record says running.
 *   exit: the supervisor announces it once the output is all in the log driver -> the record
 *   says exited with the code -> the supervisor forgets it, the bundle goes, the root filesystem
 *   is unmounted -> waiters are told -> with AutoRemove, the container is removed.
 * Each container's steps run one after another (`serial`): an exit announced while its start is
 * still being recorded waits for the record.
 *
 * The supervisor is found (or started) on first use, not at daemon start: a daemon that never
 * runs a container never starts one. Its exits arrive on one event stream; when the stream
 * breaks, engined lists the supervisor's containers to catch up, so no exit is missed.
 */
import { EventEmitter } from "node:events";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { RuntimeDriver } from "../../core/contracts/runtime.js";
import type { StorageDriver } from "../../core/contracts/storage.js";
import { ZERO_TIME, type ContainerRecord, type ContainerStore } from "../../core/containers/container-store.js";
import { EngineError, errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import type { ImageStore } from "../../core/images/image-store.js";
import type { RuleHost } from "../../core/options/rules.js";
import type { DaemonConfig } from "../../core/options/table.js";
import type { ContainerNetworks } from "../network/container-networks.js";
import type { LogDriverSource } from "../plugins/log-drivers.js";
import { mountSpecs, unmountAll } from "../storage/mount-specs.js";
import { SupervisorClientError, type SupervisorClient } from "../supervisor/client.js";
import { ensureSupervisor, type SupervisorHandle } from "../supervisor/launch.js";
import { loggerContext, logSettings } from "./log-settings.js";
import { selectRuntime } from "./runtime-select.js";
import { containerEvent, signalNumber } from "./container-events.js";

export interface RunnerDeps {
  containers: ContainerStore;
  images: ImageStore;
  storage: StorageDriver;
  runtime: RuntimeDriver;
  logDrivers: LogDriverSource;
  hooks: EngineHooks;
  config: () => DaemonConfig;
  host: RuleHost;
  execRoot: string;
  log: Logger;
  network: ContainerNetworks;
}

export type WaitCondition = "not-running" | "next-exit" | "removed";


export class ContainerRunner {
  private handle?: Promise<SupervisorHandle>;
  private readonly events = new EventEmitter().setMaxListeners(0);
  private readonly queues = new Map<string, Promise<unknown>>();
  /** The supervisor's removals under way, by container id. */
  private readonly forgetting = new Map<string, Promise<void>>();
  private readonly following = new AbortController();
  private closed = false;

  constructor(private readonly deps: RunnerDeps) {}

  private paths(id: string) {
    const base = join(this.deps.execRoot, "containers", id);
    return { base, rootfs: join(base, "rootfs"), bundle: join(base, "bundle") };
  }

  /** Runs `fn` after every earlier step of the same container. */
  private serial<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const before = this.queues.get(id) ?? Promise.resolve();
    const next = before.catch(() => {}).then(fn);
    const tail = next.catch(() => {});
    this.queues.set(id, tail);
    void tail.then(() => {
      if (this.queues.get(id) === tail) this.queues.delete(id);
    });
    return next;
  }

  // --- the supervisor ------------------------------------------------------------------------

  /** The supervisor's client; found or started on first use, then followed for exits. */
  async supervisor(): Promise<SupervisorClient> {
    if (this.closed) throw errors.supervisorUnavailable("the daemon is shutting down");
    if (!this.handle) {
      this.handle = this.connect();
      this.handle.catch(() => (this.handle = undefined));
    }
    try {
      return (await this.handle).client;
    } catch (err) {
      throw errors.supervisorUnavailable((err as Error).message);
    }
  }

  /** `--supervisor`'s, or engined's own under the exec root (started when none answers). */
  private ensure(): Promise<SupervisorHandle> {
    const config = this.deps.config();
    return ensureSupervisor({ address: config.supervisor || undefined, execRoot: this.deps.execRoot, namespace: config["supervisor-namespace"] });
  }

  private async connect(): Promise<SupervisorHandle> {
    const handle = await this.ensure();
    this.deps.log.info({ pid: handle.pid, socket: handle.socket }, "supervisor connected");
    let opened!: () => void;
    const open = new Promise<void>((resolve) => (opened = resolve));
    const abandoned = new AbortController();
    void this.follow(handle, opened, abandoned.signal);
    // Its exits must be followed before anything runs there; a supervisor that answers pings
    // but serves no event stream is not one to run containers on.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the supervisor at ${handle.socket} serves no event stream`)), 10_000);
    });
    try {
      await Promise.race([open, late]);
    } catch (err) {
      abandoned.abort();
      await handle.client.close().catch(() => {});
      throw err;
    } finally {
      clearTimeout(timer);
    }
    return handle;
  }

  /** Takes every exit from the event stream; lists to catch up each time it (re)opens. */
  private async follow(handle: SupervisorHandle, opened: () => void, abandoned: AbortSignal): Promise<void> {
    for (let attempt = 0; !this.closed && !abandoned.aborted; attempt++) {
      try {
        await handle.client.events((e) => void this.exited(e.id, e.exitCode), this.following.signal, () => {
          attempt = 0;
          opened();
          void this.catchUp(handle.client);
        });
      } catch (err) {
        if (this.closed) return;
        this.deps.log.warn({ err }, "the supervisor's event stream broke");
      }
      if (this.closed || abandoned.aborted) return;
      // Gone (killed, restarted by hand): engined's own is started again; one started by hand must come back.
      await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** attempt, 5000)));
      if (this.closed) return;
      try {
        await handle.client.close().catch(() => {});
        const next = await this.ensure();
        handle.client = next.client;
        handle.pid = next.pid;
        this.deps.log.info({ pid: next.pid }, "supervisor reconnected");
      } catch (err) {
        this.deps.log.error({ err }, "the supervisor does not answer");
      }
    }
  }

  /** Exits the event stream did not bring (they happened while nobody listened). */
  private async catchUp(client: SupervisorClient): Promise<void> {
    try {
      const asked = Date.now();
      const states = await client.list();
      const known = new Set(states.map((s) => s.id));
      for (const s of states) {
        if (s.status === "exited") void this.exited(s.id, s.exitCode ?? 255);
        else if (!this.deps.containers.has(s.id)) void client.remove(s.id, true).catch(() => {}); // not ours any more
      }
      // A record that says running but the supervisor knows nothing of: it is gone, its code unknown.
      // (One started after the list was asked for is not in it, and not lost.)
      for (const c of this.deps.containers.list()) {
        if (c.State.Running && !known.has(c.Id) && Date.parse(c.State.StartedAt) < asked) {
          void this.exited(c.Id, 255, "the supervisor lost the container (its exit code is unknown)");
        }
      }
    } catch (err) {
      this.deps.log.warn({ err }, "cannot list the supervisor's containers");
    }
  }

  // --- start ---------------------------------------------------------------------------------

  /** Starts the container; false when it was running already (304). */
  start(c: ContainerRecord): Promise<boolean> {
    return this.serial(c.Id, async () => {
      if (c.State.Running) return false;
      const p = this.paths(c.Id);
      try {
        if (c.Config.Tty || c.Config.OpenStdin) throw errors.containerTtyUnsupported();
        const sup = await this.supervisor();
        const config = this.deps.config();
        const runtime = selectRuntime(config, c.HostConfig.Runtime, this.deps.host);
        const log = logSettings(c.HostConfig, config);
        // What an earlier run left behind: the supervisor's removal still under way (or failed),
        // a crash between its exit and its cleanup.
        if (c.State.StartedAt !== ZERO_TIME) await this.forget(c.Id).catch(() => {});
        if (existsSync(p.base)) await this.release(c.Id);
        await mountSpecs(await this.deps.storage.mounts(c.Id), p.rootfs);
        await this.deps.network.attach(c).catch((err: Error) => {
          throw err instanceof EngineError ? err : errors.networkSetupFailed(err.message);
        });
        await this.deps.runtime.writeBundle(
          {
            containerId: c.Id,
            // The record holds the command resolved at create; the image's is not applied twice.
            config: { ...c.Config, Entrypoint: [c.Path], Cmd: c.Args },
            hostConfig: c.HostConfig,
            imageConfig: this.imageConfig(c.Image),
            daemon: config,
            host: this.deps.host,
            rootfs: p.rootfs,
            bundleDir: p.bundle,
            runtime: { name: runtime.name, entry: config["add-runtime"]?.[runtime.name] },
          },
          (spec, ctx) => this.deps.hooks.processSpec.promise(spec, ctx),
        );
        const state = await sup.run({
          id: c.Id,
          bundle: p.bundle,
          runtime: { path: runtime.path, args: runtime.args },
          log: { driver: log.driver, context: loggerContext(c, this.deps.containers.dir(c.Id), log.options) },
          ...(this.deps.runtime.noPivot(config) ? { noPivot: true } : {}),
        });
        c.State = {
          ...c.State,
          Status: "running", Running: true, Paused: false, Restarting: false, OOMKilled: false, Dead: false,
          Pid: state.pid, ExitCode: 0, Error: "", StartedAt: state.startedAt,
        };
        this.deps.containers.save(c);
        this.deps.hooks.event.call(containerEvent(c, "start"));
        return true;
      } catch (err) {
        await this.release(c.Id).catch((e: Error) => this.deps.log.error({ err: e, container: c.Id }, "cleanup after a failed start failed"));
        const failure = startFailure(err as Error);
        c.State = { ...c.State, Error: failure.message, ExitCode: failure.exitCode ?? c.State.ExitCode };
        this.deps.containers.save(c);
        // As Docker does: an AutoRemove container that cannot start is removed (`docker run --rm`
        // waits for that after a failed start).
        if (c.HostConfig.AutoRemove) await this.destroy(c).catch((e: Error) => this.deps.log.error({ err: e, container: c.Id }, "removing after a failed start failed"));
        throw failure.error;
      }
    });
  }

  private imageConfig(imageId: string) {
    try {
      return this.deps.images.resolve(imageId).config.config ?? {};
    } catch {
      return {};
    }
  }

  /**
   * Unmounts the root filesystem, removes the bundle, and has the supervisor forget the
   * container (the runtime's delete). All safe to repeat. After an exit the forgetting is not
   * waited for (`wait: false`): the process is gone, and nothing but a new run of the same
   * container needs it done, which waits for it (`start`); a forgetting lost to a crash is
   * done by the next catch-up, which removes what the supervisor holds and no record names.
   */
  private async release(id: string, opts: { wait: boolean } = { wait: true }): Promise<void> {
    const p = this.paths(id);
    const forgetting = this.forget(id);
    // not after the forgetting: the process is gone (or never ran), and a lazy unmount of its
    // sandbox is safe even while the runtime's state still names it
    const unnetworked = this.deps.network.release(id);
    const unmounted = unmountAll(p.rootfs).then(() => rm(p.base, { recursive: true, force: true }));
    if (opts.wait) {
      const results = await Promise.allSettled([forgetting, unmounted, unnetworked]);
      for (const r of results) if (r.status === "rejected") throw r.reason;
    } else {
      const results = await Promise.allSettled([unmounted, unnetworked]);
      for (const r of results) if (r.status === "rejected") throw r.reason;
    }
  }

  /** The supervisor's `remove` of a container, once at a time; tracked so that a start of the same id waits for it. */
  private forget(id: string): Promise<void> {
    const before = this.forgetting.get(id);
    if (before) return before;
    const done = (async () => {
      if (!this.handle) return;
      const sup = await this.supervisor();
      await sup.remove(id, true).catch((err: Error) => {
        if (!(err instanceof SupervisorClientError && err.status === 404)) throw err;
      });
    })();
    const tracked = done.finally(() => this.forgetting.delete(id));
    tracked.catch((err: Error) => this.deps.log.error({ err, container: id }, "the supervisor could not forget a container"));
    this.forgetting.set(id, tracked);
    return tracked;
  }

  // --- exit ----------------------------------------------------------------------------------

  /** Records an exit (once), cleans up after it, tells the waiters, and removes an AutoRemove container. */
  private exited(id: string, exitCode: number, error = ""): Promise<void> {
    return this.serial(id, async () => {
      const c = this.deps.containers.find(id);
      if (!c) {
        await this.release(id).catch(() => {});
        return;
      }
      const wasRunning = c.State.Running;
      if (wasRunning) {
        c.State = { ...c.State, Status: "exited", Running: false, Pid: 0, ExitCode: exitCode, Error: error, FinishedAt: new Date().toISOString() };
        this.deps.containers.save(c);
        this.deps.hooks.event.call(containerEvent(c, "die", { exitCode: String(exitCode) }));
        // Waiters learn it now; whatever they do next (start, remove) queues behind the cleanup.
        this.events.emit(`exit:${id}`, exitCode);
      }
      await this.release(id, { wait: false }).catch((err: Error) => this.deps.log.error({ err, container: id }, "cleanup after exit failed"));
      if (wasRunning && c.HostConfig.AutoRemove) await this.destroy(c);
    }).catch((err: Error) => this.deps.log.error({ err, container: id }, "recording an exit failed"));
  }

  /** Resolves with the exit code at the container's next exit. */
  private nextExit(id: string, signal?: AbortSignal): Promise<number> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(code);
      };
      const onAbort = () => {
        this.events.off(`exit:${id}`, onExit);
        reject(signal!.reason);
      };
      this.events.once(`exit:${id}`, onExit);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Settles when the container stops running (at once when it is not running): for log followers. */
  stopped(c: ContainerRecord, signal?: AbortSignal): Promise<unknown> {
    return c.State.Running ? this.nextExit(c.Id, signal).catch(() => {}) : Promise.resolve();
  }

  // --- stop, kill, wait, remove ----------------------------------------------------------------

  /**
   * `signal` (else the container's StopSignal, else SIGTERM), then SIGKILL after `seconds` (else
   * its StopTimeout, else 10; -1 never). False when it was not running (304).
   */
  async stop(c: ContainerRecord, opts: { seconds?: number; signal?: string } = {}): Promise<boolean> {
    if (!c.State.Running) return false;
    const sup = await this.supervisor();
    const seconds = opts.seconds ?? c.Config.StopTimeout ?? 10;
    const signal = opts.signal ?? c.Config.StopSignal ?? "TERM";
    this.deps.hooks.event.call(containerEvent(c, "kill", { signal: signalNumber(signal) }));
    const code = await sup.stop(c.Id, seconds, signal).catch((err: Error) => {
      if (err instanceof SupervisorClientError && err.status === 404) return 255;
      throw err;
    });
    // The event stream brings the same exit; whichever comes first records it, and this
    // returns once it is recorded.
    await this.exited(c.Id, code);
    this.deps.hooks.event.call(containerEvent(c, "stop"));
    return true;
  }

  async kill(c: ContainerRecord, ref: string, signal: string): Promise<void> {
    if (!c.State.Running) throw errors.containerNotRunning("kill", ref, c.Id);
    const sup = await this.supervisor();
    await sup.kill(c.Id, signal).catch((err: Error) => {
      if (err instanceof SupervisorClientError && err.status === 409) throw errors.containerNotRunning("kill", ref, c.Id);
      throw err;
    });
    this.deps.hooks.event.call(containerEvent(c, "kill", { signal: signalNumber(signal) }));
  }

  /** The exit code once `condition` holds; the caller has the container's record. */
  async wait(c: ContainerRecord, condition: WaitCondition, signal?: AbortSignal): Promise<number> {
    if (condition === "not-running" && !c.State.Running) return c.State.ExitCode;
    if (condition === "removed") {
      if (!this.deps.containers.has(c.Id)) return c.State.ExitCode;
      return new Promise((resolve, reject) => {
        const onRemoved = (code: number) => resolve(code);
        this.events.once(`removed:${c.Id}`, onRemoved);
        signal?.addEventListener("abort", () => {
          this.events.off(`removed:${c.Id}`, onRemoved);
          reject(signal.reason);
        }, { once: true });
      });
    }
    return this.nextExit(c.Id, signal);
  }

  /** Removes the container; a running one only with `force` (killed first). */
  async remove(c: ContainerRecord, force: boolean): Promise<void> {
    if (c.State.Running) {
      if (!force) throw errors.containerRunning(c.Id);
      await this.stop(c, { seconds: 0, signal: "KILL" });
    }
    await this.serial(c.Id, () => this.destroy(c));
  }

  /** The container's layer and record go; waiters for `removed` are told. Safe to repeat. */
  private async destroy(c: ContainerRecord): Promise<void> {
    if (!this.deps.containers.has(c.Id)) return;
    await this.release(c.Id, { wait: false });
    await this.deps.storage.remove(c.Id);
    this.deps.containers.remove(c.Id);
    this.deps.hooks.event.call(containerEvent(c, "destroy"));
    this.events.emit(`removed:${c.Id}`, c.State.ExitCode);
  }

  // --- daemon life ---------------------------------------------------------------------------

  /**
   * At daemon start: when records say containers run, the supervisor is found and asked. With
   * live restore they go on (and their exits are taken as they come); without it they are
   * stopped, as a daemon that stopped without stopping them would have done.
   */
  async restore(liveRestore: boolean): Promise<void> {
    const running = this.deps.containers.list().filter((c) => c.State.Running);
    if (running.length === 0) return;
    let sup: SupervisorClient;
    try {
      sup = await this.supervisor();
    } catch (err) {
      this.deps.log.error({ err }, "cannot reach the supervisor to restore running containers");
      return;
    }
    const states = await sup.list();
    await Promise.all(running.map(async (c) => {
      const s = states.find((x) => x.id === c.Id);
      if (!s) return this.exited(c.Id, 255, "the supervisor lost the container (its exit code is unknown)");
      if (s.status === "exited") return this.exited(c.Id, s.exitCode ?? 255);
      if (!liveRestore) return this.stop(c, { seconds: 0, signal: "KILL" }).then(() => {});
      this.deps.log.info({ container: c.Id }, "container restored");
    }));
  }

  /** At daemon stop: without live restore, every running container is stopped within `timeoutSeconds`. */
  async shutdown(liveRestore: boolean, timeoutSeconds: number): Promise<void> {
    if (!this.handle) return (this.closed = true), undefined;
    if (!liveRestore) {
      const running = this.deps.containers.list().filter((c) => c.State.Running);
      await Promise.allSettled(running.map((c) => {
        const own = c.Config.StopTimeout ?? 10;
        const seconds = timeoutSeconds < 0 ? own : Math.min(own < 0 ? timeoutSeconds : own, timeoutSeconds);
        return this.stop(c, { seconds });
      }));
    }
    await Promise.allSettled([...this.forgetting.values()]);
    this.closed = true;
    this.following.abort();
    const handle = await this.handle.catch(() => undefined);
    if (!handle) return;
    await handle.client.close().catch(() => {});
    // engined's own supervisor goes with it unless containers live on; one started by hand stays.
    if (handle.own && !liveRestore) {
      try {
        process.kill(handle.pid, "SIGTERM");
      } catch {
        // gone already
      }
    }
  }
}

/** The API error for a start that failed, and the exit code Docker records for it. */
function startFailure(err: Error): { error: Error; message: string; exitCode?: number } {
  if (err instanceof EngineError) return { error: err, message: err.message };
  if (err.name === "SpecError") {
    const e = errors.containerInvalidSpec(err.message);
    return { error: e, message: e.message };
  }
  const text = err.message;
  if (/executable file not found|no such file or directory/i.test(text)) {
    const e = errors.containerCommandFailed(text);
    return { error: e, message: e.message, exitCode: 127 };
  }
  if (/permission denied/i.test(text)) {
    const e = errors.containerCommandFailed(text);
    return { error: e, message: e.message, exitCode: 126 };
  }
  const e = errors.containerStartFailed(text);
  return { error: e, message: e.message, exitCode: 128 };
}
