/**
 * The client's own stdout and stderr as byte sinks: container output is bytes (a chunk may end
 * in the middle of a UTF-8 character), so it goes to the process's streams unconverted, and a
 * reader waits when a pipe is full instead of queueing a whole log in memory.
 */
import type { Sinks } from "./stdcopy.js";

export const processSinks: Sinks = {
  stdout: (data) => void process.stdout.write(data),
  stderr: (data) => void process.stderr.write(data),
};

/** Resolves once neither stdout nor stderr holds more than its buffer. */
export async function drained(): Promise<void> {
  for (const s of [process.stdout, process.stderr]) {
    if (s.writableNeedDrain) await new Promise<void>((resolve) => {
      s.once("drain", resolve);
      s.once("close", resolve);
    });
  }
}

/** Copies a stream to `sink` chunk by chunk, pausing while the client's output is full. */
export async function copyTo(body: AsyncIterable<Buffer>, sink: (data: Buffer) => void): Promise<void> {
  for await (const chunk of body) {
    sink(chunk);
    await drained();
  }
}
