/**
 * What goes wrong while parsing, before it becomes a catalogue error: the same problem reads
 * differently in a Dockerfile ("failed to parse Dockerfile: ...", "dockerfile parse error line N:
 * ...") and in an ONBUILD trigger run by a child build (the bare message), so the parsing code
 * throws these and dockerfile-parse.ts words them.
 */

/** A problem of the line parser: directives, continuation lines, one keyword's argument syntax. */
export class LineProblem extends Error {}

/** A problem with one instruction's arguments or flags. */
export class InstructionProblem extends Error {}

/** A keyword Docker does not know. */
export class UnknownInstruction extends InstructionProblem {
  constructor(readonly keyword: string) {
    super(`unknown instruction: ${keyword.toUpperCase()}`);
  }
}
