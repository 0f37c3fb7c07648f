/**
 * Writing a regular file's contents from a tar entry, keeping sparse files sparse.
 *
 * - Any 4 KiB block (aligned to the file offset) that is all zeros is skipped rather than
 *   written, and the file is truncated to its full size at the end, so runs of zeros become holes
 *   whatever the tar format (plain tars of VM images, databases and `/var/log/lastlog` included).
 *   The file is new (created with O_EXCL), so a skipped block reads back as zeros.
 * - PAX sparse files as GNU tar writes them are understood: format 1.0 (the map at the start of
 *   the entry's data) and 0.1 (`GNU.sparse.map`). Their real name and size come from
 *   `GNU.sparse.name`/`GNU.sparse.realsize` (`sparseInfo`). The old GNU `S` type and PAX 0.0 are
 *   refused by the extractor (tar-stream does not expose their maps).
 */
import { ftruncateSync, writev, writevSync } from "node:fs";
import { promisify } from "node:util";

const BLOCK = 4096;
const ZERO = Buffer.alloc(BLOCK);
/**
 * A file's data is gathered (as references to the chunks, not copies) and written with one
 * `writev` per this many bytes, and at the end of the file: one system call for up to 512 KiB,
 * not one for each of the 16-64 KiB chunks the decompressor hands on (a 200 MB pull made 6900
 * writes, which cost its event loop 0.6 s). Not more: on this kernel (Linux 6.18, ext4 with
 * large folios) a write of 1 MiB or more costs three times the system time of the same bytes
 * in writes of up to 768 KiB (measured: 200 files of 1 MiB, 0.45-0.6 s against 0.15-0.2 s).
 */
const BATCH = 512 * 1024;
/**
 * Writes at least this long go to libuv's thread pool instead of blocking the event loop: the
 * copy into the page cache costs about 4 ms a MiB here, which would otherwise stall every other
 * layer, download and request of the daemon (a pull extracts several layers at once). Smaller
 * ones stay synchronous, where a round trip to the pool would cost more than the write.
 */
const ASYNC_WRITE = 64 * 1024;
const writevAsync = promisify(writev);

export interface SparseInfo {
  /** The file's name (the entry's own name is a made-up `GNUSparseFile.N/...`). */
  name: string;
  /** The file's real size. */
  size: number;
  /** 0.1: the map from the PAX header. 1.0: undefined, the map leads the data. */
  map?: [offset: number, length: number][];
}

/** The PAX sparse description of an entry, undefined for an ordinary file. Throws for 0.0. */
export function sparseInfo(pax: Record<string, string> | null | undefined): SparseInfo | undefined {
  if (!pax) return undefined;
  const major = pax["GNU.sparse.major"];
  const minor = pax["GNU.sparse.minor"];
  const name = pax["GNU.sparse.name"];
  if (major === "1" && minor === "0" && name !== undefined) {
    return { name, size: Number(pax["GNU.sparse.realsize"]) };
  }
  if (pax["GNU.sparse.map"] !== undefined && name !== undefined) {
    const nums = pax["GNU.sparse.map"].split(",").filter((s) => s !== "").map(Number);
    if (nums.length % 2 !== 0 || nums.some((n) => !Number.isSafeInteger(n) || n < 0)) throw new Error("bad GNU.sparse.map");
    const map: [number, number][] = [];
    for (let i = 0; i < nums.length; i += 2) map.push([nums[i], nums[i + 1]]);
    return { name, size: Number(pax["GNU.sparse.size"] ?? pax["GNU.sparse.realsize"]), map };
  }
  if (pax["GNU.sparse.offset"] !== undefined || pax["GNU.sparse.numblocks"] !== undefined) {
    throw new Error("PAX sparse format 0.0 is not supported");
  }
  return undefined;
}

