/**
 * A container's files as its processes see them, for `docker cp`: the root filesystem with the
 * container's volumes, binds and network files (`/etc/hosts`, `/etc/hostname`,
 * `/etc/resolv.conf`) mounted on it, as Docker's daemon mounts them on the container's root for
 * a copy (its `mountVolumes`): then a path under `/vol1` is the volume's file, a read-only bind
 * refuses writes, and a symlink in a volume resolves in the container's view (an absolute one
 * from the container's `/`), because scoped-fs walks one tree where the kernel crosses mounts.
 * Not there, as in Docker: tmpfs mounts, `/proc`, `/sys`, `/dev` (they are the running
 * process's, not files of the container).
 *
 * The tree is private to the operation, in a folder of the daemon's: `<dir>` is bound on itself
 * and made private (nothing mounted under it propagates anywhere), the root filesystem is bound
 * at `<dir>/root`, then each mount, parents first, is put on its destination:
 *   1. the destination is resolved in the tree with scoped-fs (one component at a time, symlinks
 *      the container made resolved inside the tree, missing folders made as Docker makes them,
 *      a missing file made empty) and held open as a descriptor;
 *   2. the source (a path of the daemon's or the one the user gave for a bind, followed on the
 *      host as the runtime follows it at start) is bound at `<dir>/stage/<n>`, made private, and
 *      made read-only there when the mount is;
 *   3. that mount is moved onto the held descriptor (`/proc/self/fd/3` of mount(8)), so the
 *      kernel mounts on the very inode resolved in 1, whatever the container renames meanwhile.
 * No path string the container controls is ever handed to mount(8), and every mount lands on
 * something inside the tree. `close` detaches the whole tree (lazily when still busy) and
 * removes the folder once nothing is mounted under it.
 */
import { spawn } from "node:child_process";
import { closeSync, constants, fchmodSync, fstatSync, mkdirSync, openSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { join, posix } from "node:path";
import { errors } from "../../../core/errors.js";
import { at, createFileAt, lstatAt, O_PATH, ScopedRoot } from "./scoped-fs.js";

/** One mount of the view. */
export interface ViewMount {
  /** Where in the container (absolute, cleaned). */
  destination: string;
  /** The host path mounted there: a directory, or a file (a file bind, the network files). */
  source: string;
  readOnly: boolean;
  /** Submounts of the source come along (`rbind`), as the container has them. */
  recursive: boolean;
}

export interface ContainerView {
  root: ScopedRoot;
  /** Unmounts the tree and removes its folder; safe to repeat. */
  close(): Promise<void>;
}

/** mount(8) runs, with `fd` (when given) as its descriptor 3; rejects with its message. */
function mountCommands(script: string, args: string[], fd?: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-ec", script, "sh", ...args], { stdio: ["ignore", "ignore", "pipe", ...(fd === undefined ? [] : [fd])] });
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(stderr.trim() || `mount exited ${code}`))));
  });
}

const depth = (p: string) => p.split("/").filter(Boolean).length;

/**
 * The view of the root filesystem mounted at `rootfs` with `mounts` on it, in a new folder under
 * `scratch`. Throws a 500 naming the mount that failed (with everything mounted so far undone).
 * A missing folder or file at a destination is made, as Docker does (a container that never ran
 * has none yet): `docker diff` then lists it, as Docker's does.
 */
export async function openContainerView(rootfs: string, mounts: readonly ViewMount[], scratch: string): Promise<ContainerView> {
  mkdirSync(scratch, { recursive: true, mode: 0o700 });
  const dir = await mkdtemp(join(scratch, "cp-"));
  mkdirSync(join(dir, "root"));
  mkdirSync(join(dir, "stage"));
  let root: ScopedRoot | undefined;
  const close = async () => {
    root?.close();
    root = undefined;
    await removeTree(dir);
  };
  try {
    await mountCommands('mount --bind --make-private "$1" "$1"; mount --bind "$2" "$1/root"', [dir, rootfs]);
    root = ScopedRoot.open(join(dir, "root"));
    const ordered = [...mounts].sort((a, b) => depth(a.destination) - depth(b.destination));
    for (const [n, m] of ordered.entries()) await mountOne(root, m, join(dir, "stage", String(n)));
  } catch (err) {
    await close();
    throw err;
  }
  return { root, close };
}

