/**
 * The daemon's start and stop as its containers see them. At start, the records are reconciled
 * with what the supervisor really runs (`restoreContainers`), then the restart policies bring
 * back what they say (`autoRestart`). At stop, without live restore, every running container is
 * stopped within the shutdown timeout; with it, they go on under the supervisor, which stays.
 */
import type { Logger } from "pino";
import { readdirSync } from "node:fs";
import { dirname } from "node:path";
import { runningState, ZERO_TIME, type ContainerRecord, type ContainerStore } from "../../core/containers/container-store.js";
import { policyRestarts } from "../../core/containers/restart-policy.js";
import type { SupervisorClient } from "../supervisor/client.js";
import { frozenState } from "./cgroup-files.js";
import type { ContainerRunner } from "./runner.js";

export interface RestoreDeps {
  containers: ContainerStore;
  runner: ContainerRunner;
  log: Logger;
}

/**
 * At daemon start: the records are reconciled with what the supervisor really runs. With live
 * restore the running containers go on (and their exits are taken as they come); without it
 * they are stopped, as a daemon that stopped without stopping them would have done. Then what a
 * crash cut short is finished (docs/kill-points.md): starts under way are taken up or undone,
 * the run folders of containers that do not run are released, removals under way are finished,
 * and AutoRemove containers that do not run are removed, as Docker's daemon removes them.
 */
export async function restoreContainers(deps: RestoreDeps, liveRestore: boolean): Promise<void> {
  const { containers, runner, log } = deps;
  // A restart that was waiting when the daemon went is not waited for again: autoRestart decides.
  await Promise.all(containers.list().filter((x) => x.State.Restarting).map((c) => {
    c.State = { ...c.State, Status: "exited", Running: false, Restarting: false, Paused: false, Pid: 0 };
    return containers.save(c);
  }));
  const runFolders = runFoldersOf(runner);
  if (containers.list().some((c) => c.State.Running) || runFolders.length > 0 || runner.link.mayHoldContainers()) {
    await reconcile(deps, liveRestore).catch((err: Error) => log.error({ err }, "cannot reach the supervisor to restore running containers"));
  }
  for (const id of runFolders) {
    if (!containers.find(id)?.State.Running) await releaseLeftovers(deps, id).catch((err: Error) => log.warn({ err, container: id }, "cannot release what a run left"));
  }
  for (const [id, volumes] of containers.interruptedRemovals()) {
    const c = containers.find(id);
    if (c) await runner.remove(c, true, volumes).catch((err: Error) => log.error({ err, container: id }, "cannot finish a removal a crash cut short"));
  }
  for (const c of containers.list().filter((x) => x.HostConfig.AutoRemove && !x.State.Running)) {
    await runner.remove(c, false, true).catch((err: Error) => log.error({ err, container: c.Id }, "cannot remove an AutoRemove container that does not run"));
  }
}

/** The records against the supervisor's containers: starts under way first, then those that run. */
async function reconcile(deps: RestoreDeps, liveRestore: boolean): Promise<void> {
  const { containers, runner, log } = deps;
  // Starts a crash cut short are resolved before the supervisor's exits are followed: an exit
  // then finds the record of a container that runs (or the state before its start).
  const pending = containers.list().filter((c) => c.PendingStart);
  if (pending.length > 0) {
    const states = await runner.link.states();
    await Promise.all(pending.map((c) => {
      const s = states.find((x) => x.id === c.Id);
      const ran = s && s.startedAt !== c.PendingStart!.previous.StartedAt ? { pid: s.pid, startedAt: s.startedAt } : undefined;
      return resolvePendingStart(deps, c, ran);
    }));
  }
  const sup: SupervisorClient = await runner.supervisor();
  const states = await sup.list();
  await Promise.all(containers.list().filter((c) => c.State.Running).map(async (c) => {
    const s = states.find((x) => x.id === c.Id);
    if (!s) return runner.recordExit(c.Id, 255, "the supervisor lost the container (its exit code is unknown)");
    if (s.status === "exited") return runner.recordExit(c.Id, s.exitCode ?? 255, "", s.pid);
    // A commit's pause whose commit is gone, or a pause the record does not tell of (cut short
    // before its answer): thawed. An unpause the record does not tell of: recorded.
    const frozen = frozenState(s.pid);
    if (c.CommitPause || (frozen === true && !c.State.Paused)) await runner.freezer.thaw(c);
    else if (frozen === false && c.State.Paused) {
      c.State = { ...c.State, Status: "running", Paused: false };
      await containers.save(c);
    }
    if (!liveRestore) return runner.stop(c, { seconds: 0, signal: "KILL", byDaemon: true }).then(() => {});
    log.info({ container: c.Id }, "container restored");
  }));
}

