/**
 * File system access confined to a container's root filesystem, for `docker cp` and export.
 *
 * Copying into and out of a container is a security boundary: the container owns every name
 * under its root and may turn any directory into a symlink (to `/`, to a host path) at any
 * moment, also while a copy runs. Resolving a path string and then using it (lstat, then open)
 * is a race the container can win. Node has neither openat2(RESOLVE_IN_ROOT) nor chroot, so
 * this module does what those do, by hand, with /proc/self/fd:
 *
 * - The root is opened once as a directory descriptor. Every later lookup is relative to an
 *   open directory descriptor, and names exactly ONE component: `/proc/self/fd/<dirfd>/<name>`.
 *   The kernel resolves `/proc/self/fd/<dirfd>` as a magic link straight to the directory the
 *   descriptor holds (not by re-walking any path string), so only `<name>` is looked up, in that
 *   directory, and whatever happens to the directory's ancestors meanwhile does not matter.
 * - Directories are walked one component at a time with O_DIRECTORY|O_NOFOLLOW: a symlink fails
 *   with ELOOP instead of being followed. Its target is then read (readlink does not follow) and
 *   resolved HERE, inside the root: an absolute target starts again at the root descriptor, `..`
 *   pops the stack of open ancestors and never above the root, and after MAX_LINK_HOPS links the
 *   walk fails with ELOOP. A component the container swaps between two calls only changes which
 *   of these cases applies; no call ever follows a symlink the walk did not resolve itself.
 * - Everything is created or changed as a single last component of an open directory:
 *   O_CREAT|O_EXCL|O_NOFOLLOW files, mkdir, symlink and link (none of them follows a
 *   last-component symlink), and modes, owners and times through a descriptor of the entry
 *   itself (fchmod/fchown/futimes) or, for symlinks, lchown/lutimes. There is no mknod here:
 *   device nodes and FIFOs are never made in a container (skipped-entries.ts).
 * Every directory reached this way is inside the root: it was reached from the root through
 * real directories only, and a container cannot rename a directory out of its own mounts.
 * A `ScopedDir` keeps a directory and its ancestors open, so that a whole extraction stays in
 * the directory it started in even if the container renames it or swaps its name meanwhile.
 */
import { closeSync, constants, lchownSync, linkSync, mkdirSync, openSync, readlinkSync, rmdirSync, symlinkSync, unlinkSync } from "node:fs";
import { at, DIR_FLAGS, errnoOf as errno, lstatAt, openDirAt, readdirFd, ScopedPathError, self } from "../../../core/fs/at.js";

// the single-component calls live in core (the layer walks of commit and diff use them too)
export { at, lstatAt, O_PATH, openDirAt, openFileForReadAt, readdirFd, readlinkAt, ScopedPathError, self } from "../../../core/fs/at.js";

/** Symlinks followed while resolving one path, as the kernel's own limit. */
const MAX_LINK_HOPS = 40;

/** What a path resolved to: the open directory that holds it, and its name there. */
export interface Resolved {
  /** An open directory (the caller closes it with `close()`). */
  dirFd: number;
  /** The last component in `dirFd`, or "" when the path is the directory `dirFd` itself. */
  name: string;
  /** The resolved path inside the root, symlinks replaced: `/usr/lib/x`. */
  path: string;
  close(): void;
}

export interface ResolveOptions {
  /** Resolve a symlink in the last position too (else the link itself is the answer). */
  followLast: boolean;
  /** Make missing directories on the way, the last one too (0755, owned by the daemon), as `mkdir -p`. */
  create?: boolean;
  /** Who the directories `create` makes belong to, when not the daemon (the remapped root under `--userns-remap`). */
  owner?: { uid: number; gid: number };
}

/** Path components, `.` and empty ones dropped (`..` kept: only the walk knows what it climbs). */
function components(path: string): string[] {
  return path.split("/").filter((p) => p !== "" && p !== ".");
}

/** A container root held open; all access goes through `resolve` and the `*At` helpers. */
export class ScopedRoot {
  private constructor(readonly fd: number) {}

  /** Opens `path` (a directory the daemon itself controls, such as the rootfs mount point). */
  static open(path: string): ScopedRoot {
    return new ScopedRoot(openSync(path, DIR_FLAGS));
  }

