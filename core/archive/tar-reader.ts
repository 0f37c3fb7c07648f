/**
 * A tar reader the input is pushed into chunk by chunk (`write`), calling its handler for each
 * entry and handing it the entry's data as pieces of those chunks. It frames the archive as
 * tar-stream's extractor does (the same header decoding, which it borrows from tar-stream:
 * ustar, GNU and, with `allowUnknownFormat`, v7 headers; GNU long names and link names; PAX
 * headers, global ones merged under per-entry ones, `path`, `linkpath` and `size` applied),
 * but without streams: no entry stream, no promise or buffer list per chunk.
 *
 * Chunks are borrowed: nothing here keeps a chunk, or a piece of one, once `write` has
 * returned (or the promise it returned has settled); whatever must outlive that (a header, a
 * PAX record, a file's data on its way to the disk) is copied. So a source may read into the
 * same buffer again and again.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { TarHeader } from "./metadata.js";
import { installBinaryPax } from "./pax-binary.js";

/** What becomes of an entry's data: `data` gets it piece by piece, `end` once it is all there. */
export interface EntryData {
  /**
   * The data is the whole content of this regular file (relative to the layer folder), as a
   * tar layout records it (tar-layout.ts) instead of the bytes.
   */
  layoutPath?: string;
  /** A piece of the data, borrowed until the call returns (or its promise settles). */
  data(piece: Buffer): Promise<void> | void;
  end(): Promise<void> | void;
}

/** Called for each entry, in order; undefined skips the entry's data. */
export type EntryHandler = (header: TarHeader) => Promise<EntryData | undefined> | EntryData | undefined;

/** Sees the whole tar as it is read (tar-layout.ts's recorder): its bytes, but file data by path. */
export interface TarRecording {
  raw(bytes: Buffer): void;
  fileData(path: string, size: number): void;
}

interface HeaderCodec {
  decode(buf: Buffer, filenameEncoding: string, allowUnknownFormat: boolean): TarHeader | null;
  decodeLongPath(buf: Buffer, encoding: string): string;
  decodePax(buf: Buffer): Record<string, string>;
}

let codec: HeaderCodec | undefined;

function headers(): HeaderCodec {
  if (codec) return codec;
  installBinaryPax(); // binary xattr values in PAX records survive the decoding
  const require = createRequire(import.meta.url);
  codec = require(join(dirname(require.resolve("tar-stream")), "headers.js")) as HeaderCodec;
  return codec;
}

const BLOCK = 512;
const MAX_HEADER_SIZE = 4 * 1024 * 1024; // a long name or PAX header past this is refused, as tar-stream does
const LONG_HEADERS = new Set(["gnu-long-path", "gnu-long-link-path", "pax-global-header", "pax-header"]);

/**
 * The bytes are no tar, or a tar cut short: the data's fault, told apart from what the handler
 * or the disk throws (core/archive/archive-fault.ts), so that a client's tar is answered with
 * a 400.
 */
export class TarFormatError extends Error {
  override name = "TarFormatError";
}

/** A header field decoded by tar-stream's codec, whose errors are the data's. */
function decoding<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw new TarFormatError((err as Error).message);
  }
}

/** Bytes of padding after `size` bytes of data, up to the next 512-byte block. */
const padding = (size: number) => (BLOCK - (size % BLOCK)) % BLOCK;

type Phase = "header" | "long-header" | "data" | "skip";

export class TarReader {
  private phase: Phase = "header";
  private readonly header = Buffer.alloc(BLOCK);
  private headerFill = 0;
  /** Bytes left of the entry's data (phase data) or of what is being skipped (phase skip). */
  private missing = 0;
  /** Padding after the data being read. */
  private pad = 0;
  /** The padding being skipped follows an entry's data (not a long header's). */
  private paddingAfterData = false;
  private current: TarHeader | undefined;
  private sink: EntryData | undefined;
  private long: Buffer | undefined;
  private longFill = 0;
  private gnuLongPath: string | undefined;
  private gnuLongLinkPath: string | undefined;
  private pax: Record<string, string> | undefined;
  private paxGlobal: Record<string, string> | undefined;
  private failed: Error | undefined;
  /** The entry's data goes to the recording as bytes (not as its file's path). */
  private recordBytes = true;

  constructor(
    private readonly onEntry: EntryHandler,
    private readonly opts: { allowUnknownFormat?: boolean; record?: TarRecording } = {},
  ) {}

  /** The entry being read (for error messages). */
  get entry(): TarHeader | undefined {
    return this.current;
  }

  /** Takes a chunk; when it returns a promise, the next chunk waits for it (the chunk stays borrowed till then). */
  write(chunk: Buffer): Promise<void> | undefined {
    if (this.failed) throw this.failed;
    return this.consume(chunk, 0);
  }

  /**
   * The input is over: throws unless the archive ended between entries. Like Go's archive/tar,
   * which Docker's daemon reads with, an archive may end right after an entry's data, without
   * its padding or the end-of-archive blocks: the Docker CLI sends a build context so when it
   * adds a Dockerfile given on stdin (`docker build -f - .`).
   */
  async end(): Promise<void> {
    if (this.failed) throw this.failed;
    if (this.phase === "skip" && this.paddingAfterData) return;
    if (this.phase !== "header" || this.headerFill !== 0) throw new TarFormatError("Unexpected end of data");
  }

