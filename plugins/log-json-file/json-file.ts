/**
 * The json-file log driver: Docker's format, rotation and reading (see README.md).
 *
 * A line of the file: `{"log":"hi\n","stream":"stdout","attrs":{...},"time":"<RFC3339Nano>"}`
 * with the keys in the order Docker's encoder writes them, `attrs` only when options select
 * some, and the time as Go's `time.RFC3339Nano` writes it (UTC, trailing zeros of the fraction
 * dropped).
 */
import { createReadStream, createWriteStream, watch, type FSWatcher } from "node:fs";
import { mkdir, open, readdir, rename, stat, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import type {
  LogDriver,
  LoggerContext,
  LogMessage,
  LogMessageIn,
  LogReader,
  LogWriter,
  ReadOptions,
} from "../../core/contracts/log.js";
import { parseBytes } from "../../core/options/value-types-structured.js";

export const DRIVER_NAME = "json-file";

// --- options ---------------------------------------------------------------------------------

const KNOWN_OPTIONS = new Set([
  "max-size",
  "max-file",
  "compress",
  "labels",
  "labels-regex",
  "env",
  "env-regex",
  "tag",
  "cache-disabled",
  "cache-max-file",
  "cache-max-size",
  "cache-compress",
]);

const TAG_FIELDS = ["ID", "FullID", "Name", "ImageID", "ImageFullID", "ImageName", "DaemonName"] as const;
const TAG_FIELD_RE = /\{\{\s*\.(\w+)\s*\}\}/g;

export interface JsonFileConfig {
  /** Bytes at which the file rotates; undefined: never. */
  maxSize?: number;
  /** Files kept, the current one included (>= 1). */
  maxFile: number;
  compress: boolean;
  labels: string[];
  labelsRegex?: RegExp;
  env: string[];
  envRegex?: RegExp;
  tag?: string;
}

function fail(message: string): never {
  throw new Error(`json-file: ${message}`);
}

/** Go's strconv.ParseBool. */
function parseGoBool(key: string, raw: string): boolean {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(raw)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(raw)) return false;
  fail(`invalid value for log opt '${key}': ${JSON.stringify(raw)} is not a boolean`);
}

function parseInteger(key: string, raw: string): number {
  if (!/^[+-]?\d+$/.test(raw.trim())) fail(`invalid value for log opt '${key}': ${JSON.stringify(raw)} is not an integer`);
  return Number(raw.trim());
}

function parseSize(key: string, raw: string): number {
  try {
    return parseBytes(raw);
  } catch (err) {
    fail(`invalid value for log opt '${key}': ${JSON.stringify(raw)}: ${(err as Error).message}`);
  }
}

function parseRegex(key: string, raw: string): RegExp {
  try {
    return new RegExp(raw);
  } catch (err) {
    fail(`invalid value for log opt '${key}': ${(err as Error).message}`);
  }
}

/**
 * Checks the options as Docker's json-file driver does and returns what they mean. Throws an
 * Error naming the first unknown or invalid option. Rules (Docker's, plus one):
 * - an unknown key: `unknown log opt '<key>' for json-file log driver`;
 * - max-size: a size (parseBytes, 1024-based), larger than 0;
 * - max-file: an integer >= 1 (default 1); a value above 1 needs max-size (Docker silently
 *   ignores it; we refuse, since it would do nothing);
 * - compress: a boolean; true needs max-size and max-file >= 2 (Docker's rule);
 * - labels-regex, env-regex: valid regular expressions; tag: a template of known fields;
 * - cache-disabled, cache-compress: booleans; cache-max-size: a size; cache-max-file: an
 *   integer >= 0. They only concern dual logging, which a readable driver does not use.
 */