  close(): void {
    closeSync(this.fd);
  }

  /** A new descriptor of the root directory (reopened through its magic link, as a dup). */
  reopen(): number {
    // no O_NOFOLLOW: the last component is the magic link itself, which must be followed
    return openSync(self(this.fd), constants.O_RDONLY | constants.O_DIRECTORY);
  }

  /**
   * Resolves the container path `path` (relative paths are taken from `/`) inside the root.
   * Throws ScopedPathError: ENOENT for a missing directory on the way, ENOTDIR for a
   * non-directory on the way, ELOOP for too many links. A missing last component is not an
   * error (the caller looks at `name`).
   */
  resolve(path: string, opts: ResolveOptions): Resolved {
    return finish(this.walk([{ fd: this.reopen(), name: "" }], path, opts));
  }

  /**
   * Opens the directory `path` (a symlink in the last place followed) for `ScopedDir.resolve`:
   * paths resolved from it stay anchored in that directory, whatever happens to its name.
   */
  openDir(path: string): ScopedDir {
    const { stack, last } = this.walk([{ fd: this.reopen(), name: "" }], path, { followLast: true });
    if (last !== "") {
      for (const s of stack) closeSync(s.fd);
      throw new ScopedPathError("ENOTDIR", path, "not a directory");
    }
    return new ScopedDir(this, stack);
  }

  /**
   * The walk: `stack` holds the open directories from the root (its first frame, never popped)
   * to where the walk starts; it is consumed (closed on failure, returned on success).
   */
  walk(stack: Frame[], path: string, opts: ResolveOptions): { stack: Frame[]; last: string } {
    const todo = components(path).reverse(); // a stack: the next component is at the end
    let hops = 0;
    let last = "";
    const top = () => stack[stack.length - 1];
    const shown = () => "/" + stack.slice(1).map((s) => s.name).join("/");
    try {
      // (a part no file name can be: the caller's mistake, not a failure of the file system's)
      if (todo.some((part) => Buffer.byteLength(part) > 255)) throw new ScopedPathError("ENAMETOOLONG", path, "file name too long");
      while (todo.length > 0) {
        const part = todo.pop()!;
        if (part === "..") {
          if (stack.length > 1) closeSync(stack.pop()!.fd);
          continue;
        }
        const isLast = todo.length === 0;
        if (isLast && !opts.followLast) {
          last = part;
          break;
        }
        let fd: number | undefined;
        try {
          fd = openSync(at(top().fd, part), DIR_FLAGS);
        } catch (e) {
          const code = errno(e);
          if (code === "ENOENT") {
            if (isLast && !opts.create) {
              last = part;
              break;
            }
            if (!opts.create) throw new ScopedPathError("ENOENT", joinPath(shown(), part), "no such file or directory");
            try {
              mkdirSync(at(top().fd, part), 0o755);
              // lchown: should the container have swapped in a symlink meanwhile, it is not followed
              if (opts.owner) lchownSync(at(top().fd, part), opts.owner.uid, opts.owner.gid);
            } catch (me) {
              if (errno(me) !== "EEXIST") throw me;
            }
            todo.push(part); // open it (or whatever raced in) on the next turn
            if (++hops > MAX_LINK_HOPS) throw new ScopedPathError("ELOOP", joinPath(shown(), part), "the path keeps changing");
            continue;
          }
          if (code !== "ELOOP" && code !== "ENOTDIR") throw e;
          const st = lstatAt(top().fd, part);
          if (!st) {
            todo.push(part); // gone meanwhile: look again
            if (++hops > MAX_LINK_HOPS) throw new ScopedPathError("ELOOP", joinPath(shown(), part), "the path keeps changing");
            continue;
          }
          if (st.isSymbolicLink()) {
            if (++hops > MAX_LINK_HOPS) throw new ScopedPathError("ELOOP", path, "too many levels of symbolic links");
            let target: string;
            try {
              target = readlinkSync(at(top().fd, part));
            } catch (le) {
              if (errno(le) !== "EINVAL" && errno(le) !== "ENOENT") throw le;
              todo.push(part); // no longer a symlink: look again
              continue;
            }
            if (target.startsWith("/")) while (stack.length > 1) closeSync(stack.pop()!.fd);
            todo.push(...components(target).reverse());
            continue;
          }
          if (st.isDirectory()) {
            todo.push(part); // was a symlink a moment ago: open it again
            if (++hops > MAX_LINK_HOPS) throw new ScopedPathError("ELOOP", joinPath(shown(), part), "the path keeps changing");
            continue;
          }
          if (isLast) {
            last = part; // a file, device... at the end: the answer is its directory and name
            break;
          }
          throw new ScopedPathError("ENOTDIR", joinPath(shown(), part), "not a directory");
        }
        stack.push({ fd, name: part });
      }
    } catch (e) {
      for (const s of stack) closeSync(s.fd);
      throw e;
    }
    return { stack, last };
  }
}

