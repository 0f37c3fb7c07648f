/**
 * Docker's rotation of a log file, shared by the drivers that keep files (json-file, local): the
 * file in use is `<path>`, older ones `<path>.1` (newest) to `<path>.<max-file - 1>`, each
 * `.gz` once compressed. A rotation drops the oldest, shifts the rest by one and makes the file
 * in use `<path>.1`; the driver then opens a new `<path>` and may compress `<path>.1`.
 */
import { createReadStream, createWriteStream } from "node:fs";
import { rename, unlink } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";

/** Shifts the rotated files of `path` by one (keeping `maxFile` files in all) and moves `path` to `path.1`. */
export async function shiftRotated(path: string, maxFile: number): Promise<void> {
  await missingOk(unlink(`${path}.${maxFile - 1}`));
  await missingOk(unlink(`${path}.${maxFile - 1}.gz`));
  for (let i = maxFile - 2; i >= 1; i--) {
    await missingOk(rename(`${path}.${i}`, `${path}.${i + 1}`));
    await missingOk(rename(`${path}.${i}.gz`, `${path}.${i + 1}.gz`));
  }
  await rename(path, `${path}.1`);
}

/** Replaces `src` by `src.gz` (written aside first, with `mode`), for a rotated file. */
export async function gzipRotated(src: string, mode: number): Promise<void> {
  const tmp = `${src}.gz.tmp`;
  await pipeline(createReadStream(src), createGzip(), createWriteStream(tmp, { mode }));
  await rename(tmp, `${src}.gz`);
  await unlink(src);
}

async function missingOk(p: Promise<unknown>): Promise<void> {
  await p.catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "ENOENT") throw err;
  });
}
