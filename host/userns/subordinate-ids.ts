/**
 * `/etc/subuid` and `/etc/subgid` (subuid(5)): lines `<name or id>:<first>:<count>` giving a
 * user (or a group, in subgid) ranges of subordinate ids. Read here to build a user namespace's
 * id map; new ranges are added with usermod(8) (`-v`/`-w`), which locks and rewrites the files as
 * the shadow tools do.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { IdRange } from "../../core/userns/id-map.js";

export const SUBUID_FILE = "/etc/subuid";
export const SUBGID_FILE = "/etc/subgid";

/** Size of the range the daemon gives the user it creates, and where it starts looking (Docker's values). */
export const DEFAULT_RANGE_SIZE = 65536;
const FIRST_RANGE_START = 100000;

/** The kernel took at most 5 lines of uid_map before Linux 4.15; Docker uses the first five ranges, as here. */
const MAX_RANGES = 5;

export interface SubordinateRange {
  owner: string;
  start: number;
  count: number;
}

class SubordinateFileError extends Error {
  override name = "SubordinateFileError";
}

/** Every range of the file; a missing file has none, a malformed line is an error naming it. */
export function readRanges(file: string): SubordinateRange[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new SubordinateFileError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const out: SubordinateRange[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const m = /^([^:]+):(\d+):(\d+)$/.exec(line);
    if (!m) throw new SubordinateFileError(`${file} line ${i + 1} is not <name>:<first id>:<count>: ${JSON.stringify(line)}`);
    out.push({ owner: m[1], start: Number(m[2]), count: Number(m[3]) });
  });
  return out;
}

/**
 * The ranges of the first of `owners` (an id, then a name, as subuid(5) allows either) that has
 * any, as an id map from container id 0 on: lowest range first, each continuing where the last
 * ended (Docker's order).
 */
export function idRangesOf(file: string, owners: readonly string[]): IdRange[] {
  const all = readRanges(file);
  for (const owner of owners) {
    const mine = all.filter((r) => r.owner === owner && r.count > 0).sort((a, b) => a.start - b.start).slice(0, MAX_RANGES);
    if (mine.length === 0) continue;
    let next = 0;
    return mine.map((r) => {
      const range = { containerID: next, hostID: r.start, size: r.count };
      next += r.count;
      return range;
    });
  }
  return [];
}

/** The lowest start from FIRST_RANGE_START on where `size` ids overlap no range of the file. */
export function freeRangeStart(file: string, size = DEFAULT_RANGE_SIZE): number {
  let start = FIRST_RANGE_START;
  for (const r of readRanges(file).sort((a, b) => a.start - b.start)) {
    if (r.start < start + size && start < r.start + r.count) start = r.start + r.count;
  }
  return start;
}

/** Gives `user` a free range in /etc/subuid and /etc/subgid (usermod -v / -w) where it has none. */
export function addRanges(user: string): void {
  for (const [file, flag] of [[SUBUID_FILE, "-v"], [SUBGID_FILE, "-w"]] as const) {
    if (idRangesOf(file, [user]).length > 0) continue;
    const start = freeRangeStart(file);
    try {
      execFileSync("usermod", [flag, `${start}-${start + DEFAULT_RANGE_SIZE - 1}`, user], { stdio: ["ignore", "ignore", "pipe"], timeout: 30_000 });
    } catch (err) {
      const why = String((err as { stderr?: Buffer }).stderr ?? "").trim() || (err as Error).message;
      throw new SubordinateFileError(`cannot add a range of ${DEFAULT_RANGE_SIZE} ids from ${start} to ${file} for ${user} with usermod: ${why}`);
    }
  }
}
