/**
 * Why this file: a logger made again after its caller (the supervisor) was killed must find how
 * far the files got past the caller's last saved mark, and finish a rotation the kill cut short,
 * before it writes anything (see core/contracts/log.ts, "Exactly once"). The writer fences each
 * rotation with a checkpoint before and after it, so after a kill only these states are possible:
 * - the current file is the mark's: the messages after the mark are its whole lines past the
 *   mark's size (a torn last line, cut by the kill inside a write, is removed);
 * - the current file is another one: the rotation after the mark's checkpoint happened, and
 *   nothing was written since (the writer waits for the second checkpoint first);
 * - a rotation stopped halfway: rotated files shifted with a gap left (closed here, so that
 *   the rotation done again drops the file it would have dropped), or `.1` not yet compressed.
 */
import { open, readdir, rename, stat, truncate, unlink } from "node:fs/promises";
import { basename, dirname } from "node:path";
import type { LogMark } from "../../core/contracts/log.js";
import { gzipRotated } from "../../core/log-rotation.js";
import { missingOk } from "./files.js";
import type { JsonFileConfig } from "./options.js";

/** Where the file in use ends: its inode and size. */
export interface JsonFileMark extends LogMark {
  ino: number;
  size: number;
}

export function isJsonFileMark(m: LogMark | undefined): m is JsonFileMark {
  return typeof m?.ino === "number" && typeof m?.size === "number";
}

/** Repairs what a kill left and counts the messages stored after `mark`. */
export async function resumeAfterMark(path: string, config: JsonFileConfig, mark: JsonFileMark): Promise<number> {
  const st = await missingOk(stat(path));
  if (st?.ino === mark.ino) await closeRotationGaps(path);
  if (config.compress) await finishCompression(path);
  if (!st || st.ino !== mark.ino || st.size <= mark.size) return 0;
  return countWholeLines(path, mark.size, st.size);
}

/** Counts the lines in [from, to) and cuts a last line without its newline. */
async function countWholeLines(path: string, from: number, to: number): Promise<number> {
  const fh = await open(path, "r");
  let count = 0;
  let lastNewline = from - 1;
  try {
    const buf = Buffer.alloc(1024 * 1024);
    for (let pos = from; pos < to; ) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, to - pos), pos);
      if (bytesRead === 0) break;
      for (let i = buf.indexOf(0x0a, 0); i >= 0 && i < bytesRead; i = buf.indexOf(0x0a, i + 1)) {
        count++;
        lastNewline = pos + i;
      }
      pos += bytesRead;
    }
  } finally {
    await fh.close();
  }
  if (lastNewline + 1 < to) await truncate(path, lastNewline + 1);
  return count;
}

/** Rotated files `.n` / `.n.gz` by number. */
async function rotatedNumbers(path: string): Promise<Map<number, string[]>> {
  const base = basename(path);
  const found = new Map<number, string[]>();
  for (const name of (await missingOk(readdir(dirname(path)))) ?? []) {
    const m = name.startsWith(base + ".") ? /^(\d+)(\.gz)?$/.exec(name.slice(base.length + 1)) : null;
    if (!m || Number(m[1]) < 1) continue;
    found.set(Number(m[1]), [...(found.get(Number(m[1])) ?? []), name.slice(base.length + 1 + m[1].length)]);
  }
  return found;
}

/** A shift cut short leaves a missing number below existing ones: move those down, in order. */
async function closeRotationGaps(path: string): Promise<void> {
  const found = await rotatedNumbers(path);
  let next = 1;
  for (const n of [...found.keys()].sort((a, b) => a - b)) {
    if (n !== next) for (const suffix of found.get(n)!) await rename(`${path}.${n}${suffix}`, `${path}.${next}${suffix}`);
    next++;
  }
}

/** The rotation compresses `.1` last: do it, or finish it, when the kill came first. */
async function finishCompression(path: string): Promise<void> {
  await missingOk(unlink(`${path}.1.gz.tmp`));
  if (!(await missingOk(stat(`${path}.1`)))) return;
  if (await missingOk(stat(`${path}.1.gz`))) await unlink(`${path}.1`);
  else await gzipRotated(`${path}.1`, 0o640);
}
