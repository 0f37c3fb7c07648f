/**
 * A volume mounted from a folder or file inside it (`--mount type=volume,...,volume-subpath=a/b`,
 * `VolumeOptions.Subpath`, API 1.45+).
 *
 * The volume's content belongs to its containers: one of them can turn `a` into a symbolic link
 * to `/` at any moment. A path string handed to runc would be resolved again when runc mounts
 * it, on the host, following that link. So the subpath is resolved here one component at a
 * time, each opened relative to the folder opened before it (through `/proc/self/fd/N/part`) and
 * never through a symbolic link, and the object reached is bind-mounted, by its descriptor, onto
 * a staging path of the daemon's own (`<exec-root>/volume-subpaths/<ref>/<n>`), out of any
 * container's reach. runc mounts the staging path. This is what Docker's daemon does (its
 * safepath package), with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where Node has no
 * openat. As there, the subpath's symbolic links are first resolved (lexically, as Go's
 * EvalSymlinks does) and what they lead to must lie inside the volume; the walk then follows
 * the resolved path and refuses a link met on it (one swapped in meanwhile).
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync } from "node:fs";
import { mkdir, readdir, rm, rmdir, writeFile } from "node:fs/promises";
import { posix } from "node:path";
import { execFileAsync as run } from "../../core/exec-file.js";
import { errors } from "../../core/errors.js";
import { goErrnoText } from "../../core/net/go-dial-error.js";

/** Linux's O_PATH (not in Node's constants): a descriptor that names an object without opening it for I/O. */
const O_PATH = 0o10000000;

/**
 * Go's filepath.IsLocal, as Docker checks a subpath at create: relative, not empty, and not
 * above its base once `..` are resolved lexically.
 */
export function isLocalSubpath(subpath: string): boolean {
  if (subpath === "" || subpath.startsWith("/")) return false;
  const clean = posix.normalize(subpath);
  return clean !== ".." && !clean.startsWith("../");
}

/** The subpath's components once lexically clean (`.` is the volume itself: no component). */
function components(subpath: string): string[] {
  // the create refused anything else; a record must not walk above its volume either
  if (!isLocalSubpath(subpath)) throw errors.mountInvalidConfig("volume", "subpath must be a relative path within the volume");
  return posix.normalize(subpath).split("/").filter((p) => p !== "" && p !== ".");
}

/** Docker's `cannot access path P: ...`, the errno in Go's words. */
function notAccessible(path: string, err: { code?: string; errno?: number; message: string }): Error {
  return errors.volumeSubpathNotAccessible(path, goErrnoText(err));
}

/**
 * Resolves `subpath` under `base` (its symbolic links followed only as far as they stay inside,
 * the walk itself following none) and bind-mounts what it
 * names onto `staging` (made here: a folder for a folder, an empty file for a file). Returns
 * whether it is a folder.
 */
export async function pinSubpath(base: string, subpath: string, staging: string): Promise<{ directory: boolean }> {
  const full = posix.join(base, subpath);
  return pinResolved(base, resolveInside(base, subpath), full, subpath, staging);
}

/**
 * `subpath` with its symbolic links resolved as Docker's daemon resolves them before it opens
 * the result (lexically, a link's target taken on the host as Go's EvalSymlinks takes it): the
 * path relative to `base`, or the refusal where a link leads out of `base` (what it points to
 * need not exist), and a missing component's "cannot access path".
 */
function resolveInside(base: string, subpath: string): string {
  const queue = components(subpath);
  const inside: string[] = [];
  const escapes = () => errors.volumeSubpathEscapes(base, subpath);
  for (let links = 0; queue.length > 0; ) {
    const part = queue.shift()!;
    if (part === ".") continue;
    if (part === "..") {
      if (inside.length === 0) throw escapes();
      inside.pop();
      continue;
    }
    const here = posix.join(base, ...inside, part);
    let target: string | undefined;
    try {
      target = lstatSync(here).isSymbolicLink() ? readlinkSync(here) : undefined;
    } catch (err) {
      throw notAccessible(posix.join(base, subpath), err as NodeJS.ErrnoException);
    }
    if (target === undefined) {
      inside.push(part);
      continue;
    }
    if (++links > 40) throw notAccessible(posix.join(base, subpath), { code: "ELOOP", message: "too many links" });
    if (target.startsWith("/")) {
      // a host path: inside only when it names something under the base
      const rel = posix.relative(base, posix.normalize(target));
      if (rel === ".." || rel.startsWith("../") || posix.isAbsolute(rel)) throw escapes();
      inside.length = 0;
      queue.unshift(...rel.split("/").filter((p) => p !== "" && p !== "."));
    } else queue.unshift(...target.split("/").filter((p) => p !== ""));
  }
  return inside.join("/") || ".";
}

async function pinResolved(base: string, subpath: string, full: string, asked: string, staging: string): Promise<{ directory: boolean }> {
  let fd: number;
  try {
    fd = openSync(base, O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    throw notAccessible(base, err as NodeJS.ErrnoException);
  }
  try {
    for (const part of components(subpath)) {
      let next: number;
      try {
        // O_NOFOLLOW on the last component: a symbolic link is opened as itself, then refused
        next = openSync(`/proc/self/fd/${fd}/${part}`, O_PATH | constants.O_NOFOLLOW);
      } catch (err) {
        throw notAccessible(full, err as NodeJS.ErrnoException);
      }
      closeSync(fd);
      fd = next;
      if (fstatSync(fd).isSymbolicLink()) throw notAccessible(full, { code: "ELOOP", message: "a symbolic link" });
    }
    const directory = fstatSync(fd).isDirectory();
    await mkdir(posix.dirname(staging), { recursive: true, mode: 0o700 });
    if (directory) await mkdir(staging, { mode: 0o700 });
    else await writeFile(staging, "", { mode: 0o600 });
    try {
      // --no-canonicalize: mount(8) would otherwise resolve the descriptor's link to a path again
      await run("mount", ["--no-canonicalize", "--bind", `/proc/${process.pid}/fd/${fd}`, staging]);
    } catch (err) {
      await rm(staging, { recursive: true, force: true }).catch(() => {});
      throw errors.mountFailed(asked, `cannot mount the volume's subpath: ${String((err as { stderr?: string }).stderr || (err as Error).message).trim()}`);
    }
    return { directory };
  } finally {
    closeSync(fd);
  }
}

/** Every staging mount under `dir` (one use's) unmounted and removed, then `dir`; safe to repeat. */
export async function unpinAll(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const path = posix.join(dir, name);
    await run("umount", ["-l", path]).catch(() => {});
    await rm(path, { recursive: false, force: true }).catch(() => rmdir(path).catch(() => {}));
  }
  await rmdir(dir).catch(() => {});
}
