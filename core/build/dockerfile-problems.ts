/**
 * What goes wrong while parsing, before it becomes a catalogue error: the same problem reads
 * differently in a Dockerfile ("failed to parse Dockerfile: ...", "dockerfile parse error on line N:
 * ...") and in an ONBUILD trigger run by a child build (the bare message), so the parsing code
 * throws these and dockerfile-parse.ts words them.
 */
import { suggestName } from "./suggest.js";

/** A problem of the line parser: directives, continuation lines, one keyword's argument syntax. */
export class LineProblem extends Error {}

/** A problem with one instruction's arguments or flags. */
export class InstructionProblem extends Error {}

/**
 * A keyword Docker does not know, named as written (Docker 28; 20.10 wrote it in capitals), with
 * the known keyword it is likely a typo of (`unknown instruction: RUNN (did you mean RUN?)`).
 */
export class UnknownInstruction extends InstructionProblem {
  constructor(
    readonly keyword: string,
    known: Iterable<string>,
  ) {
    const near = suggestName(keyword, known);
    super(`unknown instruction: ${keyword}${near === undefined ? "" : ` (did you mean ${near}?)`}`);
  }
}
