/**
 * One parsed line into an Instruction: each keyword's argument counts, flags and names checked
 * the way Docker 20.10's classic builder checks them, with its messages, in its order (a count is
 * checked before the flags for some keywords, after them for others).
 *
 * Flags per keyword (any other is "Unknown flag: <name>"): ADD --chown --chmod; COPY --chown
 * --chmod --from; FROM --platform; RUN --mount (repeatable) --network (Docker 28's parser knows
 * it); HEALTHCHECK --interval --timeout --start-period --start-interval --retries. ARG and
 * STOPSIGNAL, and HEALTHCHECK NONE, ignore their flags unchecked, as Docker does. The classic
 * builder refuses RUN's flags when the step runs ("the --mount option requires BuildKit..."):
 * that is the executor's part.
 */
import { goQuote, goTrimSpace } from "./go-text.js";
import { parseFlags, type FlagKind } from "./dockerfile-flags.js";
import { parseHealthcheck } from "./dockerfile-healthcheck.js";
import { KEYWORDS, type ParsedLine } from "./dockerfile-line-parsers.js";
import { splitFirst } from "./dockerfile-split.js";
import { InstructionProblem, UnknownInstruction } from "./dockerfile-problems.js";
import type { ArgDefinition, Instruction } from "./dockerfile-types.js";

const STAGE_NAME = /^[a-z][a-z0-9_.-]*$/;

type Checked = Omit<Instruction, "keyword" | "original" | "line" | "endLine" | "args" | "json"> & { args?: string[] };

const atLeastOne = (keyword: string) => new InstructionProblem(`${keyword} requires at least one argument`);
const exactlyOne = (keyword: string) => new InstructionProblem(`${keyword} requires exactly one argument`);
const noDestination = (keyword: string) =>
  new InstructionProblem(`${keyword} requires at least two arguments, but only one was provided. Destination could not be determined`);

function flagsOf(line: ParsedLine, accepted: Record<string, FlagKind> = {}): Record<string, string> {
  return parseFlags(line.flags, accepted).values;
}

function keyValues(line: ParsedLine, keyword: string): Checked {
  const flags = flagsOf(line);
  const pairs = line.pairs ?? [];
  if (pairs.length === 0) throw atLeastOne(keyword);
  if (pairs.some(([key]) => key === "")) throw new InstructionProblem(`${keyword} names can not be blank`);
  return { flags, pairs };
}

function exactlyOneArgument(line: ParsedLine, keyword: string): Checked {
  if (line.args.length !== 1) throw exactlyOne(keyword);
  return { flags: flagsOf(line) };
}

function copyOrAdd(line: ParsedLine, keyword: string, accepted: Record<string, FlagKind>): Checked {
  if (line.args.length < 2) throw noDestination(keyword);
  return { flags: flagsOf(line, accepted) };
}

function from(line: ParsedLine): Checked {
  const args = line.args;
  if (args.length === 3 && args[1]!.toLowerCase() === "as") {
    if (!STAGE_NAME.test(args[2]!.toLowerCase())) {
      throw new InstructionProblem(`invalid name for build stage: ${goQuote(args[2]!)}, name can't start with a number or contain symbols`);
    }
  } else if (args.length !== 1) throw new InstructionProblem("FROM requires either one or three arguments");
  return { flags: flagsOf(line, { platform: "string" }) };
}

function onbuild(line: ParsedLine): Checked {
  if (line.args.length === 0) throw atLeastOne("ONBUILD");
  const flags = flagsOf(line);
  const trigger = goTrimSpace(line.args[0]!).toUpperCase();
  if (trigger === "ONBUILD") throw new InstructionProblem("Chaining ONBUILD via `ONBUILD ONBUILD` isn't allowed");
  if (trigger === "MAINTAINER" || trigger === "FROM") throw new InstructionProblem(`${trigger} isn't allowed as an ONBUILD trigger`);
  // The text kept in the image: the line without "ONBUILD" (Go's \s: ASCII whitespace).
  const expression = line.original.replace(/^[\t\n\f\r ]*ONBUILD[\t\n\f\r ]*/i, "");
  return { flags, trigger: unchecked(line.child!, 0, 0), expression };
}

