/**
 * Variable substitution in Dockerfile arguments (core/build/shell-lex.ts). The tables follow
 * buildkit's shell lexer tests (frontend/dockerfile/shell envVarTest and wordsTest, the version
 * dockerd 20.10 carries), in our own words and values; the cases marked dockerd were built with
 * dockerd 20.10.24 (DOCKER_BUILDKIT=0) as `ENV a=<word>` and the image's Env, or the build's
 * error, written down here.
 */
import { expect } from "chai";
import { EngineError } from "../core/errors.js";
import { expand, expandWords, lookupIn, substitutesVariables } from "../core/build/shell-lex.js";

const ENV = lookupIn(["DIR=/srv", "TOOL=make", "EMPTY=", "HANGUL=한글", "dup=first", "dup=second"]);

/** [word, result]; `null` for an error. */
const WORDS: [string, string | null][] = [
  ["plain", "plain"],
  ["pl'ai'n", "plain"],
  ["pl'ain", null],
  ["pl\\'ain", "pl'ain"],
  ["pl\\\\'ain", null],
  ["a\\tb", "atb"],
  ['"a\\tb"', "a\\tb"],
  ['"a\\\\tb"', "a\\tb"],
  ["'a\\tb'", "a\\tb"],
  ["end\\", "end"],
  ["end\\\\", "end\\"],
  ['"open', null],
  ['"open\\"', null],
  ['"it\'s"', "it's"],
  ["'open\\'", "open\\"],
  ["'a\\\\b'", "a\\\\b"],
  [`"''"`, "''"],
  ["$.", "$."],
  ["x$1y", "xy"],
  ["x$.y", "x$.y"],
  ["at$DIR", "at/srv"],
  ["at$dir.", "at."],
  ["at\\$DIR", "at$DIR"],
  ["at\\\\$DIR", "at\\/srv"],
  ['"at\\$DIR"', "at$DIR"],
  ['"at\\\\$DIR"', "at\\/srv"],
  ["\\${}", "${}"],
  ["x\\${}y", "x${}y"],
  ["${}", null],
  ["x${}y", null],
  ["x${unset}y", "xy"],
  ["x${DIR}y", "x/srvy"],
  ["x${.}", null],
  ["x${unset:-dflt}y", "xdflty"],
  ["x${DIR:-dflt}y", "x/srvy"],
  ["x${unset:-$DIR}y", "x/srvy"],
  ["x${unset:-${DIR:-no}}y", "x/srvy"],
  ["x${unset:-${also:-deep}}y", "xdeepy"],
  ["x${unset:bad}", null],
  ["x${unset?}", null],
  ["x${unset:?}", null],
  ["x${DIR?}", "x/srv"],
  ["x${DIR:?}", "x/srv"],
  ["x${EMPTY?}", "x"],
  ["x${EMPTY:?}", null],
  ["x${unset:+${DIR}}y", "xy"],
  ["x${DIR:+${unset}}y", "xy"],
  ["x${DIR:+${TOOL}}y", "xmakey"],
  ["x${EMPTY:+set}y", "xy"],
  ["x${DIR:+set}y", "xsety"],
  ["'x${DIR}'", "x${DIR}"],
  ['"x${DIR}"', "x/srv"],
  [`"x'$DIR'"`, "x'/srv'"],
  [`'"q"'`, '"q"'],
  ["'\\$DIR'", "\\$DIR"],
  ["x${DIR", null],
  ["x${DIR:=v}y", null],
  ["x${DIR:+${DIR}:}y", "x/srv:y"],
  ["x${unset:-\\$DIR:}y", "x$DIR:y"],
  ["x${unset:-\\${DIR}z}y", "x${DIRz}y"],
  ["한'글'", "한글"],
  ["한\\'글", "한'글"],
  ["$HANGUL!", "한글!"],
  ["${{a}", null],
  ["${a}}", "}"],
  ["${a:-b}}", "b}"],
  ["${a:-b {c}", "b {c"],
  ["${a:-b ${c}", null],
  ["${:-b}", null],
  ["${:+b}", null],
  ["$dup", "first"],
  // positional and special parameters are never set
  ["$9", ""],
  ["${12:-b}a", "ba"],
  ["$001a", "a"],
  ["${001:+b}a", "a"],
  ["$@@@", "@@"],
  ["${*:-b}", "b"],
  ["$#$?$-$$$!$0", ""],
  ["${!:+b}", ""],
];

