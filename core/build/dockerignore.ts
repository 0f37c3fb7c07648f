/**
 * .dockerignore: which files of a build context are left out, with the rules of Docker's CLI
 * (which filters the context before sending it) and of moby's patternmatcher.
 *
 * The file: one pattern a line; a line starting with # (in its first column) is a comment; blank
 * lines are skipped; surrounding whitespace is trimmed; each pattern is cleaned like a path
 * (`./a/` is `a`, `a/../b` is `b`) and a leading / dropped (patterns are relative to the context).
 * A leading ! makes an exception: what it matches is sent after all.
 *
 * Matching, path by path from the top (a path is relative to the context, slash-separated):
 * - the last pattern that matches decides (a pattern or an exception);
 * - a pattern that matched a directory also matches everything below it, and so does an
 *   exception, so `docs` then `!docs/README.md` sends only that file of docs/;
 * - a directory that is left out is not even walked into, unless an exception's text starts with
 *   the directory's path and a slash (`!docs/README.md` for docs/): Docker's CLI decides that on
 *   the text of the exception, so `a` then `!**\/keep.txt` does NOT bring back a/keep.txt.
 *
 * Whatever the patterns say, Docker's CLI always sends the Dockerfile and .dockerignore (it adds
 * exceptions for them), and the daemon then removes each of the two from the context when the
 * patterns match it, after it has read them: see README.md.
 */
import { errors } from "../errors.js";
import { goCleanPath, goTrimSpace } from "./go-text.js";
import { globToRegExp } from "./ignore-pattern.js";

/** The patterns of a .dockerignore file's text, in order (exceptions keep their "!"). */
export function readDockerignore(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const patterns: string[] = [];
  lines.forEach((raw, index) => {
    let line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (index === 0 && line.startsWith("\uFEFF")) line = line.slice(1);
    if (line.startsWith("#")) return;
    let pattern = goTrimSpace(line);
    if (pattern === "") return;
    const exception = pattern.startsWith("!");
    if (exception) pattern = goTrimSpace(pattern.slice(1));
    if (pattern !== "") {
      pattern = goCleanPath(pattern);
      if (pattern.length > 1 && pattern.startsWith("/")) pattern = pattern.slice(1);
    }
    patterns.push(exception ? `!${pattern}` : pattern);
  });
  return patterns;
}

export interface IgnorePattern {
  /** The pattern, cleaned, without its "!". */
  text: string;
  exception: boolean;
  regexp: RegExp;
}

/**
 * Where a path stands: whether it is left out, and which patterns matched it (or a directory
 * above it), which its children inherit. Pass a directory's state to its children's `match`.
 */
export interface MatchState {
  excluded: boolean;
  matched: boolean[];
}

export class IgnoreMatcher {
  readonly patterns: readonly IgnorePattern[];
  readonly hasExceptions: boolean;

  /** From patterns as readDockerignore returns them; a bad one throws (ENGINE_ERR_BUILD_IGNORE_PATTERN). */
  constructor(patterns: readonly string[]) {
    const compiled: IgnorePattern[] = [];
    for (const raw of patterns) {
      let text = goTrimSpace(raw);
      if (text === "") continue;
      text = goCleanPath(text);
      const exception = text.startsWith("!");
      if (exception) {
        if (text.length === 1) throw errors.buildIgnorePattern('illegal exclusion pattern: "!"');
        text = text.slice(1);
      }
      compiled.push({ text, exception, regexp: globToRegExp(text) });
    }
    this.patterns = compiled;
    this.hasExceptions = compiled.some((p) => p.exception);
  }

  /** The matcher of a .dockerignore file's text. */
  static fromFile(text: string): IgnoreMatcher {
    return new IgnoreMatcher(readDockerignore(text));
  }

  /**
   * One path's state, given its parent directory's (none for a path at the top). This is
   * patternmatcher's MatchesUsingParentResults, which Docker's CLI uses as it walks the context.
   */
  match(path: string, parent?: MatchState): MatchState {
    const matched = this.patterns.map(() => false);
    let excluded = false;
    this.patterns.forEach((pattern, i) => {
      let match = parent?.matched[i] ?? false;
      if (!match) {
        // An exception matters only once something matched; a pattern only while nothing has.
        if (pattern.exception !== excluded) return;
        match = pattern.regexp.test(path);
        if (!match && !parent) match = ancestors(path).some((dir) => pattern.regexp.test(dir));
      }
      matched[i] = match;
      if (match) excluded = !pattern.exception;
    });
    return { excluded, matched };
  }

  /** Whether the patterns leave this path out, its directories above taken into account. */
  matches(path: string): boolean {
    const clean = goCleanPath(path).replace(/^\/+/, "");
    if (clean === "." || clean === "") return false;
    let state: MatchState | undefined;
    for (const dir of ancestors(clean)) state = this.match(dir, state);
    return this.match(clean, state).excluded;
  }

  /**
   * For a directory the patterns leave out: whether a walker must still go into it, because an
   * exception may bring back something below it (Docker's CLI test on the exception's text). The
   * walker then sends what is below but not the directory's own entry.
   */
  mustDescend(dir: string): boolean {
    if (!this.hasExceptions) return false;
    const prefix = `${goCleanPath(dir).replace(/^\/+/, "")}/`;
    return this.patterns.some((p) => p.exception && `${p.text}/`.startsWith(prefix));
  }

  /** Whether a walker following these rules leaves the path out: it or a directory above it is
   *  left out, and no exception made the walker go into that directory. */
  excludes(path: string): boolean {
    const clean = goCleanPath(path).replace(/^\/+/, "");
    if (clean === "." || clean === "") return false;
    let state: MatchState | undefined;
    for (const dir of ancestors(clean)) {
      state = this.match(dir, state);
      if (state.excluded && !this.mustDescend(dir)) return true;
    }
    return this.match(clean, state).excluded;
  }
}

/** "a/b/c" -> ["a", "a/b"]. */
function ancestors(path: string): string[] {
  const parts = path.split("/");
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join("/"));
}