/**
 * Writes at increasing offsets, skipping all-zero aligned blocks: the data is queued as runs of
 * non-zero blocks (each run a list of pieces of the caller's chunks, at its file offset) and
 * written run by run with `writev` once BATCH bytes are queued, and at `flush`. The chunks are
 * not copied: a source hands each chunk on once and never writes into it again (Node's streams,
 * tar-stream's pieces of them), so the pieces stay as they were until they are written.
 */
class HoleWriter {
  private carry: Buffer = Buffer.alloc(0);
  private pos = 0; // file offset of carry[0]; a multiple of BLOCK unless moved by seek()
  /** Runs of data waiting to be written: each a file offset and its pieces, in order. */
  private runs: { at: number; pieces: Buffer[]; length: number }[] = [];
  private queued = 0;
  /** Where the data written so far ends. */
  end = 0;

  constructor(private readonly fd: number) {}

  /** Jumps to `offset` (>= the current one), leaving a hole; flushes what is pending first. */
  async seek(offset: number): Promise<void> {
    await this.flush();
    this.pos = offset;
  }

  async write(chunk: Buffer): Promise<void> {
    let data = chunk;
    if (this.carry.length > 0) {
      // complete the pending partial block from the head of the chunk (at most 4 KiB copied,
      // never the whole chunk: the chunks are large and rarely aligned to the file's blocks)
      const need = BLOCK - (this.pos % BLOCK) - this.carry.length;
      if (data.length < need) {
        this.carry = Buffer.concat([this.carry, data]);
        return;
      }
      this.queueBlocks(Buffer.concat([this.carry, data.subarray(0, need)]));
      this.pos += this.carry.length + need;
      this.carry = Buffer.alloc(0);
      data = data.subarray(need);
    }
    // keep blocks aligned to the file offset: what lies before the next boundary is queued as is
    const lead = this.pos % BLOCK === 0 ? 0 : Math.min(data.length, BLOCK - (this.pos % BLOCK));
    const whole = lead + Math.floor((data.length - lead) / BLOCK) * BLOCK;
    this.queueBlocks(data.subarray(0, whole), lead);
    // the partial block at the end waits for the next chunk (to tell whether it is all zeros)
    this.carry = Buffer.from(data.subarray(whole));
    this.pos += whole;
    if (this.queued >= BATCH) await this.writeQueued();
  }

  /** Queues `data` (at this.pos) but for the 4 KiB blocks after `lead` that are all zeros. */
  private queueBlocks(data: Buffer, lead = 0): void {
    if (lead > 0) this.queue(data.subarray(0, lead), this.pos);
    let runStart = -1;
    for (let at = lead; at < data.length; at += BLOCK) {
      // a block with a non-zero first or last byte is data (the usual case): no compare needed
      const zero = data[at] === 0 && data[at + BLOCK - 1] === 0 && data.subarray(at, at + BLOCK).equals(ZERO);
      if (!zero && runStart < 0) runStart = at;
      if (zero && runStart >= 0) {
        this.queue(data.subarray(runStart, at), this.pos + runStart);
        runStart = -1;
      }
    }
    if (runStart >= 0) this.queue(data.subarray(runStart), this.pos + runStart);
  }

  /** Adds `piece` at file offset `at`: to the last run when it continues it, else as a new run. */
  private queue(piece: Buffer, at: number): void {
    if (piece.length === 0) return;
    const last = this.runs.at(-1);
    if (last && last.at + last.length === at) {
      last.pieces.push(piece);
      last.length += piece.length;
    } else {
      this.runs.push({ at, pieces: [piece], length: piece.length });
    }
    this.queued += piece.length;
  }

  async flush(): Promise<void> {
    if (this.carry.length > 0 && !this.carry.equals(ZERO.subarray(0, this.carry.length))) {
      this.queue(this.carry, this.pos);
    }
    this.pos += this.carry.length;
    this.carry = Buffer.alloc(0);
    await this.writeQueued();
  }

