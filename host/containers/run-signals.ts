/**
 * What the runner tells those who wait on a container, in memory: it started, it exited (with
 * its code), it was removed. `docker wait`, attach and log followers, and a SIGKILL's answer
 * wait on these; the record says the same, but a record cannot be waited on.
 *
 * Each is told at the moment the record changes (in the same tick), so a caller that reads the
 * record and then waits, without an `await` in between, misses nothing.
 */
import { EventEmitter } from "node:events";

export class RunSignals {
  private readonly events = new EventEmitter().setMaxListeners(0);

  started(id: string): void {
    this.events.emit(`start:${id}`);
  }

  exited(id: string, exitCode: number): void {
    this.events.emit(`exit:${id}`, exitCode);
  }

  removed(id: string, exitCode: number): void {
    this.events.emit(`removed:${id}`, exitCode);
  }

  /** Resolves at the container's next start; rejects when `signal` aborts. */
  nextStart(id: string, signal?: AbortSignal): Promise<void> {
    return this.once(`start:${id}`, signal).then(() => {});
  }

  /** Resolves with the exit code at the container's next exit; rejects when `signal` aborts. */
  nextExit(id: string, signal?: AbortSignal): Promise<number> {
    return this.once(`exit:${id}`, signal) as Promise<number>;
  }

  /** Resolves with the last exit code once the container is removed; rejects when `signal` aborts. */
  nextRemoval(id: string, signal?: AbortSignal): Promise<number> {
    return this.once(`removed:${id}`, signal) as Promise<number>;
  }

  private once(name: string, signal?: AbortSignal): Promise<unknown> {
    return new Promise((resolve, reject) => {
      // a signal that has fired already fires no more events: its waiter would wait for nothing
      if (signal?.aborted) return reject(signal.reason);
      const onEvent = (value?: unknown) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(value);
      };
      const onAbort = () => {
        this.events.off(name, onEvent);
        reject(signal!.reason);
      };
      this.events.once(name, onEvent);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}
