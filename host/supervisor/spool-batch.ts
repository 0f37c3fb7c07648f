/**
 * One read of conmon's k8s-file spool, parsed: the messages for the logger, and where each
 * begins in the spool file, so that a checkpoint the logger asks for in the middle of the batch
 * (before a rotation) can be saved as a spool offset. Parsing works on the bytes (no regular
 * expression, no copy of the text): a container printing fast gives a million lines a minute.
 * The format is k8s-file.ts's.
 */
import type { LogMessageIn } from "../../core/contracts/log.js";
import { K8sTimes, parseK8sEntry } from "./k8s-file.js";

export interface SpoolEntry {
  msg: LogMessageIn;
  /** Byte offsets of the line in the spool file: its start, and just after its newline. */
  start: number;
  end: number;
}

const NEWLINE = 0x0a;

export class SpoolBatch {
  private readonly starts: number[] = [];
  /** Just after the last entry handed to the writer or skipped. */
  private lastEnd: number;
  private readonly times = new K8sTimes();

  /** `offset`: where the batch begins in the spool file; `before`: messages the writer had before it. */
  constructor(
    private readonly offset: number,
    private readonly before: number,
  ) {
    this.lastEnd = offset;
  }

  /** The entries of `chunk` (whole lines), read at the batch's offset. */
  *parse(chunk: Buffer): Generator<SpoolEntry> {
    const base = this.offset;
    for (let start = 0; start < chunk.length; ) {
      let nl = chunk.indexOf(NEWLINE, start);
      if (nl < 0) nl = chunk.length - 1;
      const msg = this.message(chunk, start, nl);
      if (msg) yield { msg, start: base + start, end: base + nl + 1 };
      start = nl + 1;
    }
  }

  private message(chunk: Buffer, start: number, nl: number): LogMessageIn | undefined {
    const e = parseK8sEntry(chunk.subarray(start, nl));
    if (!e) return undefined;
    const { ns, date } = this.times.at(e.time);
    return { line: e.line, stream: e.stream, time: date, timeNs: ns, partial: e.partial };
  }

  /** The entry was not handed to the writer (it had it already). */
  skipped(entry: SpoolEntry): void {
    this.lastEnd = entry.end;
  }

  /** The entry was handed to the writer, after those before it. */
  submitted(entry: SpoolEntry): void {
    this.starts.push(entry.start);
    this.lastEnd = entry.end;
  }

  /** The spool offset at which the writer, holding `stored` messages in all, stands. */
  offsetAt(stored: number): number {
    const i = stored - this.before;
    if (i < this.starts.length) return this.starts[Math.max(0, i)];
    return this.lastEnd;
  }
}
