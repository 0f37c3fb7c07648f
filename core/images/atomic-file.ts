/**
 * Crash-safe writes: a file is written under a temporary name, flushed, and renamed over its
 * final name, and the folder is flushed too. After a kill -9 (or a power cut) a reader sees
 * the old file or the new one, never half of one.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { PRIVATE_DIR, PRIVATE_FILE } from "../state-modes.js";

function sync(path: string, flags: "r" | "r+"): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Flushes a folder's entries (a rename in it) to disk. */
export const syncDir = (dir: string) => sync(dir, "r");
/** Flushes a file's data to disk. */
export const syncFile = (path: string) => sync(path, "r+");

/**
 * Flushes a file's data to disk on the thread pool: for large files (a downloaded layer blob),
 * whose flush takes long enough to stall every request if done on the event loop.
 */
export async function syncFileInBackground(path: string): Promise<void> {
  const fh = await open(path, "r+");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export function writeFileAtomic(path: string, data: string | Buffer): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR });
  const tmp = join(dir, `.tmp-${randomBytes(6).toString("hex")}`);
  writeFileSync(tmp, data, { mode: PRIVATE_FILE });
  syncFile(tmp);
  renameSync(tmp, path);
  syncDir(dir);
}

export function writeJsonAtomic(path: string, value: unknown): void {
  writeFileAtomic(path, JSON.stringify(value, null, 1) + "\n");
}
