/**
 * A path named by the client (`dockerfile`, a git `#ref:subdir`) resolved inside a context's
 * folder the way Docker's FollowSymlinkInScope does: the name is cleaned lexically first, and a
 * `..` that climbs above the folder is refused (`OutsideScopeError`); then every symlink on the
 * way, the last component's too, is followed as if the folder were `/` (an absolute target
 * starts again at the folder, `..` stops there). A component that does not exist is kept as
 * it is named, so the caller's open or stat tells that it is missing.
 *
 * The folder belongs to this build alone (the daemon made it, private, and nothing runs in it
 * while the context is read), so what is resolved stays true until the caller opens it.
 */
import { lstatSync, readlinkSync, type Stats } from "node:fs";
import { join } from "node:path";

/** Symlinks followed for one name before giving up, as the kernel's ELOOP limit. */
const MAX_SYMLINK_HOPS = 40;

/** The name leaves the folder (lexically, before any symlink is looked at). */
export class OutsideScopeError extends Error {
  constructor(readonly path: string) {
    super(`${path} is outside of the build context`);
    this.name = "OutsideScopeError";
  }
}

/** Too many symlinks on the way (a loop). */
class SymlinkLoopError extends Error {
  constructor(readonly path: string) {
    super(`${path}: too many levels of symbolic links`);
    this.name = "SymlinkLoopError";
  }
}

/** `name`'s components with `.` and empty ones gone and `..` applied; throws when it climbs out. */
function cleanScopedName(name: string): string[] {
  const parts: string[] = [];
  for (const part of name.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) throw new OutsideScopeError(name);
      parts.pop();
      continue;
    }
    parts.push(part);
  }
  return parts;
}

/** The absolute path `name` leads to inside `root` (see the file's comment); `root` itself for "". */
export function resolveInScope(root: string, name: string): string {
  const todo = cleanScopedName(name).reverse(); // a stack: the next component at the end
  const done: string[] = [];
  let hops = 0;
  while (todo.length > 0) {
    const part = todo.pop()!;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      done.pop(); // a symlink's `..` stops at the folder, as `/..` is `/`
      continue;
    }
    const here = join(root, ...done, part);
    const st = lstatOrMissing(here);
    if (st?.isSymbolicLink()) {
      if (++hops > MAX_SYMLINK_HOPS) throw new SymlinkLoopError(name);
      const target = readlinkSync(here);
      if (target.startsWith("/")) done.length = 0;
      todo.push(...target.split("/").reverse());
      continue;
    }
    done.push(part);
  }
  return join(root, ...done);
}

/** lstat, or undefined when nothing is there (a missing name, or a parent that is no directory). */
function lstatOrMissing(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
    throw e;
  }
}
