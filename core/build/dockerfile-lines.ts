/**
 * From the Dockerfile's text to its logical lines, as Docker's parser reads it: a BOM dropped,
 * the parser directives at the top, comment and empty lines skipped, continuation lines joined
 * (the escape character at the end of a line), and the warning for empty continuation lines.
 *
 * Rules kept from Docker (checked against dockerd 20.10):
 * - Directives (`# escape=` and `# syntax=`, names in any case, spaces allowed around `=`) count
 *   only on the lines before anything else: the first line that is not a known directive (an
 *   empty line, a comment, an unknown `# name=value`, an instruction) ends them. A directive given
 *   twice, or an escape other than \ or `, is an error.
 * - A line's leading whitespace is dropped, then a line starting with # is a comment. Inside a
 *   continuation, comment lines and whitespace-only lines are skipped and do not end it (the
 *   latter draw the warning); a continuation line keeps its leading whitespace.
 * - The escape character ends a line (trailing spaces and tabs allowed after it) only when the
 *   character before it is not the escape character too (`RUN echo a\\` is no continuation).
 * - A line may end with \n, \r\n (or any run of \r and \n); a lone \r inside a line is kept.
 * - A line longer than 65535 bytes stops the reading (Go's scanner limit).
 */
import { LineProblem } from "./dockerfile-problems.js";
import { goTrimLeftSpace } from "./go-text.js";
import type { EscapeChar } from "./dockerfile-types.js";

export interface LogicalLine {
  /** The joined text: the first line without its leading whitespace, then each continuation line as is. */
  text: string;
  line: number;
  endLine: number;
}

export interface DockerfileLines {
  escape: EscapeChar;
  syntax?: string;
  lines: LogicalLine[];
  warnings: string[];
}

// Go's \s is ASCII only: [\t\n\f\r ].
const DIRECTIVE = /^#[\t\n\f\r ]*([a-zA-Z][a-zA-Z0-9]*)[\t\n\f\r ]*=[\t\n\f\r ]*(.+?)[\t\n\f\r ]*$/;
const KNOWN_DIRECTIVES = new Set(["escape", "syntax"]);
const MAX_LINE_BYTES = 65535;

/** Reads the directives as lines go by, until the first line that is not one. */
class DirectiveReader {
  escape: EscapeChar = "\\";
  syntax?: string;
  private done = false;
  private readonly seen = new Set<string>();
  private continuation = continuationPattern("\\");

  see(line: string): void {
    if (this.done) return;
    const match = DIRECTIVE.exec(line);
    const name = match?.[1]!.toLowerCase();
    if (!match || !name || !KNOWN_DIRECTIVES.has(name)) {
      this.done = true;
      return;
    }
    if (this.seen.has(name)) throw new LineProblem(`only one ${name} parser directive can be used`);
    this.seen.add(name);
    const value = match[2]!;
    if (name === "syntax") this.syntax = value;
    else if (value === "\\" || value === "`") {
      this.escape = value;
      this.continuation = continuationPattern(value);
    } else throw new LineProblem(`invalid escape token '${value}' does not match \` or \\`);
  }

  /** The line without its continuation character, and whether the instruction goes on. */
  trimContinuation(line: string): [string, boolean] {
    return this.continuation.test(line) ? [line.replace(this.continuation, "$1"), true] : [line, false];
  }
}

/** The escape character at the end (spaces and tabs after it allowed), not itself escaped. */
function continuationPattern(escape: EscapeChar): RegExp {
  const e = `\\${escape}`;
  return new RegExp(`([^${e}])${e}[ \\t]*$|^${e}[ \\t]*$`);
}

const isComment = (line: string) => goTrimLeftSpace(line).startsWith("#");

/** Splits on \n, keeping each line's end away: what Go's scanner hands the parser. */
function physicalLines(text: string): string[] {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = body.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines.map((line) => line.replace(/[\r\n]+$/, ""));
}

export function splitDockerfileLines(text: string): DockerfileLines {
  const directives = new DirectiveReader();
  const physical = physicalLines(text);
  const lines: LogicalLine[] = [];
  const warnings: string[] = [];
  let tooLong = false;
  let index = 0;
  // The next physical line, or undefined at the end (or at a line past Go's scanner limit).
  const next = (): string | undefined => {
    if (tooLong || index >= physical.length) return undefined;
    const line = physical[index++]!;
    if (Buffer.byteLength(line) > MAX_LINE_BYTES) {
      tooLong = true;
      return undefined;
    }
    return line;
  };

  for (let raw = next(); raw !== undefined; raw = next()) {
    const start = index;
    const trimmed = goTrimLeftSpace(raw);
    directives.see(trimmed);
    const [first, continues] = directives.trimContinuation(trimmed.startsWith("#") ? "" : trimmed);
    if (!continues && first === "") continue;
    let joined = first;
    let goesOn = continues;
    let emptyContinuation = false;
    while (goesOn) {
      const more = next();
      if (more === undefined) break;
      directives.see(more);
      if (isComment(more)) continue;
      if (goTrimLeftSpace(more) === "") {
        emptyContinuation = true;
        continue;
      }
      const [part, again] = directives.trimContinuation(more);
      joined += part;
      goesOn = again;
    }
    if (emptyContinuation) warnings.push(`[WARNING]: Empty continuation line found in:\n    ${joined}`);
    lines.push({ text: joined, line: start, endLine: index });
  }

  if (warnings.length > 0) warnings.push("[WARNING]: Empty continuation lines will become errors in a future release.");
  if (lines.length === 0) throw new LineProblem("file with no instructions");
  if (tooLong) throw new LineProblem(`dockerfile line greater than max allowed size of ${MAX_LINE_BYTES}`);
  return { escape: directives.escape, ...(directives.syntax !== undefined ? { syntax: directives.syntax } : {}), lines, warnings };
}
