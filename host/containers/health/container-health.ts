/**
 * The container service's health checks: which containers are watched and what their probes'
 * results do to their records. A container is watched from its `start` event (its health
 * begins at `starting`), stops being watched at `die`, `pause` and `destroy`, and is watched
 * again at `unpause` and when the daemon finds it running at start (`resume`: its kept health
 * goes on, so a status survives a daemon restart with --live-restore). Each result updates
 * State.Health in the record in memory (inspect shows every probe); the record is written, and
 * a `health_status: <status>` event emitted, when the status moves, as Docker persists health
 * only at such changes.
 */
import type { Logger } from "pino";
import type { ContainerRecord, ContainerStore } from "../../../core/containers/container-store.js";
import type { HealthState } from "../../../core/containers/healthcheck.js";
import type { EngineHooks } from "../../../core/hooks.js";
import { containerEvent } from "../container-events.js";
import type { ExecSessions } from "../exec-sessions.js";
import { HealthMonitor } from "./health-monitor.js";
import { execProbe } from "./probe-exec.js";

export interface ContainerHealthDeps {
  containers: ContainerStore;
  hooks: EngineHooks;
  execs: ExecSessions;
  log: Logger;
}

export class ContainerHealth {
  private readonly monitor: HealthMonitor;

  constructor(private readonly deps: ContainerHealthDeps) {
    this.monitor = new HealthMonitor({
      exec: (c, argv, output, signal) => execProbe(deps.execs, c, argv, output, signal),
      report: (c, health, changed) => this.report(c, health, changed),
      current: (id) => (deps.containers.has(id) ? deps.containers.get(id) : undefined),
      log: deps.log,
    });
    deps.hooks.event.tap("container health", (event) => {
      if (event.Type !== "container") return;
      const id = event.Actor.ID;
      switch (event.Action) {
        case "start":
          if (deps.containers.has(id)) this.monitor.start(deps.containers.get(id), true);
          break;
        case "unpause":
          if (deps.containers.has(id)) this.monitor.start(deps.containers.get(id), false);
          break;
        case "die":
        case "pause":
        case "destroy":
          this.monitor.stop(id);
          break;
      }
    });
  }

  /** At daemon start: the checks of the containers found running go on where they were. */
  resume(): void {
    for (const c of this.deps.containers.list()) {
      if (c.State.Running && !c.State.Paused) this.monitor.start(c, false);
    }
  }

  /** At daemon stop: no probe is left running. */
  stopAll(): void {
    this.monitor.stopAll();
  }

  private report(c: ContainerRecord, health: HealthState, changed: boolean): void {
    const first = !c.State.Health;
    c.State = { ...c.State, Health: health };
    if (!first && !changed) return;
    // no client waits for a probe's result: written in the background, a failure logged
    this.deps.containers.save(c).catch((err: Error) => this.deps.log.error({ err, container: c.Id }, "cannot record a health check's result"));
    if (changed) this.deps.hooks.event.call(containerEvent(c, `health_status: ${health.Status}`));
  }
}
