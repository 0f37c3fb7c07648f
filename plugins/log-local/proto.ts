/**
 * Why this file: the `local` driver's records are Docker's protobuf `LogEntry` messages (moby's
 * api/types/plugins/logdriver/entry.proto), framed by a big-endian uint32 length before and
 * after each one (the trailing copy lets a reader walk a file backwards). The message is six
 * small fields, so it is encoded and decoded here by hand rather than with a protobuf library:
 *
 *   LogEntry: 1 source (string), 2 time_nano (int64), 3 line (bytes), 4 partial (bool),
 *             5 partial_log_metadata (PartialLogEntryMetadata), 6 attrs (newer Docker; skipped)
 *   PartialLogEntryMetadata: 1 last (bool), 2 id (string), 3 ordinal (int32)
 *
 * As protobuf 3 writes them: fields in number order, default values (empty, 0, false) left out.
 * The decoder skips fields it does not know, so files of newer Docker versions read too.
 */

export interface PartialMeta {
  last: boolean;
  id: string;
  ordinal: number;
}

export interface LogEntry {
  source: string;
  timeNano: bigint;
  line: Buffer;
  partial: boolean;
  partialMeta?: PartialMeta;
}

/** The bytes around each record: its length, big-endian. */
const FRAME = 4;

/** Larger than any record a logger writes (a line is at most conmon's 8 KiB piece, or Docker's 16 KiB): a length above it is damage. */
const MAX_RECORD = 1024 * 1024;

function varint(n: bigint): Buffer {
  // int64 as protobuf writes it: a negative value as its 64-bit two's complement.
  let v = BigInt.asUintN(64, n);
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Buffer.from(out);
}

const key = (field: number, wire: number) => varint(BigInt((field << 3) | wire));
const bytesField = (field: number, data: Buffer) => (data.length ? [key(field, 2), varint(BigInt(data.length)), data] : []);
const varintField = (field: number, n: bigint) => (n ? [key(field, 0), varint(n)] : []);

function encodeMeta(m: PartialMeta): Buffer {
  return Buffer.concat([...varintField(1, m.last ? 1n : 0n), ...bytesField(2, Buffer.from(m.id)), ...varintField(3, BigInt(m.ordinal))]);
}

/** One LogEntry, framed: length, message, length. */
export function encodeRecord(e: LogEntry): Buffer {
  const meta = e.partialMeta ? encodeMeta(e.partialMeta) : undefined;
  const body = Buffer.concat([
    ...bytesField(1, Buffer.from(e.source)),
    ...varintField(2, e.timeNano),
    ...bytesField(3, e.line),
    ...varintField(4, e.partial ? 1n : 0n),
    // An embedded message is written even when empty, as gogo-protobuf does for a set pointer.
    ...(meta ? [key(5, 2), varint(BigInt(meta.length)), meta] : []),
  ]);
  const out = Buffer.allocUnsafe(body.length + 2 * FRAME);
  out.writeUInt32BE(body.length, 0);
  body.copy(out, FRAME);
  out.writeUInt32BE(body.length, FRAME + body.length);
  return out;
}

class Cursor {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  varint(): bigint {
    let v = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.pos >= this.buf.length) throw new Error("truncated varint");
      const b = this.buf[this.pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw new Error("varint too long");
  }
  bytes(): Buffer {
    const n = Number(this.varint());
    if (this.pos + n > this.buf.length) throw new Error("truncated field");
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
}

function decodeMeta(buf: Buffer): PartialMeta {
  const c = new Cursor(buf);
  const m: PartialMeta = { last: false, id: "", ordinal: 0 };
  while (c.pos < buf.length) {
    const k = Number(c.varint());
    const [field, wire] = [k >> 3, k & 7];
    if (field === 1 && wire === 0) m.last = c.varint() !== 0n;
    else if (field === 2 && wire === 2) m.id = c.bytes().toString();
    else if (field === 3 && wire === 0) m.ordinal = Number(BigInt.asIntN(32, c.varint()));
    else c.skip(wire);
  }
  return m;
}

/** One LogEntry message (without its frame); throws on bytes that are not one. */
export function decodeEntry(buf: Buffer): LogEntry {
  const c = new Cursor(buf);
  const e: LogEntry = { source: "", timeNano: 0n, line: Buffer.alloc(0), partial: false };
  while (c.pos < buf.length) {
    const k = Number(c.varint());
    const [field, wire] = [k >> 3, k & 7];
    if (field === 1 && wire === 2) e.source = c.bytes().toString();
    else if (field === 2 && wire === 0) e.timeNano = BigInt.asIntN(64, c.varint());
    else if (field === 3 && wire === 2) e.line = Buffer.from(c.bytes());
    else if (field === 4 && wire === 0) e.partial = c.varint() !== 0n;
    else if (field === 5 && wire === 2) e.partialMeta = decodeMeta(c.bytes());
    else c.skip(wire);
  }
  if (c.pos !== buf.length) throw new Error("truncated entry");
  return e;
}

/**
 * The complete records at the start of `buf`: their entries and how many bytes they took (the
 * rest is a record still being written). A frame whose two lengths differ is damage: reading
 * stops there (`damaged`).
 */
export function splitRecords(buf: Buffer): { entries: LogEntry[]; used: number; damaged: boolean } {
  const entries: LogEntry[] = [];
  let at = 0;
  while (at + FRAME <= buf.length) {
    const n = buf.readUInt32BE(at);
    if (n > MAX_RECORD) return { entries, used: at, damaged: true };
    const end = at + FRAME + n + FRAME;
    if (end > buf.length) break;
    if (buf.readUInt32BE(at + FRAME + n) !== n) return { entries, used: at, damaged: true };
    try {
      entries.push(decodeEntry(buf.subarray(at + FRAME, at + FRAME + n)));
    } catch {
      return { entries, used: at, damaged: true };
    }
    at = end;
  }
  return { entries, used: at, damaged: false };
}
