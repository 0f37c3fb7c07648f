/**
 * `engine cp` both ways against a real engined, each case run by the Docker CLI too from a
 * fresh copy of the same local folder into a fresh copy of the same container folder: the
 * messages, exit statuses and the resulting trees (here and in the container) must be the
 * same. Paths with `/` and `/.` at their end, renames, folders into folders, symlinks (-L),
 * owners (-a), tar streams on stdin and stdout (`-`), and the refusals.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { chownSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { normalized } from "./helpers/cli-compare.js";
import { docker } from "./helpers/docker-cli.js";
import { ENGINE, engine, inPty } from "./helpers/engine-cli.js";
import { makeTempDir, runCommand, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const FIXED_TIME = new Date("2021-03-04T05:06:07Z");

/** A folder's tree as text: each entry's path, type, mode, size and content or link target. */
function localTree(dir: string): string {
  const lines: string[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const path = join(rel, name);
      const st = lstatSync(join(dir, path));
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isDirectory()) {
        lines.push(`${path}/ ${mode}`);
        walk(path);
      } else if (st.isSymbolicLink()) lines.push(`${path} -> ${readlinkSync(join(dir, path))}`);
      else lines.push(`${path} ${mode} ${st.uid}:${st.gid} ${st.mtimeMs > 0 ? Math.floor(st.mtimeMs / 1000) : 0} ${JSON.stringify(readFileSync(join(dir, path), "utf8"))}`);
    }
  };
  walk("");
  return lines.join("\n");
}

