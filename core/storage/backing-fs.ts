/**
 * What a storage driver's home sits on: the filesystem type as `/info` names it (statfs f_type,
 * Docker's names), and the mount that holds a path (from /proc/self/mountinfo), for drivers that
 * depend on the backing filesystem (overlay2's upper directories and xfs quota).
 */
import { readFileSync } from "node:fs";
import { lstat } from "node:fs/promises";
import { dirname } from "node:path";

/** statfs f_type values, named as `/info` names them (Docker's names). */
const FS_NAMES: Record<number, string> = {
  0xef53: "extfs",
  0x58465342: "xfs",
  0x9123683e: "btrfs",
  0x01021994: "tmpfs",
  0x794c7630: "overlayfs",
  0x2fc12fc1: "zfs",
  0x6969: "nfs",
  0xf2f52010: "f2fs",
  0x65735546: "fuse",
  0x73717368: "squashfs",
  0x61756673: "aufs",
  0xf15f: "ecryptfs",
  0x858458f6: "ramfs",
};

/** The name of a statfs f_type: `extfs`, `xfs`, ..., or `unknown (0x...)`. */
export function filesystemName(fsType: number | bigint): string {
  return FS_NAMES[Number(fsType)] ?? `unknown (0x${Number(fsType).toString(16)})`;
}

/** The mount of `/proc/self/mountinfo` that holds `path` (the last, longest match). */
export function mountOf(path: string, mountinfo = readFileSync("/proc/self/mountinfo", "utf8")): { mountPoint: string; fsType: string; superOptions: string[] } | undefined {
  const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  let best: { mountPoint: string; fsType: string; superOptions: string[] } | undefined;
  for (const line of mountinfo.split("\n")) {
    if (!line) continue;
    const [left, right] = line.split(" - ");
    if (!right) continue;
    const mountPoint = unescape(left.split(" ")[4]);
    const [fsType, , superOpts = ""] = right.split(" ");
    const inside = mountPoint === "/" || path === mountPoint || path.startsWith(mountPoint + "/");
    if (inside && (!best || mountPoint.length >= best.mountPoint.length)) {
      best = { mountPoint, fsType, superOptions: superOpts.split(",") };
    }
  }
  return best;
}

/** `path`, or its nearest ancestor that exists (a driver is judged where its home will be). */
export async function existingAncestor(path: string): Promise<string> {
  for (let p = path; ; p = dirname(p)) {
    try {
      await lstat(p);
      return p;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT" || dirname(p) === p) throw err;
    }
  }
}
