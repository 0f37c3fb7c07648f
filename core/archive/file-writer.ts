/**
 * Writing a regular file's data at increasing offsets, leaving holes for zeros.
 *
 * The data is copied into one of a few write buffers (`WriteSlots`, shared by the files of one
 * extraction) and written from there, a buffer at a time, on libuv's thread pool while the
 * next one fills. Copying costs a memcpy; keeping the caller's chunks instead would keep every
 * chunk alive until its write is done (more garbage for the collector), and would not let a
 * source read into the same buffer again (see tar-reader.ts).
 *
 * Any 4 KiB block (aligned to the file offset) that is all zeros is skipped rather than written,
 * and the file is truncated to its full size at the end, so runs of zeros become holes whatever
 * the tar format. The file is new (created with O_EXCL), so a skipped block reads back as zeros.
 */
import { ftruncateSync, write, writeSync } from "node:fs";
import { promisify } from "node:util";

const BLOCK = 4096;
const ZERO = Buffer.alloc(BLOCK);
/**
 * A write buffer's size: a 1 MiB file is four writes. Not 1 MiB or more: on this kernel (Linux
 * 6.18, ext4 with large folios) a write of 1 MiB or more costs three times the system time of
 * the same bytes in writes of up to 768 KiB (measured: 200 files of 1 MiB, 0.45-0.6 s against
 * 0.15-0.2 s).
 */
const SLOT = 256 * 1024;
/** Four buffers an extraction: one filling while the others are written. */
const SLOTS = 4;
/**
 * Writes at least this long go to libuv's thread pool instead of blocking the event loop (the
 * copy into the page cache would otherwise stall every other layer, download and request of
 * the daemon); smaller ones stay synchronous, where a round trip to the pool costs more.
 */
const ASYNC_WRITE = 64 * 1024;
const writeAsync = promisify(write);

/** The write buffers of one extraction. */
export class WriteSlots {
  private readonly free: Buffer[] = [];
  private readonly waiting: (() => void)[] = [];

  constructor(count = SLOTS) {
    for (let i = 0; i < count; i++) this.free.push(Buffer.allocUnsafe(SLOT));
  }

  take(): Buffer | undefined {
    return this.free.pop();
  }

  /** Resolves when a buffer has come back. */
  available(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  give(slot: Buffer): void {
    this.free.push(slot);
    this.waiting.shift()?.();
  }
}

/** One file's data, written through the extraction's buffers. */
export class FileWriter {
  private slot: Buffer | undefined;
  private fill = 0;
  /** File offset of slot[0]. */
  private slotAt = 0;
  /** File offset of the next byte. */
  private pos = 0;
  private pending = 0;
  private settled: (() => void) | undefined;
  private failure: Error | undefined;
  /** Where the data written so far ends. */
  end = 0;

  constructor(
    private readonly fd: number,
    private readonly slots: WriteSlots,
  ) {}

  /** Takes `data` (copied: the caller may reuse it once this returns or its promise settles). */
  write(data: Buffer, from = 0): Promise<void> | undefined {
    if (this.failure) throw this.failure;
    let at = from;
    while (at < data.length) {
      if (!this.slot) {
        const slot = this.slots.take();
        if (!slot) return this.slots.available().then(() => this.write(data, at));
        this.slot = slot;
        this.fill = 0;
        this.slotAt = this.pos;
      }
      const n = Math.min(data.length - at, SLOT - this.fill);
      data.copy(this.slot, this.fill, at, at + n);
      this.fill += n;
      this.pos += n;
      at += n;
      if (this.fill === SLOT) this.flush();
    }
    return undefined;
  }

  /** Jumps to `offset` (not before the current one), leaving a hole. */
  seek(offset: number): void {
    if (offset < this.pos) throw new Error("bad sparse map");
    this.flush();
    this.pos = offset;
  }

  /** Writes what is buffered, waits for every write of the file, and sets its size. */
  async finish(size: number): Promise<void> {
    this.flush();
    if (this.pending > 0) await new Promise<void>((resolve) => (this.settled = resolve));
    if (this.failure) throw this.failure;
    if (this.end !== size) ftruncateSync(this.fd, size); // a trailing hole, or data short of the size
  }

  /** Waits for the writes under way (after a failure: before the file's descriptor is closed). */
  async drain(): Promise<void> {
    if (this.slot) {
      this.slots.give(this.slot);
      this.slot = undefined;
    }
    if (this.pending > 0) await new Promise<void>((resolve) => (this.settled = resolve));
  }

  /** Writes the buffer (its non-zero blocks) in the background and gives it back when done. */
  private flush(): void {
    const slot = this.slot;
    if (!slot) return;
    this.slot = undefined;
    const runs = nonZeroRuns(slot, this.fill, this.slotAt);
    if (runs.length === 0) return this.slots.give(slot);
    for (const [start, length] of runs) this.end = Math.max(this.end, this.slotAt + start + length);
    const small = runs.every(([, length]) => length < ASYNC_WRITE);
    if (small) {
      try {
        for (const [start, length] of runs) writeFully(this.fd, slot, start, length, this.slotAt + start);
      } finally {
        this.slots.give(slot);
      }
      return;
    }
    this.pending++;
    const at = this.slotAt;
    Promise.all(runs.map(([start, length]) => writeFullyAsync(this.fd, slot, start, length, at + start)))
      .catch((err: Error) => {
        this.failure ??= err;
      })
      .finally(() => {
        this.slots.give(slot);
        if (--this.pending === 0) this.settled?.();
      });
  }
}

/**
 * The runs of `buf[0..length)` (at file offset `at`) to write: all but the 4 KiB blocks, aligned
 * to the file offset, that are all zeros. The partial blocks at either end count as blocks.
 */
function nonZeroRuns(buf: Buffer, length: number, at: number): [start: number, length: number][] {
  const runs: [number, number][] = [];
  let runStart = -1;
  let start = 0;
  while (start < length) {
    const end = Math.min(length, start + BLOCK - ((at + start) % BLOCK));
    // a block with a non-zero first or last byte is data (the usual case): no compare needed
    const zero = buf[start] === 0 && buf[end - 1] === 0 && buf.subarray(start, end).equals(ZERO.subarray(0, end - start));
    if (!zero && runStart < 0) runStart = start;
    if (zero && runStart >= 0) {
      runs.push([runStart, start - runStart]);
      runStart = -1;
    }
    start = end;
  }
  if (runStart >= 0) runs.push([runStart, length - runStart]);
  return runs;
}

function writeFully(fd: number, buf: Buffer, offset: number, length: number, position: number): void {
  for (let done = 0; done < length; ) done += writeSync(fd, buf, offset + done, length - done, position + done);
}

async function writeFullyAsync(fd: number, buf: Buffer, offset: number, length: number, position: number): Promise<void> {
  for (let done = 0; done < length; ) done += (await writeAsync(fd, buf, offset + done, length - done, position + done)).bytesWritten;
}
