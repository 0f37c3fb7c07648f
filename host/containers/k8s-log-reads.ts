/**
 * A k8s-file log's entries as the reads of the process's pipe they were: conmon stamps the lines
 * of one read with one time, so consecutive entries of one stream and one time are one read.
 * What passes output on (an attachment, an exec's stream) sends a read as one piece, as
 * Docker copies the pipe: fewer, larger writes than a line each, and the same frames.
 */
import { entryBytes, type K8sLogLine } from "../supervisor/k8s-file.js";

export interface PipeRead {
  stream: "stdout" | "stderr";
  /** conmon's time of the read (RFC 3339 with nanoseconds). */
  time: string;
  /** Its lines, with their newlines (a partial last one without). */
  data: Buffer;
}

/** The reads of `entries` (in order) of the streams `wanted` takes. */
export function* pipeReads(entries: readonly K8sLogLine[], wanted: (stream: "stdout" | "stderr") => boolean): Generator<PipeRead> {
  let first: K8sLogLine | undefined;
  let parts: Buffer[] = [];
  const read = (l: K8sLogLine): PipeRead => ({ stream: l.stream, time: l.time, data: parts.length === 1 ? parts[0] : Buffer.concat(parts) });
  for (const l of entries) {
    if (!wanted(l.stream)) continue;
    if (first && (l.time !== first.time || l.stream !== first.stream)) {
      yield read(first);
      first = undefined;
      parts = [];
    }
    first ??= l;
    parts.push(entryBytes(l));
  }
  if (first) yield read(first);
}

/** The reads of each batch a follower gives (k8s-log-follow.ts's followK8sLogBatches). */
export async function* followedPipeReads(batches: AsyncIterable<readonly K8sLogLine[]>, wanted: (stream: "stdout" | "stderr") => boolean): AsyncGenerator<PipeRead> {
  for await (const batch of batches) yield* pipeReads(batch, wanted);
}
