/**
 * Why this file: reading back for `docker logs`: every record oldest first across the rotated
 * files (plain or gzipped) and the current one, the last N across files (`tail`), `since` /
 * `until`, stream selection, and a follow that survives the writer's rotations (it keeps the
 * open file: after a rename it reads what was written there last, then opens the new file).
 */
import { open, readdir, type FileHandle } from "node:fs/promises";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { TurnBudget } from "../../core/async/turn-budget.js";
import type { LoggerContext, LogMessage, LogReader, ReadOptions } from "../../core/contracts/log.js";
import { LogFollowWaker, logFileFate } from "../../core/log-follow.js";
import { boundNs } from "../../core/rfc3339-nano.js";
import { LOG_FILE, logFolder, logPath } from "./files.js";
import { splitRecords, type LogEntry } from "./proto.js";

const gunzipAsync = promisify(gunzip);
const CHUNK = 64 * 1024;

export interface LocalReaderOptions {
  /** How often a follow looks at the file when no change event came (ms). Default 250. */
  pollInterval?: number;
}

function enoent(err: unknown): undefined {
  if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
  throw err;
}

/** The current file read forward from a position: complete records only. */
class Cursor {
  pending = Buffer.alloc(0);
  pos = 0;
  constructor(readonly fh: FileHandle) {}

  async *drain(): AsyncGenerator<LogEntry[]> {
    const buf = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      const { bytesRead } = await this.fh.read(buf, 0, CHUNK, this.pos);
      if (bytesRead === 0) return;
      this.pos += bytesRead;
      const data = Buffer.concat([this.pending, buf.subarray(0, bytesRead)]);
      const { entries, used, damaged } = splitRecords(data);
      // Damage (not a record): what is after it cannot be framed; the rest of the file is skipped.
      this.pending = damaged ? Buffer.alloc(0) : Buffer.from(data.subarray(used));
      if (damaged) this.pos = (await this.fh.stat()).size;
      if (entries.length) yield entries;
    }
  }
}

/** Every record of a rotated file (at most max-size and one record, so read whole). */
async function entriesOf(path: string, gz: boolean): Promise<LogEntry[]> {
  const raw = await open(path, "r").then(
    async (fh) => {
      try {
        return await fh.readFile();
      } finally {
        await fh.close();
      }
    },
    enoent,
  );
  if (!raw) return [];
  const data = gz ? await gunzipAsync(raw).catch(() => Buffer.alloc(0)) : raw;
  return splitRecords(data).entries;
}

/** Rotated files, newest (`.1`) first; the plain one when both `.N` and `.N.gz` exist (mid-compression). */
async function rotatedFiles(folder: string): Promise<{ path: string; gz: boolean }[]> {
  const names = (await readdir(folder).catch(enoent)) ?? [];
  const found = new Map<number, boolean>();
  for (const name of names) {
    const m = /^container\.log\.(\d+)(\.gz)?$/.exec(name);
    if (!m || Number(m[1]) < 1) continue;
    const n = Number(m[1]);
    found.set(n, found.has(n) ? false : Boolean(m[2]));
  }
  return [...found.keys()].sort((a, b) => a - b).map((n) => ({ path: `${folder}/${LOG_FILE}.${n}${found.get(n) ? ".gz" : ""}`, gz: found.get(n)! }));
}

/** A stored entry as the contract's message; a piece that does not end its line is partial. */
function toMessage(e: LogEntry): LogMessage | undefined {
  if (e.source !== "stdout" && e.source !== "stderr") return undefined;
  return {
    line: e.line,
    stream: e.source,
    time: new Date(Number(e.timeNano / 1_000_000n)),
    timeNs: e.timeNano,
    partial: e.partial && !e.partialMeta?.last,
  };
}

export class LocalReader implements LogReader {
  readonly path: string;
  private readonly folder: string;
  private readonly pollInterval: number;

  constructor(
    readonly ctx: Pick<LoggerContext, "containerId" | "logDir">,
    opts: LocalReaderOptions = {},
  ) {
    this.folder = logFolder(ctx.logDir);
    this.path = logPath(ctx.logDir);
    this.pollInterval = opts.pollInterval ?? 250;
  }

  read(opts: ReadOptions): AsyncIterable<LogMessage> {
    return this.generate(opts);
  }

