/**
 * The containers of the daemon, as every caller sees them: the API's routes, and the parts
 * that run containers without HTTP (the image builder, health checks). Each operation checks
 * what Docker checks, does the work through the runner (runner.ts) or the create
 * (container-create.ts), and emits its events, in Docker's order:
 *
 *   create   create
 *   start    start                  (a failed start: no event, `failedContainerStart`)
 *   stop     kill, die, stop        (a stop of a container waiting for its restart: stop)
 *   restart  the stop's, start, restart
 *   kill     kill; die when the process goes
 *   pause    pause; unpause unpause; rename rename; update update
 *   remove   the stop's with force, destroy
 *   attach   attach
 *
 * The record is written here and by the runner (and, for its endpoints, by the container's
 * networks: host/network/container-networks.ts; for its legacy links, by links.ts); routes
 * only read it.
 *
 * Health checks are this service's too (health/container-health.ts): a container's probes run
 * from its start to its exit (and again after a daemon restart finds it running), each as an
 * exec through the supervisor (exec-sessions.ts); State.Health is recorded and `health_status`
 * emitted when the status moves.
 */
import type { ContainerCreateRequest } from "../../core/containers/container-config.js";
import type { ContainerRecord, ContainerStore } from "../../core/containers/container-store.js";
import { EngineError, errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import { makeEvent } from "../../core/events/event.js";
import { containerEvent } from "./container-events.js";
import { createContainer, type CreateDeps, type CreateOptions } from "./container-create.js";
import type { ExecSessions } from "./exec-sessions.js";
import { ContainerHealth } from "./health/container-health.js";
import { autoRestart, restoreContainers, shutdownContainers, type RestoreDeps } from "./restore.js";
import { applyUpdate, checkUpdate, type ContainerUpdateRequest } from "./resource-update.js";
import type { ContainerRunner } from "./runner.js";
import { makeWorkingDir } from "./working-dir.js";
import { rootOwner } from "../../core/userns/id-map.js";
import { containerIdMap } from "../userns/remap.js";
import type { HostReport } from "../host-facts.js";
import type { SpoolFollowReport } from "../supervisor/follow-client.js";
import type { Logger } from "pino";

export type WaitCondition = "not-running" | "next-exit" | "removed";

export interface StopOptions {
  /** Seconds before SIGKILL (else the container's StopTimeout, else 10; -1 never). */
  seconds?: number;
  /** Else the container's StopSignal, else SIGTERM. */
  signal?: string;
}

export interface ContainerServiceDeps extends CreateDeps {
  runner: ContainerRunner;
  hooks: EngineHooks;
  log: Logger;
  /** Exec instances: health probes run through them. */
  execs: ExecSessions;
  /** The host's cpus and memory nodes, which an update's cpuset must be within. */
  cpuset: HostReport["cpuset"];
  /** What the kernel can limit: an update's settings it cannot apply are dropped with Docker's warning. */
  limits: HostReport["limits"];
}

export class ContainerService {
  private readonly containers: ContainerStore;
  private readonly runner: ContainerRunner;
  private readonly restore: RestoreDeps;
  private readonly health: ContainerHealth;

  constructor(private readonly deps: ContainerServiceDeps) {
    this.containers = deps.containers;
    this.runner = deps.runner;
    this.restore = { containers: deps.containers, runner: deps.runner, log: deps.log };
    this.health = new ContainerHealth({ containers: deps.containers, hooks: deps.hooks, execs: deps.execs, log: deps.log.child({ part: "health" }) });
  }

  /** The container by id, name or id prefix; 404 when there is none. */
  get(ref: string): ContainerRecord {
    return this.containers.get(ref);
  }

  // --- daemon life ----------------------------------------------------------------------------

  /** At daemon start: the records reconciled with what runs (restore.ts); the checks of what runs go on. */
  async restoreAtStart(liveRestore: boolean): Promise<void> {
    await this.deps.links?.restore();
    await restoreContainers(this.restore, liveRestore);
    this.health.resume();
  }

  /** At daemon start, once every plugin has started: what the restart policies bring back. */
  autoRestart(): Promise<void> {
    return autoRestart(this.restore);
  }

  /** At daemon stop: no probe runs on; then the containers (restore.ts). */
  shutdown(liveRestore: boolean, timeoutSeconds: number): Promise<void> {
    this.health.stopAll();
    return shutdownContainers(this.restore, liveRestore, timeoutSeconds);
  }

  // --- records ----------------------------------------------------------------------------------

  /** A new container from a validated request; `name` as the client asked (else one is made up). */
  async create(body: ContainerCreateRequest, name?: string, options: CreateOptions = {}): Promise<{ record: ContainerRecord; warnings: string[] }> {
    const made = await createContainer(this.deps, body, name, options);
    const dir = made.record.Config.WorkingDir;
    if (dir && dir !== "/") {
      const idMap = containerIdMap(this.deps.remap, made.record.HostConfig);
      try {
        await this.runner.withRootfs(made.record, async (rootfs) => makeWorkingDir(rootfs, dir, idMap ? rootOwner(idMap) : undefined));
      } catch (err) {
        // no container, as Docker's create cleans up after a working directory it could not make
        await this.runner.remove(made.record, true, true).catch(() => undefined);
        throw err;
      }
    }
    this.event(made.record, "create");
    return made;
  }

  /** A new name; 409 when another container has it. */
  async rename(c: ContainerRecord, wanted: string): Promise<void> {
    if (wanted === "") throw errors.containerRenameEmpty();
    const name = wanted.startsWith("/") ? wanted : `/${wanted}`;
    if (name === c.Name) throw errors.containerRenameSame();
    const oldName = c.Name;
    c.Name = this.claimNewName(name, c.Id);
    await this.deps.network.renamed(c);
    // the container and the records of its links are written together
    await Promise.all([this.containers.save(c), this.deps.links?.renamed(c, oldName)]);
    this.event(c, "rename", { oldName });
  }

  /** The name claimed for a rename; a refusal says, as Docker's, that it came from allocating it (and names it with its slash). */
  private claimNewName(name: string, id: string): string {
    try {
      return this.containers.claimName(name, id);
    } catch (err) {
      if (!(err instanceof EngineError)) throw err;
      if (err.code === errors.containerInvalidName.code) throw errors.containerRenameInvalidName(name);
      const holder = this.containers.holderOf(name);
      if (err.code === errors.containerNameInUse.code && holder) throw errors.containerRenameNameInUse(name, holder);
      throw err;
    }
  }

  /** `DELETE /containers/{parent}/{alias}?link=1`: one legacy link removed (host/containers/links.ts). */
  async removeLink(ref: string): Promise<void> {
    if (!this.deps.links) throw errors.containerNotFound(ref);
    await this.deps.links.remove(ref);
  }

  /** Inspect's `HostConfig.Links`: the container's links as Docker shows them (`/db:/web/db`), or null. */
  /** Where the container's root filesystem is mounted while it runs. */
  rootfsPath(id: string): string {
    return this.runner.paths(id).rootfs;
  }

  inspectLinks(c: ContainerRecord): string[] | null {
    return this.deps.links?.inspectLinks(c) ?? null;
  }

  /** Its exec instances that have not exited (inspect's `ExecIDs`), or null. */
  execIds(c: ContainerRecord): string[] | null {
    return this.deps.execs.idsOf(c.Id);
  }

  /** By container id: the link names each is known by besides its own (the list's `Names`). */
  linkNames(): Map<string, string[]> {
    return this.deps.links?.linkNames() ?? new Map();
  }

  /** New limits and restart policy, in the record and on the running process; resolves with Docker's warnings. */
  async update(c: ContainerRecord, body: ContainerUpdateRequest): Promise<string[]> {
    const warnings = checkUpdate(body, this.deps.limits, this.deps.cpuset);
    await this.runner.update(c, applyUpdate(c.Id, c.HostConfig, body));
    return warnings;
  }

  /** Removes the container: a running one only with `force`; its anonymous volumes with `volumes`. */
  remove(c: ContainerRecord, opts: { force?: boolean; volumes?: boolean } = {}): Promise<void> {
    return this.runner.remove(c, opts.force === true, opts.volumes === true);
  }

  /** Removes every stopped container `pick` accepts; their ids and the bytes of their layers. */
  async prune(pick: (c: ContainerRecord) => boolean): Promise<{ deleted: string[]; reclaimed: number }> {
    const deleted: string[] = [];
    let reclaimed = 0;
    for (const c of this.containers.list()) {
      if (c.State.Running || !pick(c)) continue;
      const size = (await this.deps.storage.usage(c.Id).catch(() => ({ size: 0 }))).size;
      try {
        await this.runner.remove(c, false);
      } catch (err) {
        // started meanwhile: not stopped any more, so not pruned
        if (err instanceof EngineError && err.code === errors.containerRunning.code) continue;
        throw err;
      }
      reclaimed += size;
      deleted.push(c.Id);
    }
    // one event for the whole prune, as Docker's daemon logs it
    this.deps.hooks.event.call(makeEvent("container", "prune", "", { reclaimed: String(reclaimed) }));
    return { deleted, reclaimed };
  }

  // --- the process --------------------------------------------------------------------------------

  /** A user's start: false when it runs already (304). The restart policy counts from zero again. */
  async start(c: ContainerRecord): Promise<boolean> {
    if (c.State.Paused) throw errors.containerPausedStart();
    await this.runner.resetRestarts(c);
    return this.runner.start(c);
  }

  /** False when it was not running (304). */
  stop(c: ContainerRecord, opts: StopOptions = {}): Promise<boolean> {
    return this.runner.stop(c, opts);
  }

  /** Stopped (when it runs) and started again, as a user's start. */
  async restart(c: ContainerRecord, opts: StopOptions = {}): Promise<void> {
    await this.runner.stopToRestart(c, opts);
    await this.runner.resetRestarts(c);
    await this.runner.start(c);
    this.event(c, "restart");
  }

  /** Sends `signal`; `ref` is the container as the client named it (for the 409). */
  kill(c: ContainerRecord, ref: string, signal: string): Promise<void> {
    return this.runner.kill(c, ref, signal);
  }

  /** `forCommit`: a commit's pause, undone at the next start should a crash cut the commit short. */
  pause(c: ContainerRecord, ref: string, forCommit = false): Promise<void> {
    return this.runner.pause(c, ref, forCommit);
  }

  unpause(c: ContainerRecord, ref: string): Promise<void> {
    return this.runner.unpause(c, ref);
  }

  /** The exit code once `condition` holds; rejects when `signal` aborts. */
  async wait(c: ContainerRecord, condition: WaitCondition, signal?: AbortSignal): Promise<number> {
    if (condition === "not-running" && !c.State.Running) return c.State.ExitCode;
    if (condition === "removed") {
      if (!this.containers.has(c.Id)) return c.State.ExitCode;
      return this.runner.signals.nextRemoval(c.Id, signal);
    }
    return this.runner.signals.nextExit(c.Id, signal);
  }

  // --- streams ------------------------------------------------------------------------------------

  /** A client attached to the container's streams. */
  attached(c: ContainerRecord): void {
    this.event(c, "attach");
  }

  /** Settles when the container stops running (at once when it is not running). */
  stopped(c: ContainerRecord, signal?: AbortSignal): Promise<unknown> {
    return this.runner.stopped(c, signal);
  }

  /** Resolves once the container runs (at once when it does); rejects when `signal` aborts. */
  running(c: ContainerRecord, signal?: AbortSignal): Promise<void> {
    return this.runner.running(c, signal);
  }

  /** conmon's spool of the running container's output (attach follows it when the log driver cannot read). */
  spoolPath(c: ContainerRecord): Promise<string> {
    return this.runner.spoolPath(c);
  }

  /**
   * A follower of the container's spool, registered with the supervisor (spool-reader.ts);
   * undefined when the supervisor cannot register it (the follower then reads as it can).
   */
  async followSpool(c: ContainerRecord): Promise<SpoolFollowReport | undefined> {
    return this.runner.followSpool(c).catch((err: Error) => {
      this.deps.log.warn({ container: c.Id, err: err.message }, "the supervisor does not keep the spool for this follower: a late reader may miss lines");
      return undefined;
    });
  }

  /** Where input for the running container's stdin goes. */
  attachPath(c: ContainerRecord): Promise<string> {
    return this.runner.attachPath(c);
  }

  /**
   * Holds the running container's output until `signal` aborts (conmon waits; the container
   * blocks once its pipe is full): an attached client that does not read (output-hold.ts).
   * Resolves once the hold stands; rejects for a container that does not run.
   */
  async holdOutput(c: ContainerRecord, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    await (await this.runner.supervisor()).hold(c.Id, signal);
  }

  /** Resizes the running container's terminal. */
  resize(c: ContainerRecord, height: number, width: number): Promise<void> {
    return this.runner.resize(c, height, width);
  }

  private event(c: ContainerRecord, action: string, extra?: Record<string, string>): void {
    this.deps.hooks.event.call(containerEvent(c, action, extra));
  }
}