  private consume(chunk: Buffer, from: number): Promise<void> | undefined {
    let at = from;
    try {
      for (;;) {
        if (this.phase === "data" && this.missing === 0) {
          // (also when the data ended with the previous chunk, or a handler's wait)
          const done = this.endData();
          if (done) return this.resume(chunk, at, done);
          continue;
        }
        if (at >= chunk.length) break;
        const left = chunk.length - at;
        if (this.phase === "data") {
          const n = Math.min(this.missing, left);
          const piece = chunk.subarray(at, at + n);
          at += n;
          this.missing -= n;
          if (this.recordBytes) this.opts.record?.raw(piece);
          const wait = this.sink?.data(piece);
          if (wait) return this.resume(chunk, at, wait);
          continue;
        }
        if (this.phase === "skip") {
          const n = Math.min(this.missing, left);
          this.opts.record?.raw(chunk.subarray(at, at + n));
          at += n;
          this.missing -= n;
          if (this.missing === 0) this.phase = "header";
          continue;
        }
        if (this.phase === "long-header") {
          const n = Math.min(this.long!.length - this.longFill, left);
          chunk.copy(this.long!, this.longFill, at, at + n);
          this.opts.record?.raw(chunk.subarray(at, at + n));
          this.longFill += n;
          at += n;
          if (this.longFill === this.long!.length) this.decodeLongHeader();
          continue;
        }
        const n = Math.min(BLOCK - this.headerFill, left);
        chunk.copy(this.header, this.headerFill, at, at + n);
        this.headerFill += n;
        at += n;
        if (this.headerFill < BLOCK) continue;
        this.headerFill = 0;
        this.opts.record?.raw(this.header);
        const wait = this.onHeader();
        if (wait) return this.resume(chunk, at, wait);
      }
      return undefined;
    } catch (err) {
      this.failed = err as Error;
      throw err;
    }
  }

  /** Continues with the rest of `chunk` once the handler's work is done. */
  private async resume(chunk: Buffer, at: number, wait: Promise<void>): Promise<void> {
    try {
      await wait;
    } catch (err) {
      this.failed = err as Error;
      throw err;
    }
    const more = this.consume(chunk, at);
    if (more) await more;
  }

  /** A full header block: a long header to collect, an entry, or nothing (a zero block). */
  private onHeader(): Promise<void> | undefined {
    const h = headers();
    const header = decoding(() => h.decode(this.header, "utf-8", this.opts.allowUnknownFormat ?? false));
    if (!header) return undefined; // a zero block: the end-of-archive marker (what follows is read the same way)
    if (header.type && LONG_HEADERS.has(header.type)) {
      if (header.size > MAX_HEADER_SIZE) throw new TarFormatError("Header exceeds max size");
      this.current = header;
      this.long = Buffer.alloc(header.size);
      this.longFill = 0;
      this.phase = "long-header";
      if (header.size === 0) this.decodeLongHeader();
      return undefined;
    }
    if (this.gnuLongPath !== undefined) header.name = this.gnuLongPath;
    if (this.gnuLongLinkPath !== undefined) header.linkname = this.gnuLongLinkPath;
    this.gnuLongPath = this.gnuLongLinkPath = undefined;
    if (this.pax) {
      if (this.pax.path) header.name = this.pax.path;
      if (this.pax.linkpath) header.linkname = this.pax.linkpath;
      if (this.pax.size) header.size = parseInt(this.pax.size, 10);
      header.pax = this.pax;
      this.pax = undefined;
    }
    if (!(header.size >= 0)) throw new TarFormatError("Invalid header");
    this.current = header;
    const noData = header.size === 0 || header.type === "directory";
    const opened = this.onEntry(header);
    const start = (sink: EntryData | undefined): Promise<void> | undefined => {
      if (noData) return this.finishEntry(sink);
      this.sink = sink;
      // a regular file's data is recorded by its path (read back from the file); any other, as it is
      this.recordBytes = !sink?.layoutPath;
      if (sink?.layoutPath !== undefined) this.opts.record?.fileData(sink.layoutPath, header.size);
      this.missing = header.size;
      this.pad = padding(header.size);
      this.phase = "data";
      return undefined;
    };
    if (opened instanceof Promise) return opened.then((sink) => start(sink));
    return start(opened);
  }

  /** The entry's data is all there: its end, then the padding. */
  private endData(): Promise<void> | undefined {
    const sink = this.sink;
    this.sink = undefined;
    this.phase = this.pad > 0 ? "skip" : "header";
    this.paddingAfterData = true;
    this.missing = this.pad;
    return this.finishEntry(sink);
  }

  private finishEntry(sink: EntryData | undefined): Promise<void> | undefined {
    const done = sink?.end();
    return done instanceof Promise ? done : undefined;
  }

  private decodeLongHeader(): void {
    decoding(() => this.readLongHeader());
  }

  private readLongHeader(): void {
    const h = headers();
    const buf = this.long!;
    switch (this.current!.type as string) {
      case "gnu-long-path":
        this.gnuLongPath = h.decodeLongPath(buf, "utf-8");
        break;
      case "gnu-long-link-path":
        this.gnuLongLinkPath = h.decodeLongPath(buf, "utf-8");
        break;
      case "pax-global-header":
        this.paxGlobal = h.decodePax(buf);
        break;
      case "pax-header":
        this.pax = this.paxGlobal === undefined ? h.decodePax(buf) : { ...this.paxGlobal, ...h.decodePax(buf) };
        break;
    }
    this.long = undefined;
    this.missing = padding(buf.length);
    this.paddingAfterData = false;
    this.phase = this.missing > 0 ? "skip" : "header";
  }
}
