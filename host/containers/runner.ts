/**
 * Runs the daemon's containers through the supervisor (supervisor-link.ts): start, stop, kill,
 * the handling of each exit, pause and limits, removal. The daemon's start and stop are in
 * restore.ts; what a client asks for arrives through the ContainerService
 * (container-service.ts), which calls this.
 *
 * Lifecycle of a container's run, as engined sees it:
 *   start: storage mounts the root filesystem at `<exec-root>/containers/<id>/rootfs` -> the
 *   runtime driver writes `<exec-root>/containers/<id>/bundle` -> the supervisor runs it ->
 *   the record says running.
 *   exit: the supervisor announces it once the output is all in the log driver -> volumes of
 *   plugins are unmounted (a container with one) -> the record says exited with the code, `die`,
 *   waiters are told (run-signals.ts) -> the supervisor forgets it, the bundle goes, the root
 *   filesystem, network and other volumes are released -> with AutoRemove, the container is
 *   removed; with a restart policy that says so, it is "restarting" and started again after the
 *   back-off (restart-manager.ts).
 * Each container's steps run one after another (`serial`): an exit announced while its start is
 * still being recorded waits for the record.
 *
 * What a crash can cut short (docs/kill-points.md): a start writes its record as a start under
 * way before it asks the supervisor (`savePendingStart`), so that the next start of the daemon
 * takes the run up or undoes it (restore.ts); an exit is recorded before the supervisor forgets
 * it and the run's mounts go, and the next start releases what a run left; a removal is marked
 * before anything goes, and finished by the next start.
 */
import { existsSync } from "node:fs";
import { mkdir, rm, rmdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Logger } from "pino";
import type { OciSpec, RuntimeDriver } from "../../core/contracts/runtime.js";
import type { StorageDriver } from "../../core/contracts/storage.js";
import { runningState, ZERO_TIME, type ContainerRecord, type ContainerStore } from "../../core/containers/container-store.js";
import type { HostConfig } from "../../core/containers/container-config.js";
import { EngineError, errors } from "../../core/errors.js";
import { killPoint } from "../../core/kill-points.js";
import type { EngineHooks } from "../../core/hooks.js";
import type { ImageStore } from "../../core/images/image-store.js";
import { rootOwner } from "../../core/userns/id-map.js";
import type { RuleHost } from "../../core/options/rules.js";
import type { DaemonConfig } from "../../core/options/table.js";
import type { ContainerNetworks } from "../network/container-networks.js";
import type { ContainerVolumes } from "../volumes/container-volumes.js";
import type { LogDriverSource } from "../plugins/log-drivers.js";
import type { ContainerLinks } from "./links.js";
import { mountSpecs, unmountAll } from "../storage/mount-specs.js";
import { KeyedQueue } from "../../core/async/keyed-queue.js";
import { SupervisorClientError, type SupervisorClient } from "../supervisor/client.js";
import type { SpoolFollowReport } from "../supervisor/follow-client.js";
import { loggerContext, logSettings } from "./log-settings.js";
import { stdio } from "./conmon-stdio.js";
import { selectRuntime } from "./runtime-select.js";
import { containerEvent, signalNumber } from "./container-events.js";
import { Freezer } from "./freezer.js";
import { makeInitLayerEntries } from "./init-layer.js";
import { RestartManager } from "./restart-manager.js";
import { resourcesUpdate } from "./resource-update.js";
import { RunSignals } from "./run-signals.js";
import { startFailure } from "./start-failure.js";
import { SupervisorLink } from "./supervisor-link.js";
import { checkUsernsSettings, containerIdMap, shareWithRemappedRoot, type UsernsRemap } from "../userns/remap.js";

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
  /** Binds, volumes and tmpfs mounts: mounted before a start, released after an exit. */
  volumes?: ContainerVolumes;
  /** `--userns-remap`: containers run in a user namespace with its map unless they opt out. */
  remap?: UsernsRemap;
  /** Legacy links: checked before the network is made, their variables in the process's environment. */
  links?: ContainerLinks;
}

/** How long a SIGKILL's answer waits for the exit before the process is killed directly, as Docker's daemon does. */
const KILL_WAIT_MS = 10_000;
/** And how long after that direct kill. */
const KILL_DIRECT_WAIT_MS = 2_000;

