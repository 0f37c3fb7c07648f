/**
 * conmon's k8s-file log format, as bytes: `<RFC 3339 time> <stdout|stderr> <P|F> <bytes>\n`
 * (`P`: the line goes on in the next entry). Read by the supervisor's drain (spool-batch.ts)
 * and by engined's followers of a spool or an exec's output; the bytes are what the process
 * wrote, UTF-8 or not (a terminal's output holds carriage returns). Parsing works on the bytes,
 * no regular expression, no copy of the text: a container printing fast gives a million lines a
 * minute.
 */
import { parseRFC3339Nano } from "../../core/rfc3339-nano.js";

export interface K8sLogLine {
  /** RFC 3339 with nanoseconds, as conmon wrote it. */
  time: string;
  stream: "stdout" | "stderr";
  /** `P`: the line goes on in the next entry; `F`: it ends here. */
  partial: boolean;
  /** The bytes as the process wrote them. */
  line: Buffer;
}

const SPACE = 0x20;
const NEWLINE = 0x0a;
const NEWLINE_BYTES = Buffer.from("\n");

/** One entry, its newline left out; undefined for what is none (lines of another shape are skipped). */
export function parseK8sEntry(entry: Buffer): K8sLogLine | undefined {
  const sp1 = entry.indexOf(SPACE);
  if (sp1 < 0) return undefined;
  const sp2 = entry.indexOf(SPACE, sp1 + 1);
  if (sp2 < 0 || entry.length < sp2 + 3 || entry[sp2 + 2] !== SPACE) return undefined;
  const stream = entry.toString("latin1", sp1 + 1, sp2);
  if (stream !== "stdout" && stream !== "stderr") return undefined;
  const flag = entry[sp2 + 1];
  if (flag !== 0x50 && flag !== 0x46) return undefined; // P, F
  return { time: entry.toString("latin1", 0, sp1), stream, partial: flag === 0x50, line: entry.subarray(sp2 + 3) };
}

/** The entries of a log's bytes; an unterminated last line (being written) is left out. */
export function parseK8sLog(data: Buffer): K8sLogLine[] {
  const out: K8sLogLine[] = [];
  for (let start = 0; start < data.length; ) {
    const nl = data.indexOf(NEWLINE, start);
    if (nl < 0) break;
    const entry = parseK8sEntry(data.subarray(start, nl));
    if (entry) out.push(entry);
    start = nl + 1;
  }
  return out;
}

/** What an entry gives its reader: its bytes, and the newline a full line ends with. */
export function entryBytes(l: K8sLogLine): Buffer {
  return l.partial ? l.line : Buffer.concat([l.line, NEWLINE_BYTES]);
}

/**
 * Entries' times, parsed once for a run of equal ones: conmon stamps every line of one read of
 * the pipe alike. A time that is none is the moment it is read.
 */
export class K8sTimes {
  private last: string | undefined;
  private lastNs = 0n;
  private lastDate = new Date(0);

  at(time: string): { ns: bigint; date: Date } {
    if (time !== this.last) {
      this.last = time;
      this.lastNs = parseRFC3339Nano(time) ?? BigInt(Date.now()) * 1_000_000n;
      this.lastDate = new Date(Number(this.lastNs / 1_000_000n));
    }
    return { ns: this.lastNs, date: this.lastDate };
  }
}