function arg(line: ParsedLine): Checked {
  if (line.args.length === 0) throw atLeastOne("ARG");
  const argDefinitions = line.args.map((word): ArgDefinition => {
    const at = word.indexOf("=");
    if (at < 0) return { name: word };
    if (at === 0) throw new InstructionProblem("ARG names can not be blank");
    return { name: word.slice(0, at), value: word.slice(at + 1) };
  });
  return { flags: {}, argDefinitions };
}

function volume(line: ParsedLine): Checked {
  if (line.args.length === 0) throw atLeastOne("VOLUME");
  const flags = flagsOf(line);
  const args = line.args.map((v) => goTrimSpace(v));
  if (args.includes("")) throw new InstructionProblem("VOLUME specified can not be an empty string");
  return { flags, args };
}

function shell(line: ParsedLine): Checked {
  const flags = flagsOf(line);
  if (line.args.length === 0) throw atLeastOne("SHELL");
  if (!line.json) throw new InstructionProblem("SHELL requires the arguments to be in JSON form");
  return { flags };
}

const CHECKS: Record<string, (line: ParsedLine) => Checked> = {
  add: (line) => copyOrAdd(line, "ADD", { chown: "string", chmod: "string" }),
  arg,
  cmd: (line) => ({ flags: flagsOf(line) }),
  copy: (line) => copyOrAdd(line, "COPY", { chown: "string", chmod: "string", from: "string" }),
  entrypoint: (line) => ({ flags: flagsOf(line) }),
  env: (line) => keyValues(line, "ENV"),
  expose: (line) => {
    if (line.args.length === 0) throw atLeastOne("EXPOSE");
    // Docker sorts the ports (as strings) before it substitutes them.
    return { flags: flagsOf(line), args: [...line.args].sort() };
  },
  from,
  healthcheck: parseHealthcheck,
  label: (line) => keyValues(line, "LABEL"),
  maintainer: (line) => exactlyOneArgument(line, "MAINTAINER"),
  onbuild,
  run: (line) => {
    const parsed = parseFlags(line.flags, { mount: "strings", network: "string" });
    return { flags: parsed.values, ...(parsed.lists.mount ? { mounts: parsed.lists.mount } : {}) };
  },
  shell,
  stopsignal: (line) => {
    if (line.args.length !== 1) throw exactlyOne("STOPSIGNAL");
    return { flags: {} };
  },
  user: (line) => exactlyOneArgument(line, "USER"),
  volume,
  workdir: (line) => exactlyOneArgument(line, "WORKDIR"),
};

/** The instruction as parsed, without the keyword's checks: an ONBUILD trigger until it runs. */
function unchecked(line: ParsedLine, start: number, end: number): Instruction {
  const flags: Record<string, string> = {};
  for (const word of line.flags) {
    const at = word.indexOf("=");
    flags[at < 0 ? word.slice(2) : word.slice(2, at)] = at < 0 ? "" : word.slice(at + 1);
  }
  return {
    keyword: line.keyword,
    original: goTrimSpace(line.original),
    line: start,
    endLine: end,
    flags,
    args: line.args,
    json: line.json,
    ...(line.pairs ? { pairs: line.pairs } : {}),
  };
}

/** Checks one parsed line; throws InstructionProblem (UnknownInstruction for a keyword Docker lacks). */
export function toInstruction(line: ParsedLine, start: number, end: number): Instruction {
  if (!KEYWORDS.has(line.keyword)) throw new UnknownInstruction(splitFirst(goTrimSpace(line.original))[0], [...KEYWORDS].sort());
  const { args, ...checked } = CHECKS[line.keyword]!(line);
  // An ONBUILD trigger sits on its ONBUILD's lines.
  if (checked.trigger) Object.assign(checked.trigger, { line: start, endLine: end });
  return { ...unchecked(line, start, end), ...checked, args: args ?? line.args };
}
