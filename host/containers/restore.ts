/**
 * The daemon's start and stop as its containers see them. At start, the records are reconciled
 * with what the supervisor really runs (`restoreContainers`), then the restart policies bring
 * back what they say (`autoRestart`). At stop, without live restore, every running container is
 * stopped within the shutdown timeout; with it, they go on under the supervisor, which stays.
 */
import type { Logger } from "pino";
import { ZERO_TIME, type ContainerStore } from "../../core/containers/container-store.js";
import { policyRestarts } from "../../core/containers/restart-policy.js";
import type { SupervisorClient } from "../supervisor/client.js";
import type { ContainerRunner } from "./runner.js";

export interface RestoreDeps {
  containers: ContainerStore;
  runner: ContainerRunner;
  log: Logger;
}

/**
 * At daemon start: when records say containers run, the supervisor is found and asked. With
 * live restore they go on (and their exits are taken as they come); without it they are
 * stopped, as a daemon that stopped without stopping them would have done.
 */
export async function restoreContainers(deps: RestoreDeps, liveRestore: boolean): Promise<void> {
  const { containers, runner, log } = deps;
  // A restart that was waiting when the daemon went is not waited for again: autoRestart decides.
  await Promise.all(containers.list().filter((x) => x.State.Restarting).map((c) => {
    c.State = { ...c.State, Status: "exited", Running: false, Restarting: false, Paused: false, Pid: 0 };
    return containers.save(c);
  }));
  const running = containers.list().filter((c) => c.State.Running);
  if (running.length === 0) return;
  let sup: SupervisorClient;
  try {
    sup = await runner.supervisor();
  } catch (err) {
    log.error({ err }, "cannot reach the supervisor to restore running containers");
    return;
  }
  const states = await sup.list();
  await Promise.all(running.map(async (c) => {
    const s = states.find((x) => x.id === c.Id);
    if (!s) return runner.recordExit(c.Id, 255, "the supervisor lost the container (its exit code is unknown)");
    if (s.status === "exited") return runner.recordExit(c.Id, s.exitCode ?? 255);
    if (!liveRestore) return runner.stop(c, { seconds: 0, signal: "KILL", byDaemon: true }).then(() => {});
    log.info({ container: c.Id }, "container restored");
  }));
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
