/**
 * Crash-safe writes off the event loop, for the daemon's state (container, volume, network,
 * image and layer records, the layer store's pending marks). A write goes to a temporary file
 * beside its target (`.tmp-<random>`), is flushed (fdatasync), renamed over the target, and the
 * folder is flushed (fsync); every step runs on libuv's thread pool, so the daemon serves other
 * requests while the disk works, where a synchronous fsync stopped all of them for its length.
 * After a kill -9 or a power cut a reader finds the old file or the new one, never a torn one;
 * a temporary file a crash left behind is removed when its store opens (`removeTempFiles`).
 *
 * Whoever awaits a write knows its file is on disk: a client is answered after that, never
 * before. Folder flushes are grouped: the renames made into one folder while its flush runs
 * share the next flush, so that records written together (a burst of creates, an image and its
 * references) cost one flush of their folder, not one each.
 *
 * The synchronous forms (core/images/atomic-file.ts) remain for the supervisor and start-up.
 */
import { readdirSync, rmSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { PRIVATE_FILE } from "../state-modes.js";
import { killPoint } from "../kill-points.js";
import { kernelRandomBytes } from "../random-bytes.js";

/** What the temporary files of atomic writes are called, until their rename. */
export const TEMP_PREFIX = ".tmp-";

/** A new temporary file's path in `dir` (random: a leftover of a killed process is never reused). */
export const tempPath = (dir: string): string => join(dir, `${TEMP_PREFIX}${kernelRandomBytes(6).toString("hex")}`);

const noop = () => undefined;

/**
 * Writes `data` to `path` atomically and durably, off the event loop. The folder must exist
 * (the writer does not make it: a record whose folder was removed meanwhile is not made again).
 */
export async function writeFileDurably(path: string, data: string | Buffer): Promise<void> {
  const dir = dirname(path);
  const tmp = tempPath(dir);
  const fh = await open(tmp, "wx", PRIVATE_FILE);
  let renamed = false;
  try {
    try {
      await fh.writeFile(data);
      await fh.datasync();
    } finally {
      await fh.close();
    }
    killPoint("file-written");
    await rename(tmp, path);
    renamed = true;
  } finally {
    if (!renamed) await rm(tmp, { force: true });
  }
  await syncDir(dir);
}

/** A record as the stores write it: JSON, one space of indent, a final newline. */
export const jsonText = (value: unknown): string => `${JSON.stringify(value, null, 1)}\n`;

/** `writeFileDurably` of a record's JSON. */
export function writeJsonDurably(path: string, value: unknown): Promise<void> {
  return writeFileDurably(path, jsonText(value));
}

interface DirSync {
  running: Promise<void>;
  /** The flush that starts once `running` ends: it covers every rename made since `running` began. */
  next?: Promise<void>;
}

const dirSyncs = new Map<string, DirSync>();

/**
 * Flushes a folder's entries (the renames made in it) to disk, off the event loop. A flush
 * already under way may have begun before the caller's rename, so the caller waits for the one
 * after it, which every caller meanwhile shares.
 */
export function syncDir(dir: string): Promise<void> {
  const under = dirSyncs.get(dir);
  if (!under) return startDirSync(dir);
  return (under.next ??= under.running.then(noop, noop).then(() => startDirSync(dir)));
}

function startDirSync(dir: string): Promise<void> {
  const running = flush(dir, "r");
  const entry: DirSync = { running };
  dirSyncs.set(dir, entry);
  void running.then(noop, noop).then(() => {
    if (dirSyncs.get(dir) === entry && !entry.next) dirSyncs.delete(dir);
  });
  return running;
}

/**
 * Flushes a file's data to disk on the thread pool: a large file (a downloaded layer blob, a
 * layout) before it is renamed into place.
 */
export function syncFile(path: string): Promise<void> {
  return flush(path, "r+");
}

/** Flushes a file's data (`r+`) or a folder's entries (`r`) to disk on the thread pool. */
async function flush(path: string, flags: "r" | "r+"): Promise<void> {
  const fh = await open(path, flags);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Removes the temporary files that writes a crash interrupted left in `dir` (at a store's
 * open, before any write of its own can have begun). A missing folder has none.
 */
export function removeTempFiles(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(TEMP_PREFIX)) rmSync(join(dir, name), { force: true });
}