/** Containers with a run folder (`<exec-root>/containers/<id>`): running, or left by a run a crash cut short. */
function runFoldersOf(runner: ContainerRunner): string[] {
  try {
    return readdirSync(dirname(runner.paths("-").base)).filter((n) => /^[a-f0-9]{64}$/.test(n));
  } catch {
    return [];
  }
}

/**
 * For a container that does not run: what a run a crash cut short left (its root filesystem's
 * mount, bundle, network sandbox and addresses, volume mounts, the supervisor's memory of it) goes.
 */
function releaseLeftovers({ containers, runner }: RestoreDeps, id: string): Promise<void> {
  return runner.serial(id, async () => {
    if (containers.find(id)?.State.Running) return;
    await runner.release(id);
  });
}

/**
 * A start a crash cut short (the record written as a start under way, `PendingStart`): taken
 * up when the supervisor ran it (`ran`: its pid and start time), else undone (the state before,
 * and what the start had made released).
 */
function resolvePendingStart({ containers, runner, log }: RestoreDeps, c: ContainerRecord, ran: { pid: number; startedAt: string } | undefined): Promise<void> {
  return runner.serial(c.Id, async () => {
    const previous = c.PendingStart?.previous;
    if (!previous) return;
    delete c.PendingStart;
    if (ran) {
      c.State = runningState(previous, ran.pid, ran.startedAt);
      log.info({ container: c.Id }, "a start the daemon's end cut short is taken up: the container runs");
    } else {
      // a restart policy's start cut short: not waited for again, as a restart that was waiting (autoRestart decides)
      c.State = previous.Restarting ? { ...previous, Status: "exited", Running: false, Restarting: false, Paused: false, Pid: 0 } : previous;
      await runner.release(c.Id);
      log.info({ container: c.Id }, "a start the daemon's end cut short never reached the supervisor: undone");
    }
    await containers.save(c);
  });
}

/**
 * At daemon start, after restore: every container that ran before and whose policy says so
 * is started again (always; unless-stopped when no user stopped it; on-failure after a
 * non-zero exit within its retries), as a user's start would (its count from zero).
 */
export async function autoRestart(deps: RestoreDeps): Promise<void> {
  const { containers, runner, log } = deps;
  const due = containers.list().filter((c) =>
    !c.State.Running && c.State.StartedAt !== ZERO_TIME &&
    policyRestarts(c.HostConfig.RestartPolicy, c.State.ExitCode, c.HasBeenManuallyStopped === true, c.RestartCount ?? 0));
  await Promise.all(due.map(async (c) => {
    await runner.resetRestarts(c);
    await runner.start(c).catch((err: Error) => log.error({ err, container: c.Id }, "starting a container by its restart policy failed"));
  }));
}

/** At daemon stop: without live restore, every running container is stopped within `timeoutSeconds`. */
export async function shutdownContainers(deps: RestoreDeps, liveRestore: boolean, timeoutSeconds: number): Promise<void> {
  const { containers, runner } = deps;
  // From now on the daemon's own stops are no user's, and no exit is restarted.
  runner.beginShutdown();
  if (!runner.link.used) return runner.link.close(liveRestore);
  if (!liveRestore) {
    const running = containers.list().filter((c) => c.State.Running);
    await Promise.allSettled(running.map((c) => {
      const own = c.Config.StopTimeout ?? 10;
      const seconds = timeoutSeconds < 0 ? own : Math.min(own < 0 ? timeoutSeconds : own, timeoutSeconds);
      return runner.stop(c, { seconds });
    }));
  }
  await runner.link.forgotten();
  runner.endRestarts();
  await runner.link.close(liveRestore);
}
