/**
 * A real filesystem in a loop file, for the storage drivers that need one (xfs with project
 * quota, btrfs): a sparse file in a temporary folder, made with mkfs, mounted with `-o loop`.
 * `remove()` unmounts it, detaches any loop device still on the file and removes the folder;
 * call it in an after hook (the root hook's cleanup unmounts what is left, but does not detach).
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";
import { makeTempDir } from "./engined.js";

const run = promisify(execFile);

export interface LoopFilesystem {
  /** The temporary folder that holds the image file and the mount point. */
  dir: string;
  image: string;
  mountPoint: string;
  /** Mounts it (again) with these extra options (`pquota`). */
  mount(options?: string[]): Promise<void>;
  /** Unmounts it and detaches its loop device; fine when it is not mounted. */
  unmount(): Promise<void>;
  /** Unmounts it and removes its folder. */
  remove(): Promise<void>;
}

/** Makes a `type` filesystem of `size` (`truncate -s` form: `300M`, `1G`) and mounts it. */
export async function makeLoopFilesystem(type: "btrfs" | "xfs", size: string): Promise<LoopFilesystem> {
  const dir = makeTempDir(`engine-${type}-`);
  const image = join(dir, `${type}.img`);
  const mountPoint = join(dir, "mnt");
  await mkdir(mountPoint);
  await run("truncate", ["-s", size, image]);
  await run(`mkfs.${type}`, ["-q", image]);
  const fs: LoopFilesystem = {
    dir,
    image,
    mountPoint,
    async mount(options = []) {
      await run("mount", ["-o", ["loop", ...options].join(","), image, mountPoint]);
    },
    async unmount() {
      await run("umount", [mountPoint]).catch(() => run("umount", ["-l", mountPoint]).catch(() => {}));
      const { stdout } = await run("losetup", ["-j", image]).catch(() => ({ stdout: "" }));
      for (const line of stdout.split("\n")) {
        const dev = line.split(":")[0];
        if (dev) await run("losetup", ["-d", dev]).catch(() => {});
      }
    },
    async remove() {
      await fs.unmount();
      await rm(dir, { recursive: true, force: true });
    },
  };
  try {
    await fs.mount();
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`cannot mount a ${type} loop file here: ${((err as { stderr?: string }).stderr || (err as Error).message).trim()}`);
  }
  return fs;
}

/** Skips a test and says why in its title (mocha's skip takes no reason). */
export function skipBecause(ctx: Mocha.Context, reason: string): never {
  const runnable = ctx.currentTest ?? ctx.test;
  if (runnable) runnable.title += ` (skipped: ${reason})`;
  ctx.skip();
}

/** A kernel build option from /proc/config.gz: true (y/m), false (not set), undefined (unknown). */
export function kernelConfig(name: string): boolean | undefined {
  try {
    const text = gunzipSync(readFileSync("/proc/config.gz")).toString();
    if (new RegExp(`^${name}=[ym]$`, "m").test(text)) return true;
    if (text.includes(`# ${name} is not set`)) return false;
  } catch {
    // no /proc/config.gz
  }
  return undefined;
}

/**
 * An xfs loop filesystem mounted with `pquota`, for a test of project quotas; skips the test
 * (saying why) where loop devices do not work or the kernel's XFS has no quota support.
 */
export async function xfsWithPquota(ctx: Mocha.Context, size: string): Promise<LoopFilesystem> {
  let xfs: LoopFilesystem;
  try {
    xfs = await makeLoopFilesystem("xfs", size);
  } catch (err) {
    skipBecause(ctx, `loop devices do not work here: ${(err as Error).message}`);
  }
  await xfs.unmount();
  try {
    await xfs.mount(["pquota"]);
  } catch (err) {
    await xfs.remove();
    if (kernelConfig("CONFIG_XFS_QUOTA") === false) skipBecause(ctx, "this kernel's XFS has no quota support (CONFIG_XFS_QUOTA is not set)");
    throw err;
  }
  return xfs;
}