export function parseJsonFileOptions(options: Record<string, string>): JsonFileConfig {
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) fail(`unknown log opt '${key}' for json-file log driver`);
  }
  const cfg: JsonFileConfig = { maxFile: 1, compress: false, labels: [], env: [] };
  if (options["max-size"] !== undefined) {
    const size = parseSize("max-size", options["max-size"]);
    if (size <= 0) fail("invalid value for log opt 'max-size': max-size must be a positive number");
    cfg.maxSize = size;
  }
  if (options["max-file"] !== undefined) {
    cfg.maxFile = parseInteger("max-file", options["max-file"]);
    if (cfg.maxFile < 1) fail("invalid value for log opt 'max-file': max-file cannot be less than 1");
    if (cfg.maxFile > 1 && cfg.maxSize === undefined) fail("log opt 'max-file' can only be set when 'max-size' is set");
  }
  if (options.compress !== undefined) {
    cfg.compress = parseGoBool("compress", options.compress);
    if (cfg.compress && (cfg.maxFile < 2 || cfg.maxSize === undefined)) {
      fail("log opt 'compress' cannot be true when max-file is less than 2 or max-size is not set");
    }
  }
  if (options.labels) cfg.labels = options.labels.split(",");
  if (options["labels-regex"]) cfg.labelsRegex = parseRegex("labels-regex", options["labels-regex"]);
  if (options.env) cfg.env = options.env.split(",");
  if (options["env-regex"]) cfg.envRegex = parseRegex("env-regex", options["env-regex"]);
  if (options.tag) {
    const rest = options.tag.replace(TAG_FIELD_RE, (whole, field: string) => {
      if (!(TAG_FIELDS as readonly string[]).includes(field)) {
        fail(`invalid value for log opt 'tag': unknown field .${field} (known: ${TAG_FIELDS.map((f) => "." + f).join(", ")})`);
      }
      return "";
    });
    if (rest.includes("{{")) fail(`invalid value for log opt 'tag': ${JSON.stringify(options.tag)} is not a template of known fields`);
    cfg.tag = options.tag;
  }
  if (options["cache-disabled"] !== undefined) parseGoBool("cache-disabled", options["cache-disabled"]);
  if (options["cache-compress"] !== undefined) parseGoBool("cache-compress", options["cache-compress"]);
  if (options["cache-max-size"] !== undefined) parseSize("cache-max-size", options["cache-max-size"]);
  if (options["cache-max-file"] !== undefined && parseInteger("cache-max-file", options["cache-max-file"]) < 0) {
    fail("invalid value for log opt 'cache-max-file': cannot be less than 0");
  }
  return cfg;
}

/** Docker's `Info.ExtraAttributes` plus json-file's `tag`: what goes into `attrs`. */
export function extraAttributes(ctx: LoggerContext, cfg: JsonFileConfig): Record<string, string> {
  const extra: Record<string, string> = {};
  for (const key of cfg.labels) if (Object.hasOwn(ctx.labels, key)) extra[key] = ctx.labels[key];
  if (cfg.labelsRegex) for (const [k, v] of Object.entries(ctx.labels)) if (cfg.labelsRegex.test(k)) extra[k] = v;
  const envMap = new Map<string, string>();
  for (const e of ctx.env) {
    const eq = e.indexOf("=");
    if (eq >= 0) envMap.set(e.slice(0, eq), e.slice(eq + 1));
  }
  for (const key of cfg.env) if (envMap.has(key)) extra[key] = envMap.get(key)!;
  if (cfg.envRegex) for (const [k, v] of envMap) if (cfg.envRegex.test(k)) extra[k] = v;
  if (cfg.tag) extra.tag = expandTag(cfg.tag, ctx);
  return extra;
}

function expandTag(template: string, ctx: LoggerContext): string {
  const imageHex = ctx.imageId.includes(":") ? ctx.imageId.slice(ctx.imageId.indexOf(":") + 1) : ctx.imageId;
  const fields: Record<string, string> = {
    ID: ctx.containerId.slice(0, 12),
    FullID: ctx.containerId,
    Name: ctx.containerName.replace(/^\//, ""),
    ImageID: imageHex.slice(0, 12),
    ImageFullID: ctx.imageId,
    ImageName: ctx.imageName,
    DaemonName: "engine",
  };
  return template.replace(TAG_FIELD_RE, (_, field: string) => fields[field] ?? "");
}

// --- encoding ----------------------------------------------------------------------------------

const HEX = "0123456789abcdef";

/** A JSON string as Go's encoder writes it (HTML characters and U+2028/9 escaped as \u00XX). */
export function encodeJsonString(s: string): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let esc: string | undefined;
    if (c === 0x22) esc = '\\"';
    else if (c === 0x5c) esc = "\\\\";
    else if (c === 0x0a) esc = "\\n";
    else if (c === 0x0d) esc = "\\r";
    else if (c === 0x09) esc = "\\t";
    else if (c < 0x20 || c === 0x3c || c === 0x3e || c === 0x26) esc = "\\u00" + HEX[c >> 4] + HEX[c & 15];
    else if (c === 0x2028 || c === 0x2029) esc = c === 0x2028 ? "\\u2028" : "\\u2029";
    if (esc !== undefined) {
      out += s.slice(start, i) + esc;
      start = i + 1;
    }
  }
  return out + s.slice(start) + '"';
}

