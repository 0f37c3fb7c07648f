/**
 * `/proc/self/mountinfo`, read: which mount holds a path, and what is mounted from where.
 * Storage drivers use it to learn their backing filesystem (overlay2's xfs quota, zfs's
 * default dataset). Paths in the file escape space, tab, newline and backslash as octal.
 */
import { readFileSync } from "node:fs";

export interface MountEntry {
  /** `major:minor` of the filesystem. */
  device: string;
  /** The path inside that filesystem which is mounted here (`/` for a whole filesystem; a bind mount shows its source folder). */
  root: string;
  mountPoint: string;
  fsType: string;
  /** What was mounted: a device, a dataset (`tank/engine` for zfs), or a name. */
  source: string;
  superOptions: string[];
  /** The optional fields: propagation (`shared:N`, `master:N`, `propagate_from:N`, `unbindable`). */
  optional: string[];
}

const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

export function readMountinfo(): string {
  return readFileSync("/proc/self/mountinfo", "utf8");
}

/** Every mount in a mountinfo text, in its order (later mounts on top). */
export function parseMountinfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!right) continue;
    const fields = left.split(" ");
    const [fsType, source = "", superOpts = ""] = right.split(" ");
    out.push({
      device: fields[2],
      root: unescape(fields[3]),
      mountPoint: unescape(fields[4]),
      fsType,
      source: unescape(source),
      superOptions: superOpts.split(","),
      optional: fields.slice(6).filter(Boolean),
    });
  }
  return out;
}

/** The mount that holds `path` (the last, longest match), or undefined when none does. */
export function mountOf(path: string, mountinfo = readMountinfo()): MountEntry | undefined {
  let best: MountEntry | undefined;
  for (const m of parseMountinfo(mountinfo)) {
    const inside = m.mountPoint === "/" || path === m.mountPoint || path.startsWith(m.mountPoint + "/");
    if (inside && (!best || m.mountPoint.length >= best.mountPoint.length)) best = m;
  }
  return best;
}
