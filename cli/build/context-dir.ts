/**
 * A folder as a build context, found as the Docker CLI finds it: the folder's real path (its
 * symlinks followed), and the Dockerfile's path inside it: `-f` relative to the current
 * directory, or `Dockerfile` in the folder (`dockerfile` when only that one exists). A
 * Dockerfile outside the folder is allowed: it is then sent under a generated name (see
 * context-pack.ts). The errors are the CLI's (`unable to prepare context: ...` is added by the
 * caller).
 */
import { lstatSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

const GO_ERRORS: Record<string, string> = {
  ENOENT: "no such file or directory",
  ENOTDIR: "not a directory",
  EACCES: "permission denied",
  ELOOP: "too many levels of symbolic links",
};

/** Go's wording of a failed lstat: `lstat /a/b: no such file or directory`, naming the part of the path that failed. */
function lstatError(path: string, e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code ?? "";
  // filepath.EvalSymlinks fails on the first missing component, not the whole path
  let failing = path;
  for (let parent = dirname(path); parent !== failing && parent !== "/"; parent = dirname(parent)) {
    try {
      lstatSync(parent);
      break;
    } catch {
      failing = parent;
    }
  }
  return `lstat ${failing}: ${GO_ERRORS[code] ?? (e as Error).message}`;
}

/** filepath.EvalSymlinks with Go's error. */
function realPath(path: string, what: string): string {
  try {
    return realpathSync(path);
  } catch (e) {
    throw new Error(`unable to evaluate symlinks in ${what} path: ${lstatError(path, e)}`);
  }
}

/** The context folder's absolute real path; it must be a folder. */
export function resolveContextDir(given: string): string {
  const dir = realPath(resolve(given), "context");
  if (!lstatSync(dir).isDirectory()) throw new Error(`context must be a directory: ${dir}`);
  return dir;
}

/**
 * The Dockerfile's path relative to `contextDir` (`..`-prefixed when outside it), or "-" for
 * stdin. `fromCwd`: `-f` is relative to the current directory (a local folder), not to the
 * context (a cloned repository).
 */
export function dockerfileRelPath(contextDir: string, given: string, fromCwd: boolean): string {
  if (given === "-") return given;
  let path = given === "" ? join(contextDir, "Dockerfile") : fromCwd ? resolve(given) : given;
  if (given === "") {
    try {
      lstatSync(path);
    } catch {
      const lower = join(contextDir, "dockerfile");
      try {
        lstatSync(lower);
        path = lower;
      } catch {
        // neither: the error names "Dockerfile"
      }
    }
  }
  if (!isAbsolute(path)) path = join(contextDir, path);
  const real = realPath(path, "Dockerfile");
  return relative(contextDir, real) || ".";
}

/** Whether a relative Dockerfile path leads out of the context. */
export const outsideContext = (rel: string): boolean => rel === ".." || rel.startsWith(`..${sep}`);
