/**
 * Why this file: reading back for `docker logs` has its own rules (tail across rotated files,
 * since/until, stream selection) and a follow that survives the writer's rotations; it shares
 * only the file names and the line format with the writer (see README.md, Reading).
 */
import { open } from "node:fs/promises";
import { TurnBudget } from "../../core/async/turn-budget.js";
import type { LoggerContext, LogMessage, LogReader, ReadOptions } from "../../core/contracts/log.js";
import { LogFollowWaker, logFileFate } from "../../core/log-follow.js";
import { boundNs } from "../../core/rfc3339-nano.js";
import { logFileName, logPath, missingOk, openRotated } from "./files.js";
import { decodeEntry } from "./format.js";
import { Cursor, lastLineEnd, lastLines, linesOf } from "./lines.js";

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
    this.base = logFileName(ctx.containerId);
    this.path = logPath(ctx.logDir, ctx.containerId);
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
    const firstFh = await missingOk(open(this.path, "r"));
    let cur = firstFh ? new Cursor(firstFh) : undefined;
    const rotated = opts.tail === 0 ? [] : await openRotated(this.ctx.logDir, this.base);
    /** The messages of some batches of raw lines that pass the filters, until an abort. */
    // a batch is thousands of lines: decoded (and written by the reader's consumer) in slices
    // that give the event loop its turns
    const turns = new TurnBudget();
    const emit = async function* (batches: AsyncIterable<Buffer[]> | Iterable<Buffer[]>): AsyncGenerator<LogMessage> {
      for await (const batch of batches) {
        for (const raw of batch) {
          const msg = pick(raw);
          if (msg) yield msg;
          if (signal?.aborted) return;
          if (turns.spent()) await turns.next();
        }
      }
    };
    try {
      // --- what is stored now ---
      if (opts.tail === undefined) {
        for (const file of [...rotated].reverse()) {
          yield* emit(linesOf(file));
          if (signal?.aborted) return;
        }
        if (cur) {
          yield* emit(cur.drain());
          if (signal?.aborted) return;
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
        yield* emit([lines]);
        if (signal?.aborted) return;
      }
      for (const f of rotated.splice(0)) await f.fh.close();
      if (!opts.follow) return;

      // --- follow ---
      const waker = new LogFollowWaker(this.ctx.logDir, opts);
      try {
        for (;;) {
          if (signal?.aborted) return;
          const doneBefore = waker.beginRound();
          if (!cur) {
            const fh = await missingOk(open(this.path, "r"));
            if (fh) cur = new Cursor(fh);
          }
          if (cur) {
            yield* emit(cur.drain());
            if (signal?.aborted) return;
            const { fate, present } = await logFileFate(this.path, cur.fh, cur.pos);
            if (fate === "rotated") {
              // Renamed to .1, maybe being gzipped: the open handle still reads the old file;
              // take what the writer put there last, then move to the new file.
              yield* emit(cur.drain());
              if (signal?.aborted) return;
              await cur.fh.close();
              cur = undefined;
              if (present) continue;
            } else if (fate === "truncated") {
              // Truncated in place (max-file 1): start again from the top.
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
    } finally {
      for (const f of rotated) await f.fh.close().catch(() => {});
      await cur?.fh.close().catch(() => {});
    }
  }
}

export function createJsonFileReader(
  ctx: Pick<LoggerContext, "containerId" | "logDir">,
  opts?: JsonFileReaderOptions,
): JsonFileReader {
  return new JsonFileReader(ctx, opts);
}