/** Checked against dockerd 20.10: [ENV value word, the value in the image's Env, or the build's error]. */
const DOCKERD: [string, string][] = [
  ['"hello world"', "hello world"],
  ["a\\ b", "a b"],
  ['"q\\"q"', 'q"q'],
  ["'s\\'", "s\\"],
  ["\\$a", "$a"],
  ["'$a'", "$a"],
  ["$1b", "b"],
  ["$-x", "x"],
  ["$", "$"],
  ["${x:-}b", "b"],
  ['${x:-"q}"}', "q}"],
  ["${}", `failed to process "\${}": syntax error: bad substitution`],
  ["${:}", `failed to process "\${:}": syntax error: bad substitution`],
  ["${x:}", `failed to process "\${x:}": syntax error: missing '}'`],
  ["${x:-y", `failed to process "\${x:-y": syntax error: missing '}'`],
  ["${x?y}", `failed to process "\${x?y}": x: y`],
  ["${x:?y}", `failed to process "\${x:?y}": x: y`],
  ["${x?}", `failed to process "\${x?}": x: is not allowed to be unset`],
  ['"x', `failed to process "\\"x": unexpected end of statement while looking for matching double-quote`],
  ["'x", `failed to process "'x": unexpected end of statement while looking for matching single-quote`],
];

/**
 * Where Docker 28 (BuildKit 0.20's lexer) answers otherwise than dockerd 20.10 ("missing ':' in
 * substitution" for all but the last, "(=)" for it): the forms without `:`, the patterns, and the
 * modifier named whole. [word, variables, result or error].
 */
const DOCKER28: [string, string[], string][] = [
  ["${x", [], `failed to process "\${x": unsupported modifier (\uFFFD) in substitution`],
  ["${x.y}", [], `failed to process "\${x.y}": unsupported modifier (.) in substitution`],
  ["${x:=y}", [], `failed to process "\${x:=y}": unsupported modifier (:=) in substitution`],
  ["${x=y}", [], `failed to process "\${x=y}": unsupported modifier (=) in substitution`],
  ["${x:#y}", ["x=yy"], `failed to process "\${x:#y}": unsupported modifier (:#) in substitution`],
  ["${x-y}", [], "y"],
  ["${x-y}", ["x="], ""],
  ["${x+y}", ["x="], "y"],
  ["${x+y}", [], ""],
  ["${x%y}", [], ""],
  ["${A%.*}", ["A=hello.tar.gz"], "hello.tar"],
  ["${A%%.*}", ["A=hello.tar.gz"], "hello"],
  ["${A#*.}", ["A=hello.tar.gz"], "tar.gz"],
  ["${A##*.}", ["A=hello.tar.gz"], "gz"],
  ["${A#?e}", ["A=hello"], "llo"],
  ["${A#x}", ["A=hello"], "hello"],
  ["${A%\\*}", ["A=a*b*"], "a*b"],
  ["${A/l/L}", ["A=hello"], "heLlo"],
  ["${A//l/L}", ["A=hello"], "heLLo"],
  ["${A//l*/-}", ["A=hello world"], "he-"],
  ["${A/\\//_}", ["A=a/b/c"], "a_b/c"],
  ["${A/x/$B}", ["A=axa", "B=y"], "aya"],
  ["${A/l/L", ["A=hello"], `failed to process "\${A/l/L": syntax error: missing '}'`],
  ["${A/l", ["A=hello"], `failed to process "\${A/l": syntax error: missing '/' in \${}`],
  ["${A#\\a}", ["A=hello"], `failed to process "\${A#\\\\a}": invalid pattern (\\a) in substitution: invalid escape '\\a'`],
];

function outcome(word: string, lookup = ENV): string | null {
  try {
    return expand(word, lookup);
  } catch (err) {
    expect(err).to.be.instanceOf(EngineError);
    expect((err as EngineError).code).to.equal("ENGINE_ERR_BUILD_SUBSTITUTION");
    expect((err as EngineError).statusCode).to.equal(400);
    return null;
  }
}

