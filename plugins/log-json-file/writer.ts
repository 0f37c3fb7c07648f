/**
 * Why this file: writing is the part that runs for every line a container prints; it owns the
 * open file, the write queue, size rotation (`max-size`, `max-file`) and gzip of rotated
 * files (`compress`), and nothing else (see README.md, Rotation).
 */
import { mkdir, open, type FileHandle } from "node:fs/promises";
import type { LoggerContext, LogMessageIn, LogWriter } from "../../core/contracts/log.js";
import { gzipRotated, shiftRotated } from "../../core/log-rotation.js";
import { logPath } from "./files.js";
import { encodeAttrs, encodeEntry, extraAttributes } from "./format.js";
import { parseJsonFileOptions, type JsonFileConfig } from "./options.js";


export class JsonFileWriter implements LogWriter {
  readonly path: string;
  readonly closed: Promise<void>;
  private fh?: FileHandle;
  private size = 0;
  private queue: Promise<void>;
  private closing?: Promise<void>;
  private markClosed!: () => void;
  private readonly attrsJson: string;

  constructor(
    readonly ctx: LoggerContext,
    readonly config: JsonFileConfig,
  ) {
    this.path = logPath(ctx.logDir, ctx.containerId);
    this.attrsJson = encodeAttrs(extraAttributes(ctx, config));
    this.closed = new Promise((res) => (this.markClosed = res));
    this.queue = this.openFile();
    this.queue.catch(() => {});
  }

  /** Settles when the file is open (a failure to open also fails every write). */
  ready(): Promise<void> {
    return this.queue;
  }

  private async openFile(): Promise<void> {
    await mkdir(this.ctx.logDir, { recursive: true });
    this.fh = await open(this.path, "a", 0o640);
    this.size = (await this.fh.stat()).size;
  }

  write(msg: LogMessageIn): Promise<void> {
    if (this.closing) return Promise.reject(new Error(`json-file: the logger of container ${this.ctx.containerId} is closed`));
    const data = encodeEntry(msg, this.attrsJson);
    const done = this.queue.then(() => this.store(data));
    this.queue = done.catch(() => {});
    return done;
  }

  private async store(data: Buffer): Promise<void> {
    if (!this.fh) throw new Error(`json-file: ${this.path} is not open`);
    // As Docker: a file that has reached max-size rotates before the next write.
    if (this.config.maxSize !== undefined && this.size >= this.config.maxSize) await this.rotate();
    let off = 0;
    while (off < data.length) {
      const { bytesWritten } = await this.fh.write(data, off, data.length - off);
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
    if (this.config.compress) await gzipRotated(`${this.path}.1`, 0o640);
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

/** The per-container logger: validates `ctx.options`, opens (creates) the file. */
export async function createJsonFileLogger(ctx: LoggerContext): Promise<JsonFileWriter> {
  const writer = new JsonFileWriter(ctx, parseJsonFileOptions(ctx.options));
  await writer.ready();
  return writer;
}