/** Go's `time.RFC3339Nano` in UTC: `2026-01-02T03:04:05.123456789Z`, trailing zeros dropped. */
export function formatRFC3339Nano(ns: bigint): string {
  let sec = ns / 1_000_000_000n;
  let frac = ns % 1_000_000_000n;
  if (frac < 0n) {
    frac += 1_000_000_000n;
    sec -= 1n;
  }
  const base = new Date(Number(sec) * 1000).toISOString().slice(0, 19);
  if (frac === 0n) return base + "Z";
  return `${base}.${frac.toString().padStart(9, "0").replace(/0+$/, "")}Z`;
}

const TIME_RE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** Nanoseconds since the epoch of an RFC3339(Nano) time, or undefined. */
export function parseRFC3339Nano(s: string): bigint | undefined {
  const m = TIME_RE.exec(s);
  if (!m) return undefined;
  const ms = Date.parse(m[1] + m[3]);
  if (Number.isNaN(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? "").padEnd(9, "0"));
}

function nsOf(msg: LogMessageIn): bigint {
  return msg.timeNs ?? BigInt(msg.time.getTime()) * 1_000_000n;
}

/** One line of the file, newline included. `attrsJson` is the encoded attrs object or "". */
export function encodeEntry(msg: LogMessageIn, attrsJson = ""): Buffer {
  const text = msg.line.toString("utf8") + (msg.partial ? "" : "\n");
  const parts: string[] = [];
  if (text !== "") parts.push(`"log":${encodeJsonString(text)}`);
  parts.push(`"stream":${encodeJsonString(msg.stream)}`);
  if (attrsJson) parts.push(`"attrs":${attrsJson}`);
  parts.push(`"time":"${formatRFC3339Nano(nsOf(msg))}"`);
  return Buffer.from(`{${parts.join(",")}}\n`, "utf8");
}

function encodeAttrs(attrs: Record<string, string>): string {
  const keys = Object.keys(attrs).sort();
  if (keys.length === 0) return "";
  return `{${keys.map((k) => `${encodeJsonString(k)}:${encodeJsonString(attrs[k])}`).join(",")}}`;
}

/** The stored line as a message, or undefined for a line that is not one. */
export function decodeEntry(raw: Buffer | string): LogMessage | undefined {
  let obj: unknown;
  try {
    obj = JSON.parse(raw.toString());
  } catch {
    return undefined;
  }
  if (!obj || typeof obj !== "object") return undefined;
  const o = obj as { log?: unknown; stream?: unknown; time?: unknown; attrs?: unknown };
  if (o.stream !== "stdout" && o.stream !== "stderr") return undefined;
  const ns = typeof o.time === "string" ? parseRFC3339Nano(o.time) : undefined;
  if (ns === undefined) return undefined;
  let log = typeof o.log === "string" ? o.log : "";
  const partial = !log.endsWith("\n");
  if (!partial) log = log.slice(0, -1);
  const msg: LogMessage = {
    line: Buffer.from(log, "utf8"),
    stream: o.stream,
    time: new Date(Number(ns / 1_000_000n)),
    timeNs: ns,
    partial,
  };
  if (o.attrs && typeof o.attrs === "object") msg.attrs = o.attrs as Record<string, string>;
  return msg;
}

// --- files -------------------------------------------------------------------------------------

export function logPath(logDir: string, containerId: string): string {
  return join(logDir, `${containerId}-json.log`);
}