describe("build: variable substitution", () => {
  it("expands each word as buildkit's lexer tests say", () => {
    const wrong = WORDS.filter(([word, want]) => outcome(word) !== want).map(([word, want]) => `${word} -> ${outcome(word)} (want ${want})`);
    expect(wrong).to.deep.equal([]);
  });

  it("takes the forms Docker 28 added, and names a modifier as it does", () => {
    for (const [word, env, want] of DOCKER28) {
      let got: string;
      try {
        got = expand(word, lookupIn(env));
      } catch (err) {
        got = (err as Error).message;
      }
      expect(got, `${word} with ${env.join(" ")}`).to.equal(want);
    }
  });

  it("matches what dockerd 20.10 set or answered for ENV a=<word>", () => {
    const none = lookupIn([]);
    for (const [word, want] of DOCKERD) {
      let got: string;
      try {
        got = expand(word, none);
      } catch (err) {
        got = (err as Error).message;
      }
      expect(got, word).to.equal(want);
    }
    // Set but empty: ${x?} gives "", ${x:?} refuses, ${x:+set} gives "" (dockerd: a= and b=).
    const empty = lookupIn(["x="]);
    expect(expand("${x?}", empty)).to.equal("");
    expect(expand("${x:+set}", empty)).to.equal("");
    expect(() => expand("${x:?}", empty)).to.throw(`failed to process "\${x:?}": x: is not allowed to be empty`);
  });

  it("escapes with the escape directive's character", () => {
    expect(expand("a`$DIR", ENV, "`")).to.equal("a$DIR");
    expect(expand("a\\$DIR", ENV, "`")).to.equal("a\\/srv");
    expect(expand('"a`"b"', ENV, "`")).to.equal('a"b');
  });

  it("splits words after substitution, unquoted whitespace only (EXPOSE)", () => {
    const env = lookupIn(["hi=hi", "space=abc  def", "leading=  ab c", "trailing=ab c   ", "ports=80 443/udp"]);
    const table: [string, string[]][] = [
      ["hello", ["hello"]],
      ["hello${nope}bye", ["hellobye"]],
      ["hello${hi}bye", ["hellohibye"]],
      ["hello${space}bye", ["helloabc", "defbye"]],
      ['hello"${space}"bye', ["helloabc  defbye"]],
      ['hello "${space}"bye', ["hello", "abc  defbye"]],
      ["hello${leading}def", ["hello", "ab", "cdef"]],
      ['hello"${leading}" def', ["hello  ab c", "def"]],
      ["hello${trailing}d", ["helloab", "c", "d"]],
      ['hel"lo${trailing}"', ["helloab c   "]],
      ['hello" there  "', ["hello there  "]],
      ["hello there     ", ["hello", "there"]],
      ["hello\\ there", ["hello there"]],
      ['hello\\" there', ['hello"', "there"]],
      ["$ports 8080", ["80", "443/udp", "8080"]],
      ['"$ports"', ["80 443/udp"]],
      ['""', []],
    ];
    for (const [word, want] of table) expect(expandWords(word, env), word).to.deep.equal(want);
  });

  it("looks variables up in an environment list, the first entry of a name winning", () => {
    const lookup = lookupIn(["A=1", "B", "A=2", "C=x=y"]);
    expect([lookup("A"), lookup("B"), lookup("C"), lookup("a"), lookup("D")]).to.deep.equal(["1", "", "x=y", undefined, undefined]);
  });

  it("names the instructions the classic builder substitutes in", () => {
    const substituted = ["ADD", "ARG", "COPY", "ENV", "EXPOSE", "FROM", "LABEL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR", "env"];
    const kept = ["RUN", "CMD", "ENTRYPOINT", "SHELL", "HEALTHCHECK", "MAINTAINER", "ONBUILD"];
    expect(substituted.filter((k) => !substitutesVariables(k))).to.deep.equal([]);
    expect(kept.filter((k) => substitutesVariables(k))).to.deep.equal([]);
  });
});
