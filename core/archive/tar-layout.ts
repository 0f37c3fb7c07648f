/**
 * A layer tar's layout: everything of the tar but its regular files' data (headers, PAX and
 * long-name records, padding, the end-of-archive blocks, whatever follows), with, in their
 * place, the path of the file in the layer that holds the data. With it the very same tar (the
 * same bytes, so the same diff ID) is made again from the layer's files, as Docker does with
 * its tar-split data: a pulled layer need not keep its compressed blob for a `docker save` or
 * a push to another registry.
 *
 * Written while the tar is extracted (`LayoutRecorder`, fed by tar-reader.ts and the layer
 * writer), gzip-compressed into a file: some hundred bytes per entry. `tarFromLayout` makes
 * the tar again and checks it against the diff ID as it goes: a layer whose files changed fails
 * the stream rather than giving other bytes. A file the same tar replaced or removed later
 * (the same name twice) leaves its data out of reach: the recorder then says the layout is not
 * `complete`, and the caller keeps something else (or nothing, as Docker, whose save of such a
 * layer fails).
 *
 * The file: "engine-tar-layout 1\n", then records: `R` + u32 length + bytes (bytes of the
 * tar as they are), `F` + u16 length + path (UTF-8, relative to the layer folder, symlinks
 * resolved) + u48 size (that many bytes of the file, from its start).
 */
