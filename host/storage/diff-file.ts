/**
 * A layer's changes as a tar file: commit and the builder's RUN and COPY steps all turn a
 * storage driver's diff into a file, which then becomes an image layer's blob as it is (renamed),
 * so it is private from its first byte.
 */
import { randomBytes } from "node:crypto";
import { createWriteStream, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { StorageDriver } from "../../core/contracts/storage.js";
import { PRIVATE_FILE } from "../../core/state-modes.js";

/** The diff of layer `id` written to a new file `<dir>/<prefix>-<random>.tar`; nothing is left when the write fails. */
export async function diffToFile(storage: Pick<StorageDriver, "diff">, id: string, dir: string, prefix: string): Promise<string> {
  const file = join(dir, `${prefix}-${randomBytes(8).toString("hex")}.tar`);
  try {
    await pipeline(await storage.diff(id), createWriteStream(file, { mode: PRIVATE_FILE }));
    return file;
  } catch (err) {
    rmSync(file, { force: true });
    throw err;
  }
}

/**
 * A tar without entries (only the zero blocks that end it): nothing changed, and the image gets
 * no layer, only a history entry marked `empty_layer`, as Docker's commit and builder do.
 */
export function isEmptyTar(file: string): boolean {
  if (statSync(file).size > 64 * 1024) return false;
  return readFileSync(file).every((b) => b === 0);
}
