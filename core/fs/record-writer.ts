/**
 * The writes of record files, one path at a time and the latest winning, for stores that keep
 * their records in memory and on disk (containers, volumes, networks). A store changes its
 * record in memory at once (a read right after a save sees the change) and calls `write` with
 * a function that renders the record; the file is written durably (core/fs/durable-file.ts),
 * and `write` resolves once what the caller saved, or something newer, is on disk.
 *
 * Several saves of one record while its write is under way become one more write, of the
 * record as it is when that write starts: a container's start saves it three times in a few
 * milliseconds, and the disk sees two writes, the last of them whole. Writes of one path never
 * overlap, so an older rendering can never be renamed over a newer one.
 */
import { writeFileDurably } from "./durable-file.js";

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

interface Slot {
  /** What to write next (the latest save's), while a write is under way or about to start. */
  render?: () => string | Buffer;
  /** The saves the next write answers. */
  waiters: Waiter[];
  /** Those waiting for the write under way to end (`forget`). */
  idle: (() => void)[];
}

export class RecordWriter {
  private readonly slots = new Map<string, Slot>();

  /** Writes `render()` to `path` (now, or once the write under way ends); resolves once it is on disk. */
  write(path: string, render: () => string | Buffer): Promise<void> {
    let slot = this.slots.get(path);
    const starts = !slot;
    if (!slot) this.slots.set(path, (slot = { waiters: [], idle: [] }));
    slot.render = render;
    const done = new Promise<void>((resolve, reject) => slot.waiters.push({ resolve, reject }));
    if (starts) void this.drain(path, slot);
    return done;
  }

  /**
   * The record goes: a write not yet started never will (its savers are answered, as the record
   * they saved is gone), and this resolves once the write under way, if any, has ended, so that
   * the caller's removal of the file comes after it.
   */
  forget(path: string): Promise<void> {
    const slot = this.slots.get(path);
    if (!slot) return Promise.resolve();
    slot.render = undefined;
    for (const w of slot.waiters.splice(0)) w.resolve();
    return new Promise((resolve) => slot.idle.push(resolve));
  }

  private async drain(path: string, slot: Slot): Promise<void> {
    while (slot.render) {
      const render = slot.render;
      const waiters = slot.waiters.splice(0);
      slot.render = undefined;
      try {
        await writeFileDurably(path, render());
        for (const w of waiters) w.resolve();
      } catch (err) {
        for (const w of waiters) w.reject(err);
      }
    }
    this.slots.delete(path);
    for (const resolve of slot.idle) resolve();
  }
}
