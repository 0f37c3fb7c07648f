/**
 * The daemon's events: every `hooks.event` is kept in a bounded history (the newest
 * `EVENT_HISTORY` events, as Docker keeps a few hundred) and handed to the subscribers of
 * `GET /events`. A subscriber gets the history it asked for (since a time), then every new
 * event as it happens, in order.
 */
import type { EngineEvent } from "../../core/events/event.js";
import type { EngineHooks } from "../../core/hooks.js";

const EVENT_HISTORY = 1024;

export class EventLog {
  private readonly history: EngineEvent[] = [];
  private readonly subscribers = new Set<(e: EngineEvent) => void>();

  constructor(hooks: EngineHooks) {
    hooks.event.tap("event-log", (e) => {
      this.history.push(e);
      if (this.history.length > EVENT_HISTORY) this.history.shift();
      for (const notify of this.subscribers) notify(e);
    });
  }

  /** How many clients follow the events now (`/info`'s `NEventsListener`). */
  get listenerCount(): number {
    return this.subscribers.size;
  }

  /**
   * The kept events from `since` (nanoseconds; all kept ones at 0n) and a subscription to the
   * new ones, taken together so that none falls between. Call the returned function to end it.
   */
  subscribe(since: bigint | undefined, listener: (e: EngineEvent) => void): { past: EngineEvent[]; unsubscribe: () => void } {
    const past = since === undefined ? [] : this.history.filter((e) => e.timeNano >= since);
    this.subscribers.add(listener);
    return { past, unsubscribe: () => void this.subscribers.delete(listener) };
  }
}
