/**
 * Crash-safe writes, synchronous: a file is written under a temporary name, flushed, and
 * renamed over its final name, and the folder is flushed too. After a kill -9 (or a power cut)
 * a reader sees the old file or the new one, never half of one.
 *
 * These block the event loop for the length of two fsyncs: the daemon's state is written with
 * the asynchronous forms in core/fs/durable-file.ts. These remain for the supervisor's own
 * small state files and for what runs once at start-up.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { PRIVATE_DIR, PRIVATE_FILE } from "../state-modes.js";
import { tempPath } from "../fs/durable-file.js";

function sync(path: string, flags: "r" | "r+"): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function writeFileAtomic(path: string, data: string | Buffer): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  const tmp = tempPath(dir);
  writeFileSync(tmp, data, { mode: PRIVATE_FILE });
  sync(tmp, "r+");
  renameSync(tmp, path);
  sync(dir, "r");
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, JSON.stringify(value, null, 1) + "\n");
}