import { createHash } from "node:crypto";
import { constants, createWriteStream } from "node:fs";
import { open } from "node:fs/promises";
import { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import { chunksOf } from "./chunks.js";
import { SafeResolver } from "./safe-path.js";

const MAGIC = Buffer.from("engine-tar-layout 1\n");
/** Raw bytes are gathered into records of up to this many. */
const RAW_RECORD = 64 * 1024;

/** Records are handed to gzip in batches of about this many bytes (each write is a trip to the thread pool). */
const BATCH = 64 * 1024;

export class LayoutRecorder {
  // level 1: the layout is small (headers and paths), and compressed on the thread pool while
  // the layer's files are written there
  private readonly gzip = createGzip({ level: 1 });
  private batch: Buffer[] = [];
  private batched = 0;
  private readonly out;
  private readonly raws = Buffer.allocUnsafe(RAW_RECORD);
  private rawFill = 0;
  /** Paths recorded as file data, to tell when a later entry replaces one. */
  private readonly files = new Set<string>();
  private lost = false;
  private failure: Error | undefined;

  constructor(readonly file: string) {
    this.out = createWriteStream(file, { mode: 0o600 });
    this.gzip.on("error", (err) => (this.failure ??= err));
    this.out.on("error", (err) => (this.failure ??= err));
    this.gzip.pipe(this.out);
    this.record(MAGIC);
  }

  /** Bytes of the tar as they are (borrowed: copied here). */
  raw(bytes: Buffer): void {
    let at = 0;
    while (at < bytes.length) {
      const n = Math.min(bytes.length - at, RAW_RECORD - this.rawFill);
      bytes.copy(this.raws, this.rawFill, at, at + n);
      this.rawFill += n;
      at += n;
      if (this.rawFill === RAW_RECORD) this.flushRaw();
    }
  }

  /** The next `size` bytes of the tar are the file at `path` (relative to the layer folder). */
  fileData(path: string, size: number): void {
    this.flushRaw();
    const name = Buffer.from(path);
    if (name.length > 0xffff) {
      this.lost = true; // (no such path gets this far: the extractor refuses names this long)
      return;
    }
    const head = Buffer.allocUnsafe(1 + 2 + name.length + 6);
    head[0] = 0x46; // F
    head.writeUInt16BE(name.length, 1);
    name.copy(head, 3);
    head.writeUIntBE(size, 3 + name.length, 6);
    this.record(head);
    this.files.add(path);
  }

  /** The extractor removes or replaces `path` (and what is under it): data recorded there is gone. */
  removing(path: string): void {
    if (this.lost || this.files.size === 0) return;
    if (this.files.has(path)) {
      this.lost = true;
      return;
    }
    const under = `${path}/`;
    for (const f of this.files) {
      if (f.startsWith(under)) {
        this.lost = true;
        return;
      }
    }
  }

  /** Writes the rest; `complete` is false when some file data can no longer be read back. */
  async finish(): Promise<{ complete: boolean }> {
    this.flushRaw();
    this.flushBatch();
    this.gzip.end();
    await finished(this.out);
    if (this.failure) throw this.failure;
    return { complete: !this.lost };
  }

  /** Stops writing (the file is the caller's to remove). */
  async abort(): Promise<void> {
    this.gzip.destroy();
    this.out.destroy();
    if (!this.out.closed) await new Promise<void>((resolve) => this.out.once("close", () => resolve()));
  }

  private flushRaw(): void {
    if (this.rawFill === 0) return;
    const record = Buffer.allocUnsafe(5 + this.rawFill);
    record[0] = 0x52; // R
    record.writeUInt32BE(this.rawFill, 1);
    this.raws.copy(record, 5, 0, this.rawFill);
    this.record(record);
    this.rawFill = 0;
  }

  /** `bytes` (its own: not reused by the caller) goes out with the next batch. */
  private record(bytes: Buffer): void {
    this.batch.push(bytes);
    this.batched += bytes.length;
    if (this.batched >= BATCH) this.flushBatch();
  }

  private flushBatch(): void {
    if (this.batched === 0) return;
    this.gzip.write(this.batch.length === 1 ? this.batch[0] : Buffer.concat(this.batch, this.batched));
    this.batch = [];
    this.batched = 0;
  }
}

/**
 * The tar the layout `layoutFile` describes, its files' data read from the layer folder `root`
 * (paths resolved without following any symlink). Checked against `diffId` as it streams: other
 * bytes (a file changed, missing, of another size) fail the stream.
 */
export function tarFromLayout(layoutFile: string, root: string, diffId: string): Readable {
  return Readable.from(layoutTar(layoutFile, root, diffId), { objectMode: false });
}

async function* layoutTar(layoutFile: string, root: string, diffId: string): AsyncGenerator<Buffer> {
  const hash = createHash("sha256");
  for await (const piece of pieces(layoutFile, root)) {
    hash.update(piece);
    yield piece;
  }
  const digest = `sha256:${hash.digest("hex")}`;
  if (digest !== diffId) throw new Error(`the layer's files no longer make its tar (${diffId}): got ${digest}`);
}

/** The tar's bytes: the raw records as they are, the file records read from the layer. */
async function* pieces(layoutFile: string, root: string): AsyncGenerator<Buffer> {
  const resolver = new SafeResolver(root);
  const handle = await open(layoutFile, "r");
  const gunzip = handle.createReadStream().pipe(createGunzip());
  let pending: Buffer = Buffer.alloc(0);
  const it = chunksOf(gunzip)[Symbol.asyncIterator]();
  /** At least `n` bytes in `pending`, or false at the end of the layout. */
  const need = async (n: number): Promise<boolean> => {
    while (pending.length < n) {
      const next = await it.next();
      if (next.done) return false;
      pending = pending.length > 0 ? Buffer.concat([pending, next.value]) : next.value;
    }
    return true;
  };
  try {
    if (!(await need(MAGIC.length)) || !pending.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error("not a tar layout");
    pending = pending.subarray(MAGIC.length);
    for (;;) {
      if (!(await need(1))) return;
      const kind = pending[0];
      if (kind === 0x52) {
        if (!(await need(5))) throw new Error("truncated tar layout");
        const length = pending.readUInt32BE(1);
        if (!(await need(5 + length))) throw new Error("truncated tar layout");
        yield Buffer.from(pending.subarray(5, 5 + length));
        pending = pending.subarray(5 + length);
      } else if (kind === 0x46) {
        if (!(await need(3))) throw new Error("truncated tar layout");
        const nameLength = pending.readUInt16BE(1);
        if (!(await need(3 + nameLength + 6))) throw new Error("truncated tar layout");
        const path = pending.toString("utf8", 3, 3 + nameLength);
        const size = pending.readUIntBE(3 + nameLength, 6);
        pending = pending.subarray(3 + nameLength + 6);
        yield* fileBytes(resolver, path, size);
      } else {
        throw new Error("bad tar layout record");
      }
    }
  } finally {
    gunzip.destroy();
    await handle.close();
  }
}

/** `size` bytes of the layer's file at `path`: a regular file of that size, reached without symlinks. */
async function* fileBytes(resolver: SafeResolver, path: string, size: number): AsyncGenerator<Buffer> {
  const r = resolver.resolve(path, path.split("/"), { create: false, followSymlinks: false });
  if (!r) throw new Error(`the layer's file ${path} is missing`);
  const handle = await open(r.path, constants.O_RDONLY | constants.O_NOFOLLOW).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") throw new Error(`the layer's file ${path} is missing`);
    if (err.code === "ELOOP") throw new Error(`the layer's file ${path} is a symlink now`);
    throw err;
  });
  try {
    const st = await handle.stat();
    if (!st.isFile() || st.size !== size) throw new Error(`the layer's file ${path} is not the one extracted (${st.size} bytes, not ${size})`);
    let read = 0;
    if (size > 0) {
      for await (const chunk of chunksOf(handle.createReadStream({ highWaterMark: 1 << 20, autoClose: false }))) {
        read += chunk.length;
        yield chunk;
      }
    }
    if (read !== size) throw new Error(`the layer's file ${path} changed while it was read`);
  } finally {
    await handle.close();
  }
}
