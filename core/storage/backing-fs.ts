/**
/**
 * What a storage driver's home sits on: the filesystem type as `/info` names it (statfs f_type,
 * Docker's names), and the mount that holds a path (from /proc/self/mountinfo), for the drivers
 * that need a particular one (overlay2 cannot keep its upper directories on overlayfs, and its
 * quota needs xfs; btrfs needs btrfs). A driver's home may not exist yet when this is asked (a
 * fresh data root): its nearest existing ancestor is judged instead, which is where it will be made.
 */
import { lstatSync, readFileSync, statfsSync, type StatsFs } from "node:fs";
import { lstat, statfs } from "node:fs/promises";
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

/** The mount of `/proc/self/mountinfo` that holds `path` (see core/mountinfo.ts). */
export { mountOf } from "../mountinfo.js";

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

export interface BackingFilesystem {
  /** `btrfs`, `extfs`, ... */
  name: string;
  /** The path that was judged: `path` or its nearest existing ancestor. */
  probe: string;
  stats: StatsFs;
}

/** The filesystem `path` is (or will be) on. */
export async function backingFilesystem(path: string): Promise<BackingFilesystem> {
  const probe = await existingAncestor(path);
  const stats = await statfs(probe);
  return { name: filesystemName(stats.type), probe, stats };
}

/** The same, synchronously (for a plugin's `supported(host)`). */
export function backingFilesystemSync(path: string): string {
  let probe = path;
  while (!lstatSync(probe, { throwIfNoEntry: false }) && dirname(probe) !== probe) probe = dirname(probe);
  return filesystemName(statfsSync(probe).type);
}

/**
 * Why the kernel cannot mount filesystem `name` (it is not in `/proc/filesystems`, or that
 * cannot be read), or undefined when it can. `filesystems` stands in for the file's text.
 */
export function kernelLacksFilesystem(name: string, filesystems?: string): string | undefined {
  let text = filesystems;
  if (text === undefined) {
    try {
      text = readFileSync("/proc/filesystems", "utf8");
    } catch (err) {
      return `cannot read /proc/filesystems: ${(err as Error).message}`;
    }
  }
  const known = text.split("\n").some((line) => line.trim().split(/\s+/).pop() === name);
  return known ? undefined : `the kernel has no ${name} filesystem (not in /proc/filesystems; load it with modprobe ${name})`;
}
