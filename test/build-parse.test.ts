/**
 * The Dockerfile parser (core/build/dockerfile-parse.ts) against what Docker's classic builder does.
 *
 * DOCKERD_CASES were each built with dockerd 20.10.24 (Debian docker.io, DOCKER_BUILDKIT=0, in a
 * network namespace of its own) and its answers written down here: the "Step N/M : ..." lines it
 * printed, or the error message it answered with (HTTP 400). The other cases follow moby's
 * parser and instruction tests (buildkit frontend/dockerfile/parser and instructions), in our
 * own words.
 */
import { expect } from "chai";
import { EngineError } from "../core/errors.js";
import { parseDockerfile, parseTrigger, selectStages, type ParsedDockerfile } from "../core/build/dockerfile-parse.js";
import { goCleanPath, goQuote, parseGoDuration, parseGoInt32 } from "../core/build/go-text.js";

interface Case {
  text: string;
  /** The originals dockerd printed after "Step i/N : ", in order (N = their count). */
  steps?: string[];
  /** The error dockerd answered with: [our code's suffix after ENGINE_ERR_BUILD_, message]. */
  error?: [string, string];
}

// (dockerd 20.10 wrote "parse error line N" and unknown keywords in capitals without a
// suggestion; these are Docker 28's words, BuildKit 0.20's parser)
const line = (n: number, why: string): [string, string] => ["INSTRUCTION_INVALID", `dockerfile parse error on line ${n}: ${why}`];
const parse = (why: string): [string, string] => ["DOCKERFILE_PARSE", `failed to parse Dockerfile: ${why}`];

