/**
 * Containers that print numbered lines, and the checks of what their log files hold: every
 * number once, in order. A line is `%08d ` and filler to 100 bytes with its newline, so 2,000,000
 * of them make 200 MB. conmon cuts lines at its reads of the pipe into partial entries; the
 * checks join the pieces as Docker's readers do.
 */
import { createReadStream, readFileSync, statSync } from "node:fs";
import { createInterface } from "node:readline";

export const LINE_BYTES = 100;

/**
 * The command of a container printing lines `1..n` (awk: fast), then exiting with `exitCode`.
 * `slowly`: a busybox shell loop instead, a few tens of thousands of lines a second.
 * `holdAfter`: seconds the container stays up after its last line (conmon with it), so what
 * needs a running conmon (a rotation of the spool) can still happen when the drain lags.
 */
export function printNumbered(n: number, opts: { exitCode?: number; waitFirst?: number; slowly?: boolean; holdAfter?: number } = {}): string[] {
  const wait = opts.waitFirst ? `sleep ${opts.waitFirst}; ` : "";
  const hold = opts.holdAfter ? `sleep ${opts.holdAfter}; ` : "";
  const print = opts.slowly
    ? `i=1; f=$(printf "%0${LINE_BYTES - 10}d" 0 | tr 0 x); while [ $i -le ${n} ]; do printf "%08d %s\\n" $i "$f"; i=$((i+1)); done`
    : `awk 'BEGIN { f = sprintf("%${LINE_BYTES - 10}s", ""); gsub(/ /, "x", f); for (i = 1; i <= ${n}; i++) printf "%08d %s\\n", i, f }'`;
  return ["sh", "-c", `${wait}${print}; ${hold}exit ${opts.exitCode ?? 0}`];
}

export interface NumberedCheck {
  /** Whole lines read (pieces joined). */
  lines: number;
  first?: number;
  last?: number;
  /** The first few lines that were not the next number or not well formed. */
  errors: string[];
}

/** Checks that the lines of the json-file `files` (oldest first) count up by one, streaming. */
export async function checkJsonFiles(files: string[]): Promise<NumberedCheck> {
  const check = newCheck();
  let piece = "";
  for (const file of files) {
    for await (const raw of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
      if (!raw) continue;
      const log = (JSON.parse(raw) as { log?: string }).log ?? "";
      piece += log;
      if (!piece.endsWith("\n")) continue;
      takeLine(check, piece.slice(0, -1));
      piece = "";
    }
  }
  if (piece) check.errors.push(`unfinished: ${piece.slice(0, 20)}`);
  return check;
}

/** The same for k8s-file entries (the spool, followed). */
export function numberedChecker(): { add(line: string, partial: boolean): void; result: NumberedCheck } {
  const check = newCheck();
  let piece = "";
  return {
    add(line, partial) {
      piece += line;
      if (partial) return;
      takeLine(check, piece);
      piece = "";
    },
    result: check,
  };
}

function newCheck(): NumberedCheck {
  return { lines: 0, errors: [] };
}

function takeLine(check: NumberedCheck, line: string): void {
  const n = Number(line.slice(0, 8));
  const expected = check.last === undefined ? n : check.last + 1;
  if (line.length !== LINE_BYTES - 1 || !Number.isInteger(n) || n !== expected) {
    if (check.errors.length < 5) check.errors.push(`after ${check.last}: ${line.slice(0, 20)} (${line.length} bytes)`);
  }
  check.first ??= n;
  check.last = n;
  check.lines++;
}

/** One json-file entry's size and its line, for the rotation checks. */
export function lastEntryBytes(file: string): number {
  const text = readFileSync(file, "utf8");
  const end = text.lastIndexOf("\n", text.length - 2);
  return Buffer.byteLength(text.slice(end + 1));
}

export function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** A process's resident memory in KiB (0 when it is gone). */
export function rssKiB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
