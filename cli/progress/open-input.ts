/**
 * A file to stream to the daemon (import, load), opened before any request so that a missing
 * file fails as the Docker CLI's does ("open x.tar: no such file or directory"), or stdin for "-".
 */
import { createReadStream, openSync } from "node:fs";
import type { Readable } from "node:stream";
import { ExitError } from "../command.js";

/** Go's wording of the common open errors. */
const GO_ERRORS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EISDIR: "is a directory",
};

export function openInput(path: string): Readable {
  if (path === "-") return process.stdin;
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "";
    throw new ExitError(1, `open ${path}: ${GO_ERRORS[code] ?? (e as Error).message}`);
  }
  // read in large pieces: the body goes on as chunked HTTP, one chunk per read
  return createReadStream("", { fd, highWaterMark: 1 << 20 });
}