  /** Writes every queued run: small ones on the event loop, the rest on the thread pool. */
  private async writeQueued(): Promise<void> {
    const runs = this.runs;
    this.runs = [];
    this.queued = 0;
    for (const run of runs) {
      let pieces = run.pieces;
      let done = 0;
      while (done < run.length) {
        const written = run.length - done >= ASYNC_WRITE ? (await writevAsync(this.fd, pieces, run.at + done)).bytesWritten : writevSync(this.fd, pieces, run.at + done);
        done += written;
        if (done < run.length) pieces = rest(pieces, written);
      }
      this.end = Math.max(this.end, run.at + run.length);
    }
  }
}

/** What is left of `pieces` after its first `n` bytes. */
function rest(pieces: Buffer[], n: number): Buffer[] {
  let skip = n;
  let i = 0;
  while (i < pieces.length && skip >= pieces[i].length) skip -= pieces[i++].length;
  const out = pieces.slice(i);
  if (out.length > 0 && skip > 0) out[0] = out[0].subarray(skip);
  return out;
}

/**
 * Copies an entry's data into the new, empty file `fd`, leaving holes for zeros; `size` is the
 * file's final size. With `sparse`, the data is the packed regions of a PAX sparse file. Small
 * writes are synchronous (see safe-path.ts), large ones go to the thread pool (ASYNC_WRITE);
 * either way a file's data goes in one `writev` per BATCH bytes.
 */
export async function writeFileData(
  fd: number,
  data: AsyncIterable<Buffer>,
  size: number,
  sparse?: SparseInfo,
): Promise<void> {
  const out = new HoleWriter(fd);
  if (!sparse) {
    for await (const chunk of data) await out.write(chunk);
  } else {
    await writeSparse(out, data, sparse);
  }
  await out.flush();
  if (out.end !== size) ftruncateSync(fd, size); // a trailing hole, or data short of the size
}

async function writeSparse(out: HoleWriter, data: AsyncIterable<Buffer>, sparse: SparseInfo): Promise<void> {
  const it = data[Symbol.asyncIterator]();
  let pending: Buffer = Buffer.alloc(0);
  let consumed = 0;
  const more = async (): Promise<boolean> => {
    const next = await it.next();
    if (next.done) return false;
    pending = pending.length > 0 ? Buffer.concat([pending, next.value]) : next.value;
    return true;
  };
  let map = sparse.map;
  if (!map) {
    // 1.0: decimal lines "count\n" then "offset\nlength\n" pairs, padded to a 512-byte block
    const lines: number[] = [];
    let need = 1;
    while (lines.length < need) {
      const nl = pending.indexOf(0x0a);
      if (nl < 0) {
        if (pending.length > 1 << 20 || !(await more())) throw new Error("truncated sparse map");
        continue;
      }
      const n = Number(pending.toString("ascii", 0, nl));
      if (!Number.isSafeInteger(n) || n < 0) throw new Error("bad sparse map");
      lines.push(n);
      if (lines.length === 1) need = 1 + 2 * n;
      pending = pending.subarray(nl + 1);
      consumed += nl + 1;
    }
    const pad = (512 - (consumed % 512)) % 512;
    while (pending.length < pad) if (!(await more())) throw new Error("truncated sparse map");
    pending = pending.subarray(pad);
    map = [];
    for (let i = 1; i < lines.length; i += 2) map.push([lines[i], lines[i + 1]]);
  }
  let last = 0;
  for (const [offset, length] of map) {
    if (offset < last || offset + length > sparse.size) throw new Error("bad sparse map");
    await out.seek(offset);
    let left = length;
    while (left > 0) {
      if (pending.length === 0 && !(await more())) throw new Error("truncated sparse data");
      const take = pending.subarray(0, Math.min(left, pending.length));
      pending = pending.subarray(take.length);
      left -= take.length;
      await out.write(take);
    }
    last = offset + length;
  }
  // drain what is left (tar-stream needs the entry read to the end)
  for (;;) {
    const next = await it.next();
    if (next.done) break;
  }
}