  private async *generate(opts: ReadOptions): AsyncGenerator<LogMessage> {
    const signal = opts.signal;
    if (signal?.aborted) return;
    const sinceNs = boundNs(opts.since, opts.sinceNs);
    const untilNs = boundNs(opts.until, opts.untilNs);
    const pick = (e: LogEntry): LogMessage | undefined => {
      const msg = toMessage(e);
      if (!msg || (msg.stream === "stdout" ? !opts.stdout : !opts.stderr)) return undefined;
      if (sinceNs !== undefined && msg.timeNs < sinceNs) return undefined;
      if (untilNs !== undefined && msg.timeNs > untilNs) return undefined;
      return msg;
    };
    // thousands of entries at a time: given (and written by the reader's consumer) in slices
    // that give the event loop its turns
    const turns = new TurnBudget();
    const emit = async function* (entries: LogEntry[]): AsyncGenerator<LogMessage> {
      for (const e of entries) {
        const msg = pick(e);
        if (msg) yield msg;
        if (signal?.aborted) return;
        if (turns.spent()) await turns.next();
      }
    };

    // The current file first, then the list of rotated ones: a rotation meanwhile costs at most a repeat.
    const firstFh = await open(this.path, "r").catch(enoent);
    let cur = firstFh ? new Cursor(firstFh) : undefined;
    try {
      const rotated = opts.tail === 0 ? [] : await rotatedFiles(this.folder);
      if (opts.tail === 0) {
        if (cur) cur.pos = (await cur.fh.stat()).size; // only what comes later (records are written whole)
      } else if (opts.tail === undefined) {
        for (const f of [...rotated].reverse()) {
          yield* emit(await entriesOf(f.path, f.gz));
          if (signal?.aborted) return;
        }
        if (cur) {
          for await (const batch of cur.drain()) {
            yield* emit(batch);
            if (signal?.aborted) return;
          }
        }
      } else {
        const want = opts.tail;
        let current: LogEntry[] = [];
        if (cur) {
          for await (const batch of cur.drain()) {
            current.push(...batch);
            if (current.length > 2 * want + 4096) current = current.slice(-want);
          }
        }
        if (current.length > want) current = current.slice(-want);
        // Older files only as far as the tail reaches, newest first.
        const older: LogEntry[][] = [];
        let have = current.length;
        for (const f of rotated) {
          if (have >= want) break;
          let entries = await entriesOf(f.path, f.gz);
          if (entries.length > want - have) entries = entries.slice(-(want - have));
          older.unshift(entries);
          have += entries.length;
        }
        for (const entries of [...older, current]) {
          yield* emit(entries);
          if (signal?.aborted) return;
        }
      }
      if (!opts.follow) return;
      yield* this.follow(opts, () => cur, (c) => (cur = c), emit);
    } finally {
      await cur?.fh.close().catch(() => {});
    }
  }

  /** Goes on with what is written later, until the producer is done, `until` passes, or an abort. */
  private async *follow(
    opts: ReadOptions,
    getCur: () => Cursor | undefined,
    setCur: (c: Cursor | undefined) => void,
    emit: (entries: LogEntry[]) => AsyncGenerator<LogMessage>,
  ): AsyncGenerator<LogMessage> {
    const signal = opts.signal;
    const waker = new LogFollowWaker(this.folder, opts);
    try {
      for (;;) {
        if (signal?.aborted) return;
        const doneBefore = waker.beginRound();
        if (!getCur()) {
          const fh = await open(this.path, "r").catch(enoent);
          if (fh) setCur(new Cursor(fh));
        }
        const cur = getCur();
        if (cur) {
          for await (const batch of cur.drain()) yield* emit(batch);
          if (signal?.aborted) return;
          const { fate, present } = await logFileFate(this.path, cur.fh, cur.pos);
          if (fate === "rotated") {
            // The open handle still reads the old file; take its last records, then move on.
            for await (const batch of cur.drain()) yield* emit(batch);
            await cur.fh.close();
            setCur(undefined);
            if (present) continue;
          } else if (fate === "truncated") {
            // Truncated in place (one file kept): from the top again.
            cur.pos = 0;
            cur.pending = Buffer.alloc(0);
            continue;
          }
        }
        if (doneBefore) return;
        if (opts.until && Date.now() > opts.until.getTime()) return;
        await waker.wait(this.pollInterval);
      }
    } finally {
      waker.close();
    }
  }
}

export function createLocalReader(ctx: Pick<LoggerContext, "containerId" | "logDir">, opts?: LocalReaderOptions): LocalReader {
  return new LocalReader(ctx, opts);
}
