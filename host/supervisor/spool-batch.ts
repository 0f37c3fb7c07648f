/**
 * One read of conmon's k8s-file spool, parsed: the messages for the logger, and where each
 * begins in the spool file, so that a checkpoint the logger asks for in the middle of the batch
 * (before a rotation) can be saved as a spool offset. Parsing works on the bytes (no regular
 * expression, no copy of the text): a container printing fast gives a million lines a minute.
 *
 * A k8s-file line: `<RFC 3339 time> <stdout|stderr> <P|F> <text>\n` (`P`: the text goes on in
 * the next line). Lines of another shape are skipped, as they always were.
 */
import type { LogMessageIn } from "../../core/contracts/log.js";
import { parseRFC3339Nano } from "../../core/rfc3339-nano.js";

export interface SpoolEntry {
  msg: LogMessageIn;
  /** Byte offsets of the line in the spool file: its start, and just after its newline. */
  start: number;
  end: number;
}

const SPACE = 0x20;
const NEWLINE = 0x0a;

export class SpoolBatch {
  private readonly starts: number[] = [];
  /** Just after the last entry handed to the writer or skipped. */
  private lastEnd: number;
  /** conmon stamps every line of one read of the pipe alike: parse the time once for them. */
  private lastTime = "";
  private lastNs = 0n;
  private lastDate = new Date(0);

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
    const sp1 = chunk.indexOf(SPACE, start);
    if (sp1 < 0 || sp1 >= nl) return undefined;
    const sp2 = chunk.indexOf(SPACE, sp1 + 1);
    if (sp2 < 0 || sp2 + 2 >= nl + 1 || chunk[sp2 + 2] !== SPACE) return undefined;
    const stream = chunk.toString("latin1", sp1 + 1, sp2);
    if (stream !== "stdout" && stream !== "stderr") return undefined;
    const flag = chunk[sp2 + 1];
    if (flag !== 0x50 && flag !== 0x46) return undefined; // P, F
    const time = chunk.toString("latin1", start, sp1);
    if (time !== this.lastTime) {
      this.lastTime = time;
      this.lastNs = parseRFC3339Nano(time) ?? BigInt(Date.now()) * 1_000_000n;
      this.lastDate = new Date(Number(this.lastNs / 1_000_000n));
    }
    return { line: chunk.subarray(sp2 + 3, nl), stream, time: this.lastDate, timeNs: this.lastNs, partial: flag === 0x50 };
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
