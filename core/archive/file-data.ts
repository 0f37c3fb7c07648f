/**
 * A regular file's data from a tar entry into the file, keeping sparse files sparse (the
 * writing itself, and the holes for runs of zeros, are file-writer.ts's).
 *
 * PAX sparse files as GNU tar writes them are understood: format 1.0 (the map at the start of
 * the entry's data) and 0.1 (`GNU.sparse.map`). Their real name and size come from
 * `GNU.sparse.name`/`GNU.sparse.realsize` (`sparseInfo`). The old GNU `S` type and PAX 0.0 are
 * refused by the extractor (their maps are not exposed).
 */
import { FileWriter, WriteSlots } from "./file-writer.js";
import type { EntryData } from "./tar-reader.js";

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
 * An entry's data going into the new, empty file `fd` (see EntryData: pieces are borrowed);
 * `size` is the file's final size. With `sparse`, the data is the packed regions of a PAX
 * sparse file. `end` resolves once everything is written and the size set.
 */
export function fileData(fd: number, size: number, slots: WriteSlots, sparse?: SparseInfo): FileData {
  const out = new FileWriter(fd, slots);
  const data: EntryData = sparse ? new SparseData(out, sparse, size) : { data: (piece) => out.write(piece), end: () => out.finish(size) };
  return { data: (piece) => data.data(piece), end: () => data.end(), drain: () => out.drain() };
}

/** A file's data sink; `drain` waits for the writes under way (before closing the file after a failure). */
export interface FileData extends EntryData {
  drain(): Promise<void>;
}

/** The packed regions of a PAX sparse file: each written at its offset, after the map (1.0) if it leads the data. */
class SparseData implements EntryData {
  private map: [offset: number, length: number][] | undefined;
  /** 1.0: the map's text so far (small: it is read up to its padding). */
  private mapText: Buffer[] = [];
  private mapBytes = 0;
  private region = -1;
  private left = 0;
  private last = 0;

  constructor(
    private readonly out: FileWriter,
    sparse: SparseInfo,
    private readonly size: number,
  ) {
    this.map = sparse.map;
  }

  data(piece: Buffer): Promise<void> | undefined {
    let at = 0;
    if (!this.map) {
      // 1.0: decimal lines "count\n" then "offset\nlength\n" pairs, padded to a 512-byte block
      this.mapText.push(Buffer.from(piece));
      this.mapBytes += piece.length;
      const parsed = parseSparseMap(Buffer.concat(this.mapText));
      if (!parsed) {
        if (this.mapBytes > 1 << 20) throw new Error("bad sparse map");
        return undefined;
      }
      this.map = parsed.map;
      at = piece.length - (this.mapBytes - parsed.consumed);
      this.mapText = [];
    }
    return this.regions(piece, at);
  }

  private regions(piece: Buffer, from: number): Promise<void> | undefined {
    let at = from;
    while (at < piece.length) {
      if (this.left === 0 && !this.next()) throw new Error("bad sparse map"); // data past the map's regions
      const n = Math.min(this.left, piece.length - at);
      const wait = this.out.write(piece.subarray(at, at + n));
      at += n;
      this.left -= n;
      if (wait) return wait.then(() => this.regions(piece, at));
    }
    return undefined;
  }

  /** Moves to the next region with data; false when there is none. */
  private next(): boolean {
    const map = this.map!;
    while (++this.region < map.length) {
      const [offset, length] = map[this.region];
      if (offset < this.last || offset + length > this.size) throw new Error("bad sparse map");
      this.last = offset + length;
      this.out.seek(offset);
      this.left = length;
      if (length > 0) return true;
    }
    return false;
  }

  async end(): Promise<void> {
    if (!this.map) throw new Error("truncated sparse map");
    while (this.left === 0 && this.next()); // regions of no length after the data
    if (this.left > 0) throw new Error("truncated sparse data");
    await this.out.finish(this.size);
  }
}

/** A 1.0 sparse map at the start of `text`, and the bytes it takes with its padding; undefined if `text` has not all of it. */
function parseSparseMap(text: Buffer): { map: [number, number][]; consumed: number } | undefined {
  const lines: number[] = [];
  let need = 1;
  let at = 0;
  while (lines.length < need) {
    const nl = text.indexOf(0x0a, at);
    if (nl < 0) return undefined;
    const n = Number(text.toString("ascii", at, nl));
    if (!Number.isSafeInteger(n) || n < 0) throw new Error("bad sparse map");
    lines.push(n);
    if (lines.length === 1) need = 1 + 2 * n;
    at = nl + 1;
  }
  const consumed = at + ((512 - (at % 512)) % 512);
  if (text.length < consumed) return undefined;
  const map: [number, number][] = [];
  for (let i = 1; i < lines.length; i += 2) map.push([lines[i], lines[i + 1]]);
  return { map, consumed };
}

/**
 * Copies an entry's data (chunks as a stream hands them over) into the new, empty file `fd`,
 * leaving holes for zeros; for extractors that read entries as streams (docker cp).
 */
export async function writeFileData(fd: number, data: AsyncIterable<Buffer>, size: number, sparse?: SparseInfo): Promise<void> {
  const sink = fileData(fd, size, new WriteSlots(2), sparse);
  for await (const chunk of data) {
    const wait = sink.data(chunk);
    if (wait) await wait;
  }
  await sink.end();
}
