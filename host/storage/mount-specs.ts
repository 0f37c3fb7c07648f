/**
 * Mounts what a storage driver's `mounts(id)` describes (core/contracts/storage.ts) with
 * mount(8): the driver says what to mount, the caller mounts it. `cwd` is where the relative
 * paths of a long overlay chain start, so mount(8) runs there.
 */
import { execFile } from "node:child_process";
import { mkdir, readFile } from "node:fs/promises";
import { promisify } from "node:util";
import type { MountSpec } from "../../core/contracts/storage.js";

const run = promisify(execFile);

/** Mounts `specs` on `target` (made when missing); a failure unmounts what was mounted. */
export async function mountSpecs(specs: readonly MountSpec[], target: string): Promise<void> {
  await mkdir(target, { recursive: true, mode: 0o700 });
  let mounted = 0;
  try {
    for (const spec of specs) {
      const args = spec.type === "bind" ? [] : ["-t", spec.type];
      if (spec.options.length > 0) args.push("-o", spec.options.join(","));
      await run("mount", [...args, spec.source, target], { cwd: spec.cwd });
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
  for (let i = 0; i < count && (await mountedAt(target)); i++) {
    try {
      await run("umount", [target]);
    } catch (err) {
      const text = String((err as { stderr?: string }).stderr ?? "");
      if (/not mounted|no mount point|not found|No such file/i.test(text)) return;
      await run("umount", ["-l", target]).catch(() => {});
    }
  }
}

/** Whether something is mounted at `target` (read from /proc/self/mountinfo: cheaper than running umount to find out). */
async function mountedAt(target: string): Promise<boolean> {
  let info: string;
  try {
    info = await readFile("/proc/self/mountinfo", "utf8");
  } catch {
    return true; // cannot tell: let umount say
  }
  // Field 5 is the mount point, with space, tab, newline and backslash written as octal escapes.
  const escaped = target.replace(/[ \t\n\\]/g, (ch) => `\\${ch.charCodeAt(0).toString(8).padStart(3, "0")}`);
  return info.split("\n").some((line) => line.split(" ")[4] === escaped);
}