export class ContainerRunner {
  /** Started, exited, removed: for those who wait on a container. */
  readonly signals = new RunSignals();
  /** The supervisor: found on first use, its exits followed. */
  readonly link: SupervisorLink;
  private readonly queues = new KeyedQueue();
  /** Restart policies at work: back-off, waiting restarts, a user's cancellation. */
  private readonly restarts = new RestartManager();
  /** The daemon stops: its own stops are no user's, and no exit is restarted. */
  private shuttingDown = false;
  /** Containers a user's restart is stopping: their exit does not remove them (AutoRemove). */
  private readonly keptThroughRestart = new Set<string>();

  /** Pause and unpause (restore.ts thaws through it too). */
  readonly freezer: Freezer;

  constructor(private readonly deps: RunnerDeps) {
    this.freezer = new Freezer({ containers: deps.containers, hooks: deps.hooks, log: deps.log, supervisor: () => this.supervisor() });
    this.link = new SupervisorLink({
      containers: deps.containers, config: deps.config, execRoot: deps.execRoot, log: deps.log,
      onExit: (id, exitCode, error, pid) => void this.recordExit(id, exitCode, error, pid),
    });
  }

  /** Where a container's run lives: its root filesystem mount and its OCI bundle. */
  paths(id: string) {
    const base = join(this.deps.execRoot, "containers", id);
    return { base, rootfs: join(base, "rootfs"), bundle: join(base, "bundle") };
  }

  /** Runs `fn` after every earlier step of the same container (restore.ts queues there too). */
  serial<T>(id: string, fn: () => Promise<T>): Promise<T> {
    return this.queues.run(id, fn);
  }

  /** The supervisor's client (exec runs through it too). */
  supervisor(): Promise<SupervisorClient> {
    return this.link.client();
  }

  /** The daemon stops (restore.ts): its stops from now are its own, and no exit is restarted. */
  beginShutdown(): void {
    this.shuttingDown = true;
  }

  /** No restart timer outlives the daemon. */
  endRestarts(): void {
    this.restarts.close();
  }

  // --- start ---------------------------------------------------------------------------------

