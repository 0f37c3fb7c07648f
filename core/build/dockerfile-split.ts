/**
 * The lexical layer of Docker's Dockerfile parser: a logical line into its keyword, its
 * `--flag=value` words and the rest; the rest into quoted words (ENV, LABEL, ARG), into
 * whitespace-separated words, or into a JSON array of strings.
 */
import { LineProblem } from "./dockerfile-problems.js";
import { goTrimLeftSpace, goTrimSpace, isGoSpace } from "./go-text.js";
import type { EscapeChar } from "./dockerfile-types.js";

/** Go's reWhitespace: the separators of whitespace-delimited arguments (no newline, no Unicode spaces). */
export const WHITESPACE = /[\t\v\f\r ]+/;

/** Go's regexp.Split(s, 2) with WHITESPACE: the first word and the rest (untrimmed). */
export function splitFirst(s: string): [string] | [string, string] {
  const match = WHITESPACE.exec(s);
  return match ? [s.slice(0, match.index), s.slice(match.index + match[0].length)] : [s];
}

export interface SplitCommand {
  /** Lower case. */
  keyword: string;
  /** The leading `--name[=value]` words, their quotes and backslashes resolved. */
  flags: string[];
  /** What follows the flags, trimmed. */
  rest: string;
}

export function splitCommand(line: string): SplitCommand {
  const [word, after] = splitFirst(goTrimSpace(line));
  const keyword = word.toLowerCase();
  if (after === undefined) return { keyword, flags: [], rest: "" };
  const { flags, rest } = extractBuilderFlags(after);
  return { keyword, flags, rest: goTrimSpace(rest) };
}

/** How a scan of words treats quotes and the escape character. */
interface WordRules {
  escape: string;
  /** Keep the quotes and escape characters in the words (parseWords: substitution removes them later). */
  keepQuoting: boolean;
  /** Whether the escape character works inside single quotes too. */
  escapeInSingleQuotes: boolean;
}

interface ScannedWord {
  word: string;
  /** Where the word starts and ends in the scanned characters (end: the whitespace after it). */
  start: number;
  end: number;
  /** Whether Docker keeps the word: not empty, or quoted (`""` is an empty word). */
  kept: boolean;
}

/** Docker's word scanner: whitespace separates words, except inside quotes or after the escape character. */
function* scanWords(chars: string[], rules: WordRules): Generator<ScannedWord> {
  let pos = 0;
  while (pos < chars.length) {
    if (isGoSpace(chars[pos]!)) {
      pos++;
      continue;
    }
    const start = pos;
    let word = "";
    let quote = "";
    let quoted = false;
    for (; pos < chars.length && (quote || !isGoSpace(chars[pos]!)); pos++) {
      const ch = chars[pos]!;
      if (quote && ch === quote) {
        quote = "";
        if (rules.keepQuoting) word += ch;
      } else if (!quote && (ch === "'" || ch === '"')) {
        quote = ch;
        quoted = true;
        if (rules.keepQuoting) word += ch;
      } else if (ch === rules.escape && (quote !== "'" || rules.escapeInSingleQuotes)) {
        // An escape at the very end is dropped (and closes an open quote).
        if (pos + 1 === chars.length) quote = "";
        else word += (rules.keepQuoting ? ch : "") + chars[++pos];
      } else word += ch;
    }
    yield { word, start, end: pos, kept: quoted || word.length > 0 };
  }
}

/**
 * The words starting with "--" at the head of the arguments. A word is one flag even when its
 * value is in the next word (`--from stage` is the flag "--from" with no value, as in Docker
 * 20.10); a lone "--" ends the flags. Quotes group, and a backslash (always \, whatever the escape
 * directive says) takes the next character as is.
 */
function extractBuilderFlags(line: string): { flags: string[]; rest: string } {
  const chars = Array.from(line);
  const flags: string[] = [];
  for (const { word, start, end, kept } of scanWords(chars, { escape: "\\", keepQuoting: false, escapeInSingleQuotes: true })) {
    if (chars[start] !== "-" || chars[start + 1] !== "-") return { flags, rest: chars.slice(start).join("") };
    if (word === "--") return { flags, rest: chars.slice(end).join("") };
    if (kept) flags.push(word);
  }
  return { flags, rest: "" };
}

/**
 * Docker's parseWords: words separated by whitespace, where quotes (kept in the word) and the
 * escape character (kept too, with the character it escapes; not inside single quotes) protect
 * whitespace. The quotes and escapes go away later, when the word is substituted (shell-lex.ts).
 */
export function parseWords(rest: string, escape: EscapeChar): string[] {
  const words = scanWords(Array.from(rest), { escape, keepQuoting: true, escapeInSingleQuotes: false });
  return [...words].filter((w) => w.kept).map((w) => w.word);
}

/**
 * The JSON (exec) form: an array of strings once the leading whitespace is gone. Docker decodes
 * the first JSON value and ignores what follows it (`CMD ["a"] x` is ["a"]). Undefined when the
 * text is not a JSON array (then it is the shell or whitespace-separated form); a JSON array
 * holding anything but strings is an error.
 */
export function parseJsonArray(rest: string): string[] | undefined {
  const text = goTrimLeftSpace(rest);
  if (!text.startsWith("[")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text.slice(0, firstValueEnd(text)));
  } catch {
    return undefined;
  }
  if (!Array.isArray(value)) return undefined;
  if (!value.every((item) => typeof item === "string")) {
    throw new LineProblem("when using JSON array syntax, arrays must be comprised of strings only");
  }
  return value as string[];
}

/** Where the JSON array at the start of `text` ends: after its closing bracket (or the whole text). */
function firstValueEnd(text: string): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "[" || ch === "{") depth++;
    else if ((ch === "]" || ch === "}") && --depth === 0) return i + 1;
  }
  return text.length;
}