const DOCKERD_CASES: Case[] = [
  // the file, directives, comments, continuations
  { text: "", error: ["DOCKERFILE_EMPTY", "the Dockerfile (Dockerfile) cannot be empty"] },
  { text: "# just a comment\n\n", error: parse("file with no instructions") },
  { text: "\n\n  \n", error: parse("file with no instructions") },
  { text: "FROM scratch\nRUN true\nFOO bar\n", error: ["UNKNOWN_INSTRUCTION", "dockerfile parse error on line 3: unknown instruction: FOO (did you mean FROM?)"] },
  { text: "FROM busybox\nfoo x\n", error: ["UNKNOWN_INSTRUCTION", "dockerfile parse error on line 2: unknown instruction: foo (did you mean from?)"] },
  // Docker 28 names the keyword as written and suggests one fewer than 3 edits away, in the word's case
  { text: "FROM busybox\nRUNN x\n", error: ["UNKNOWN_INSTRUCTION", "dockerfile parse error on line 2: unknown instruction: RUNN (did you mean RUN?)"] },
  { text: "FROM busybox\ncopi x y\n", error: ["UNKNOWN_INSTRUCTION", "dockerfile parse error on line 2: unknown instruction: copi (did you mean copy?)"] },
  { text: "FROM busybox\nWorkDirr /x\n", error: ["UNKNOWN_INSTRUCTION", "dockerfile parse error on line 2: unknown instruction: WorkDirr (did you mean workdir?)"] },
  { text: "RUN true\nFROM scratch\n", error: ["NO_STAGE", "no build stage in current context"] },
  { text: "ENV a=b\nFROM busybox\n", error: ["NO_STAGE", "no build stage in current context"] },
  { text: "# syntax=docker/dockerfile:1\nFROM scratch\nENV a=1\n", steps: ["FROM scratch", "ENV a=1"] },
  { text: "# escape=`\n# escape=`\nFROM scratch\n", error: parse("only one escape parser directive can be used") },
  { text: "# escape=x\nFROM scratch\n", error: parse("invalid escape token 'x' does not match ` or \\") },
  { text: "FROM scratch\nENV a=1   \nLABEL x=y  \t \n", steps: ["FROM scratch", "ENV a=1", "LABEL x=y"] },
  { text: "FROM scratch\r\nENV a=1 \\\r\n b=2\r\n", steps: ["FROM scratch", "ENV a=1  b=2"] },
  { text: "\ufeffFROM scratch\nENV bom=1\n", steps: ["FROM scratch", "ENV bom=1"] },
  { text: "from scratch\nenv lower=1\n", steps: ["from scratch", "env lower=1"] },
  { text: "  FROM scratch\n\tENV   a=1  \n", steps: ["FROM scratch", "ENV   a=1"] },
  { text: "FROM busybox\nRUN echo hi \\\n  there\n", steps: ["FROM busybox", "RUN echo hi   there"] },
  { text: "FROM scratch\nENV a=1 \\\n  # comment\n    # comment 2\n b=2 \\\n \\\n c=3\n", steps: ["FROM scratch", "ENV a=1  b=2   c=3"] },
  { text: "FROM busybox\nRUN echo a \\  \t\nRUN echo b \\\n", steps: ["FROM busybox", "RUN echo a RUN echo b"] },
  { text: "FROM scratch\nENV a=1 \\  \t\nENV b=2 \\\n", error: parse('Syntax error - can\'t find = in "ENV". Must be of the form: name=value') },
  { text: "FROM busybox\nRUN echo a\\\\\nRUN echo b\n", steps: ["FROM busybox", "RUN echo a\\\\", "RUN echo b"] },
  { text: "FROM scratch\nENV a=1\\\\\\\nENV b=2\n", steps: ["FROM scratch", "ENV a=1\\\\\\", "ENV b=2"] },
  { text: "FROM busybox\nRUN echo hi # not a comment\n", steps: ["FROM busybox", "RUN echo hi # not a comment"] },
  { text: "#   ESCAPE  =   `  \nFROM scratch\nENV a=1 `\n b=2\nENV x=a\\b\n", steps: ["FROM scratch", "ENV a=1  b=2", "ENV x=a\\b"] },
  { text: "\n# escape=`\nFROM scratch\nENV a=1 `\n b=2\n", error: parse('Syntax error - can\'t find = in "`". Must be of the form: name=value') },
  { text: "\n# escape=`\nFROM busybox\nRUN echo a `\n b\n", error: ["UNKNOWN_INSTRUCTION", "dockerfile parse error on line 5: unknown instruction: b"] },
  { text: "# foo=bar\n# escape=`\nFROM busybox\nRUN echo a `\n b\n", error: ["UNKNOWN_INSTRUCTION", "dockerfile parse error on line 5: unknown instruction: b"] },
  { text: "FROM scratch\n# escape=`\nENV a=1 \\\n b=2\n", steps: ["FROM scratch", "ENV a=1  b=2"] },
  { text: "# escape=`\nFROM scratch\n `\n", error: ["UNKNOWN_INSTRUCTION", "dockerfile parse error on line 3: unknown instruction: "] },
  { text: "FROM scratch\nRUN <<EOF\necho hi\nEOF\n", error: ["UNKNOWN_INSTRUCTION", "dockerfile parse error on line 3: unknown instruction: echo"] },
  { text: "ARG x=1\nARG y\nFROM scratch\nENV a=1\nFROM scratch AS two\nENV b=2\n", steps: ["ARG x=1", "ARG y", "FROM scratch", "ENV a=1", "FROM scratch AS two", "ENV b=2"] },
  // argument counts and names
  { text: "FROM scratch\nENV\n", error: line(2, "ENV requires at least one argument") },
  { text: "FROM scratch\nENV a\n", error: parse("ENV must have two arguments") },
  { text: "FROM scratch\nENV =x\n", error: line(2, "ENV names can not be blank") },
  { text: "FROM scratch\nENV a=b c\n", error: parse('Syntax error - can\'t find = in "c". Must be of the form: name=value') },
  { text: "FROM scratch\nLABEL\n", error: line(2, "LABEL requires at least one argument") },
  { text: "FROM scratch\nLABEL a\n", error: parse("LABEL must have two arguments") },
  { text: "FROM scratch\nLABEL =x\n", error: line(2, "LABEL names can not be blank") },
  { text: "FROM scratch\nCOPY a\n", error: line(2, "COPY requires at least two arguments, but only one was provided. Destination could not be determined") },
  { text: "FROM scratch\nADD a\n", error: line(2, "ADD requires at least two arguments, but only one was provided. Destination could not be determined") },
  { text: "FROM\n", error: line(1, "FROM requires either one or three arguments") },
  { text: "FROM a b\n", error: line(1, "FROM requires either one or three arguments") },
  { text: "FROM scratch AS 1x\n", error: line(1, 'invalid name for build stage: "1x", name can\'t start with a number or contain symbols') },
  { text: "FROM scratch AS Foo_!\n", error: line(1, 'invalid name for build stage: "Foo_!", name can\'t start with a number or contain symbols') },
  { text: "FROM scratch as Foo.bar-1_x\nENV a=1\n", steps: ["FROM scratch as Foo.bar-1_x", "ENV a=1"] },
  { text: "FROM scratch\nWORKDIR\n", error: line(2, "WORKDIR requires exactly one argument") },
  { text: "FROM scratch\nUSER\n", error: line(2, "USER requires exactly one argument") },
  { text: "FROM scratch\nSTOPSIGNAL\n", error: line(2, "STOPSIGNAL requires exactly one argument") },
  { text: "FROM scratch\nARG\n", error: line(2, "ARG requires at least one argument") },
  { text: "FROM scratch\nARG =x\n", error: line(2, "ARG names can not be blank") },
  { text: "FROM scratch\nEXPOSE\n", error: line(2, "EXPOSE requires at least one argument") },
  { text: "FROM scratch\nVOLUME\n", error: line(2, "VOLUME requires at least one argument") },
  { text: "FROM scratch\nVOLUME []\n", error: line(2, "VOLUME requires at least one argument") },
  { text: 'FROM scratch\nVOLUME [""]\n', error: line(2, "VOLUME specified can not be an empty string") },
  { text: "FROM scratch\nMAINTAINER\n", error: line(2, "MAINTAINER requires exactly one argument") },
  { text: "FROM scratch\nMAINTAINER a b\nUSER a b\nCMD\nENTRYPOINT\n", steps: ["FROM scratch", "MAINTAINER a b", "USER a b", "CMD", "ENTRYPOINT"] },
  { text: "FROM scratch\nSHELL sh -c\n", error: line(2, "SHELL requires the arguments to be in JSON form") },
  { text: "FROM scratch\nSHELL []\n", error: line(2, "SHELL requires at least one argument") },
  { text: 'FROM scratch\nRUN ["a", 1]\n', error: parse("when using JSON array syntax, arrays must be comprised of strings only") },
  { text: 'FROM scratch\nCMD ["a", ["b"]] x\n', error: parse("when using JSON array syntax, arrays must be comprised of strings only") },
  // HEALTHCHECK
  { text: "FROM scratch\nHEALTHCHECK\n", error: line(2, "HEALTHCHECK requires at least one argument") },
  { text: "FROM scratch\nHEALTHCHECK NONE x\n", error: line(2, "HEALTHCHECK NONE takes no arguments") },
  { text: "FROM scratch\nHEALTHCHECK FOO x\n", error: line(2, 'Unknown type "FOO" in HEALTHCHECK (try CMD)') },
  { text: "FROM scratch\nHEALTHCHECK cmd-shell x\n", error: line(2, 'Unknown type "CMD-SHELL" in HEALTHCHECK (try CMD)') },
  { text: "FROM scratch\nHEALTHCHECK CMD\n", error: line(2, "Missing command after HEALTHCHECK CMD") },
  { text: "FROM scratch\nHEALTHCHECK --interval=x CMD x\n", error: line(2, 'time: invalid duration "x"') },
  { text: "FROM scratch\nHEALTHCHECK --timeout=1 CMD x\n", error: line(2, 'time: missing unit in duration "1"') },
  { text: "FROM scratch\nHEALTHCHECK --timeout=1x CMD x\n", error: line(2, 'time: unknown unit "x" in duration "1x"') },
  { text: "FROM scratch\nHEALTHCHECK --interval=999us CMD x\n", error: line(2, 'Interval "interval" cannot be less than 1ms') },
  { text: "FROM scratch\nHEALTHCHECK --start-interval=1us CMD x\n", error: line(2, 'Interval "start-interval" cannot be less than 1ms') },
  { text: "FROM scratch\nHEALTHCHECK --retries=-1 CMD x\n", error: line(2, "--retries cannot be negative (-1)") },
  { text: "FROM scratch\nHEALTHCHECK --retries=x CMD x\n", error: line(2, 'strconv.ParseInt: parsing "x": invalid syntax') },
  { text: "FROM scratch\nHEALTHCHECK --retries=99999999999 CMD x\n", error: line(2, 'strconv.ParseInt: parsing "99999999999": value out of range') },
  { text: "FROM scratch\nHEALTHCHECK --interval=5s NONE\nHEALTHCHECK --x=1 NONE\n", steps: ["FROM scratch", "HEALTHCHECK --interval=5s NONE", "HEALTHCHECK --x=1 NONE"] },
  // ONBUILD
  { text: "FROM scratch\nONBUILD ONBUILD RUN x\n", error: line(2, "Chaining ONBUILD via `ONBUILD ONBUILD` isn't allowed") },
  { text: "FROM scratch\nONBUILD FROM x\n", error: line(2, "FROM isn't allowed as an ONBUILD trigger") },
  { text: "FROM scratch\nONBUILD maintainer x\n", error: line(2, "MAINTAINER isn't allowed as an ONBUILD trigger") },
  { text: "FROM scratch\nONBUILD\n", error: line(2, "ONBUILD requires at least one argument") },
  { text: "FROM scratch\nONBUILD --x=1\n", error: line(2, "ONBUILD requires at least one argument") },
  { text: "FROM scratch\nONBUILD ENV a\n", error: parse("ENV must have two arguments") },
  { text: "FROM scratch\nONBUILD FOO x\nONBUILD COPY a\n", steps: ["FROM scratch", "ONBUILD FOO x", "ONBUILD COPY a"] },
  // flags
  { text: "FROM scratch\nCOPY --foo=bar a b\n", error: line(2, "Unknown flag: foo") },
  { text: "FROM scratch\nCOPY --from scratch a b\n", error: line(2, "Missing a value on flag: from") },
  { text: "FROM scratch\nCOPY --chown a /b\n", error: line(2, "Missing a value on flag: chown") },
  { text: "FROM scratch\nCOPY --from=x --from=y a /b\n", error: line(2, "Duplicate flag specified: from") },
  { text: "FROM scratch\nCOPY --link a /b\n", error: line(2, "Unknown flag: link") },
  { text: "FROM scratch\nADD --keep-git-dir=true a /b\n", error: line(2, "Unknown flag: keep-git-dir") },
  { text: "FROM scratch\nRUN --network=none true\n", steps: ["FROM scratch", "RUN --network=none true"] },
  { text: "FROM scratch\nRUN --security=insecure true\n", error: line(2, "Unknown flag: security") },
  { text: "FROM scratch\nRUN --mount a\n", error: line(2, "Missing a value on flag: mount") },
  { text: "FROM scratch\nENV --x=y a=b\n", error: line(2, "Unknown flag: x") },
  { text: "FROM scratch\nEXPOSE --x=1 80\n", error: line(2, "Unknown flag: x") },
  { text: "FROM --foo=x scratch\n", error: line(1, "Unknown flag: foo") },
  { text: "FROM --foo=x scratch a\n", error: line(1, "FROM requires either one or three arguments") },
  { text: "FROM scratch\nCOPY -- a /b\nSTOPSIGNAL --foo=1 SIGTERM\nARG --foo=x a\n", steps: ["FROM scratch", "COPY -- a /b", "STOPSIGNAL --foo=1 SIGTERM", "ARG --foo=x a"] },
  { text: "FROM --platform=linux/amd64 scratch\n", steps: ["FROM --platform=linux/amd64 scratch"] },
];