  /**
   * Starts the container; false when it was running already (304). `byPolicy`: the restart
   * policy's start of a container that says it is restarting (running, for every check, as
   * Docker shows it until the new run begins).
   */
  start(c: ContainerRecord, opts: { byPolicy?: boolean } = {}): Promise<boolean> {
    return this.serial(c.Id, async () => {
      // removed while this waited its turn: there is nothing to start (and no record to save again)
      if (!this.deps.containers.has(c.Id)) throw errors.containerNotFound(c.Id);
      if (c.State.Running && !(opts.byPolicy === true && c.State.Restarting)) return false;
      const p = this.paths(c.Id);
      try {
        const sup = await this.supervisor();
        const config = this.deps.config();
        const runtime = selectRuntime(config, c.HostConfig.Runtime, this.deps.host);
        const log = logSettings(c.HostConfig, config);
        // What an earlier run left behind: the supervisor's removal still under way (or failed),
        // a crash between its exit and its cleanup.
        if (c.State.StartedAt !== ZERO_TIME) await this.link.forget(c.Id).catch(() => {});
        if (existsSync(p.base)) await this.release(c.Id);
        checkUsernsSettings(this.deps.remap, c.HostConfig);
        this.deps.links?.checkStart(c);
        const idMap = containerIdMap(this.deps.remap, c.HostConfig);
        if (this.deps.remap) await this.openRunDir(p.base, this.deps.remap);
        await mountSpecs(await this.deps.storage.mounts(c.Id), p.rootfs);
        killPoint("start.rootfs-mounted");
        // once: what a run removed of them stays removed (init-layer.ts)
        if (c.State.StartedAt === ZERO_TIME) makeInitLayerEntries(p.rootfs, idMap ? rootOwner(idMap) : undefined);
        // the network before the volumes, as Docker's start sets them up (its `network connect`
        // events come before its `volume mount` ones, and a network refused mounts nothing)
        await this.deps.network.attach(c).catch((err: Error) => {
          throw err instanceof EngineError ? err : errors.networkSetupFailed(err.message);
        });
        killPoint("start.network-attached");
        await this.deps.volumes?.mount(c, p.rootfs);
        killPoint("start.volumes-mounted");
        await this.deps.runtime.writeBundle(
          {
            containerId: c.Id,
            // The record holds the command resolved at create; the image's is not applied twice.
            config: c.Config,
            command: [c.Path, ...c.Args],
            hostConfig: c.HostConfig,
            imageConfig: this.imageConfig(c.Image),
            daemon: config,
            host: this.deps.host,
            rootfs: p.rootfs,
            bundleDir: p.bundle,
            runtime: { name: runtime.name, entry: config["add-runtime"]?.[runtime.name], path: runtime.path },
            ...(idMap ? { idMap } : {}),
            linkEnv: this.deps.links?.env(c) ?? [],
          },
          async (spec, ctx) => mountsInOrder(await this.deps.hooks.processSpec.promise(spec, ctx)),
        );
        killPoint("start.bundle-written");
        // on disk as a start under way until the supervisor's answer is: a crash in between is
        // resolved at the next start (restore.ts), never a container that runs listed as created
        await this.deps.containers.savePendingStart(c);
        killPoint("start.pending-saved");
        const state = await sup.run({
          id: c.Id,
          bundle: p.bundle,
          runtime: { path: runtime.path, args: runtime.args },
          log: { driver: log.driver, context: loggerContext(c, this.deps.containers.dir(c.Id), log.options) },
          ...(this.deps.runtime.noPivot(config) ? { noPivot: true } : {}),
          ...stdio(c),
        });
        killPoint("start.supervisor-ran");
        c.State = runningState(c.State, state.pid, state.startedAt);
        // the record changes and waiters are told in one tick (run-signals.ts); the start is
        // answered once the record is on disk
        const saved = this.deps.containers.save(c);
        this.deps.hooks.event.call(containerEvent(c, "start"));
        this.signals.started(c.Id);
        await saved;
        killPoint("start.saved");
        return true;
      } catch (err) {
        await this.release(c.Id).catch((e: Error) => this.deps.log.error({ err: e, container: c.Id }, "cleanup after a failed start failed"));
        const failure = startFailure(err as Error);
        // (a failure that names no exit code leaves none of 0: Docker's daemon records 128 then)
        c.State = { ...c.State, Error: failure.message, ExitCode: failure.exitCode ?? (c.State.ExitCode || 128) };
        await this.deps.containers.save(c);
        this.deps.hooks.failedContainerStart.call({ containerId: c.Id, message: failure.message });
        // As Docker does: an AutoRemove container that cannot start is removed (`docker run --rm`
        // waits for that after a failed start).
        if (c.HostConfig.AutoRemove) await this.destroy(c).catch((e: Error) => this.deps.log.error({ err: e, container: c.Id }, "removing after a failed start failed"));
        throw failure.error;
      }
    });
  }

  /**
   * Runs `fn` with the path of the container's root filesystem, in the container's queue, for
   * `docker cp` and export (host/containers/files). A running container's is its own mount, and
   * `running` is true: `fn` should only open what it needs and return (its descriptors keep the
   * mount usable), so an exit is not held up. A stopped container's layer is mounted for `fn`
   * and unmounted after it, and no start of the container runs in between.
   */
  withRootfs<T>(c: ContainerRecord, fn: (rootfs: string, running: boolean) => Promise<T>): Promise<T> {
    return this.serial(c.Id, async () => {
      // removed while this waited its turn (a `docker rm -f` next to a `docker cp`): its layer is gone
      if (!this.deps.containers.has(c.Id)) throw errors.containerNotFound(c.Id);
      const p = this.paths(c.Id);
      if (c.State.Running) return fn(p.rootfs, true);
      await mountSpecs(await this.deps.storage.mounts(c.Id), p.rootfs);
      try {
        // Docker's init layer is there from the create: a container that never ran shows it too
        const idMap = c.State.StartedAt === ZERO_TIME ? containerIdMap(this.deps.remap, c.HostConfig) : undefined;
        if (c.State.StartedAt === ZERO_TIME) makeInitLayerEntries(p.rootfs, idMap ? rootOwner(idMap) : undefined);
        return await fn(p.rootfs, false);
      } finally {
        // rmdir, never a recursive rm: should the unmount have failed, the layer stays whole
        await unmountAll(p.rootfs);
        await rmdir(p.rootfs).then(() => rmdir(p.base)).catch(() => {});
      }
    });
  }

