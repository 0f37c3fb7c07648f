/**
 * A real filesystem in a loop file, for the storage drivers that need one (xfs with project
 * quota, btrfs): a sparse file in a temporary folder, made with mkfs, mounted with `-o loop`.
 * `remove()` unmounts it, detaches any loop device still on the file and removes the folder;
 * call it in an after hook (the root hook's cleanup unmounts what is left, but does not detach).
 */
import { execFile } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
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
