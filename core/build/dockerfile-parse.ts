/**
 * parseDockerfile: a Dockerfile's text into its stages, as Docker's classic builder (dockerd
 * 20.10, DOCKER_BUILDKIT=0) reads it, with its error messages. Pure: no daemon, no files.
 *
 * Two passes, as in Docker, so that the first error reported is the same: every line goes through
 * the line parser first (its errors read "failed to parse <name>: ..."), then each line
 * becomes an instruction ("dockerfile parse error on line N: ..."), grouped into stages.
 *
 *   const parsed = parseDockerfile(text, { name: "Dockerfile" });
 *   for (const warning of parsed.warnings) print(warning);
 *   const stages = selectStages(parsed, target);           // --target
 *   const steps = parsed.metaArgs.length + stages.reduce((n, s) => n + 1 + s.instructions.length, 0);
 */
import { errors } from "../errors.js";
import { splitDockerfileLines } from "./dockerfile-lines.js";
import { parseLine } from "./dockerfile-line-parsers.js";
import { toInstruction } from "./dockerfile-instructions.js";
import { InstructionProblem, LineProblem, UnknownInstruction } from "./dockerfile-problems.js";
import type { EscapeChar, Instruction, ParsedDockerfile, Stage } from "./dockerfile-types.js";

export type { ArgDefinition, EscapeChar, HealthcheckSpec, Instruction, ParsedDockerfile, Stage } from "./dockerfile-types.js";

export interface ParseOptions {
  /** The Dockerfile's name as the client gave it (the `dockerfile` query parameter), for the
   *  messages about an empty file and one the line parser refuses. Default "Dockerfile". */
  name?: string;
}

export function parseDockerfile(text: string, options: ParseOptions = {}): ParsedDockerfile {
  const name = options.name ?? "Dockerfile";
  if (text.length === 0) throw errors.buildDockerfileEmpty(name);
  const { split, lines } = readLines(text, name);

  const metaArgs: Instruction[] = [];
  const stages: Stage[] = [];
  const instructions: Instruction[] = [];
  for (const { logical, parsed } of lines) {
    let instruction: Instruction;
    try {
      instruction = toInstruction(parsed, logical.line, logical.endLine);
    } catch (err) {
      if (err instanceof UnknownInstruction) throw errors.buildUnknownInstruction(logical.line, err.message);
      if (err instanceof InstructionProblem) throw errors.buildInstructionInvalid(logical.line, err.message);
      throw err;
    }
    instructions.push(instruction);
    if (instruction.keyword === "from") stages.push(newStage(instruction, stages.length));
    else if (stages.length > 0) stages[stages.length - 1]!.instructions.push(instruction);
    else if (instruction.keyword === "arg") metaArgs.push(instruction);
    else throw errors.buildNoStage();
  }
  return {
    escape: split.escape,
    ...(split.syntax !== undefined ? { syntax: split.syntax } : {}),
    warnings: split.warnings,
    metaArgs,
    stages,
    instructions,
  };
}

/** The instructions a commit's or an import's `--change` may give (Docker's validCommitCommands). */
const CHANGE_KEYWORDS = new Set(["cmd", "entrypoint", "healthcheck", "env", "expose", "label", "onbuild", "stopsignal", "user", "volume", "workdir"]);

/**
 * The `changes` of a commit or an import, read as Docker's BuildFromConfig reads them: joined as
 * the lines of one Dockerfile, each instruction's keyword checked against those a change may
 * give before anything else (`RUN is not a valid change command`, with the keyword as written),
 * then parsed as the builder parses it.
 */
export function parseChanges(changes: readonly string[]): { escape: EscapeChar; instructions: Instruction[] } {
  const { split, lines } = readLines(changes.join("\n"));
  for (const { logical } of lines) {
    const keyword = logical.text.trim().split(/\s+/)[0] ?? "";
    if (!CHANGE_KEYWORDS.has(keyword.toLowerCase())) throw errors.imageInvalidChangeCommand(keyword);
  }
  const instructions = lines.map(({ logical, parsed }) => {
    try {
      return toInstruction(parsed, logical.line, logical.endLine);
    } catch (err) {
      if (err instanceof InstructionProblem) throw errors.imageInvalidChangeArgs(err.message);
      throw err;
    }
  });
  return { escape: split.escape, instructions };
}

/** The first pass: every line through the line parser; `name` the Dockerfile's, none for a commit's changes (whose refusals Docker gives bare). */
function readLines(text: string, name?: string) {
  try {
    const split = splitDockerfileLines(text);
    return { split, lines: split.lines.map((logical) => ({ logical, parsed: parseLine(logical.text, split.escape) })) };
  } catch (err) {
    if (!(err instanceof LineProblem)) throw err;
    throw name === undefined ? errors.imageInvalidChangeArgs(err.message) : errors.buildDockerfileParse(name, err.message);
  }
}

function newStage(from: Instruction, index: number): Stage {
  const [baseName, , name] = from.args;
  return {
    index,
    from,
    baseName: baseName!,
    ...(name !== undefined ? { name: name.toLowerCase() } : {}),
    ...(from.flags.platform !== undefined ? { platform: from.flags.platform } : {}),
    instructions: [],
  };
}

/**
 * The stages a build with `--target` runs: those up to the target, found by name without regard
 * to case (all of them without a target).
 */
export function selectStages(parsed: ParsedDockerfile, target?: string): Stage[] {
  if (!target) return parsed.stages;
  const at = parsed.stages.findIndex((stage) => stage.name !== undefined && stage.name === target.toLowerCase());
  if (at < 0) throw errors.buildTargetNotFound(target);
  return parsed.stages.slice(0, at + 1);
}

/**
 * An ONBUILD trigger, when a child build runs it: its text parsed and checked as one line of a
 * Dockerfile of its own (default escape character). Errors carry Docker's bare message, with no
 * line ("COPY requires at least two arguments, ...", "unknown instruction: foo"); a trigger that
 * is not exactly one instruction is refused.
 */
export function parseTrigger(expression: string): Instruction {
  try {
    const split = splitDockerfileLines(expression);
    if (split.lines.length !== 1) throw new InstructionProblem("onbuild trigger should be a single expression");
    const [logical] = split.lines;
    const instruction = toInstruction(parseLine(logical!.text, split.escape), logical!.line, logical!.endLine);
    if (instruction.keyword === "onbuild") throw new InstructionProblem("Chaining ONBUILD via `ONBUILD ONBUILD` isn't allowed");
    if (instruction.keyword === "from" || instruction.keyword === "maintainer") {
      throw new InstructionProblem(`${instruction.keyword.toUpperCase()} isn't allowed as an ONBUILD trigger`);
    }
    return instruction;
  } catch (err) {
    if (err instanceof LineProblem || err instanceof InstructionProblem) throw errors.buildTriggerInvalid(err.message);
    throw err;
  }
}