  /** The remapped root passes through `<exec-root>/containers/<id>` to its root filesystem. */
  private async openRunDir(base: string, remap: UsernsRemap): Promise<void> {
    await mkdir(base, { recursive: true, mode: 0o710 });
    shareWithRemappedRoot(remap, dirname(base));
    shareWithRemappedRoot(remap, base);
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
  async release(id: string, opts: { wait: boolean } = { wait: true }): Promise<void> {
    const p = this.paths(id);
    const forgetting = this.link.forget(id);
    // not after the forgetting: the process is gone (or never ran), and a lazy unmount of its
    // sandbox is safe even while the runtime's state still names it
    const unnetworked = this.deps.network.release(id);
    const unvolumed = this.deps.volumes?.unmount(id);
    // (a shareable container's /dev/shm too: host/containers/shared-namespaces.ts)
    const unmounted = unmountAll(p.rootfs).then(() => unmountAll(join(p.base, "shm"))).then(() => rm(p.base, { recursive: true, force: true }));
    if (opts.wait) {
      const results = await Promise.allSettled([forgetting, unmounted, unnetworked, unvolumed]);
      for (const r of results) if (r.status === "rejected") throw r.reason;
    } else {
      const results = await Promise.allSettled([unmounted, unnetworked, unvolumed]);
      for (const r of results) if (r.status === "rejected") throw r.reason;
    }
  }

  // --- exit ----------------------------------------------------------------------------------

  /**
   * Records an exit (once), cleans up after it, tells the waiters, and removes an AutoRemove
   * container. `pid`, when known, is the process that exited: the supervisor may announce a run's
   * exit after a stop recorded it and a restart started the next run, which that news must not end.
   */
  recordExit(id: string, exitCode: number, error = "", pid?: number): Promise<void> {
    return this.serial(id, async () => {
      const c = this.deps.containers.find(id);
      if (!c) {
        await this.release(id).catch(() => {});
        return;
      }
      if (pid !== undefined && pid > 0 && c.State.Pid > 0 && c.State.Pid !== pid) return;
      // A container waiting for its policy's restart has no process: news of its last run is old.
      const wasRunning = c.State.Running && !c.State.Restarting;
      let restartIn: number | undefined;
      let saved: Promise<void> | undefined;
      if (wasRunning) {
        const finishedAt = new Date().toISOString();
        // (a run the supervisor lost has nothing to say about it)
        const OOMKilled = exitCode !== 0 && !error && (await this.oomKilled(id));
        // Docker 28 cleans up after a run, its volumes' unmounts among it, before it records the
        // exit and logs `die` (dockerd 20.10 did it after): a client told of the exit finds a
        // volume plugin's Unmount made. So here for a container with a plugin's volume; one with
        // local volumes alone has them released after, with the rest (release), so that its run
        // is not made longer for an unmount no client sees.
        if (this.deps.volumes?.usesPlugins(id)) {
          await this.deps.volumes.unmount(id).catch((err: Error) => this.deps.log.error({ err, container: id }, "cannot unmount a container's volumes after its exit"));
        }
        restartIn = this.shuttingDown ? undefined : this.restarts.decide(c, exitCode, c.HasBeenManuallyStopped === true);
        if (restartIn === undefined) {
          c.State = { ...c.State, Status: "exited", Running: false, Paused: false, Restarting: false, OOMKilled, Pid: 0, ExitCode: exitCode, Error: error, FinishedAt: finishedAt };
        } else {
          // As Docker shows it: still "running" for every check, restarting, the last code kept.
          c.RestartCount = (c.RestartCount ?? 0) + 1;
          c.State = { ...c.State, Status: "restarting", Running: true, Paused: false, Restarting: true, OOMKilled, Pid: 0, ExitCode: exitCode, Error: error, FinishedAt: finishedAt };
        }
        saved = this.deps.containers.save(c);
        // Docker's daemon announces the OOM killer's act (`oom`) before the exit it causes
        if (OOMKilled) this.deps.hooks.event.call(containerEvent(c, "oom"));
        this.deps.hooks.event.call(containerEvent(c, "die", { exitCode: String(exitCode) }));
        // Waiters learn it now; whatever they do next (start, remove) queues behind the cleanup.
        this.signals.exited(id, exitCode);
      }
      // The restart is scheduled before the cleanup's await, not after: a user's stop meanwhile
      // finds it and cancels it (and waits for that), where it would otherwise return while the
      // container still says restarting. The restart itself queues behind the cleanup.
      if (restartIn !== undefined) this.restarts.schedule(id, restartIn, () => this.restartByPolicy(c));
      // The supervisor forgets the exit (release) only once the record that keeps it is on disk.
      await saved?.catch((err: Error) => this.deps.log.error({ err, container: id }, "cannot record an exit"));
      if (saved) killPoint("exit.saved");
      await this.release(id, { wait: false }).catch((err: Error) => this.deps.log.error({ err, container: id }, "cleanup after exit failed"));
      if (saved) killPoint("exit.released");
      if (restartIn === undefined && wasRunning && c.HostConfig.AutoRemove && !this.keptThroughRestart.has(id)) await this.destroy(c);
    }).catch((err: Error) => this.deps.log.error({ err, container: id }, "recording an exit failed"));
  }

  /**
   * Whether the kernel's OOM killer acted in the container's cgroup during the run that ended
   * (conmon notes it; the supervisor says so until it forgets the container). Docker's
   * `State.OOMKilled`, which the next start clears.
   */
  private async oomKilled(id: string): Promise<boolean> {
    // bounded: an exit is recorded whatever becomes of the question
    const asked = this.supervisor().then((sup) => sup.get(id)).catch(() => undefined);
    let cancel = () => {};
    const late = new Promise<undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), 2000);
      timer.unref();
      cancel = () => clearTimeout(timer);
    });
    const state = await Promise.race([asked, late]).finally(() => cancel());
    return state?.oomKilled === true;
  }

  /** Resolves once the container runs (at once when it does); rejects when `signal` aborts. */
  running(c: ContainerRecord, signal?: AbortSignal): Promise<void> {
    return c.State.Running ? Promise.resolve() : this.signals.nextStart(c.Id, signal);
  }

  /** Where input for the running container's stdin goes: conmon's attach socket. */
  async attachPath(c: ContainerRecord): Promise<string> {
    const state = await (await this.supervisor()).get(c.Id);
    if (!state.attachPath) throw errors.containerNotRunning("attach", c.Id, c.Id);
    return state.attachPath;
  }

  /** conmon's spool of the running container's output (attach follows it when the log driver cannot read). */
  async spoolPath(c: ContainerRecord): Promise<string> {
    const state = await (await this.supervisor()).get(c.Id);
    if (!state.logPath) throw errors.containerNotRunning("attach", c.Id, c.Id);
    return state.logPath;
  }

  /**
   * Registers a follower of the container's spool with the supervisor, for this run or, when
   * it does not run, the next: its files are kept until the follower has read them.
   */
  async followSpool(c: ContainerRecord): Promise<SpoolFollowReport> {
    return (await this.supervisor()).follow(c.Id);
  }

  /** Resizes the running container's terminal. */
  async resize(c: ContainerRecord, height: number, width: number): Promise<void> {
    // Docker's words here have no "Cannot resize container" before them
    if (!c.State.Running) throw errors.containerStateNotRunning(c.Id);
    await (await this.supervisor()).resize(c.Id, height, width).catch((err: Error) => {
      if (err instanceof SupervisorClientError && (err.status === 409 || err.status === 404)) throw errors.containerStateNotRunning(c.Id);
      throw err;
    });
  }

  /** Settles when the container stops running (at once when it is not running): for log followers. */
  stopped(c: ContainerRecord, signal?: AbortSignal): Promise<unknown> {
    return c.State.Running ? this.signals.nextExit(c.Id, signal).catch(() => {}) : Promise.resolve();
  }

  // --- stop, kill, wait, remove ----------------------------------------------------------------

  /**
   * `stop` for a user's restart: the exit it causes does not remove an AutoRemove container,
   * which is started again next, as Docker's restart keeps it (the exit is recorded before
   * `stop` returns, so the mark is seen).
   */
  async stopToRestart(c: ContainerRecord, opts: { seconds?: number; signal?: string } = {}): Promise<boolean> {
    this.keptThroughRestart.add(c.Id);
    try {
      return await this.stop(c, opts);
    } finally {
      this.keptThroughRestart.delete(c.Id);
    }
  }

  /**
   * `signal` (else the container's StopSignal, else SIGTERM), then SIGKILL after `seconds` (else
   * its StopTimeout, else 10; -1 never). False when it was not running (304).
   */
  /** `announce: false`: no `stop` event (a forced removal kills, as Docker's daemon.Kill, and says only that). */
  async stop(c: ContainerRecord, opts: { seconds?: number; signal?: string; byDaemon?: boolean; announce?: boolean } = {}): Promise<boolean> {
    if (!c.State.Running && !c.State.Restarting) return false;
    const seconds = opts.seconds ?? c.Config.StopTimeout ?? 10;
    const signal = opts.signal ?? c.Config.StopSignal ?? "TERM";
    // A stop ends the restart policy's work (until a user starts it again); a restart that
    // waits gives up, one under way finishes first and is stopped here.
    await Promise.all([this.noteStop(c, opts.byDaemon === true), this.restarts.cancel(c.Id)]);
    if (!c.State.Running) {
      if (opts.announce !== false) this.deps.hooks.event.call(containerEvent(c, "stop"));
      return true;
    }
    const sup = await this.supervisor();
    const pid = c.State.Pid;
    // A frozen process takes no signal: it is thawed first (Docker resumes it with the signal).
    if (c.State.Paused) await this.freezer.thaw(c);
    this.deps.hooks.event.call(containerEvent(c, "kill", { signal: signalNumber(signal) }));
    // The supervisor sends SIGKILL once the time is up; Docker's daemon announces that kill too.
    // It is announced here at the same moment, unless the run has ended by then.
    const lateKill = seconds >= 0 && signalNumber(signal) !== "9" ? setTimeout(() => {
      const now = this.deps.containers.find(c.Id)?.State;
      if (now?.Running && now.Pid === pid) this.deps.hooks.event.call(containerEvent(c, "kill", { signal: "9" }));
    }, seconds * 1000) : undefined;
    lateKill?.unref();
    const code = await sup.stop(c.Id, seconds, signal).catch((err: Error) => {
      if (err instanceof SupervisorClientError && err.status === 404) return 255;
      throw err;
    }).finally(() => clearTimeout(lateKill));
    killPoint("stop.signalled");
    // The event stream brings the same exit; whichever comes first records it, and this
    // returns once it is recorded.
    await this.recordExit(c.Id, code, "", pid);
    if (opts.announce !== false) this.deps.hooks.event.call(containerEvent(c, "stop"));
    return true;
  }

  async kill(c: ContainerRecord, ref: string, signal: string): Promise<void> {
    if (!c.State.Running && !c.State.Restarting) throw errors.containerNotRunning("kill", ref, c.Id);
    // Docker's rule: the stop signal (any signal when the container names none, and KILL)
    // ends the restart policy's work; a user's kill counts as a stop for unless-stopped.
    const stopSignal = c.Config.StopSignal ? signalNumber(c.Config.StopSignal) : undefined;
    const endsRestarts = !stopSignal || signalNumber(signal) === "9" || signalNumber(signal) === stopSignal;
    await Promise.all([this.noteStop(c, false), endsRestarts ? this.restarts.cancel(c.Id) : undefined]);
    // Waiting for a restart: there is no process, and no restart now.
    if (!c.State.Running || c.State.Restarting) return;
    const sup = await this.supervisor();
    await sup.kill(c.Id, signal).catch((err: Error) => {
      if (err instanceof SupervisorClientError && err.status === 409) throw errors.containerNotRunning("kill", ref, c.Id);
      throw err;
    });
    if (endsRestarts && c.State.Paused) await this.freezer.thaw(c);
    this.deps.hooks.event.call(containerEvent(c, "kill", { signal: signalNumber(signal) }));
    // As Docker's daemon: a SIGKILL is answered once the container has stopped (so that a
    // `docker rm` right after it finds it stopped); any other signal at once.
    if (signalNumber(signal) === "9") await this.killed(c);
  }

  /**
   * Resolves once a SIGKILLed container's exit is recorded. Docker's daemon waits 10 s, then
   * kills the process directly and waits 2 s more, then gives up with a 500; so does this.
   */
  private async killed(c: ContainerRecord): Promise<void> {
    // The exit is recorded and announced in one step (recordExit): read, then wait, in one tick.
    if (!c.State.Running || c.State.Restarting) return;
    const exited = await this.signals.nextExit(c.Id, AbortSignal.timeout(KILL_WAIT_MS)).then(() => true, () => false);
    if (exited || !c.State.Running || c.State.Restarting) return;
    this.deps.log.error({ container: c.Id, pid: c.State.Pid }, "the container did not exit within 10 seconds of its SIGKILL: killing its process directly");
    try {
      if (c.State.Pid > 0) process.kill(c.State.Pid, "SIGKILL");
    } catch {
      // gone already: its exit is on its way
    }
    if (!c.State.Running || c.State.Restarting) return;
    const late = await this.signals.nextExit(c.Id, AbortSignal.timeout(KILL_DIRECT_WAIT_MS)).then(() => true, () => false);
    if (!late && c.State.Running && !c.State.Restarting) throw errors.containerKillNoExit();
  }

  /** A user's stop or kill is remembered (unless-stopped reads it); the daemon's own are not. */
  private async noteStop(c: ContainerRecord, byDaemon: boolean): Promise<void> {
    if (byDaemon || this.shuttingDown || c.HasBeenManuallyStopped) return;
    c.HasBeenManuallyStopped = true;
    await this.deps.containers.save(c);
    killPoint("stop.noted");
  }

  // --- restart policies --------------------------------------------------------------------------

  /**
   * A user's start (or restart): the policy counts from zero again and applies even after a
   * stop by hand, as Docker's start resets its restart manager.
   */
  async resetRestarts(c: ContainerRecord): Promise<void> {
    if (c.State.Running || c.State.Restarting) return; // a start of what runs changes nothing (304)
    this.restarts.reset(c.Id);
    if ((c.RestartCount ?? 0) === 0 && !c.HasBeenManuallyStopped) return;
    c.RestartCount = 0;
    c.HasBeenManuallyStopped = false;
    await this.deps.containers.save(c);
  }

  /** The policy's restart, once its delay is over: given up when cancelled meanwhile. */
  private async restartByPolicy(c: ContainerRecord): Promise<void> {
    const go = await this.serial(c.Id, async () => {
      if (!this.deps.containers.has(c.Id) || !c.State.Restarting) return false;
      if (this.restarts.isCancelled(c.Id) || this.link.closed) {
        c.State = { ...c.State, Status: "exited", Running: false, Restarting: false };
        await this.deps.containers.save(c);
        return false;
      }
      return true;
    });
    if (!go) return;
    try {
      await this.start(c, { byPolicy: true });
    } catch (err) {
      // As Docker: a restart that fails leaves the container stopped, and the policy is done.
      c.State = { ...c.State, Status: "exited", Running: false, Restarting: false };
      this.deps.log.error({ err, container: c.Id }, "the restart policy's restart failed");
      if (this.deps.containers.has(c.Id)) await this.deps.containers.save(c).catch((e: Error) => this.deps.log.error({ err: e, container: c.Id }, "cannot record a failed restart"));
    }
  }

  // --- pause, unpause, update ----------------------------------------------------------------------

  /** Freezes the container's processes (the runtime's freezer cgroup: freezer.ts). */
  pause(c: ContainerRecord, _ref: string, forCommit = false): Promise<void> {
    return this.freezer.pause(c, forCommit);
  }

  unpause(c: ContainerRecord, _ref: string): Promise<void> {
    return this.freezer.unpause(c);
  }

  /**
   * New limits (and restart policy), kept in the record and applied to the running process;
   * the record keeps its old ones when the runtime refuses them.
   */
  async update(c: ContainerRecord, next: HostConfig): Promise<void> {
    // in the container's queue: two updates at once would share the runtime's resources file
    await this.serial(c.Id, async () => {
      const before = c.HostConfig;
      c.HostConfig = next;
      await this.deps.containers.save(c);
      if (!c.State.Running || c.State.Restarting) return;
      try {
        await (await this.supervisor()).update(c.Id, resourcesUpdate(next));
      } catch (err) {
        // exited since its state was read (its exit not recorded yet): the limits are kept for
        // its next start, as for any stopped container
        if (err instanceof SupervisorClientError && (err.status === 409 || err.status === 404)) return;
        c.HostConfig = before;
        await this.deps.containers.save(c);
        throw errors.containerUpdateRuntimeFailed(c.Id, (err as Error).message);
      }
    });
    this.deps.hooks.event.call(containerEvent(c, "update"));
  }

  /** Removes the container; a running one only with `force` (killed first); its anonymous volumes too with `volumes` (`rm -v`). */
  async remove(c: ContainerRecord, force: boolean, volumes = false): Promise<void> {
    const state = () => (c.State.Paused ? "paused" : c.State.Restarting ? "restarting" : "running");
    if (!force && (c.State.Running || c.State.Restarting)) throw errors.containerRunning(c.Name, state());
    for (let attempt = 1; ; attempt++) {
      if (c.State.Running) {
        if (attempt > 3) throw errors.containerRunning(c.Name, state());
        await this.stop(c, { seconds: 0, signal: "KILL", announce: false }).catch((err: Error) => {
          // its exit came by the event stream meanwhile: only the wait for it failed, and
          // what the removal needs, a container that has stopped, is there
          if (c.State.Running && !c.State.Restarting) throw err;
        });
      }
      // A start queued before the removal may have run meanwhile: the layer of a running
      // container is not removed from under it (a forced removal stops it again).
      const removed = await this.serial(c.Id, async () => {
        if (c.State.Running) return false;
        await this.destroy(c, volumes);
        return true;
      });
      if (removed) return;
    }
  }

  /**
   * The container's layer and record go (and its anonymous volumes with `volumes` or
   * AutoRemove, as Docker's `--rm` does); waiters for `removed` are told. Safe to repeat.
   */
  private async destroy(c: ContainerRecord, volumes = false): Promise<void> {
    if (!this.deps.containers.has(c.Id)) return;
    this.deps.containers.removalStarts(c.Id);
    const withVolumes = volumes || c.HostConfig.AutoRemove === true;
    try {
      // on disk before anything goes: a removal a crash cuts short is finished at the next start
      await this.deps.containers.markRemoval(c.Id, withVolumes);
      killPoint("remove.marked");
      await this.release(c.Id, { wait: false });
      killPoint("remove.released");
      await this.deps.storage.remove(c.Id);
      killPoint("remove.layer-removed");
    } catch (err) {
      await this.deps.containers.unmarkRemoval(c.Id).catch(() => undefined);
      this.deps.containers.removalFailed(c.Id);
      throw err;
    }
    await this.deps.containers.remove(c.Id);
    killPoint("remove.recorded");
    // the layers of an image removed from under it were kept for it (and perhaps only for it)
    if (this.deps.images.isRetained(c.Image)) await this.deps.images.pruneUnused().catch((err: Error) => this.deps.log.error({ err, container: c.Id }, "cannot free the layers of a removed image"));
    this.restarts.forget(c.Id);
    await this.deps.volumes?.removed(c, withVolumes);
    // announced once all is gone, its volumes too, as Docker's cleanupContainer does last: a client
    // that stops waiting at this event (the Docker CLI's own --rm before API 1.25) has its removal's answer next
    this.deps.hooks.event.call(containerEvent(c, "destroy"));
    this.signals.removed(c.Id, c.State.ExitCode);
  }
}

/**
 * The spec's mounts parents first, whichever tap added them (the network's files, volumes, CDI
 * devices): a stable sort by depth, as Docker sorts its mounts, so that a volume at /etc goes
 * under the network's /etc/hosts, not over it.
 */
function mountsInOrder(spec: OciSpec): OciSpec {
  const depth = (p: string) => p.split("/").filter(Boolean).length;
  return spec.mounts ? { ...spec, mounts: [...spec.mounts].sort((a, b) => depth(a.destination) - depth(b.destination)) } : spec;
}
