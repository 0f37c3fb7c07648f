/**
 * Docker's variable substitution in Dockerfile arguments (the classic builder of Docker 28, whose
 * shell lexer is BuildKit 0.20's): a word's `$name` and `${name}`, `${name-word}`,
 * `${name:-word}`, `${name+word}`, `${name:+word}`, `${name?message}`, `${name:?message}`, the
 * pattern forms `${name#p}`, `${name##p}`, `${name%p}`, `${name%%p}` (shortest or longest prefix
 * or suffix removed), `${name/p/r}` and `${name//p/r}` (first or every match replaced), replaced
 * from the build's variables, its quotes and escapes resolved. (Docker 20.10 knew only the forms
 * with `:` and `${name?message}`; the rest were "missing ':' in substitution".)
 *
 * - Single quotes keep everything literally; double quotes keep everything but `$` substitution,
 *   and the escape character in them escapes only `"`, `$` and itself. Outside quotes the escape
 *   character (\ or the `# escape=` directive's `) takes the next character literally.
 * - `$` followed by no name stays a `$`; `$1`, `$@`, `$#`... are special parameters, always empty.
 * - Patterns know `*` and `?` (no brackets); in them `\*`, `\?` and `\\` are literal, `\}` and
 *   `\/` are the brace and slash. Any other form (`${x=y}`, `${x:#y}`...) is an error, worded as
 *   Docker words it, inside `failed to process "<word>": ...`.
 * - The quotes are removed: `ENV a="x y"` sets `x y`. Instructions that are not substituted (RUN,
 *   CMD, ENTRYPOINT, SHELL, HEALTHCHECK, MAINTAINER, ONBUILD) keep their text, quotes included,
 *   for the shell that runs it.
 */
import { errors } from "../errors.js";
import { goQuote, isGoSpace } from "./go-text.js";
import type { EscapeChar } from "./dockerfile-types.js";

/** A variable's value, or undefined when it is not set (which `${x?}` tells from set-but-empty). */
export type Lookup = (name: string) => string | undefined;

/** Instructions whose arguments the classic builder substitutes (see README.md for which parts). */
const SUBSTITUTED = new Set(["add", "arg", "copy", "env", "expose", "from", "label", "stopsignal", "user", "volume", "workdir"]);

export function substitutesVariables(keyword: string): boolean {
  return SUBSTITUTED.has(keyword.toLowerCase());
}

/** A lookup over an environment list of "name=value" (the first entry of a name wins, as in Docker). */
export function lookupIn(env: readonly string[]): Lookup {
  return (name) => {
    for (const entry of env) {
      const at = entry.indexOf("=");
      if (at < 0 ? entry === name : entry.slice(0, at) === name) return at < 0 ? "" : entry.slice(at + 1);
    }
    return undefined;
  };
}

/** One word, substituted and unquoted (ENV and LABEL values, paths, USER, ...). */
export function expand(word: string, lookup: Lookup, escape: EscapeChar = "\\"): string {
  return run(word, lookup, escape).text;
}

/** A word substituted, then split at unquoted whitespace, the quotes removed (EXPOSE's ports). */
export function expandWords(word: string, lookup: Lookup, escape: EscapeChar = "\\"): string[] {
  return run(word, lookup, escape).words;
}

function run(word: string, lookup: Lookup, escape: EscapeChar): { text: string; words: string[] } {
  try {
    return new ShellWord(word, lookup, escape).processUntil(undefined);
  } catch (err) {
    if (err instanceof SyntaxProblem) throw errors.buildSubstitution(goQuote(word), err.message);
    throw err;
  }
}

class SyntaxProblem extends Error {}

/** The words of the result as they form: unquoted whitespace from a substitution splits. */
class WordList {
  readonly words: string[] = [];
  private word = "";
  private inWord = false;

  addChar(ch: string): void {
    if (!isGoSpace(ch)) this.addRaw(ch);
    else if (this.inWord && this.word.length > 0) {
      this.words.push(this.word);
      this.word = "";
      this.inWord = false;
    }
  }

  addRaw(text: string): void {
    this.word += text;
    this.inWord = true;
  }

  addString(text: string): void {
    for (const ch of text) this.addChar(ch);
  }

  finish(): string[] {
    if (this.word.length > 0) this.words.push(this.word);
    this.word = "";
    this.inWord = false;
    return this.words;
  }
}