function expectError(fn: () => unknown, code: string, message: string): void {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(EngineError);
    expect((err as EngineError).code).to.equal(`ENGINE_ERR_BUILD_${code}`);
    expect((err as EngineError).statusCode).to.equal(400);
    expect((err as EngineError).message).to.equal(message);
    return;
  }
  expect.fail(`no error; expected ${message}`);
}

describe("build: Dockerfile parser", () => {
  describe("as dockerd 20.10 parses (steps and errors checked against it)", () => {
    for (const c of DOCKERD_CASES) {
      it(JSON.stringify(c.text), () => {
        if (c.error) return expectError(() => parseDockerfile(c.text), ...c.error);
        expect(parseDockerfile(c.text).instructions.map((i) => i.original)).to.deep.equal(c.steps);
      });
    }
  });

  it("names the Dockerfile the client gave in the message about an empty file", () => {
    expectError(() => parseDockerfile("", { name: "sub/Dockerfile.dev" }), "DOCKERFILE_EMPTY", "the Dockerfile (sub/Dockerfile.dev) cannot be empty");
  });

  it("keeps the escape and syntax directives, and warns of empty continuation lines as dockerd words it", () => {
    const parsed = parseDockerfile("# syntax=docker/dockerfile:1.4\n# escape=`\nFROM scratch\nENV a=1 `\n\n  b=2\nENV c=3 `\n  \n d=4\n");
    expect(parsed.escape).to.equal("`");
    expect(parsed.syntax).to.equal("docker/dockerfile:1.4");
    // dockerd 20.10 printed these three lines (in red) before "Step 1/3".
    expect(parsed.warnings).to.deep.equal([
      "[WARNING]: Empty continuation line found in:\n    ENV a=1   b=2",
      "[WARNING]: Empty continuation line found in:\n    ENV c=3  d=4",
      "[WARNING]: Empty continuation lines will become errors in a future release.",
    ]);
    expect(parseDockerfile("FROM scratch\n").warnings).to.deep.equal([]);
    expect(parseDockerfile("FROM scratch\n").syntax).to.equal(undefined);
  });

  it("numbers lines from 1, counting comments, directives, blank and continuation lines", () => {
    const parsed = parseDockerfile("# escape=\\\n\nFROM scratch\n# a comment\nENV a=1 \\\n  # inside\n  b=2\n\nLABEL x=y\n");
    expect(parsed.instructions.map((i) => [i.keyword, i.line, i.endLine])).to.deep.equal([
      ["from", 3, 3],
      ["env", 5, 7],
      ["label", 9, 9],
    ]);
    expectError(() => parseDockerfile("FROM scratch\nENV a=1 \\\n b=2\nCOPY x\n"), "INSTRUCTION_INVALID", "dockerfile parse error on line 4: COPY requires at least two arguments, but only one was provided. Destination could not be determined");
  });

  it("reports a line parser error before any instruction error, as Docker's two passes do", () => {
    expectError(() => parseDockerfile("FROM scratch\nCOPY a\nENV b\n"), "DOCKERFILE_PARSE", "failed to parse Dockerfile: ENV must have two arguments");
  });

  it("stops at a line longer than Go's scanner takes", () => {
    const long = `RUN echo ${"x".repeat(70_000)}\n`;
    expectError(() => parseDockerfile(`FROM scratch\n${long}`), "DOCKERFILE_PARSE", "failed to parse Dockerfile: dockerfile line greater than max allowed size of 65535");
    expectError(() => parseDockerfile(long), "DOCKERFILE_PARSE", "failed to parse Dockerfile: file with no instructions");
  });
});

