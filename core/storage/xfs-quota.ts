/**
 * xfs project quota for a storage driver's writable layers (overlay2's `diff` folder, vfs's
 * layer directory), as Docker's drivers limit a container's size: the folder gets a project id
 * of its own, inherited by everything made in it (`chattr +P`), and the project a hard block
 * limit. Done with xfsprogs' commands (`xfs_io`, `xfs_quota`): the data root must be on xfs
 * mounted with `pquota` (or `prjquota`), with enforcement on.
 */
import { randomInt } from "node:crypto";
import { realpath } from "node:fs/promises";
import { execFileAsync as run } from "../exec-file.js";
import { mountOf } from "./backing-fs.js";

/**
 * The mount point of the xfs filesystem with enforced project quota that holds `probe` (a
 * driver's home or its nearest existing ancestor), or why there is none, as a message's end:
 * `extfs`, `xfs without pquota`, ...
 */
export async function xfsQuotaMount(probe: string, backingFs: string): Promise<{ mountPoint: string } | string> {
  if (backingFs !== "xfs") return backingFs;
  const mount = mountOf(await realpath(probe));
  if (!mount || mount.fsType !== "xfs") return backingFs;
  if (!mount.superOptions.some((o) => o === "prjquota" || o === "pquota")) return "xfs without pquota";
  try {
    const { stdout } = await run("xfs_quota", ["-x", "-c", "state -p", mount.mountPoint]);
    if (!/Enforcement:\s*ON/i.test(stdout)) return "xfs without project quota enforcement";
    await run("xfs_io", ["-V"]);
  } catch {
    return "xfs, but xfs_quota or xfs_io (package xfsprogs) is missing";
  }
  return { mountPoint: mount.mountPoint };
}

/**
 * A project id none of `used` is. Ids are drawn at random from a large range so that two data
 * roots on one xfs filesystem (each with its own driver) do not meet.
 */
export function freeProject(used: ReadonlySet<number>): number {
  for (;;) {
    const project = randomInt(1 << 20, 2 ** 31 - 1);
    if (!used.has(project)) return project;
  }
}

/** Gives `dir` the project (inherited by what is made in it) and limits the project to `bytes`. */
export async function limitProject(mountPoint: string, dir: string, project: number, bytes: number): Promise<void> {
  await run("xfs_io", ["-c", `chproj ${project}`, "-c", "chattr +P", dir]);
  const kib = Math.max(1, Math.ceil(bytes / 1024));
  await run("xfs_quota", ["-x", "-c", `limit -p bhard=${kib}k ${project}`, mountPoint]);
}

/** Clears a project's limit (its folder is going); a failure is left, as a limit on nothing. */
export async function clearProject(mountPoint: string, project: number): Promise<void> {
  await run("xfs_quota", ["-x", "-c", `limit -p bhard=0 bsoft=0 ${project}`, mountPoint]).catch(() => {});
}
