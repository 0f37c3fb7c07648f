/**
 * Docker's multiplexed stream (logs and attach without a TTY): frames of an 8-byte header
 * (stream type, three zero bytes, a big-endian length) and the payload. Type 0 is stdin
 * written back, 1 stdout, 2 stderr, 3 an error the daemon reports in the middle of the stream.
 */
import { drained } from "./output.js";

export interface Sinks {
  stdout(data: Buffer): void;
  stderr(data: Buffer): void;
}

/** A daemon's error reported inside the stream (frame type 3), worded as the Docker CLI's. */
export class StreamError extends Error {
  constructor(message: string) {
    super(`error from daemon in stream: ${message}`);
  }
}

/** Feeds chunks as they come; frames may straddle chunks. */
export class Demuxer {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly sinks: Sinks) {}

  write(chunk: Buffer): void {
    let buf = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    while (buf.length >= 8) {
      const size = buf.readUInt32BE(4);
      if (buf.length < 8 + size) break;
      const type = buf[0];
      const payload = buf.subarray(8, 8 + size);
      buf = buf.subarray(8 + size);
      if (type === 0 || type === 1) this.sinks.stdout(payload);
      else if (type === 2) this.sinks.stderr(payload);
      else if (type === 3) throw new StreamError(payload.toString("utf8"));
      else throw new Error(`Unrecognized input header: ${type}`);
    }
    this.pending = buf;
  }
}

/** Copies a whole multiplexed stream to the sinks, pausing while the output is full. */
export async function demultiplex(body: AsyncIterable<Buffer>, sinks: Sinks): Promise<void> {
  const demuxer = new Demuxer(sinks);
  for await (const chunk of body) {
    demuxer.write(chunk);
    await drained();
  }
}