describe("engine CLI: cp", function () {
  // each case starts both clients from fresh folders on both sides: a few seconds each
  this.timeout(240_000);
  let d: TestDaemon;
  let host: string;
  let work: string;
  const ok = async (...args: string[]) => {
    const r = await docker(host, args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const inBox = (script: string) => ok("exec", "box", "sh", "-c", script);

  /** The same local folder each run starts from: a file, a folder with a subfolder, symlinks, an owner. */
  const makeLocal = (dir: string) => {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(join(dir, "d/sub"), { recursive: true });
    writeFileSync(join(dir, "h.txt"), "hello\n");
    writeFileSync(join(dir, "d/a"), "a\n");
    writeFileSync(join(dir, "d/sub/b"), "b\n", { mode: 0o600 });
    writeFileSync(join(dir, "owned"), "owned\n");
    chownSync(join(dir, "owned"), 1234, 5678);
    writeFileSync(join(dir, "somefile"), "");
    symlinkSync("h.txt", join(dir, "lnk"));
    symlinkSync("d", join(dir, "dlnk"));
    // fixed times: the copies keep them, and both runs must show the same
    for (const f of ["h.txt", "d/a", "d/sub/b", "owned", "somefile"]) utimesSync(join(dir, f), FIXED_TIME, FIXED_TIME);
  };
  /** The same container folders each run starts from. */
  const resetBox = () =>
    inBox(
      "rm -rf /src /dst && mkdir -p /src/dir/sub /dst/exists && echo x > /src/f && echo y > /src/dir/sub/y && chmod 640 /src/dir/sub/y " +
        "&& chown 42:43 /src/f && ln -s /src/f /src/l && ln -s dir /src/dl && ln -s exists /dst/el && touch /dst/file " +
        "&& touch -d '2020-01-02 03:04:05' /src/f /src/dir/sub/y",
    );
  const boxTree = () => inBox("find /dst /src | sort | while read p; do stat -c '%n %F %a %u:%g %s' \"$p\"; done");

  /** Runs `args` with both clients on the same starting state; their results must agree. */
  const same = async (args: string[], opts: { input?: Buffer | string; terminal?: boolean } = {}) => {
    const run = async (client: "engine" | "docker", dir: string): Promise<{ r: RunResult; local: string; box: string }> => {
      makeLocal(dir);
      await resetBox();
      let r: RunResult;
      if (opts.terminal) {
        // the summary line is for a terminal only
        const argv = client === "engine" ? [ENGINE, "-H", host, ...args] : ["docker", "-H", host, ...args];
        const t = await inPty(["sh", "-c", `cd "$0" && exec "$@"`, dir, ...argv], { env: { DOCKER_CONFIG: makeTempDir("engine-docker-config-"), ENGINE_CONFIG: makeTempDir("engine-cli-config-") } });
        r = { code: t.code, stdout: t.output.replace(/\r\n/g, "\n").replaceAll(dir, "<dir>"), stderr: "" };
      } else {
        const command = client === "engine" ? ENGINE : "docker";
        r = await runCommand(command, ["-H", host, ...args], { cwd: dir, input: opts.input, env: { DOCKER_CONFIG: makeTempDir("engine-docker-config-"), ENGINE_CONFIG: makeTempDir("engine-cli-config-") } });
        r = { ...r, stderr: r.stderr.replaceAll(dir, "<dir>") };
      }
      return { r, local: localTree(dir), box: await boxTree() };
    };
    const ours = await run("engine", join(work, "e"));
    const theirs = await run("docker", join(work, "d"));
    const label = `cp ${args.join(" ")}`;
    // the Docker CLI's tar goroutine logs its broken pipe when the copy was refused before it
    // read the tar ("Can't add file ... to tar"): its noise, not part of what it says
    const quiet = (t: string) => t.replace(/^time="[^"]*" level=error msg=.*\n/gm, "");
    expect(normalized(ours.r), label).to.deep.equal(normalized(theirs.r, quiet));
    expect(ours.local, `${label}: the local tree`).to.equal(theirs.local);
    expect(ours.box, `${label}: the container's tree`).to.equal(theirs.box);
    return ours;
  };

  before(async function () {
    work = makeTempDir("engine-cli-cp-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    await ok("import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox");
    await ok("run", "-d", "--name", "box", "busybox", "sleep", "600");
  });
  after(async function () {
    if (d) await docker(host, ["rm", "-f", "box"]);
    await d?.stop();
  });

  it("from a container: a file or a folder into a folder, under a new name, a folder's contents (/.), to stdout (-)", async function () {
    for (const [src, dst] of [
      ["/src/f", "."],
      ["/src/f", "renamed"],
      ["/src/f", "d"],
      ["/src/dir", "."],
      ["/src/dir", "newdir"],
      ["/src/dir/.", "newdir"],
      ["/src/dir/.", "d"],
      ["/src/dir/", "d/sub"],
      ["/src/f", "lnk"],
    ]) {
      const r = await same(["cp", `box:${src}`, dst]);
      expect(r.r.code, `${src} ${dst}`).to.equal(0);
    }
    // the copy is the user's, not the container file's owner (the CLI does not chown)
    const r = await same(["cp", "box:/src/f", "."]);
    expect(r.local).to.include(`f 644 0:0`);
    const tar = await engine(host, ["cp", "box:/src/dir", "-"]);
    expect(tar.code).to.equal(0);
    const listing = execFileSync("tar", ["-tv"], { input: Buffer.from(tar.stdout, "latin1") }).toString();
    expect(listing).to.match(/dir\/sub\/y\n/);
  });

  it("from a container: symlinks copied as links, or followed with -L under the link's name", async function () {
    for (const args of [
      ["box:/src/l", "."],
      ["-L", "box:/src/l", "."],
      ["-L", "box:/src/l", "newname"],
      ["box:/src/dl", "."],
      ["-L", "box:/src/dl", "."],
    ]) {
      expect((await same(["cp", ...args])).r.code, args.join(" ")).to.equal(0);
    }
  });

  it("into a container: files, folders, renames, /. contents, symlinks, -L, -a owners, a tar from stdin", async function () {
    for (const args of [
      ["h.txt", "box:/dst/"],
      ["h.txt", "box:/dst/renamed"],
      ["h.txt", "box:/dst/file"],
      ["h.txt", "box:/dst/el"],
      ["d", "box:/dst/"],
      ["d", "box:/dst/newd"],
      ["d/.", "box:/dst/newd"],
      ["d/.", "box:/dst/exists"],
      ["lnk", "box:/dst/"],
      ["-L", "lnk", "box:/dst/"],
      ["-L", "dlnk", "box:/dst/x"],
      ["owned", "box:/dst/"],
      ["-a", "owned", "box:/dst/"],
    ]) {
      expect((await same(["cp", ...args])).r.code, args.join(" ")).to.equal(0);
    }
    const tar = execFileSync("tar", ["-C", join(work, "e"), "-c", "h.txt", "d"]);
    expect((await same(["cp", "-", "box:/dst/exists"], { input: tar })).box).to.include("/dst/exists/d/sub/b regular file 600");
  });

  it("refuses as the Docker CLI does, and prints the summary line on a terminal as it does", async function () {
    for (const args of [
      ["box:/src/dir", "somefile"],
      ["box:/src/f", "nodir/"],
      ["box:/src/f", "somefile/x"],
      ["box:/src/f", "/dev/null"],
      ["box:/src/nosuch", "."],
      ["nosuch:/x", "."],
      ["d", "box:/dst/file"],
      ["h.txt", "box:/dst/nodir/"],
      ["h.txt", "box:/dst/a/b"],
      ["missing", "box:/dst/"],
      // a file of / that is not there: Go's path join makes it `//nosuch-at-root`
      ["/nosuch-at-root", "box:/dst/"],
      ["-", "box:/dst/file"],
      ["box:/a", "box:/b"],
      ["a", "b"],
      ["", "b"],
      ["a", ""],
      ["a"],
    ]) {
      expect((await same(["cp", ...args], { input: "" })).r.code, args.join(" ")).to.not.equal(0);
    }
    for (const args of [
      ["box:/src/f", "."],
      ["box:/src/dir", "somefile"],
      ["h.txt", "box:/dst/"],
      ["-q", "h.txt", "box:/dst/"],
    ]) {
      await same(["cp", ...args], { terminal: true });
    }
  });
});
