/**
 * Long synchronous-looking work on the event loop (decoding a log's lines, one microtask after
 * another) in slices: `spent()` says when the slice's time is used up, `next()` lets the loop
 * turn (timers, I/O, other requests) before the next slice. A chain of resolved promises never
 * lets it turn by itself: 100 MB of log lines decoded at 12 us a line held it for seconds
 * (bench/event-loop.mjs --scenario logs).
 */
import { setImmediate as nextTurn } from "node:timers/promises";

/** How long a slice runs before the loop gets a turn: well under the 100 ms the daemon allows a stall. */
const SLICE_MS = 8;

export class TurnBudget {
  private sliceStart = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Whether this slice has run its time. */
  spent(): boolean {
    return performance.now() - this.sliceStart >= this.sliceMs;
  }

  /** Lets the event loop turn, then starts a new slice. */
  async next(): Promise<void> {
    await nextTurn();
    this.sliceStart = performance.now();
  }
}
