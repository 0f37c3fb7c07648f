/**
 * Docker's multiplexed stream (logs and attach without a TTY): each chunk is one frame, an
 * 8-byte header (the stream: 0 stdin, 1 stdout, 2 stderr; three zero bytes; the length as a
 * big-endian uint32) and the bytes. With a TTY the bytes go raw, without frames.
 */
import { compareApiVersions } from "../../core/version.js";

export const STREAM_IDS = { stdin: 0, stdout: 1, stderr: 2 } as const;

export function frame(stream: keyof typeof STREAM_IDS, data: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header[0] = STREAM_IDS[stream];
  header.writeUInt32BE(data.length, 4);
  return Buffer.concat([header, data]);
}

/** The content type of a stream of container output, by API version and TTY. */
export function streamContentType(apiVersion: string, tty: boolean): string {
  return !tty && compareApiVersions(apiVersion, "1.42") >= 0 ? "application/vnd.docker.multiplexed-stream" : "application/vnd.docker.raw-stream";
}