describe("build: Dockerfile instructions", () => {
  const only = (text: string, at = 0) => parseDockerfile(`FROM scratch\n${text}\n`).stages[0]!.instructions[at]!;

  it("splits each keyword's arguments as Docker's line parsers do, raw", () => {
    expect(only("RUN echo $HOME  'a b'").args).to.deep.equal(["echo $HOME  'a b'"]);
    expect(only('RUN ["echo", "$HOME"]')).to.include({ json: true }).and.to.have.deep.property("args", ["echo", "$HOME"]);
    // The first JSON value counts, what follows is ignored (dockerd 20.10: CMD ["a"] x set Cmd ["a"]).
    expect(only('CMD ["a"] x').args).to.deep.equal(["a"]);
    expect(only('CMD ["a" x')).to.include({ json: false }).and.to.have.deep.property("args", ['["a" x']);
    expect(only("CMD ['a']").args).to.deep.equal(["['a']"]);
    expect(only('COPY "a b" c  /d/').args).to.deep.equal(['"a', 'b"', "c", "/d/"]);
    expect(only('COPY ["a b", "/d/"]')).to.include({ json: true }).and.to.have.deep.property("args", ["a b", "/d/"]);
    expect(only("WORKDIR /a b").args).to.deep.equal(["/a b"]);
    expect(only("EXPOSE 8080 80/udp \t 443").args).to.deep.equal(["443", "80/udp", "8080"]);
    expect(only("VOLUME /a  /b").args).to.deep.equal(["/a", "/b"]);
    expect(only('VOLUME [" /c "]').args).to.deep.equal(["/c"]);
    expect(only("MAINTAINER Jane <jane@example.test>").args).to.deep.equal(["Jane <jane@example.test>"]);
  });

  it("keeps ENV and LABEL pairs raw, in the name=value and the legacy form", () => {
    const env = only(`ENV a="x y" b='$z' c=d\\ e f=`);
    expect(env.pairs).to.deep.equal([["a", '"x y"'], ["b", "'$z'"], ["c", "d\\ e"], ["f", ""]]);
    expect(env.args).to.deep.equal(["a", '"x y"', "b", "'$z'", "c", "d\\ e", "f", ""]);
    expect(only('ENV key  the "whole"  rest').pairs).to.deep.equal([["key", 'the "whole"  rest']]);
    expect(only('LABEL "a b"="c d"').pairs).to.deep.equal([['"a b"', '"c d"']]);
    // With ` as the escape character, \ is an ordinary character (dockerd: x=a\b).
    const escaped = parseDockerfile("# escape=`\nFROM scratch\nENV x=a\\b y=a` b\n").stages[0]!.instructions[0]!;
    expect(escaped.pairs).to.deep.equal([["x", "a\\b"], ["y", "a` b"]]);
  });

  it("splits ARG definitions at the first =, a bare name having no default", () => {
    expect(only("ARG a b= c=d=e 'q'=1").argDefinitions).to.deep.equal([
      { name: "a" },
      { name: "b", value: "" },
      { name: "c", value: "d=e" },
      { name: "'q'", value: "1" },
    ]);
  });

  it("gives the flags a keyword accepts, and RUN's repeated --mount", () => {
    expect(only("COPY --from=build --chown=1:2 --chmod=644 a /b").flags).to.deep.equal({ from: "build", chown: "1:2", chmod: "644" });
    expect(only('COPY --from="a b" x y').flags).to.deep.equal({ from: "a b" });
    expect(only("COPY --from= a /b").flags).to.deep.equal({ from: "" });
    expect(only("ADD --chown=me a /b").flags).to.deep.equal({ chown: "me" });
    const run = only("RUN --mount=type=cache,target=/c --mount=type=tmpfs,target=/t make");
    expect(run.mounts).to.deep.equal(["type=cache,target=/c", "type=tmpfs,target=/t"]);
    expect(run.args).to.deep.equal(["make"]);
    expect(only("STOPSIGNAL --any=thing SIGKILL").flags).to.deep.equal({});
  });

  it("reads HEALTHCHECK into the image's health configuration", () => {
    expect(only("HEALTHCHECK --interval=1m30s --timeout=1.5s --start-period=10ms --retries=3 CMD curl -f http://localhost/ || exit 1").healthcheck).to.deep.equal({
      test: ["CMD-SHELL", "curl -f http://localhost/ || exit 1"],
      interval: 90_000_000_000,
      timeout: 1_500_000_000,
      startPeriod: 10_000_000,
      startInterval: 0,
      retries: 3,
    });
    // Docker 28's rules (20.10 refused all three): --start-interval, a duration of 0, 0 retries
    expect(only("HEALTHCHECK --interval=0s --start-interval=2s --retries=0 CMD x").healthcheck).to.deep.include({ interval: 0, startInterval: 2_000_000_000, retries: 0 });
    expect(only('healthcheck cmd ["/bin/check", "-q"]').healthcheck!.test).to.deep.equal(["CMD", "/bin/check", "-q"]);
    expect(only("HEALTHCHECK NONE").healthcheck!.test).to.deep.equal(["NONE"]);
    expect(only("HEALTHCHECK --interval=1ms CMD x").healthcheck!.interval).to.equal(1_000_000);
  });

  it("keeps an ONBUILD trigger and the text the image stores for it", () => {
    const onbuild = only("ONBUILD   run  echo $x   ");
    // dockerd 20.10 stored "run  echo $x   " in the image's OnBuild (the trailing spaces kept).
    expect(onbuild.expression).to.equal("run  echo $x   ");
    expect(onbuild.original).to.equal("ONBUILD   run  echo $x");
    expect(onbuild.args).to.deep.equal(["run", "echo $x"]);
    expect(onbuild.trigger).to.deep.include({ keyword: "run", original: "run  echo $x", args: ["echo $x"], line: 2, endLine: 2 });
  });

  it("parses a trigger when a child build runs it, with Docker's bare messages", () => {
    expect(parseTrigger("COPY --chown=1 a /b")).to.deep.include({ keyword: "copy", args: ["a", "/b"], flags: { chown: "1" } });
    // dockerd 20.10, building FROM an image with these triggers, printed these messages.
    expectError(() => parseTrigger("COPY a"), "TRIGGER_INVALID", "COPY requires at least two arguments, but only one was provided. Destination could not be determined");
    expectError(() => parseTrigger("FOO x"), "TRIGGER_INVALID", "unknown instruction: FOO (did you mean FROM?)");
    expectError(() => parseTrigger("expos 80"), "TRIGGER_INVALID", "unknown instruction: expos (did you mean expose?)");
    expectError(() => parseTrigger("ENV a"), "TRIGGER_INVALID", "ENV must have two arguments");
    expectError(() => parseTrigger("RUN a\nRUN b"), "TRIGGER_INVALID", "onbuild trigger should be a single expression");
  });
});