const SPECIAL_PARAMETERS = new Set(["@", "*", "#", "?", "-", "$", "!", "0"]);
const DIGIT = /\p{Nd}/u;
const NAME_CHAR = /[\p{L}\p{Nd}_]/u;

class ShellWord {
  private readonly chars: string[];
  private pos = 0;
  /** Keep the escape characters in the text (a pattern's, which the pattern reads itself). */
  private rawEscapes = false;

  constructor(
    word: string,
    private readonly lookup: Lookup,
    private readonly escape: EscapeChar,
  ) {
    this.chars = Array.from(word);
  }

  private peek(): string | undefined {
    return this.chars[this.pos];
  }

  private next(): string | undefined {
    return this.chars[this.pos++];
  }

  /** Reads up to `stop` (consumed) or to the end when `stop` is undefined; `raw` keeps the escapes. */
  processUntil(stop: string | undefined, raw = false): { text: string; words: string[] } {
    const outer = this.rawEscapes;
    this.rawEscapes = raw;
    try {
      return this.scanUntil(stop);
    } finally {
      this.rawEscapes = outer;
    }
  }

  private scanUntil(stop: string | undefined): { text: string; words: string[] } {
    let text = "";
    const words = new WordList();
    for (let ch = this.peek(); ch !== undefined; ch = this.peek()) {
      if (stop !== undefined && ch === stop) {
        this.next();
        return { text, words: words.finish() };
      }
      if (ch === "'" || ch === '"' || ch === "$") {
        const part = ch === "'" ? this.singleQuoted() : ch === '"' ? this.doubleQuoted() : this.dollar();
        text += part;
        if (ch === "$") words.addString(part);
        else words.addRaw(part);
        continue;
      }
      this.next();
      if (ch === this.escape) {
        if (this.rawEscapes) {
          words.addRaw(ch);
          text += ch;
        }
        const escaped = this.next();
        if (escaped === undefined) break; // an escape at the very end is dropped
        words.addRaw(escaped);
        text += escaped;
      } else {
        words.addChar(ch);
        text += ch;
      }
    }
    if (stop !== undefined) throw new SyntaxProblem(`unexpected end of statement while looking for matching ${stop}`);
    return { text, words: words.finish() };
  }

  private singleQuoted(): string {
    this.next();
    let text = "";
    for (;;) {
      const ch = this.next();
      if (ch === undefined) throw new SyntaxProblem("unexpected end of statement while looking for matching single-quote");
      if (ch === "'") return text;
      text += ch;
    }
  }

  private doubleQuoted(): string {
    this.next();
    let text = "";
    for (;;) {
      const ch = this.peek();
      if (ch === undefined) throw new SyntaxProblem("unexpected end of statement while looking for matching double-quote");
      if (ch === '"') {
        this.next();
        return text;
      }
      if (ch === "$") {
        text += this.dollar();
        continue;
      }
      this.next();
      if (ch === this.escape && this.rawEscapes) text += ch;
      const after = this.peek();
      if (ch === this.escape && after === undefined) continue;
      if (ch === this.escape && (after === '"' || after === "$" || after === this.escape)) text += this.next();
      else text += ch;
    }
  }

  private dollar(): string {
    this.next();
    if (this.peek() !== "{") {
      const name = this.name();
      return name === "" ? "$" : (this.lookup(name) ?? "");
    }
    this.next();
    const first = this.peek();
    if (first === undefined) throw new SyntaxProblem("syntax error: missing '}'");
    if (first === "{" || first === "}" || first === ":") throw new SyntaxProblem("syntax error: bad substitution");
    const name = this.name();
    let ch = this.next();
    if (ch === "}") return this.lookup(name) ?? "";
    if (ch === "/") return this.replace(name);
    let modifier = ch ?? "\uFFFD"; // (Go prints the end of input as U+FFFD)
    const nullIsUnset = ch === ":";
    if (nullIsUnset) {
      ch = this.next();
      modifier += ch ?? "\uFFFD";
    } else if (ch === undefined || !"+-?#%".includes(ch)) {
      throw new SyntaxProblem(`unsupported modifier (${modifier}) in substitution`);
    }
    const pattern = ch === "#" || ch === "%";
    if (nullIsUnset && pattern) throw new SyntaxProblem(`unsupported modifier (${modifier}) in substitution`);
    let word = this.modifierWord("}", pattern);
    const value = this.lookup(name);
    const unset = value === undefined || (nullIsUnset && value === "");
    switch (ch) {
      case "-":
        return unset ? word : value!;
      case "+":
        return unset ? "" : word;
      case "?":
        return this.required(name, word, nullIsUnset);
      case "#":
      case "%": {
        // one `#`/`%` takes the shortest match, two the longest
        const greedy = word.startsWith(ch);
        if (greedy) word = word.slice(1);
        return ch === "#" ? trimPrefix(word, value ?? "", greedy) : trimSuffix(word, value ?? "", greedy);
      }
      default:
        throw new SyntaxProblem(`unsupported modifier (${modifier}) in substitution`);
    }
  }

