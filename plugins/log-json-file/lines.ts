/**
 * Why this file: reading complete lines out of log files (plain ones from any offset, gzipped
 * ones whole, the last N of a series) is mechanics the reader's tail/since/follow logic builds
 * on; kept apart, reader.ts holds only the decisions of a read.
 */
import type { FileHandle } from "node:fs/promises";
import { createGunzip } from "node:zlib";
import type { RotatedFile } from "./files.js";

const CHUNK = 64 * 1024;

/** A file read forward from a position, complete lines only. */
export class Cursor {
  pending: Buffer = Buffer.alloc(0);
  constructor(
    readonly fh: FileHandle,
    public pos = 0,
  ) {}

  /** Complete lines from `pos` to the end of the file as it is now, in batches. */
  async *drain(): AsyncGenerator<Buffer[]> {
    const buf = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      const { bytesRead } = await this.fh.read(buf, 0, CHUNK, this.pos);
      if (bytesRead === 0) return;
      this.pos += bytesRead;
      const lines = splitLines(this, buf.subarray(0, bytesRead));
      if (lines.length) yield lines;
    }
  }
}

function splitLines(state: { pending: Buffer }, chunk: Buffer): Buffer[] {
  const data = state.pending.length ? Buffer.concat([state.pending, chunk]) : chunk;
  const lines: Buffer[] = [];
  let start = 0;
  for (let nl = data.indexOf(10, start); nl >= 0; nl = data.indexOf(10, start)) {
    lines.push(Buffer.from(data.subarray(start, nl)));
    start = nl + 1;
  }
  state.pending = Buffer.from(data.subarray(start));
  return lines;
}

async function* gzLines(fh: FileHandle): AsyncGenerator<Buffer[]> {
  const state = { pending: Buffer.alloc(0) };
  const gunzip = createGunzip();
  const source = fh.createReadStream({ autoClose: false, start: 0 });
  source.on("error", (err) => gunzip.destroy(err));
  source.pipe(gunzip);
  try {
    for await (const chunk of gunzip) {
      const lines = splitLines(state, chunk as Buffer);
      if (lines.length) yield lines;
    }
  } catch {
    // A truncated or damaged archive: what came out of it is all it has.
  } finally {
    source.unpipe(gunzip);
    source.destroy();
    gunzip.destroy();
  }
}

/** The complete lines of a rotated file, plain or gzipped, in batches. */
export function linesOf(file: RotatedFile): AsyncGenerator<Buffer[]> {
  return file.gz ? gzLines(file.fh) : new Cursor(file.fh).drain();
}

/** The last `n` lines of a series of batches. */
export async function lastLines(batches: AsyncIterable<Buffer[]>, n: number): Promise<Buffer[]> {
  let kept: Buffer[] = [];
  for await (const batch of batches) {
    kept.push(...batch);
    if (kept.length > Math.max(2 * n, 4096)) kept = kept.slice(-n);
  }
  return n === 0 ? [] : kept.slice(-n);
}

/** The offset just after the last newline of a file (0 when it has none in its last chunk). */
export async function lastLineEnd(fh: FileHandle): Promise<number> {
  const { size } = await fh.stat();
  if (size === 0) return 0;
  const start = Math.max(0, size - CHUNK);
  const buf = Buffer.allocUnsafe(size - start);
  const { bytesRead } = await fh.read(buf, 0, buf.length, start);
  const nl = buf.subarray(0, bytesRead).lastIndexOf(10);
  return nl < 0 ? (start === 0 ? 0 : size) : start + nl + 1;
}
