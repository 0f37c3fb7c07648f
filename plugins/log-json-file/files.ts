/**
 * Why this file: the writer and the reader must agree on where a container's log files are
 * (`<id>-json.log`, rotated `.N` / `.N.gz`) and both tolerate files that vanish under them
 * (rotation, compression); the names and that one ENOENT rule live here, once.
 */
import { open, readdir, type FileHandle } from "node:fs/promises";
import { join } from "node:path";

/** The current file's name in the container's folder. */
export function logFileName(containerId: string): string {
  return `${containerId}-json.log`;
}

export function logPath(logDir: string, containerId: string): string {
  return join(logDir, logFileName(containerId));
}

/** The operation's result, or undefined when the file (or folder) does not exist. */
export async function missingOk<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

export interface RotatedFile {
  n: number;
  fh: FileHandle;
  gz: boolean;
}

/** Rotated files, newest (`.1`) first; the plain file when both `.n` and `.n.gz` exist (mid-compression). */
export async function openRotated(logDir: string, base: string): Promise<RotatedFile[]> {
  const names = (await missingOk(readdir(logDir))) ?? [];
  const found = new Map<number, boolean>();
  for (const name of names) {
    if (!name.startsWith(base + ".")) continue;
    const m = /^(\d+)(\.gz)?$/.exec(name.slice(base.length + 1));
    if (!m || Number(m[1]) < 1) continue;
    const n = Number(m[1]);
    const gz = Boolean(m[2]);
    found.set(n, found.has(n) ? false : gz); // both forms: the plain one
  }
  const out: RotatedFile[] = [];
  for (const n of [...found.keys()].sort((a, b) => a - b)) {
    const gz = found.get(n)!;
    const fh = await missingOk(open(join(logDir, `${base}.${n}${gz ? ".gz" : ""}`), "r"));
    if (fh) out.push({ n, fh, gz });
  }
  return out;
}
