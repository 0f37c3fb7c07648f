/**
 * Reading one container's statistics as `docker stats` reads them: one request (streamed, or a
 * single reading with --no-stream), each reading replacing the last; no reading for 2 seconds
 * zeroes the values and marks them invalid ("--"), as does the stream's end or an error.
 * `first` resolves once the first reading (or the first failure) is in.
 */
import type { Connection } from "../connection.js";
import { jsonLines } from "../format/json-stream.js";
import { emptyEntry, entryFrom, type StatsEntry, type StatsResponse } from "../format/stats-context.js";

const TIMEOUT_MS = 2000;

export class StatsCollector {
  entry: StatsEntry;
  error: Error | undefined;
  readonly first: Promise<void>;
  private firstDone!: () => void;
  private stopped = false;
  private closeStream: () => void = () => undefined;

  constructor(readonly container: string) {
    this.entry = emptyEntry(container);
    this.first = new Promise((resolve) => (this.firstDone = resolve));
  }

  /** Reads until the stream ends (or after one reading when `stream` is false). */
  async collect(conn: Connection, stream: boolean): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        this.entry = { ...emptyEntry(this.container), isInvalid: true };
        this.error = new Error("timeout waiting for stats");
        this.firstDone();
        if (stream && !this.stopped) arm();
      }, TIMEOUT_MS);
    };
    arm();
    try {
      const res = await conn.call("GET", `/containers/${encodeURIComponent(this.container)}/stats`, { query: { stream: stream ? "1" : "0" } });
      this.closeStream = () => res.body.destroy();
      for await (const { value } of jsonLines<StatsResponse>(res.body)) {
        this.entry = entryFrom(this.container, value);
        this.error = undefined;
        this.firstDone();
        if (!stream) break;
        arm();
      }
      if (stream && !this.stopped) this.fail(new Error("EOF"));
    } catch (e) {
      if (!this.stopped) this.fail(e as Error);
    } finally {
      clearTimeout(timer);
      this.firstDone();
    }
  }

  private fail(e: Error): void {
    this.error = e;
    this.entry = { ...this.entry, isInvalid: true };
  }

  stop(): void {
    this.stopped = true;
    this.closeStream();
  }
}
