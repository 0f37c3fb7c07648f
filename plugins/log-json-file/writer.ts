/**
 * Why this file: writing is the part that runs for every line a container prints; it owns the
 * open file, the write queue, size rotation (`max-size`, `max-file`) and gzip of rotated
 * files (`compress`), and the marks that let a crashed caller resume exactly (see README.md,
 * Rotation and Resuming after a crash).
 *
 * Messages written without waiting for each other are stored together, one write(2) for all
 * of them (a container printing fast sends thousands per spool read), cut at the message
 * where a rotation falls, so the files hold what one write per message would have made.
 */
import { mkdir, open, type FileHandle } from "node:fs/promises";
import type { LoggerContext, LogMessageIn, LogResume, LogWriter } from "../../core/contracts/log.js";
import { gzipRotated, shiftRotated } from "../../core/log-rotation.js";
import { logPath } from "./files.js";
import { dateToNs, encodeAttrs, encodeEntryText, extraAttributes, formatRFC3339Nano } from "./format.js";
import { parseJsonFileOptions, type JsonFileConfig } from "./options.js";
import { isJsonFileMark, resumeAfterMark, type JsonFileMark } from "./resume.js";

export class JsonFileWriter implements LogWriter {
  readonly path: string;
  readonly closed: Promise<void>;
  storedAfterMark?: number;
  private fh?: FileHandle;
  private ino = 0;
  private size = 0;
  /** Messages in the file (or rotated away) since this logger was made. */
  private stored = 0;
  private queue: Promise<void>;
  /** Encoded messages not yet written, and the promise of the write that will take them. */
  private pending: string[] = [];
  private batch?: Promise<void>;
  private closing?: Promise<void>;
  private markClosed!: () => void;
  private readonly attrsJson: string;
  private lastNs?: bigint;
  private lastTime = "";

  constructor(
    readonly ctx: LoggerContext,
    readonly config: JsonFileConfig,
    private readonly resume?: LogResume,
  ) {
    this.path = logPath(ctx.logDir, ctx.containerId);
    this.attrsJson = encodeAttrs(extraAttributes(ctx, config));
    this.closed = new Promise((res) => (this.markClosed = res));
    this.queue = this.start();
    this.queue.catch(() => {});
  }

  /** Settles when the file is open (a failure to open also fails every write). */
  ready(): Promise<void> {
    return this.queue;
  }

  private async start(): Promise<void> {
    await mkdir(this.ctx.logDir, { recursive: true });
    const mark = this.resume?.mark;
    if (isJsonFileMark(mark)) this.storedAfterMark = await resumeAfterMark(this.path, this.config, mark);
    await this.openFile();
  }

  private async openFile(): Promise<void> {
    this.fh = await open(this.path, "a", 0o640);
    const st = await this.fh.stat();
    this.ino = st.ino;
    this.size = st.size;
  }

  /** Where the stored messages end: the file in use and its size. */
  mark(): JsonFileMark {
    return { ino: this.ino, size: this.size };
  }

  write(msg: LogMessageIn): Promise<void> {
    if (this.closing) return Promise.reject(new Error(`json-file: the logger of container ${this.ctx.containerId} is closed`));
    this.pending.push(encodeEntryText(msg, this.attrsJson, this.formatTime(msg)));
    if (!this.batch) {
      const batch = this.queue.then(() => this.storePending());
      this.batch = batch;
      this.queue = batch.catch(() => {});
    }
    return this.batch;
  }

  /** The lines of one spool read share their time: format it once. */
  private formatTime(msg: LogMessageIn): string {
    const ns = msg.timeNs ?? dateToNs(msg.time);
    if (ns !== this.lastNs) {
      this.lastNs = ns;
      this.lastTime = formatRFC3339Nano(ns);
    }
    return this.lastTime;
  }

  private async storePending(): Promise<void> {
    const entries = this.pending;
    this.pending = [];
    this.batch = undefined;
    if (!this.fh) throw new Error(`json-file: ${this.path} is not open`);
    let text = "";
    let textBytes = 0;
    let count = 0;
    for (const entry of entries) {
      // As Docker: a file that has reached max-size rotates before the next write.
      if (this.config.maxSize !== undefined && this.size + textBytes >= this.config.maxSize) {
        await this.append(text, count);
        text = "";
        textBytes = 0;
        count = 0;
        await this.rotate();
      }
      text += entry;
      textBytes += Buffer.byteLength(entry);
      count++;
    }
    await this.append(text, count);
  }

  private async append(text: string, count: number): Promise<void> {
    if (count === 0) return;
    const data = Buffer.from(text, "utf8");
    let off = 0;
    while (off < data.length) {
      const { bytesWritten } = await this.fh!.write(data, off, data.length - off);
      off += bytesWritten;
    }
    this.size += data.length;
    this.stored += count;
  }

  /** Fenced by the caller's checkpoints: a kill inside leaves a state resume.ts knows. */
  private async rotate(): Promise<void> {
    await this.resume?.checkpoint?.(this.stored);
    const fh = this.fh!;
    const max = this.config.maxFile;
    if (max < 2) {
      await fh.truncate(0);
      this.size = 0;
    } else {
      this.fh = undefined;
      await fh.close();
      await shiftRotated(this.path, max);
      await this.openFile();
    }
    await this.resume?.checkpoint?.(this.stored);
    if (max >= 2 && this.config.compress) await gzipRotated(`${this.path}.1`, 0o640);
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

/** The per-container logger: validates `ctx.options`, resumes after `resume.mark`, opens (creates) the file. */
export async function createJsonFileLogger(ctx: LoggerContext, resume?: LogResume): Promise<JsonFileWriter> {
  const writer = new JsonFileWriter(ctx, parseJsonFileOptions(ctx.options), resume);
  await writer.ready();
  return writer;
}
