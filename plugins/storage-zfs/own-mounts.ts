/**
 * The zfs driver's own mounts: a dataset mounted under `<home>/mnt/<id>-<rand>/` while the
 * driver extracts a tar into it or compares it with its parent, and unmounted when that is
 * done. The caller's mounts are not these: for them the driver only answers specifications.
 * `cleanup()` unmounts what a crash left mounted here.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readdir, rmdir } from "node:fs/promises";
import { join } from "node:path";
import { execFileAsync as run } from "../../core/exec-file.js";
import type { MountSpec } from "../../core/contracts/storage.js";

export type MountFunction = (spec: MountSpec, target: string) => Promise<void>;

/** Mounts a zfs specification with mount(8), as the daemon mounts a container's. */
export async function mountWithMount8(spec: MountSpec, target: string): Promise<void> {
  const options = spec.options.length > 0 ? ["-o", spec.options.join(",")] : [];
  await run("mount", ["-t", spec.type, ...options, spec.source, target]);
}

export class OwnMounts {
  constructor(
    /** `<home>/mnt`. */
    readonly dir: string,
    private readonly mount: MountFunction = mountWithMount8,
  ) {}

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
  }

  /** Mounts `spec` on a fresh folder named after the layer; resolves with the folder. */
  async mountAside(id: string, spec: MountSpec): Promise<string> {
    const target = join(this.dir, `${id}-${randomBytes(4).toString("hex")}`);
    await mkdir(target, { mode: 0o700 });
    try {
      await this.mount(spec, target);
    } catch (err) {
      await rmdir(target).catch(() => {});
      const reason = (err as { stderr?: string }).stderr?.trim() || (err as Error).message;
      throw new Error(`zfs: cannot mount ${spec.source}: ${reason}`);
    }
    return target;
  }

  /** Runs `fn` with `spec` mounted aside, and always unmounts. */
  async with<T>(id: string, spec: MountSpec, fn: (root: string) => Promise<T>): Promise<T> {
    const root = await this.mountAside(id, spec);
    try {
      return await fn(root);
    } finally {
      await this.unmount(root);
    }
  }

  /** Unmounts a folder of this one (lazily when busy) and removes it; fine when it is not mounted. */
  async unmount(target: string): Promise<void> {
    await run("umount", [target]).catch(() => run("umount", ["-l", target]).catch(() => {}));
    await rmdir(target).catch(() => {});
  }

  /** Unmounts and removes everything a crash left here. */
  async cleanup(): Promise<void> {
    for (const entry of await readdir(this.dir)) await this.unmount(join(this.dir, entry));
  }
}