/** Steps 1 to 3 of the file's comment for one mount. */
async function mountOne(root: ScopedRoot, m: ViewMount, stage: string): Promise<void> {
  const failed = (why: string) => errors.mountFailed(m.destination, `cannot mount ${m.source} there for the copy: ${why}`);
  let isDir: boolean;
  try {
    isDir = statSync(m.source).isDirectory();
  } catch (err) {
    throw failed((err as Error).message);
  }
  let target: number;
  try {
    target = isDir ? openDirTarget(root, m.destination) : openFileTarget(root, m.destination);
  } catch (err) {
    throw failed((err as Error).message);
  }
  try {
    if (isDir) mkdirSync(stage);
    else writeFileSync(stage, "", { flag: "wx", mode: 0o600 });
    const script = [
      'mount "$1" --make-rprivate "$2" "$3"',
      ...(m.readOnly ? ['mount -o remount,bind,ro "$3"'] : []),
      'mount --no-canonicalize --move "$3" /proc/self/fd/3',
    ].join("; ");
    await mountCommands(script, [m.recursive ? "--rbind" : "--bind", m.source, stage], target);
  } catch (err) {
    throw failed((err as Error).message);
  } finally {
    closeSync(target);
  }
}

/** The folder at `dest`, made (0755, root's) with its parents when missing, as Docker does for a copy. */
function openDirTarget(root: ScopedRoot, dest: string): number {
  const r = root.resolve(dest, { followLast: true, create: true });
  if (r.name !== "") {
    r.close();
    throw new Error("not a directory in the container");
  }
  return r.dirFd;
}

/** The file at `dest` (made empty when missing, its folder too), held without being opened. */
function openFileTarget(root: ScopedRoot, dest: string): number {
  const r = root.resolve(posix.dirname(dest), { followLast: true, create: true });
  try {
    if (r.name !== "") throw new Error("its folder is not a directory in the container");
    const name = posix.basename(dest);
    if (!lstatAt(r.dirFd, name)) {
      const made = createFileAt(r.dirFd, name);
      fchmodSync(made, 0o755); // as Docker makes a missing mount point for a file
      closeSync(made);
    }
    const fd = openSync(at(r.dirFd, name), O_PATH | constants.O_NOFOLLOW);
    if (!fstatSync(fd).isFile()) {
      closeSync(fd);
      throw new Error("not a file in the container");
    }
    return fd;
  } finally {
    r.close();
  }
}

/** Whether anything is mounted at or under `dir` (read from /proc/self/mountinfo). */
async function mountedUnder(dir: string): Promise<boolean> {
  const info = await readFile("/proc/self/mountinfo", "utf8");
  const escaped = dir.replace(/[ \t\n\\]/g, (ch) => `\\${ch.charCodeAt(0).toString(8).padStart(3, "0")}`);
  return info.split("\n").some((line) => {
    const point = line.split(" ")[4];
    return point === escaped || point?.startsWith(`${escaped}/`);
  });
}

/**
 * Detaches the tree at `dir` (everything under it: the root's bind, the moved mounts), lazily
 * when a descriptor still holds part of it, then removes the folder. Never removes through a
 * mount: while anything is still mounted under `dir`, the folder stays.
 */
async function removeTree(dir: string): Promise<void> {
  if (await mountedUnder(dir)) {
    await mountCommands('umount -R "$1" 2>/dev/null || umount -R -l "$1"', [dir]).catch(() => {});
  }
  if (await mountedUnder(dir)) return;
  await rm(dir, { recursive: true, force: true });
}