describe("build: Dockerfile stages", () => {
  const text = "ARG BASE=busybox\nARG V\nFROM --platform=$P ${BASE}:$V AS Builder\nRUN make\nFROM scratch\nCOPY --from=builder /out /\nFROM builder as TEST\nRUN test\n";
  let parsed: ParsedDockerfile;
  before(() => {
    parsed = parseDockerfile(text);
  });

  it("groups the instructions into stages after the meta ARGs", () => {
    expect(parsed.metaArgs.map((i) => i.original)).to.deep.equal(["ARG BASE=busybox", "ARG V"]);
    expect(parsed.stages.map((s) => [s.index, s.baseName, s.name, s.platform, s.instructions.map((i) => i.keyword)])).to.deep.equal([
      [0, "${BASE}:$V", "builder", "$P", ["run"]],
      [1, "scratch", undefined, undefined, ["copy"]],
      [2, "builder", "test", undefined, ["run"]],
    ]);
    expect(parsed.instructions).to.have.length(8);
  });

  it("keeps the stages up to --target, found whatever its case", () => {
    expect(selectStages(parsed).map((s) => s.index)).to.deep.equal([0, 1, 2]);
    expect(selectStages(parsed, "BUILDER").map((s) => s.index)).to.deep.equal([0]);
    expect(selectStages(parsed, "test").map((s) => s.index)).to.deep.equal([0, 1, 2]);
    expectError(() => selectStages(parsed, "three"), "TARGET_NOT_FOUND", "failed to reach build target three in Dockerfile");
  });

  it("does not take an ARG after the first FROM for a meta ARG", () => {
    const p = parseDockerfile("FROM scratch\nARG a\nFROM scratch\n");
    expect(p.metaArgs).to.deep.equal([]);
    expect(p.stages[0]!.instructions.map((i) => i.keyword)).to.deep.equal(["arg"]);
  });
});

