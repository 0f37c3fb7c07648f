/**
 * Runs each running container's health check on its schedule (core/containers/healthcheck.ts
 * has the rules): one monitor per container at most, started when the container starts (or is
 * found running after a daemon restart) and stopped when it stops, pauses or is removed. A
 * probe is an exec in the container, given by the caller (the container service runs it
 * through the exec path, as Docker runs `exec_create`/`exec_start` for it); a probe past its
 * timeout is killed and counts as a failure with Docker's message; a probe that could not run
 * at all counts as a failure with its error as output.
 *
 * Nothing here writes the record or emits events: `report` does, once per probe, with whether
 * the status moved (a `health_status: <status>` event is due then).
 */
import type { Logger } from "pino";
import type { ContainerRecord } from "../../../core/containers/container-store.js";
import {
  applyHealthResult,
  goDuration,
  HEALTH_DEFAULTS,
  nextProbeDelay,
  ProbeOutput,
  probeCommand,
  startingHealth,
  type HealthConfig,
  type HealthResult,
  type HealthState,
} from "../../../core/containers/healthcheck.js";

export interface HealthMonitorDeps {
  /**
   * Runs `argv` in the running container as a probe (no stdin, no terminal, the container's
   * user and working directory), its stdout and stderr into `output`; resolves with its exit
   * code. When `signal` aborts, the probe is killed and the promise still settles.
   */
  exec(c: ContainerRecord, argv: string[], output: ProbeOutput, signal: AbortSignal): Promise<number>;
  /** Records the container's new health, and announces it when `changed`. */
  report(c: ContainerRecord, health: HealthState, changed: boolean): void;
  /** The container's record as it is now, or undefined when it is gone. */
  current(id: string): ContainerRecord | undefined;
  log: Logger;
}

interface Watch {
  timer?: NodeJS.Timeout;
  probe?: AbortController;
  stopped: boolean;
}

export class HealthMonitor {
  private readonly watches = new Map<string, Watch>();

  constructor(private readonly deps: HealthMonitorDeps) {}

  /** The check a container runs, or undefined when it has none to run. */
  static checkOf(c: ContainerRecord): HealthConfig | undefined {
    const hc = c.Config.Healthcheck as HealthConfig | undefined;
    return probeCommand(hc) ? hc : undefined;
  }

  /**
   * Starts watching a container that runs. `fresh` (a start, a restart): its health begins at
   * `starting`; otherwise (found running after a daemon restart) it goes on from what was kept.
   */
  start(c: ContainerRecord, fresh: boolean): void {
    const hc = HealthMonitor.checkOf(c);
    this.stop(c.Id);
    if (!hc) return;
    const previous = c.State.Health as HealthState | undefined;
    if (fresh || !previous) this.deps.report(c, startingHealth(previous), false);
    const watch: Watch = { stopped: false };
    this.watches.set(c.Id, watch);
    this.schedule(c.Id, watch);
  }

  /** Stops watching (and kills a probe under way); safe for a container not watched. */
  stop(id: string): void {
    const watch = this.watches.get(id);
    if (!watch) return;
    this.watches.delete(id);
    watch.stopped = true;
    clearTimeout(watch.timer);
    watch.probe?.abort();
  }

  stopAll(): void {
    for (const id of [...this.watches.keys()]) this.stop(id);
  }

  /** Ids of the containers watched now. */
  watched(): string[] {
    return [...this.watches.keys()];
  }

  private schedule(id: string, watch: Watch): void {
    const c = this.deps.current(id);
    const hc = c && HealthMonitor.checkOf(c);
    if (!c || !hc || watch.stopped) return void this.stop(id);
    const elapsed = Date.now() - Date.parse(c.State.StartedAt);
    const status = (c.State.Health as HealthState | undefined)?.Status ?? "starting";
    watch.timer = setTimeout(() => void this.probe(id, watch), nextProbeDelay(hc, elapsed, status));
    watch.timer.unref();
  }

  private async probe(id: string, watch: Watch): Promise<void> {
    const c = this.deps.current(id);
    const hc = c && HealthMonitor.checkOf(c);
    if (!c || !hc || watch.stopped) return void this.stop(id);
    const result = await this.run(c, hc, watch);
    if (watch.stopped) return; // stopped while probing: the result is dropped, as Docker's is
    const now = this.deps.current(id);
    if (!now) return void this.stop(id);
    const previous = (now.State.Health as HealthState | undefined) ?? startingHealth();
    const { state, changed } = applyHealthResult(previous, result, { hc, startedAt: now.State.StartedAt });
    this.deps.report(now, state, changed);
    this.schedule(id, watch);
  }

  private async run(c: ContainerRecord, hc: HealthConfig, watch: Watch): Promise<HealthResult> {
    const start = new Date();
    const output = new ProbeOutput();
    const probe = new AbortController();
    watch.probe = probe;
    const timeoutNs = hc.Timeout || HEALTH_DEFAULTS.timeout;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      probe.abort();
    }, timeoutNs / 1e6);
    try {
      const exitCode = await this.deps.exec(c, probeCommand(hc)!, output, probe.signal);
      if (timedOut) {
        const out = output.toString();
        const message = `Health check exceeded timeout (${goDuration(timeoutNs)})`;
        return result(start, -1, out ? `${message}: ${out}` : message);
      }
      return result(start, exitCode, output.toString());
    } catch (err) {
      this.deps.log.warn({ container: c.Id, err: (err as Error).message }, "health check could not run");
      return result(start, -1, (err as Error).message);
    } finally {
      clearTimeout(timer);
      watch.probe = undefined;
    }
  }
}

function result(start: Date, exitCode: number, output: string): HealthResult {
  return { Start: start.toISOString(), End: new Date().toISOString(), ExitCode: exitCode, Output: output };
}
