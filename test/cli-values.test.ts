/**
 * The value rules of the `engine` client that the command tests reach only in part: sizes as
 * go-units reads them, pflag's comma lists, `docker cp`'s path rules (go-archive's), the stats
 * percentages as Go rounds them, and the events' fixed-width times.
 */
import { expect } from "chai";
import { assertsDirectory, CopyError, getRebaseName, preserveTrailingDotOrSeparator, prepareArchiveCopy, splitCpArg, splitPathDirEntry } from "../cli/archive/copy-paths.js";
import { parseBytes } from "../cli/container/units.js";
import { stringSlice, UsageError } from "../cli/flags.js";
import { rfc3339NanoFixed } from "../cli/format/event-context.js";
import { formatPercentage } from "../cli/format/stats-context.js";

describe("cli values (sizes, comma lists, cp paths, percentages)", () => {
  it("reads sizes as go-units v0.5 does, with its messages", () => {
    const cases: [string, number][] = [["512", 512], ["64m", 64 * 1024 ** 2], ["1.5G", 1.5 * 1024 ** 3], ["10 KiB", 10240], ["2MB", 2 * 1024 ** 2], ["3b", 3], ["1e3", 1000]];
    for (const [text, bytes] of cases) expect(parseBytes(text), text).to.equal(bytes);
    const errors: [string, string][] = [
      ["1z", "invalid suffix: 'z'"],
      ["1kbb", "invalid suffix: 'kbb'"],
      ["1KiBx", "invalid suffix: 'KiBx'"],
      ["abc", "invalid size: 'abc'"],
      ["-1", "invalid size: '-1'"],
      ["1.5.5", 'strconv.ParseFloat: parsing "1.5.5": invalid syntax'],
    ];
    for (const [text, message] of errors) expect(() => parseBytes(text), text).to.throw(message);
  });

  it("splits comma lists as pflag's StringSlice (Go's csv), quotes keeping commas", () => {
    expect(stringSlice(["a,b", "c"], "--alias")).to.deep.equal(["a", "b", "c"]);
    expect(stringSlice(['a b,"c,d"', '"say ""hi"""'], "--alias")).to.deep.equal(["a b", "c,d", 'say "hi"']);
    // pflag quotes the value as Go's %q does (the Docker CLI prints "a\"b")
    expect(() => stringSlice(['a"b'], "--alias")).to.throw(UsageError, 'invalid argument "a\\"b" for "--alias" flag: parse error on line 1, column 2: bare " in non-quoted-field');
  });

  it("splits and keeps cp's paths as go-archive does", () => {
    expect(splitCpArg("box:/etc")).to.deep.equal({ container: "box", path: "/etc" });
    expect(splitCpArg("./a:b")).to.deep.equal({ container: "", path: "./a:b" });
    expect(splitCpArg("/a:b")).to.deep.equal({ container: "", path: "/a:b" });
    expect(splitCpArg("plain")).to.deep.equal({ container: "", path: "plain" });
    expect(splitPathDirEntry("/a/b/")).to.deep.equal({ dir: "/a", base: "b" });
    expect(splitPathDirEntry("/a/b/.")).to.deep.equal({ dir: "/a/b", base: "." });
    expect(preserveTrailingDotOrSeparator("/x/d", "d/.")).to.equal("/x/d/.");
    expect(preserveTrailingDotOrSeparator("/x/d", "d/")).to.equal("/x/d/");
    expect(assertsDirectory("/x/")).to.equal(true);
    expect(getRebaseName("/x/link", "/y/target")).to.deep.equal({ resolved: "/y/target", rebaseName: "link" });
    expect(getRebaseName("/x/link/", "/y/target")).to.deep.equal({ resolved: "/y/target/", rebaseName: "link" });
  });

  it("decides where a copy lands and under which name (PrepareArchiveCopy)", () => {
    const info = (path: string, exists: boolean, isDir: boolean, rebaseName = "") => ({ path, exists, isDir, rebaseName });
    expect(prepareArchiveCopy(info("/s/f", true, false), info("/d", true, true))).to.deep.equal({ dstDir: "/d" });
    expect(prepareArchiveCopy(info("/s/f", true, false), info("/d/new", false, false))).to.deep.equal({ dstDir: "/d", rebase: { from: "f", to: "new" } });
    expect(prepareArchiveCopy(info("/s/dir/.", true, true), info("/d/new", false, false))).to.deep.equal({ dstDir: "/d", rebase: { from: ".", to: "new" } });
    expect(prepareArchiveCopy(info("/s/l", true, false, "l"), info("/d/file", true, false))).to.deep.equal({ dstDir: "/d", rebase: { from: "l", to: "file" } });
    expect(() => prepareArchiveCopy(info("/s/dir", true, true), info("/d/file", true, false))).to.throw(CopyError, "cannot copy directory");
    expect(() => prepareArchiveCopy(info("/s/f", true, false), info("/d/nodir/", false, false))).to.throw(CopyError, "no such directory");
  });

  it("rounds percentages as Go's strconv (exact ties to even) and writes events' times with nine digits", () => {
    expect(formatPercentage(0.125)).to.equal("0.12%");
    expect(formatPercentage(0.375)).to.equal("0.38%");
    expect(formatPercentage(12.3456)).to.equal("12.35%");
    expect(formatPercentage(0)).to.equal("0.00%");
    const tz = process.env.TZ;
    process.env.TZ = "UTC";
    try {
      expect(rfc3339NanoFixed(1795733391801000001n)).to.equal("2026-11-26T22:49:51.801000001Z");
      expect(rfc3339NanoFixed(1795733391000000000n)).to.equal("2026-11-26T22:49:51.000000000Z");
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });
});