describe("build: Go's formats in Docker's messages", () => {
  it("parses durations as time.ParseDuration", () => {
    const table: [string, number | string][] = [
      ["1h30m", 5_400_000_000_000],
      ["1.5s", 1_500_000_000],
      [".5ms", 500_000],
      ["1.s", 1_000_000_000],
      ["-2us", -2000],
      ["3\u00b5s", 3000],
      ["+0", 0],
      ["0", 0],
      ["9223372036854775807ns", 9223372036854775807],
      ["9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'],
      ["", 'time: invalid duration ""'],
      [".", 'time: invalid duration "."'],
      ["s", 'time: invalid duration "s"'],
      ["1", 'time: missing unit in duration "1"'],
      ["1hs", 'time: unknown unit "hs" in duration "1hs"'],
      ["1\u00e9", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'],
    ];
    for (const [text, want] of table) {
      let got: number | string;
      try {
        got = parseGoDuration(text);
      } catch (err) {
        got = (err as Error).message;
      }
      expect(got, text).to.equal(want);
    }
  });

  it("quotes as %q, parses int32 and cleans paths as Go does", () => {
    expect(goQuote('a"b\\c\n\x01\u00e9\u200b')).to.equal('"a\\"b\\\\c\\n\\x01\u00e9\\u200b"');
    expect(parseGoInt32("+7")).to.equal(7);
    expect(() => parseGoInt32("1_0")).to.throw('strconv.ParseInt: parsing "1_0": invalid syntax');
    expect(() => parseGoInt32("-2147483649")).to.throw("value out of range");
    expect(["", "./a/", "a//b/../c", "/../x", "../../y", "/"].map(goCleanPath)).to.deep.equal([".", "a", "a/c", "/x", "../../y", "/"]);
  });
});
