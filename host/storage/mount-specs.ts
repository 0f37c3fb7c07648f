/**
 * Mounts what a storage driver's `mounts(id)` describes (core/contracts/storage.ts): the driver
 * says what to mount, the caller mounts it. Overlay, bind and tmpfs go straight to mount(2)
 * (core/fs/mount.ts says why); other types, and a spec with a `cwd` (the relative paths of an
 * overlay chain too long for one page of absolute ones), through mount(8) run there: chdir is
 * the whole process's, and other work is under way in it.
 */
import { mkdir } from "node:fs/promises";
import { execFileAsync as run } from "../../core/exec-file.js";
import type { MountSpec } from "../../core/contracts/storage.js";
import { mount, unmount, viaSyscall } from "../../core/fs/mount.js";

async function mountOne(spec: MountSpec, target: string): Promise<void> {
  if (viaSyscall(spec.type) && !spec.cwd) return await mount(spec.source, target, spec.type, spec.options);
  const args = spec.type === "bind" ? [] : ["-t", spec.type];
  if (spec.options.length > 0) args.push("-o", spec.options.join(","));
  await run("mount", [...args, spec.source, target], { cwd: spec.cwd });
}

/** Mounts `specs` on `target` (made when missing); a failure unmounts what was mounted. */
export async function mountSpecs(specs: readonly MountSpec[], target: string): Promise<void> {
  await mkdir(target, { recursive: true, mode: 0o700 });
  let mounted = 0;
  try {
    for (const spec of specs) {
      await mountOne(spec, target);
      mounted++;
    }
  } catch (err) {
    await unmountAll(target, mounted);
    throw new Error(`cannot mount ${target}: ${((err as { stderr?: string }).stderr || (err as Error).message).trim()}`);
  }
}

/**
 * Unmounts `target` up to `count` times (everything stacked there by default), lazily when it
 * is busy. A target that is not mounted (any more) is fine: this is also the cleanup after a
 * crash, when nobody knows what is still mounted.
 */
export async function unmountAll(target: string, count = 8): Promise<void> {
  for (let i = 0; i < count; i++) {
    try {
      if (!(await unmount(target))) return;
    } catch {
      // busy (a process still in it): detached now, gone when the last user is
      try {
        if (!(await unmount(target, { lazy: true }))) return;
      } catch {
        return;
      }
    }
  }
}
