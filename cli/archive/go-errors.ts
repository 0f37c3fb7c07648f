/** Local file errors worded as Go's os package words them ("lstat /x: no such file or directory"). */

const WORDS: Record<string, string> = {
  ENOENT: "no such file or directory",
  ENOTDIR: "not a directory",
  EACCES: "permission denied",
  EISDIR: "is a directory",
  ELOOP: "too many levels of symbolic links",
  EEXIST: "file exists",
};

/** Go's words for an errno. */
export function errnoText(e: NodeJS.ErrnoException): string {
  return (e.code && WORDS[e.code]) ?? e.message;
}

/** Go's *PathError text: "op path: why". */
export function pathError(op: string, path: string, e: unknown): Error {
  return new Error(`${op} ${path}: ${errnoText(e as NodeJS.ErrnoException)}`);
}