  /** `${name/pattern/replacement}` (the first match) and `${name//pattern/replacement}` (every one). */
  private replace(name: string): string {
    const all = this.peek() === "/";
    if (all) this.next();
    const pattern = this.modifierWord("/", true);
    const replacement = this.modifierWord("}", true);
    const re = patternRegex(pattern, true, false, all);
    return (this.lookup(name) ?? "").replace(re, () => replacement);
  }

  /** The text after a modifier, up to `stop`, itself substituted. */
  private modifierWord(stop: string, raw: boolean): string {
    try {
      return this.processUntil(stop, raw).text;
    } catch (err) {
      if (err instanceof SyntaxProblem && this.peek() === undefined) throw new SyntaxProblem(stop === "}" ? "syntax error: missing '}'" : "syntax error: missing '/' in ${}");
      throw err;
    }
  }

  /** ${name?message}: an error when unset; ${name:?message}: also when empty. */
  private required(name: string, message: string, nonEmpty: boolean): string {
    const value = this.lookup(name);
    if (value === undefined) throw new SyntaxProblem(`${name}: ${message || "is not allowed to be unset"}`);
    if (nonEmpty && value === "") throw new SyntaxProblem(`${name}: ${message || "is not allowed to be empty"}`);
    return value;
  }

  /** A variable name: letters, digits and _, or a run of digits, or one special parameter. */
  private name(): string {
    let name = "";
    for (let ch = this.peek(); ch !== undefined; ch = this.peek()) {
      if (name === "" && DIGIT.test(ch)) {
        while (this.peek() !== undefined && DIGIT.test(this.peek()!)) name += this.next();
        return name;
      }
      if (name === "" && SPECIAL_PARAMETERS.has(ch)) return this.next()!;
      if (!NAME_CHAR.test(ch)) break;
      name += this.next();
    }
    return name;
  }
}

/**
 * A shell pattern as a regular expression: `*` any run (shortest unless `greedy`), `?` one
 * character, `\*` `\?` `\\` themselves, `\}` and `\/` the brace and slash; `anchored` at the
 * start. Any other escape is refused as Docker refuses it.
 */
function patternRegex(pattern: string, greedy: boolean, anchored: boolean, global = false): RegExp {
  const chars = Array.from(pattern);
  let out = anchored ? "^" : "";
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === "*") out += greedy ? ".*" : ".*?";
    else if (c === "?") out += ".";
    else if (c === "\\") {
      const after = chars[i + 1];
      if (after === "}" || after === "/") continue;
      if (after !== "*" && after !== "?" && after !== "\\") throw new SyntaxProblem(`invalid pattern (${pattern}) in substitution: invalid escape '\\${after ?? ""}'`);
      out += `\\${after}`;
      i++;
    } else out += "[]{}.+()|^$/".includes(c) ? `\\${c}` : c;
  }
  return new RegExp(out, global ? "gu" : "u");
}

/** `value` without the shortest (or longest) start that `pattern` matches. */
function trimPrefix(pattern: string, value: string, greedy: boolean): string {
  const m = patternRegex(pattern, greedy, true).exec(value);
  return m ? value.slice(m[0].length) : value;
}

/** `value` without the shortest (or longest) end that `pattern` matches: both reversed, then a prefix. */
function trimSuffix(pattern: string, value: string, greedy: boolean): string {
  const reversed = (text: string) => Array.from(text).reverse().join("");
  return reversed(trimPrefix(reversePattern(pattern), reversed(value), greedy));
}

/** A pattern reversed, its escapes kept before what they escape (`a\*c` is `c\*a`). */
function reversePattern(pattern: string): string {
  const chars = Array.from(pattern);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i++) {
    if (chars[i] === "\\" && i < chars.length - 1) {
      out.unshift(chars[i]!, chars[i + 1]!);
      i++;
    } else out.unshift(chars[i]!);
  }
  return out.join("");
}
