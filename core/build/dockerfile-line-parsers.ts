/**
 * Each keyword's argument syntax, as Docker's line parsers split it (before any check of counts
 * or flags, which dockerfile-instructions.ts makes). An unknown keyword parses here with no
 * arguments: Docker reports it later, with its line, when it makes instructions.
 *
 *   whitespace-separated   FROM, EXPOSE
 *   the whole rest         MAINTAINER, STOPSIGNAL, USER, WORKDIR (`WORKDIR a b` is the path "a b")
 *   JSON or the rest       RUN, CMD, ENTRYPOINT, SHELL
 *   JSON or whitespace     ADD, COPY, VOLUME
 *   quoted words           ARG
 *   name=value pairs       ENV, LABEL (or the legacy `ENV name the whole rest`)
 *   a type, then JSON/rest HEALTHCHECK
 *   a nested line          ONBUILD
 */
import { LineProblem } from "./dockerfile-problems.js";
import { goQuote, isGoSpace } from "./go-text.js";
import { parseJsonArray, parseWords, splitCommand, splitFirst, WHITESPACE } from "./dockerfile-split.js";
import type { EscapeChar } from "./dockerfile-types.js";

/** One logical line, parsed by its keyword's line parser. */
export interface ParsedLine {
  keyword: string;
  /** The logical line's text, untrimmed. */
  original: string;
  flags: string[];
  args: string[];
  json: boolean;
  /** ENV and LABEL. */
  pairs?: [string, string][];
  /** ONBUILD: the trigger line. */
  child?: ParsedLine;
}

type LineParser = (rest: string, escape: EscapeChar) => Pick<ParsedLine, "args" | "json" | "pairs" | "child">;

const none = () => ({ args: [], json: false });

const wholeRest: LineParser = (rest) => ({ args: rest === "" ? [] : [rest], json: false });

const whitespaceSeparated: LineParser = (rest) => ({ args: rest === "" ? [] : rest.split(WHITESPACE), json: false });

const jsonOrRest: LineParser = (rest, escape) => {
  const array = rest === "" ? undefined : parseJsonArray(rest);
  return array ? { args: array, json: true } : wholeRest(rest, escape);
};

const jsonOrWhitespace: LineParser = (rest, escape) => {
  const array = parseJsonArray(rest);
  return array ? { args: array, json: true } : whitespaceSeparated(rest, escape);
};

const nameValuePairs =
  (keyword: "ENV" | "LABEL"): LineParser =>
  (rest, escape) => {
    const words = parseWords(rest, escape);
    if (words.length === 0) return none();
    let pairs: [string, string][];
    if (!words[0]!.includes("=")) {
      // The legacy form, `ENV name value with spaces`: a space before any "=".
      const parts = splitFirst(rest);
      if (parts.length < 2) throw new LineProblem(`${keyword} must have two arguments`);
      pairs = [parts as [string, string]];
    } else {
      pairs = words.map((word) => {
        const at = word.indexOf("=");
        if (at < 0) throw new LineProblem(`Syntax error - can't find = in ${goQuote(word)}. Must be of the form: name=value`);
        return [word.slice(0, at), word.slice(at + 1)];
      });
    }
    return { args: pairs.flat(), json: false, pairs };
  };

const healthcheck: LineParser = (rest, escape) => {
  let end = 0;
  while (end < rest.length && !isGoSpace(rest[end]!)) end++;
  if (end === 0) return none();
  let next = end;
  while (next < rest.length && isGoSpace(rest[next]!)) next++;
  const command = jsonOrRest(rest.slice(next), escape);
  return { args: [rest.slice(0, end), ...command.args], json: command.json };
};

const onbuild: LineParser = (rest, escape) => {
  if (rest === "") return none();
  const child = parseLine(rest, escape);
  return { args: [child.keyword, ...child.args], json: false, child };
};

const BY_KEYWORD: Record<string, LineParser> = {
  add: jsonOrWhitespace,
  arg: (rest, escape) => ({ args: parseWords(rest, escape), json: false }),
  cmd: jsonOrRest,
  copy: jsonOrWhitespace,
  entrypoint: jsonOrRest,
  env: nameValuePairs("ENV"),
  expose: whitespaceSeparated,
  from: whitespaceSeparated,
  healthcheck,
  label: nameValuePairs("LABEL"),
  maintainer: wholeRest,
  onbuild,
  run: jsonOrRest,
  shell: jsonOrRest,
  stopsignal: wholeRest,
  user: wholeRest,
  volume: jsonOrWhitespace,
  workdir: wholeRest,
};
// A Map, so that a keyword such as "constructor" finds nothing.
const LINE_PARSERS = new Map(Object.entries(BY_KEYWORD));

/** The keywords Docker's classic builder knows. */
export const KEYWORDS: ReadonlySet<string> = new Set(LINE_PARSERS.keys());

export function parseLine(text: string, escape: EscapeChar): ParsedLine {
  const { keyword, flags, rest } = splitCommand(text);
  const parser = LINE_PARSERS.get(keyword);
  return { keyword, original: text, flags, ...(parser ? parser(rest, escape) : none()) };
}
