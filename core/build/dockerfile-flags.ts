/**
 * An instruction's `--name=value` flags, checked against the flags its keyword accepts, with
 * Docker's messages. The flags each keyword accepts are those of Docker 20.10's classic builder
 * (dockerfile-instructions.ts lists them), and HEALTHCHECK's --start-interval (Docker 28's); a
 * flag Docker does not know there (`COPY --link`, `RUN --network`...) is "Unknown flag: link".
 */

import { InstructionProblem } from "./dockerfile-problems.js";

/** "string": `--name=value` once; "bool": `--name`, `--name=true|false` once; "strings": repeatable. */
export type FlagKind = "string" | "bool" | "strings";

export interface ParsedFlags {
  /** The single-valued flags given ("true"/"false" for a bool). */
  values: Record<string, string>;
  /** The repeatable flags given, each value in order. */
  lists: Record<string, string[]>;
}

/** Parses the flag words (each starting with "--"), the first problem thrown. */
export function parseFlags(words: string[], accepted: Record<string, FlagKind>): ParsedFlags {
  const values: Record<string, string> = {};
  const lists: Record<string, string[]> = {};
  for (const word of words) {
    const body = word.slice(2);
    const at = body.indexOf("=");
    const name = at < 0 ? body : body.slice(0, at);
    const value = at < 0 ? "" : body.slice(at + 1);
    const kind = Object.hasOwn(accepted, name) ? accepted[name] : undefined;
    if (!kind) throw new InstructionProblem(`Unknown flag: ${name}`);
    if (kind !== "strings" && Object.hasOwn(values, name)) throw new InstructionProblem(`Duplicate flag specified: ${name}`);
    if (kind === "bool") {
      if (at >= 0 && value === "") throw new InstructionProblem(`Missing a value on flag: ${name}`);
      const lower = value.toLowerCase();
      if (lower !== "" && lower !== "true" && lower !== "false") {
        throw new InstructionProblem(`Expecting boolean value for flag ${name}, not: ${value}`);
      }
      values[name] = lower || "true";
      continue;
    }
    if (at < 0) throw new InstructionProblem(`Missing a value on flag: ${name}`);
    if (kind === "string") values[name] = value;
    else (lists[name] ??= []).push(value);
  }
  return { values, lists };
}
