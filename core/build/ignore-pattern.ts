/**
 * One .dockerignore pattern: checked for syntax as Go's filepath.Match checks it, and turned
 * into a regular expression the way moby's patternmatcher does.
 *
 *   *      any run of characters but /          ?   one character but /
 *   **     any number of path elements (also none); "**" / "dir/**" at the end: anything below
 *   [...]  a class: ranges a-z, negated by a leading ^   \x  the character x itself
 *
 * Syntax errors (an unclosed or empty class, `[a-]`, a trailing \) throw "syntax error in pattern".
 * Where patternmatcher's regex text has quirks for odd patterns (a `*` inside a class, a `^`
 * outside one), this follows filepath.Match's documented meaning instead: `[*]` is a literal star.
 */
import { errors } from "../errors.js";

const BAD_PATTERN = "syntax error in pattern";
// Characters with a meaning in a regular expression, to escape when they stand for themselves.
const REGEX_SYNTAX = /[\\^$.*+?()[\]{}|/]/;

/** filepath.Match's syntax rules: every class closed and non-empty, no bare - or ] where a character belongs. */
function checkGlobSyntax(pattern: string): void {
  const chars = Array.from(pattern);
  const bad = () => errors.buildIgnorePattern(BAD_PATTERN);
  // Go's getEsc: one class character (maybe escaped) that must be followed by something.
  const classChar = (i: number): number => {
    let at = i;
    if (at >= chars.length || chars[at] === "-" || chars[at] === "]") throw bad();
    if (chars[at] === "\\") {
      at++;
      if (at >= chars.length) throw bad();
    }
    at++;
    if (at >= chars.length) throw bad();
    return at;
  };
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i];
    if (ch === "\\") {
      if (++i >= chars.length) throw bad();
    } else if (ch === "[") {
      i++;
      if (chars[i] === "^") i++;
      let ranges = 0;
      for (;;) {
        if (chars[i] === "]" && ranges > 0) break;
        i = classChar(i);
        if (chars[i] === "-") i = classChar(i + 1);
        ranges++;
      }
    }
  }
}

const escapeOutside = (ch: string) => (REGEX_SYNTAX.test(ch) ? `\\${ch}` : ch);
const escapeInClass = (ch: string) => (/[\\\]^[-]/.test(ch) ? `\\${ch}` : ch);

/** The pattern (already cleaned, without its "!") as an anchored regular expression over slash paths. */
export function globToRegExp(pattern: string): RegExp {
  checkGlobSyntax(pattern);
  const chars = Array.from(pattern);
  let source = "^";
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === "*") {
      if (chars[i + 1] !== "*") {
        source += "[^/]*";
        continue;
      }
      i++;
      if (chars[i + 1] === "/") i++; // "**/" is "**"
      // "**" at the end takes everything below, slashes included; elsewhere any number of elements.
      source += i + 1 >= chars.length ? ".*" : "(.*/)?";
    } else if (ch === "?") source += "[^/]";
    else if (ch === "\\") source += escapeOutside(chars[++i]!);
    else if (ch === "[") {
      source += "[";
      if (chars[i + 1] === "^") source += chars[++i];
      for (i++; chars[i] !== "]"; i++) {
        const member = chars[i]!;
        if (member === "\\") source += escapeInClass(chars[++i]!);
        else source += member === "-" ? "-" : escapeInClass(member);
      }
      source += "]";
    } else source += escapeOutside(ch);
  }
  return new RegExp(`${source}$`, "u");
}