async function ignoreMissing(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

async function gzipFile(src: string): Promise<void> {
  const tmp = `${src}.gz.tmp`;
  await pipeline(createReadStream(src), createGzip(), createWriteStream(tmp, { mode: 0o640 }));
  await rename(tmp, `${src}.gz`);
  await unlink(src);
}

// --- writer ------------------------------------------------------------------------------------

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
    await ignoreMissing(unlink(`${this.path}.${max - 1}`));
    await ignoreMissing(unlink(`${this.path}.${max - 1}.gz`));
    for (let i = max - 2; i >= 1; i--) {
      await ignoreMissing(rename(`${this.path}.${i}`, `${this.path}.${i + 1}`));
      await ignoreMissing(rename(`${this.path}.${i}.gz`, `${this.path}.${i + 1}.gz`));
    }
    await rename(this.path, `${this.path}.1`);
    await this.openFile();
    if (this.config.compress) await gzipFile(`${this.path}.1`);
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

// --- reader ------------------------------------------------------------------------------------

const CHUNK = 64 * 1024;

/** A file read forward from a position, complete lines only. */
class Cursor {
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

interface RotatedFile {
  n: number;
  fh: FileHandle;
  gz: boolean;
}

async function openMissingOk(path: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

/** Rotated files, newest (`.1`) first; the plain file when both `.n` and `.n.gz` exist (mid-compression). */
async function openRotated(logDir: string, base: string): Promise<RotatedFile[]> {
  let names: string[];
  try {
    names = await readdir(logDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const found = new Map<number, boolean>();
  for (const name of names) {
    if (!name.startsWith(base + ".")) continue;
    const m = /^(\d+)(\.gz)?$/.exec(name.slice(base.length + 1));
    if (!m || Number(m[1]) < 1) continue;
    const n = Number(m[1]);
    const gz = Boolean(m[2]);
    found.set(n, found.has(n) ? false : gz); // both forms: the plain one
  }
  const out: RotatedFile[] = [];
  for (const n of [...found.keys()].sort((a, b) => a - b)) {
    const gz = found.get(n)!;
    const fh = await openMissingOk(join(logDir, `${base}.${n}${gz ? ".gz" : ""}`));
    if (fh) out.push({ n, fh, gz });
  }
  return out;
}

function linesOf(file: RotatedFile): AsyncGenerator<Buffer[]> {
  return file.gz ? gzLines(file.fh) : new Cursor(file.fh).drain();
}

/** The last `n` lines of a series of batches. */
async function lastLines(batches: AsyncIterable<Buffer[]>, n: number): Promise<Buffer[]> {
  let kept: Buffer[] = [];
  for await (const batch of batches) {
    kept.push(...batch);
    if (kept.length > Math.max(2 * n, 4096)) kept = kept.slice(-n);
  }
  return n === 0 ? [] : kept.slice(-n);
}

export interface JsonFileReaderOptions {
  /** How often a follow looks at the file when no change event came (ms). Default 250. */
  pollInterval?: number;
}

export class JsonFileReader implements LogReader {
  readonly path: string;
  private readonly base: string;
  private readonly pollInterval: number;

  constructor(
    readonly ctx: Pick<LoggerContext, "containerId" | "logDir">,
    opts: JsonFileReaderOptions = {},
  ) {
    this.base = `${ctx.containerId}-json.log`;
    this.path = join(ctx.logDir, this.base);
    this.pollInterval = opts.pollInterval ?? 250;
  }

  read(opts: ReadOptions): AsyncIterable<LogMessage> {
    return this.generate(opts);
  }

  private async *generate(opts: ReadOptions): AsyncGenerator<LogMessage> {
    const signal = opts.signal;
    if (signal?.aborted) return;
    const sinceNs = opts.since ? BigInt(opts.since.getTime()) * 1_000_000n : undefined;
    const untilNs = opts.until ? BigInt(opts.until.getTime()) * 1_000_000n : undefined;
    const pick = (raw: Buffer): LogMessage | undefined => {
      const msg = decodeEntry(raw);
      if (!msg) return undefined;
      if (msg.stream === "stdout" ? !opts.stdout : !opts.stderr) return undefined;
      if (sinceNs !== undefined && msg.timeNs < sinceNs) return undefined;
      if (untilNs !== undefined && msg.timeNs > untilNs) return undefined;
      return msg;
    };

    // Open everything first, the current file before the rotated ones, so that a rotation
    // during the read costs at most a repeat, never a gap.
    const firstFh = await openMissingOk(this.path);
    let cur = firstFh ? new Cursor(firstFh) : undefined;
    const rotated = opts.tail === 0 ? [] : await openRotated(this.ctx.logDir, this.base);
    try {
      // --- what is stored now ---
      if (opts.tail === undefined) {
        for (const file of [...rotated].reverse()) {
          for await (const batch of linesOf(file)) {
            for (const raw of batch) {
              const msg = pick(raw);
              if (msg) yield msg;
              if (signal?.aborted) return;
            }
          }
        }
        if (cur) {
          for await (const batch of cur.drain()) {
            for (const raw of batch) {
              const msg = pick(raw);
              if (msg) yield msg;
              if (signal?.aborted) return;
            }
          }
        }
      } else if (opts.tail === 0) {
        if (cur) cur.pos = await lastLineEnd(cur.fh);
      } else {
        const want = opts.tail;
        let lines = cur ? await lastLines(cur.drain(), want) : [];
        for (const file of rotated) {
          if (lines.length >= want) break;
          lines = [...(await lastLines(linesOf(file), want - lines.length)), ...lines];
        }
        for (const raw of lines) {
          const msg = pick(raw);
          if (msg) yield msg;
          if (signal?.aborted) return;
        }
      }
      for (const f of rotated.splice(0)) await f.fh.close();
      if (!opts.follow) return;

      // --- follow ---
      let producerDone = false;
      let dirty = false;
      let wakeUp: (() => void) | undefined;
      const wake = () => {
        dirty = true;
        wakeUp?.();
      };
      opts.producerDone?.then(
        () => ((producerDone = true), wake()),
        () => ((producerDone = true), wake()),
      );
      signal?.addEventListener("abort", wake, { once: true });
      let watcher: FSWatcher | undefined;
      try {
        watcher = watch(this.ctx.logDir, { persistent: false }, wake);
        watcher.on("error", () => {});
      } catch {
        // No directory yet, or no inotify: polling alone.
      }
      try {
        for (;;) {
          if (signal?.aborted) return;
          const doneBefore = producerDone;
          dirty = false;
          if (!cur) {
            const fh = await openMissingOk(this.path);
            if (fh) cur = new Cursor(fh);
          }
          if (cur) {
            for await (const batch of cur.drain()) {
              for (const raw of batch) {
                const msg = pick(raw);
                if (msg) yield msg;
                if (signal?.aborted) return;
              }
            }
            const now = await stat(this.path).catch(() => undefined);
            const mine = await cur.fh.stat();
            if (!now || now.ino !== mine.ino || now.dev !== mine.dev) {
              // Rotated (renamed to .1, maybe being gzipped): the open handle still reads the
              // old file; take what the writer put there last, then move to the new file.
              for await (const batch of cur.drain()) {
                for (const raw of batch) {
                  const msg = pick(raw);
                  if (msg) yield msg;
                  if (signal?.aborted) return;
                }
              }
              await cur.fh.close();
              cur = undefined;
              if (now) continue;
            } else if (now.size < cur.pos) {
              // Truncated in place (max-file 1): start again from the top.
              cur.pos = 0;
              cur.pending = Buffer.alloc(0);
              continue;
            }
          }
          if (doneBefore) return;
          if (opts.until && Date.now() > opts.until.getTime()) return;
          if (!dirty) {
            await new Promise<void>((res) => {
              const timer = setTimeout(res, this.pollInterval);
              wakeUp = () => {
                clearTimeout(timer);
                res();
              };
            });
            wakeUp = undefined;
          }
        }
      } finally {
        watcher?.close();
        signal?.removeEventListener("abort", wake);
      }
    } finally {
      for (const f of rotated) await f.fh.close().catch(() => {});
      await cur?.fh.close().catch(() => {});
    }
  }
}

/** The offset just after the last newline of a file (0 when it has none in its last chunk). */
async function lastLineEnd(fh: FileHandle): Promise<number> {
  const { size } = await fh.stat();
  if (size === 0) return 0;
  const start = Math.max(0, size - CHUNK);
  const buf = Buffer.allocUnsafe(size - start);
  const { bytesRead } = await fh.read(buf, 0, buf.length, start);
  const nl = buf.subarray(0, bytesRead).lastIndexOf(10);
  return nl < 0 ? (start === 0 ? 0 : size) : start + nl + 1;
}

// --- the driver --------------------------------------------------------------------------------

/** The per-container logger: validates `ctx.options`, opens (creates) the file. */
export async function createJsonFileLogger(ctx: LoggerContext): Promise<JsonFileWriter> {
  const writer = new JsonFileWriter(ctx, parseJsonFileOptions(ctx.options));
  await writer.ready();
  return writer;
}

export function createJsonFileReader(
  ctx: Pick<LoggerContext, "containerId" | "logDir">,
  opts?: JsonFileReaderOptions,
): JsonFileReader {
  return new JsonFileReader(ctx, opts);
}

/** The driver the daemon gets from the `createLogDriver` hook for `json-file`. */
export function createJsonFileLogDriver(): LogDriver {
  return {
    name: DRIVER_NAME,
    capabilities: ["read"],
    validateOptions: (options) => void parseJsonFileOptions(options),
    createLogger: (ctx) => createJsonFileLogger(ctx),
    createReader: (ctx) => createJsonFileReader(ctx),
  };
}
