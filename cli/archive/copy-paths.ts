/**
 * The path rules of `docker cp` (moby's go-archive copy.go), on slash-separated paths: what a
 * trailing `/` or `/.` asserts, how a path splits into its directory and the entry in it, which
 * directory a copy extracts to and under which name, and `CONTAINER:PATH` apart from a local path.
 */
import { posix } from "node:path";

/** Go's filepath.Clean: no `.` or empty parts, `..` resolved, no trailing slash but for `/`. */
export function goClean(p: string): string {
  if (p === "") return ".";
  const n = posix.normalize(p);
  return n.length > 1 && n.endsWith("/") ? n.slice(0, -1) : n;
}

export const hasTrailingSeparator = (p: string): boolean => p.endsWith("/");
const specifiesCurrentDir = (p: string): boolean => posix.basename(p) === "." || p === "." || p.endsWith("/.");
/** A trailing `/` or `/.`: the path must be a directory. */
export const assertsDirectory = (p: string): boolean => hasTrailingSeparator(p) || specifiesCurrentDir(p);

/** The directory and the entry in it (`/a/b/.` -> `/a/b` and `.`). */
export function splitPathDirEntry(p: string): { dir: string; base: string } {
  let cleaned = goClean(p);
  if (specifiesCurrentDir(p)) cleaned += cleaned === "/" ? "." : "/.";
  return { dir: posix.dirname(cleaned), base: posix.basename(cleaned) || "/" };
}

/** Puts back the trailing `/.` or `/` that cleaning took off `original`. */
export function preserveTrailingDotOrSeparator(cleaned: string, original: string): string {
  let out = cleaned;
  if (!specifiesCurrentDir(out) && specifiesCurrentDir(original)) {
    if (!hasTrailingSeparator(out)) out += "/";
    out += ".";
  }
  if (!hasTrailingSeparator(out) && hasTrailingSeparator(original)) out += "/";
  return out;
}

/** A symlink resolved to `resolved`: the trailing marks of `path` kept, and the name it should keep in the tar. */
export function getRebaseName(path: string, resolved: string): { resolved: string; rebaseName: string } {
  let out = resolved;
  if (specifiesCurrentDir(path) && !specifiesCurrentDir(out)) out += "/.";
  if (hasTrailingSeparator(path) && !hasTrailingSeparator(out)) out += "/";
  const rebaseName = posix.basename(path) !== posix.basename(out) ? posix.basename(path) : "";
  return { resolved: out, rebaseName };
}

/** What a copy knows of its source or destination. */
export interface CopyInfo {
  path: string;
  exists: boolean;
  isDir: boolean;
  rebaseName: string;
}

/** Why PrepareArchiveCopy refuses (go-archive's errors). */
export class CopyError extends Error {}

/**
 * Where the source's tar goes and under which name (go-archive's PrepareArchiveCopy): into an
 * existing directory as it is; otherwise into the destination's parent with its base entry
 * renamed to the destination's name.
 */
export function prepareArchiveCopy(src: CopyInfo, dst: CopyInfo): { dstDir: string; rebase?: { from: string; to: string } } {
  const { dir: dstDir, base: dstBase } = splitPathDirEntry(dst.path);
  const srcBase = src.rebaseName || splitPathDirEntry(src.path).base;
  if (dst.exists && dst.isDir) return { dstDir: dst.path };
  if (dst.exists && src.isDir) throw new CopyError("cannot copy directory");
  if (!dst.exists && !src.isDir && assertsDirectory(dst.path)) throw new CopyError("no such directory");
  return { dstDir, rebase: { from: srcBase, to: dstBase } };
}

/**
 * `CONTAINER:PATH` or a local path: an absolute path, one without `:` or one starting with `.`
 * (`./file:name`) is local.
 */
export function splitCpArg(arg: string): { container: string; path: string } {
  if (arg.startsWith("/")) return { container: "", path: arg };
  const colon = arg.indexOf(":");
  if (colon < 0 || arg.startsWith(".")) return { container: "", path: arg };
  return { container: arg.slice(0, colon), path: arg.slice(colon + 1) };
}
