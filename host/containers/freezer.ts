/**
 * Pause and unpause: the runtime's freezer cgroup, through the supervisor, and the record that
 * says so. The freezer is changed first and the record after it. After a crash the next start
 * reads the freezer (restore.ts, `frozenState`): a pause the record does not tell of is undone
 * (it was never answered), an unpause the record does not tell of is recorded, and a commit's
 * pause (`CommitPause`) is undone, its commit being gone.
 *
 * A container's pauses, unpauses and thaws run one after another, each checking the record as
 * the one before left it (Docker holds the container's lock over them): two unpauses at once
 * were both let through, and the second got the runtime's "container not paused" as a 500.
 */
import type { Logger } from "pino";
import type { ContainerRecord, ContainerStore } from "../../core/containers/container-store.js";
import { errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import { KeyedQueue } from "../../core/async/keyed-queue.js";
import { killPoint } from "../../core/kill-points.js";
import { SupervisorClientError, type SupervisorClient } from "../supervisor/client.js";
import { containerEvent } from "./container-events.js";

export interface FreezerDeps {
  containers: ContainerStore;
  hooks: EngineHooks;
  log: Logger;
  supervisor(): Promise<SupervisorClient>;
}

export class Freezer {
  private readonly queues = new KeyedQueue();

  constructor(private readonly deps: FreezerDeps) {}

  /** Freezes the container's processes; `forCommit`: a commit's pause, thawed at the next start should a crash cut the commit short. */
  pause(c: ContainerRecord, forCommit = false): Promise<void> {
    return this.queues.run(c.Id, () => this.pauseNow(c, forCommit));
  }

  unpause(c: ContainerRecord): Promise<void> {
    return this.queues.run(c.Id, () => this.unpauseNow(c));
  }

  /** Thaws a paused container on its way to a stop or kill (no unpause event, as Docker). */
  thaw(c: ContainerRecord): Promise<void> {
    return this.queues.run(c.Id, () => this.thawNow(c));
  }

  private async pauseNow(c: ContainerRecord, forCommit: boolean): Promise<void> {
    if (!c.State.Running) throw errors.containerStateNotRunning(c.Id);
    if (c.State.Paused) throw errors.containerAlreadyPaused(c.Id);
    if (c.State.Restarting) throw errors.containerRestarting(c.Id);
    await this.freeze(c, "pause");
    killPoint("pause.frozen");
    c.State = { ...c.State, Status: "paused", Paused: true };
    if (forCommit) c.CommitPause = true;
    await this.deps.containers.save(c);
    killPoint("pause.saved");
    this.deps.hooks.event.call(containerEvent(c, "pause"));
  }

  private async unpauseNow(c: ContainerRecord): Promise<void> {
    if (!c.State.Paused) throw errors.containerNotPaused(c.Id);
    await this.freeze(c, "resume");
    killPoint("unpause.thawed");
    c.State = { ...c.State, Status: "running", Paused: false };
    delete c.CommitPause;
    await this.deps.containers.save(c);
    killPoint("unpause.saved");
    this.deps.hooks.event.call(containerEvent(c, "unpause"));
  }

  private async thawNow(c: ContainerRecord): Promise<void> {
    await this.freeze(c, "resume").catch((err: Error) => this.deps.log.warn({ err, container: c.Id }, "cannot unpause the container"));
    c.State = { ...c.State, Status: c.State.Running ? "running" : c.State.Status, Paused: false };
    delete c.CommitPause;
    await this.deps.containers.save(c);
  }

  private async freeze(c: ContainerRecord, action: "pause" | "resume"): Promise<void> {
    const sup = await this.deps.supervisor();
    await sup.freeze(c.Id, action).catch((err: Error) => {
      if (err instanceof SupervisorClientError && (err.status === 409 || err.status === 404)) throw errors.containerStateNotRunning(c.Id);
      throw errors.containerPauseFailed(action === "pause" ? "pause" : "unpause", c.Id, err.message);
    });
  }
}
