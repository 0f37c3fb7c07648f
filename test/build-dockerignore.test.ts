/**
 * .dockerignore (core/build/dockerignore.ts). The pattern tables follow moby/patternmatcher's
 * tests and Go's filepath.Match tests, in our own words; WALKS were each run with Docker's CLI
 * (28.x, which filters the context) against dockerd 20.10.24 (DOCKER_BUILDKIT=0, which then drops
 * an ignored Dockerfile and .dockerignore) as `COPY . /ctx` followed by a listing of /ctx, and
 * what the image held is written down here.
 */
import { expect } from "chai";
import { EngineError } from "../core/errors.js";
import { IgnoreMatcher, readDockerignore } from "../core/build/dockerignore.js";

/** [pattern, path, left out?] for one pattern at a time. */
const SINGLE: [string, string, boolean][] = [
  ["*", "main.go", true],
  ["*.go", "main.go", true],
  ["**", "f", true],
  ["**", "d/f", true],
  ["**/", "f", true],
  ["**/**", "d/f", true],
  ["d/**", "d/f", true],
  ["d/**", "d/e/f", true],
  ["d/**", "d", false],
  ["**/d", "d", true],
  ["**/d", "d/f", true],
  ["**/e/*", "d/e/f", true],
  ["**/e/**", "d/e/g/f", true],
  ["**f", "f", true],
  ["**f", "d/f", true],
  ["**/f", "d/d/f", true],
  ["**/f*", "d/d/f.txt", true],
  ["**/f*.txt", "d/d/f.txt", true],
  ["**/**/*.txt", "d/d/f.txt", true],
  ["**/**/*.txt2", "d/d/f.txt", false],
  ["**/*.txt", "f.txt", true],
  ["a**/*.txt", "a/f.txt", true],
  ["a**/*.txt", "a/d/d/f.txt", true],
  ["a/*.txt", "a/d/f.txt", false],
  ["a/*.txt", "a/f.txt", true],
  ["a/*.txt**", "a/f.txt", true],
  ["a[b-d]e", "ae", false],
  ["a[b-d]e", "ace", true],
  ["a[b-d]e", "aae", false],
  ["a[^b-d]e", "aze", true],
  [".*", ".git", true],
  [".*", "git", false],
  ["x.y", "xzy", false],
  ["x.y", "x.y", true],
  ["x?y", "xzy", true],
  ["x?y", "xy", false],
  ["x?y", "x/y", false],
  ["x*y", "x/y", false],
  ["**/a/b", "a/b", true],
  ["**/a/b", "c/d/a/b", true],
  ["**/.f", ".f", true],
  ["**/.f", "x.f", false],
  ["a(b)c/d", "a(b)c/d", true],
  ["a(b)c/d", "a(b)c/e", false],
  ["a.|)$(}+{bc", "a.|)$(}+{bc", true],
  ["dist/*.whl", "dist/pkg-1.0+g08acad9-py3-none-any.whl", true],
  ["a\\\\", "a\\", true],
  ["a\\*b", "a*b", true],
  ["a\\*b", "ab", false],
  ["a*b*c*d*e*/f", "axbxcxdxexxx/f", true],
  ["a*b*c*d*e*/f", "axbxcxdxe/xxx/f", false],
  ["a*b?c*x", "abxbbxdbxebxczzx", true],
  ["a*b?c*x", "abxbbxdbxebxczzy", false],
  ["ab[^e-g]", "abc", true],
  ["a?b", "a☺b", true],
  ["a???b", "a☺b", false],
  ["[a-ζ]*", "α", true],
  ["[\\]a]", "]", true],
  ["[\\-x]", "-", true],
  ["[x\\-]", "z", false],
  ["[*]", "*", true],
  ["[*]", "a", false],
  ["a]b", "a]b", true],
  ["docs/", "docs/README.md", true],
];

const BAD: string[] = ["[", "[^", "[^bc", "a[", "[]a]", "[-]", "[x-]", "[-x]", "[a-b-c]", "\\", "a/\\"];

/** [.dockerignore, what `COPY . /ctx` held] for the tree below, through Docker's CLI and dockerd. */
const TREE = ["top.txt", "top.go", "a/one.txt", "a/b/two.txt", "a/b/c/three.txt", "a/b/c/keep.txt", "keep/deep/k.txt", "keep/k.go", "x.d/y", ".hid/h", "a/b/keep", "Dockerfile", ".dockerignore"];
const WALKS: [string, string[]][] = [
  ["", TREE],
  ["Dockerfile\n.dockerignore\n", TREE.filter((f) => f !== "Dockerfile" && f !== ".dockerignore")],
  ["a\n!a/b/c/keep.txt\n", ["top.txt", "top.go", "a/b/c/keep.txt", "keep/deep/k.txt", "keep/k.go", "x.d/y", ".hid/h", "Dockerfile", ".dockerignore"]],
  // The exception's text does not start with "a/": the CLI does not walk into a.
  ["a\n!**/keep.txt\n", ["top.txt", "top.go", "keep/deep/k.txt", "keep/k.go", "x.d/y", ".hid/h", "Dockerfile", ".dockerignore"]],
  ["top*\n**/*.txt\n!keep\n", ["a/b/keep", "keep/k.go", "x.d/y", ".hid/h", "Dockerfile", ".dockerignore"]],
  ["/a/b\n./keep/deep\n", ["top.txt", "top.go", "a/one.txt", "keep/k.go", "x.d/y", ".hid/h", "Dockerfile", ".dockerignore"]],
  ["# top.txt\n  # top.go\n x.d \n", TREE.filter((f) => f !== "x.d/y")],
  ["top.?o\n[a-k]eep\n", ["top.txt", "a/one.txt", "a/b/two.txt", "a/b/c/three.txt", "a/b/c/keep.txt", "x.d/y", ".hid/h", "a/b/keep", "Dockerfile", ".dockerignore"]],
  ["*\n!a\n", ["a/one.txt", "a/b/two.txt", "a/b/c/three.txt", "a/b/c/keep.txt", "a/b/keep"]],
  ["**\n!keep/k.go\n", ["keep/k.go"]],
  ["a/b/\n!a/b/keep\n", ["top.txt", "top.go", "a/one.txt", "a/b/keep", "keep/deep/k.txt", "keep/k.go", "x.d/y", ".hid/h", "Dockerfile", ".dockerignore"]],
  ["a\n!a/b\na/b/two.txt\n", ["top.txt", "top.go", "a/b/c/three.txt", "a/b/c/keep.txt", "a/b/keep", "keep/deep/k.txt", "keep/k.go", "x.d/y", ".hid/h", "Dockerfile", ".dockerignore"]],
];