interface Frame {
  fd: number;
  name: string;
}

/** The last frame of a walk as the answer; the other frames are closed. */
function finish({ stack, last }: { stack: Frame[]; last: string }): Resolved {
  const dirPath = "/" + stack.slice(1).map((s) => s.name).join("/");
  const result = stack.pop()!;
  for (const s of stack) closeSync(s.fd);
  return {
    dirFd: result.fd,
    name: last,
    path: last ? joinPath(dirPath, last) : dirPath,
    close: () => closeSync(result.fd),
  };
}

/** A directory held open with its ancestors, from which relative paths are resolved (`..` included). */
export class ScopedDir {
  constructor(
    private readonly root: ScopedRoot,
    private readonly frames: Frame[],
  ) {}

  /** The directory's path inside the root when it was opened. */
  get path(): string {
    return "/" + this.frames.slice(1).map((s) => s.name).join("/");
  }

  /** Resolves `rel` from this directory (an absolute path from the root), as ScopedRoot.resolve. */
  resolve(rel: string, opts: ResolveOptions): Resolved {
    if (rel.startsWith("/")) return this.root.resolve(rel, opts);
    const copy: Frame[] = [];
    try {
      // each frame reopened through its magic link: a dup the walk may close
      for (const f of this.frames) copy.push({ fd: openSync(self(f.fd), constants.O_RDONLY | constants.O_DIRECTORY), name: f.name });
    } catch (e) {
      for (const f of copy) closeSync(f.fd);
      throw e;
    }
    return finish(this.root.walk(copy, rel, opts));
  }

  close(): void {
    for (const f of this.frames) closeSync(f.fd);
  }
}

function joinPath(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

// --- single-component operations --------------------------------------------------------------

/** Creates the new regular file `name` in `dirFd` for writing (fails if anything is there). */
export function createFileAt(dirFd: number, name: string): number {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  return openSync(at(dirFd, name), flags, 0o600);
}

export function mkdirAt(dirFd: number, name: string, mode: number): void {
  mkdirSync(at(dirFd, name), mode);
}

export function symlinkAt(target: string, dirFd: number, name: string): void {
  symlinkSync(target, at(dirFd, name));
}

/** A hard link `name` in `dirFd` to `srcName` in `srcDirFd` (link(2) does not follow a symlink there). */
export function linkAt(srcDirFd: number, srcName: string, dirFd: number, name: string): void {
  linkSync(at(srcDirFd, srcName), at(dirFd, name));
}

/** Deepest directory tree `removeAt` descends (a container could make one deeper than any stack). */
const MAX_REMOVE_DEPTH = 512;

/**
 * Removes `name` in `dirFd` with everything under it, never following a symlink: directories
 * are descended through descriptors opened with O_NOFOLLOW, never by path strings.
 */
export function removeAt(dirFd: number, name: string, depth = 0): void {
  const st = lstatAt(dirFd, name);
  if (!st) return;
  if (!st.isDirectory()) {
    unlinkSync(at(dirFd, name));
    return;
  }
  if (depth > MAX_REMOVE_DEPTH) throw new ScopedPathError("ELOOP", name, "directory tree too deep to remove");
  let fd: number;
  try {
    fd = openDirAt(dirFd, name);
  } catch (e) {
    if (errno(e) === "ELOOP" || errno(e) === "ENOTDIR") return removeAt(dirFd, name, depth + 1); // swapped meanwhile
    throw e;
  }
  try {
    for (const child of readdirFd(fd)) removeAt(fd, child, depth + 1);
  } finally {
    closeSync(fd);
  }
  rmdirSync(at(dirFd, name));
}
