/**
 * The restarts the runner's restart policies schedule, one per container at a time: the
 * back-off delay (kept in memory, as Docker keeps it: a daemon restart starts it over), the
 * timer of a restart that waits, and the cancellation a user's stop or kill makes. A cancelled
 * container is not restarted by its policy again until a user starts it (`reset`).
 */
import type { ContainerRecord } from "../../core/containers/container-store.js";
import { nextDelay, policyRestarts } from "../../core/containers/restart-policy.js";

interface Pending {
  timer?: NodeJS.Timeout;
  /** Settles when the restart has been tried (or given up); set once the timer fired. */
  done?: Promise<void>;
  run: () => Promise<void>;
}

export class RestartManager {
  private readonly delays = new Map<string, number>();
  private readonly cancelled = new Set<string>();
  private readonly pending = new Map<string, Pending>();

  /**
   * After an exit: the delay before the policy's restart, or undefined when there is none.
   * `manuallyStopped` is what unless-stopped reads; a cancelled container is never restarted.
   */
  decide(c: ContainerRecord, exitCode: number, manuallyStopped: boolean, now = Date.now()): number | undefined {
    if (this.cancelled.has(c.Id)) return undefined;
    if (!policyRestarts(c.HostConfig.RestartPolicy, exitCode, manuallyStopped, c.RestartCount ?? 0)) return undefined;
    const delay = nextDelay(this.delays.get(c.Id) ?? 0, now - Date.parse(c.State.StartedAt));
    this.delays.set(c.Id, delay);
    return delay;
  }

  /** Runs `run` after `delay` ms (the restart itself; it checks `isCancelled` first). */
  schedule(id: string, delayMs: number, run: () => Promise<void>): void {
    this.clearTimer(id);
    const p: Pending = { run };
    p.timer = setTimeout(() => this.fire(id, p), delayMs);
    this.pending.set(id, p);
  }

  private fire(id: string, p: Pending): Promise<void> {
    p.timer = undefined;
    p.done ??= p.run().finally(() => {
      if (this.pending.get(id) === p) this.pending.delete(id);
    });
    return p.done;
  }

  isCancelled(id: string): boolean {
    return this.cancelled.has(id);
  }

  /**
   * A user's stop or kill: no restart from now on. Resolves once a restart that was waiting
   * has given up, or one that was under way has finished (the container runs then, and the
   * caller stops it).
   */
  cancel(id: string): Promise<void> {
    this.cancelled.add(id);
    const p = this.pending.get(id);
    if (!p) return Promise.resolve();
    if (p.timer) clearTimeout(p.timer);
    return this.fire(id, p);
  }

  /** A user's start: the policy applies again, from the first delay. */
  reset(id: string): void {
    this.cancelled.delete(id);
    this.delays.delete(id);
  }

  /** The container is gone. */
  forget(id: string): void {
    this.clearTimer(id);
    this.pending.delete(id);
    this.reset(id);
  }

  /** The daemon stops: no timer outlives it. */
  close(): void {
    for (const id of this.pending.keys()) this.clearTimer(id);
  }

  private clearTimer(id: string): void {
    const p = this.pending.get(id);
    if (p?.timer) clearTimeout(p.timer);
  }
}
