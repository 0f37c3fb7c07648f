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
import { ftruncateSync, write, writeSync } from "node:fs";
import { promisify } from "node:util";

const BLOCK = 4096;
const ZERO = Buffer.alloc(BLOCK);
/**
 * Writes at least this long go to libuv's thread pool instead of blocking the event loop: the
 * copy into the page cache costs about 4 ms a MiB here, which would otherwise stall every other
 * layer, download and request of the daemon (a pull extracts several layers at once). Smaller
 * ones stay synchronous, where a round trip to the pool would cost more than the write.
 */
const ASYNC_WRITE = 64 * 1024;
const writeAsync = promisify(write);

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

/** Writes at increasing offsets, skipping all-zero aligned blocks. */
class HoleWriter {
  private carry: Buffer = Buffer.alloc(0);
  private pos = 0; // file offset of carry[0]; a multiple of BLOCK unless moved by seek()
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
      await this.putBlocks(Buffer.concat([this.carry, data.subarray(0, need)]));
      this.pos += this.carry.length + need;
      this.carry = Buffer.alloc(0);
      data = data.subarray(need);
    }
    // keep blocks aligned to the file offset: what lies before the next boundary is written as is
    const lead = this.pos % BLOCK === 0 ? 0 : Math.min(data.length, BLOCK - (this.pos % BLOCK));
    const whole = lead + Math.floor((data.length - lead) / BLOCK) * BLOCK;
    await this.putBlocks(data.subarray(0, whole), lead);
    this.carry = Buffer.from(data.subarray(whole)); // a copy: the source may reuse its buffer
    this.pos += whole;
  }

  /** Writes `data` (at this.pos) but for the 4 KiB blocks after `lead` that are all zeros. */
  private async putBlocks(data: Buffer, lead = 0): Promise<void> {
    if (lead > 0) await this.put(data.subarray(0, lead), this.pos);
    let runStart = -1;
    for (let at = lead; at < data.length; at += BLOCK) {
      // a block with a non-zero first or last byte is data (the usual case): no compare needed
      const zero = data[at] === 0 && data[at + BLOCK - 1] === 0 && data.subarray(at, at + BLOCK).equals(ZERO);
      if (!zero && runStart < 0) runStart = at;
      if (zero && runStart >= 0) {
        await this.put(data.subarray(runStart, at), this.pos + runStart);
        runStart = -1;
      }
    }
    if (runStart >= 0) await this.put(data.subarray(runStart), this.pos + runStart);
  }

  async flush(): Promise<void> {
    if (this.carry.length > 0 && !this.carry.equals(ZERO.subarray(0, this.carry.length))) {
      await this.put(this.carry, this.pos);
    }
    this.pos += this.carry.length;
    this.carry = Buffer.alloc(0);
  }

  private async put(buf: Buffer, position: number): Promise<void> {
    let done = 0;
    while (done < buf.length) {
      const left = buf.length - done;
      done += left >= ASYNC_WRITE ? (await writeAsync(this.fd, buf, done, left, position + done)).bytesWritten : writeSync(this.fd, buf, done, left, position + done);
    }
    this.end = Math.max(this.end, position + buf.length);
  }
}

/**
 * Copies an entry's data into the new, empty file `fd`, leaving holes for zeros; `size` is the
 * file's final size. With `sparse`, the data is the packed regions of a PAX sparse file. Small
 * writes are synchronous (see safe-path.ts), large ones go to the thread pool (ASYNC_WRITE).
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