/** The files a walker following the matcher sends, then the daemon's removal of the two build files. */
function walk(m: IgnoreMatcher, files: string[]): string[] {
  const sent: string[] = [];
  for (const file of files) {
    if (file === "Dockerfile" || file === ".dockerignore") {
      if (!m.matches(file)) sent.push(file);
    } else if (!m.excludes(file)) sent.push(file);
  }
  return sent;
}

describe("build: .dockerignore", () => {
  it("reads patterns: comments, blank lines, spaces, ./ and leading / cleaned, exceptions", () => {
    const text = "\ufeffone\n/two\n/a/file/here\n\nlast/\n# a comment\n  # not a comment\n! /inverted/abs/path\n!\n! \r\n./x/../y\r\n";
    expect(readDockerignore(text)).to.deep.equal(["one", "two", "a/file/here", "last", "# not a comment", "!inverted/abs/path", "!", "!", "y"]);
  });

  it("matches one pattern at a time as patternmatcher and filepath.Match do", () => {
    const wrong = SINGLE.filter(([p, path, want]) => new IgnoreMatcher([p]).matches(path) !== want).map(([p, path, want]) => `${p} ${path} want ${want}`);
    expect(wrong).to.deep.equal([]);
  });

  it("refuses patterns with bad syntax, and a lone !", () => {
    for (const pattern of BAD) {
      expect(() => new IgnoreMatcher([pattern]), pattern).to.throw(EngineError, "syntax error in pattern");
    }
    // Docker's CLI: 'error checking context: illegal exclusion pattern: "!"'
    const err = (() => {
      try {
        IgnoreMatcher.fromFile("a\n!\n");
      } catch (e) {
        return e as EngineError;
      }
    })();
    expect(err).to.include({ code: "ENGINE_ERR_BUILD_IGNORE_PATTERN", statusCode: 400, message: 'illegal exclusion pattern: "!"' });
    expect(new IgnoreMatcher([]).matches("anything")).to.equal(false);
    expect(new IgnoreMatcher(["*"]).matches(".")).to.equal(false);
  });

  it("lets the last matching pattern decide, and a directory's match cover what is below it", () => {
    const table: [string[], string, boolean][] = [
      [["!main.go", "*.go"], "main.go", true],
      [["*.go", "!main.go"], "main.go", false],
      [["docs", "!docs/README.md"], "docs/README.md", false],
      [["docs/", "!docs/README.md"], "docs/README.md", false],
      [["docs/*", "!docs/README.md"], "docs/README.md", false],
      [["docs", "!docs/README.md"], "docs/other.md", true],
      [["**", "!util/docker/web"], "util/docker/web/foo", false],
      [["**", "!util/docker/web", "util/docker/web/foo"], "util/docker/web/foo", true],
      [["**", "!dist/*.whl"], "dist/pkg-1.0+g1-py3-none-any.whl", false],
      // An exception is only weighed once something matched the path itself or a directory above.
      [["top*", "**/*.txt", "!keep"], "keep/deep/k.txt", true],
    ];
    for (const [patterns, path, want] of table) expect(new IgnoreMatcher(patterns).matches(path), `${patterns} ${path}`).to.equal(want);
  });

  it("tells a walker which left-out directories it must still walk into", () => {
    const m = new IgnoreMatcher(["a", "!a/b/c/keep.txt", "!**/other", "x"]);
    expect(["a", "a/b", "a/b/c", "a/d", "x", "b"].map((d) => m.mustDescend(d))).to.deep.equal([true, true, true, false, false, false]);
    expect(new IgnoreMatcher(["a"]).mustDescend("a")).to.equal(false);
    expect(m.excludes("a/b/c/keep.txt")).to.equal(false);
    expect(m.excludes("a/d/other")).to.equal(true);
    expect(m.matches("a/d/other")).to.equal(false);
  });

  it("keeps, step by step, the state a walker passes from a directory to its children", () => {
    const m = new IgnoreMatcher(["a", "!a/b"]);
    const a = m.match("a");
    const b = m.match("a/b", a);
    expect([a.excluded, b.excluded, m.match("a/b/f", b).excluded, m.match("a/c", a).excluded]).to.deep.equal([true, false, false, true]);
  });

  describe("sends what Docker's CLI sent and dockerd kept", () => {
    for (const [ignore, held] of WALKS) {
      it(JSON.stringify(ignore), () => {
        expect(walk(IgnoreMatcher.fromFile(ignore), TREE).sort()).to.deep.equal([...held].sort());
      });
    }
  });
});
