/**
 * Why this file: writing runs for every line a container prints; it owns the open file, the
 * write queue, rotation (`max-size`, `max-file`) and gzip of rotated files (`compress`), as
 * Docker's loggerutils does it: before a write, a file that has reached max-size is rotated
 * (so a file passes max-size by at most one record); with one file kept it is truncated in
 * place; otherwise `.N-1` goes, `.i` becomes `.i+1`, the file becomes `.1` (then `.1.gz`).
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, type FileHandle } from "node:fs/promises";
import type { LoggerContext, LogMessageIn, LogStream, LogWriter } from "../../core/contracts/log.js";
import { gzipRotated, shiftRotated } from "../../core/log-rotation.js";
import { dateToNs } from "../../core/rfc3339-nano.js";
import { FILE_MODE, FOLDER_MODE, logFolder, logPath } from "./files.js";
import { parseLocalOptions, type LocalConfig } from "./options.js";
import { encodeRecord, type PartialMeta } from "./proto.js";



export class LocalWriter implements LogWriter {
  readonly path: string;
  readonly closed: Promise<void>;
  private fh?: FileHandle;
  private size = 0;
  private queue: Promise<void>;
  private closing?: Promise<void>;
  private markClosed!: () => void;
  /** The pieces of a line still open, per stream: Docker's partial metadata (an id, ordinals from 1). */
  private readonly groups = new Map<LogStream, PartialMeta>();

  constructor(
    readonly ctx: LoggerContext,
    readonly config: LocalConfig,
  ) {
    this.path = logPath(ctx.logDir);
    this.closed = new Promise((res) => (this.markClosed = res));
    this.queue = this.openFile();
    this.queue.catch(() => {});
  }

  ready(): Promise<void> {
    return this.queue;
  }

  private async openFile(): Promise<void> {
    const folder = logFolder(this.ctx.logDir);
    await mkdir(folder, { recursive: true, mode: FOLDER_MODE });
    await chmod(folder, FOLDER_MODE);
    this.fh = await open(this.path, "a", FILE_MODE);
    this.size = (await this.fh.stat()).size;
  }

  /**
   * A piece without a newline is stored as Docker's copier stores it: `partial` with metadata
   * (`last` false); the piece that ends the line is `partial` with `last` true; a whole line
   * has no metadata.
   */
  private partialMeta(msg: LogMessageIn): PartialMeta | undefined {
    const open = this.groups.get(msg.stream);
    if (msg.partial) {
      const meta = open ?? { last: false, id: randomBytes(32).toString("hex"), ordinal: 0 };
      meta.ordinal++;
      this.groups.set(msg.stream, meta);
      return { ...meta };
    }
    if (!open) return undefined;
    this.groups.delete(msg.stream);
    return { last: true, id: open.id, ordinal: open.ordinal + 1 };
  }

  write(msg: LogMessageIn): Promise<void> {
    if (this.closing) return Promise.reject(new Error(`local: the logger of container ${this.ctx.containerId} is closed`));
    const meta = this.partialMeta(msg);
    const data = encodeRecord({
      source: msg.stream,
      timeNano: msg.timeNs ?? dateToNs(msg.time),
      line: msg.line,
      partial: meta !== undefined,
      ...(meta ? { partialMeta: meta } : {}),
    });
    const done = this.queue.then(() => this.store(data));
    this.queue = done.catch(() => {});
    return done;
  }

  private async store(data: Buffer): Promise<void> {
    if (!this.fh) throw new Error(`local: ${this.path} is not open`);
    if (this.size >= this.config.maxSize) await this.rotate();
    let off = 0;
    while (off < data.length) {
      const { bytesWritten } = await this.fh!.write(data, off, data.length - off);
      off += bytesWritten;
    }
    this.size += data.length;
  }

  private async rotate(): Promise<void> {
    const fh = this.fh!;
    const max = this.config.maxFile;
    if (max < 2) {
      await fh.truncate(0);
      this.size = 0;
      return;
    }
    this.fh = undefined;
    await fh.close();
    await shiftRotated(this.path, max);
    await this.openFile();
    if (this.config.compress) await gzipRotated(`${this.path}.1`, FILE_MODE);
  }

  close(): Promise<void> {
    this.closing ??= this.queue
      .catch(() => {})
      .then(async () => {
        const fh = this.fh;
        this.fh = undefined;
        await fh?.close();
      })
      .finally(() => this.markClosed());
    return this.closing;
  }
}

/** The per-container logger: checks `ctx.options` (Docker's start-time errors), opens the file. */
export async function createLocalLogger(ctx: LoggerContext): Promise<LocalWriter> {
  const writer = new LocalWriter(ctx, parseLocalOptions(ctx.options));
  await writer.ready();
  return writer;
}
