/**
 * `engine build` against a real engined: the context as the Docker CLI sends it (a folder with
 * its .dockerignore, `-f -`, a tar or a Dockerfile on stdin, an http URL, a git repository
 * cloned on the client), the classic output (the same lines as the Docker CLI's legacy builder
 * on the same daemon), `-q`, `--iidfile`, build arguments, labels, `--target`, a failed RUN's
 * exit status, the errors before anything is sent, and Ctrl-C cancelling the build.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFileSync, spawn } from "node:child_process";
import { chownSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { contextDir } from "./helpers/build-api.js";
import { docker } from "./helpers/docker-cli.js";
import { ENGINE, engine, type EngineRunOptions } from "./helpers/engine-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, makeTar, writeFixture } from "./fixtures/images.js";

/** Output with container and image IDs made alike. */
const masked = (text: string) => text.replace(/\b[0-9a-f]{12}\b/g, "<id>");

describe("engine build", function () {
  this.timeout(240_000);
  let d: TestDaemon;
  let host: string;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}${r.stdout}`).to.equal(0);
    return r.stdout;
  };
  const build = (args: string[], opts: EngineRunOptions = {}) => engine(host, ["build", ...args], { timeoutMs: 120_000, ...opts });
  const run = async (image: string, cmd: string[]) => ok(await engine(host, ["run", "--rm", "--network", "none", image, ...cmd]), `run ${image} ${cmd.join(" ")}`);
  const listing = async (image: string) => (await run(image, ["find", "/ctx"])).trim().split("\n").sort();

  before(async () => {
    const work = makeTempDir("engine-cli-build-");
    const rootfs = writeFixture(work, "rootfs.tar", await busyboxRootfs());
    d = await startEngined();
    host = `unix://${d.socket}`;
    ok(await engine(host, ["import", "-c", 'CMD ["sh"]', rootfs, "busybox"]), "import busybox");
  });

  after(async () => {
    await d?.stop();
  });

  it("sends a folder as the Docker CLI does: .dockerignore applied with its exceptions, owners 0:0, symlinks kept; tags set, the image runs", async () => {
    const dir = contextDir({
      Dockerfile: 'FROM busybox\nCOPY . /ctx\nCMD ["cat", "/ctx/a.txt"]\n',
      ".dockerignore": "secret\n*.log\n!keep.log\ndocs\n!docs/README.md\nDockerfile\n",
      "a.txt": "hello\n",
      "secret/key": "k\n",
      "x.log": "",
      "keep.log": "",
      "docs/README.md": "",
      "docs/other": "",
      "sub/b.txt": "b\n",
    });
    symlinkSync("a.txt", join(dir, "link"));
    chownSync(join(dir, "sub/b.txt"), 1234, 1234);
    const r = await build(["-t", "cli-build-a", "-t", "cli-build-b:2", dir]);
    const out = ok(r, "build");
    // not a terminal: the upload's last progress line only, as the CLI writes it
    expect(out).to.match(/^Sending build context to Docker daemon {2}\d+(\.\d+)?kB\r\r\nStep 1\/3 : FROM busybox\n/);
    expect(out).to.match(/Successfully built [0-9a-f]{12}\nSuccessfully tagged cli-build-a:latest\nSuccessfully tagged cli-build-b:2\n$/);
    expect(await run("cli-build-b:2", [])).to.equal("hello\n");
    // the Dockerfile matched the patterns: sent (the daemon reads it), then left out of the context
    expect(await listing("cli-build-a")).to.deep.equal(["/ctx", "/ctx/.dockerignore", "/ctx/a.txt", "/ctx/docs", "/ctx/docs/README.md", "/ctx/keep.log", "/ctx/link", "/ctx/sub", "/ctx/sub/b.txt"]);
    expect(await run("cli-build-a", ["readlink", "/ctx/link"])).to.equal("a.txt\n");
    expect(await run("cli-build-a", ["stat", "-c", "%u:%g %a", "/ctx/sub/b.txt"])).to.equal("0:0 644\n");
  });

  it("prints what the Docker CLI's legacy builder prints for the same build (IDs aside)", async () => {
    const dir = contextDir({ Dockerfile: "FROM busybox\nENV A=1\nCOPY f /f\nRUN cat /f && echo done\n", f: "content\n" });
    const mine = ok(await build(["--no-cache", "-t", "cli-build-cmp", dir]), "engine build");
    const theirs = await docker(host, ["build", "--no-cache", "-t", "cli-build-cmp", dir], { DOCKER_BUILDKIT: "0" }, { timeoutMs: 120_000 });
    expect(theirs.code, theirs.stderr).to.equal(0);
    expect(masked(mine)).to.equal(masked(theirs.stdout));
    expect(mine).to.include("content\ndone\n");
  });

  it("takes the Dockerfile from stdin (-f -), from outside the folder, and -f relative to the current directory", async () => {
    const dir = contextDir({ "a.txt": "from the context\n", "sub/Dockerfile.dev": "FROM busybox\nCOPY a.txt /dev.txt\n" });
    const stdin = await build(["-t", "cli-build-stdin-df", "-f", "-", dir], { input: "FROM busybox\nCOPY . /ctx\n" });
    ok(stdin, "-f -");
    // the generated name and the .dockerignore made for it stay out of the image
    expect(await listing("cli-build-stdin-df")).to.deep.equal(["/ctx", "/ctx/a.txt", "/ctx/sub", "/ctx/sub/Dockerfile.dev"]);

    const elsewhere = join(makeTempDir("engine-cli-build-df-"), "Other.Dockerfile");
    writeFileSync(elsewhere, "FROM busybox\nCOPY a.txt /outside.txt\n");
    ok(await build(["-t", "cli-build-outside", "-f", elsewhere, dir]), "-f outside the context");
    expect(await run("cli-build-outside", ["cat", "/outside.txt"])).to.equal("from the context\n");

    ok(await build(["-t", "cli-build-relative", "-f", "sub/Dockerfile.dev", "."], { cwd: dir }), "-f relative to the current directory");
    expect(await run("cli-build-relative", ["cat", "/dev.txt"])).to.equal("from the context\n");
  });

  it("reads a context tar from stdin (plain or gzip), or a Dockerfile alone", async () => {
    const tar = await makeTar([
      { name: "Dockerfile", data: "FROM busybox\nCOPY in-tar.txt /\n" },
      { name: "in-tar.txt", data: "from the tar\n" },
    ]);
    ok(await build(["-t", "cli-build-tar", "-"], { input: tar }), "tar on stdin");
    expect(await run("cli-build-tar", ["cat", "/in-tar.txt"])).to.equal("from the tar\n");
    ok(await build(["-t", "cli-build-tgz", "-"], { input: gzipSync(tar) }), "gzip on stdin");
    expect(await run("cli-build-tgz", ["cat", "/in-tar.txt"])).to.equal("from the tar\n");

    const alone = ok(await build(["--no-cache", "-"], { input: "FROM busybox\nRUN echo alone\n" }), "a Dockerfile on stdin");
    expect(alone).to.match(/^Sending build context to Docker daemon {2}2\.048kB\r\r\n/);
    expect(alone).to.include("\nalone\n");

    const both = await build(["-f", "-", "-"], { input: "FROM busybox\n" });
    expect(both.code).to.equal(1);
    expect(both.stderr).to.equal("invalid argument: can't use stdin for both build context and dockerfile\n");
    const ambiguous = await build(["-f", "Dockerfile", "-"], { input: "FROM busybox\n" });
    expect(ambiguous.code).to.equal(1);
    expect(ambiguous.stderr).to.equal("unable to prepare context: ambiguous Dockerfile source: both stdin and flag correspond to Dockerfiles\n");
  });

  it("prints only the image ID with -q, and writes it to --iidfile", async () => {
    const dir = contextDir({ Dockerfile: "FROM busybox\nRUN echo quiet > /q\n" });
    const files = makeTempDir("engine-cli-build-iid-");
    const quiet = await build(["-q", "--no-cache", "--iidfile", join(files, "q"), "-t", "cli-build-quiet", dir]);
    expect(quiet.code, quiet.stderr).to.equal(0);
    expect(quiet.stdout).to.match(/^sha256:[0-9a-f]{64}\n$/);
    expect(quiet.stderr).to.equal("");
    // as the Docker CLI: with -q the file gets the printed line, newline included
    expect(readFileSync(join(files, "q"), "utf8")).to.equal(quiet.stdout);
    const id = ok(await engine(host, ["inspect", "-f", "{{.Id}}", "cli-build-quiet"]), "inspect").trim();
    expect(quiet.stdout).to.equal(`${id}\n`);

    ok(await build(["--iidfile", join(files, "plain"), "-t", "cli-build-quiet", dir]), "--iidfile");
    expect(readFileSync(join(files, "plain"), "utf8")).to.equal(id);
    // a failed build removes the stale file first
    const bad = contextDir({ Dockerfile: "FROM busybox\nRUN exit 2\n" });
    expect((await build(["--iidfile", join(files, "plain"), bad])).code).to.equal(2);
    expect(() => readFileSync(join(files, "plain"))).to.throw(/ENOENT/);
  });

  it("passes --build-arg (a bare name taken from the environment, or left unset), --label and --target", async () => {
    const dir = contextDir({
      Dockerfile: [
        "FROM busybox AS one",
        "ARG GREETING",
        "ARG FROMENV",
        "ARG UNSET=default",
        'RUN echo "greeting=$GREETING fromenv=$FROMENV unset=$UNSET" > /g.txt',
        "FROM busybox AS two",
        "COPY --from=one /g.txt /g.txt",
        "FROM two AS three",
        "RUN echo never",
        "",
      ].join("\n"),
    });
    const r = await build(["--build-arg", "GREETING=hi", "--build-arg", "FROMENV", "--build-arg", "UNSET", "--label", "a=b", "--label", "c", "--target", "two", "-t", "cli-build-args", dir], {
      env: { FROMENV: "from-env", UNSET: undefined },
    });
    const out = ok(r, "build");
    expect(out).to.include("Step 8/9 : LABEL a=b\n");
    expect(out).to.include("Step 9/9 : LABEL c=\n");
    expect(out).not.to.include("never");
    expect(await run("cli-build-args", ["cat", "/g.txt"])).to.equal("greeting=hi fromenv=from-env unset=default\n");
    const labels = JSON.parse(ok(await engine(host, ["inspect", "-f", "{{json .Config.Labels}}", "cli-build-args"]), "inspect"));
    expect(labels).to.deep.equal({ a: "b", c: "" });
  });

  it("exits with a failed RUN's own status and Docker's message; with -q it prints what it held back", async () => {
    const dir = contextDir({ Dockerfile: "FROM busybox\nRUN echo oops && exit 7\n" });
    const r = await build(["--no-cache", dir]);
    expect(r.code).to.equal(7);
    expect(r.stdout).to.match(/Step 2\/2 : RUN echo oops && exit 7\n ---> Running in [0-9a-f]{12}\noops\n$/);
    expect(r.stderr).to.equal("The command '/bin/sh -c echo oops && exit 7' returned a non-zero code: 7\n");

    const q = await build(["-q", "--no-cache", dir]);
    expect(q.code).to.equal(7);
    expect(q.stdout).to.equal("");
    expect(q.stderr).to.match(/^Sending build context to Docker daemon {2}2\.048kB\r\r\n/);
    expect(q.stderr).to.match(/\nThe command '\/bin\/sh -c echo oops && exit 7' returned a non-zero code: 7\n$/);
  });

  it("refuses what it cannot send or the daemon cannot read, as the Docker CLI does", async () => {
    const empty = contextDir({ "x.txt": "" });
    const missing = await build([empty]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.equal(`unable to prepare context: unable to evaluate symlinks in Dockerfile path: lstat ${empty}/Dockerfile: no such file or directory\n`);
    const noPath = await build([join(empty, "nope")]);
    expect(noPath.stderr).to.equal(`unable to prepare context: path "${join(empty, "nope")}" not found\n`);
    const notDir = await build([join(empty, "x.txt")]);
    expect(notDir.stderr).to.equal(`unable to prepare context: context must be a directory: ${join(empty, "x.txt")}\n`);

    const badTag = await build(["-t", "Foo", empty]);
    expect(badTag.code).to.equal(125);
    expect(badTag.stderr).to.match(/^invalid argument "Foo" for "-t, --tag" flag: invalid reference format: repository name \(library\/Foo\) must be lowercase\n/);
    const badHost = await build(["--add-host", "nocolon", empty]);
    expect(badHost.code).to.equal(125);
    expect(badHost.stderr).to.match(/^invalid argument "nocolon" for "--add-host" flag: bad format for add-host: "nocolon"\n/);

    const parse = await build([contextDir({ Dockerfile: "FROM busybox\nFOO bar\n" })]);
    expect(parse.code).to.equal(1);
    expect(parse.stderr).to.equal("Error response from daemon: dockerfile parse error on line 2: unknown instruction: FOO (did you mean FROM?)\n");
  });

  it("builds from an http URL (a tar or a Dockerfile) and from a git repository cloned here", async () => {
    const served = makeTempDir("engine-cli-build-www-");
    writeFileSync(join(served, "ctx.tar"), await makeTar([{ name: "Dockerfile", data: "FROM busybox\nCOPY u.txt /\n" }, { name: "u.txt", data: "from the url\n" }]));
    writeFileSync(join(served, "Dockerfile"), "FROM busybox\nRUN echo dockerfile-from-url\n");
    const source = contextDir({ Dockerfile: "FROM busybox\nCOPY . /ctx\n", "sub/Dockerfile": "FROM busybox\nCOPY s.txt /\n", "sub/s.txt": "in sub\n" });
    const git = (args: string[], cwd: string) => execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, stdio: "ignore" });
    git(["init", "-q", "-b", "master"], source);
    git(["add", "-A"], source);
    git(["commit", "-qm", "context"], source);
    git(["tag", "v1"], source);
    git(["clone", "-q", "--bare", source, join(served, "repo.git")], served);
    git(["update-server-info"], join(served, "repo.git")); // a dumb HTTP server can serve it then

    const server: Server = createServer((req, res) => {
      try {
        res.end(readFileSync(join(served, decodeURIComponent((req.url ?? "/").split("?")[0]))));
      } catch {
        res.writeHead(404).end("not here");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const tar = ok(await build(["-t", "cli-build-url", `${base}/ctx.tar`]), "URL of a tar");
      expect(tar).to.match(/^Downloading build context from remote url: http:\/\/127\.0\.0\.1:\d+\/ctx\.tar /);
      expect(await run("cli-build-url", ["cat", "/u.txt"])).to.equal("from the url\n");
      expect(ok(await build(["--no-cache", `${base}/Dockerfile`]), "URL of a Dockerfile")).to.include("\ndockerfile-from-url\n");
      const notFound = await build([`${base}/nope`]);
      expect(notFound.code).to.equal(1);
      expect(notFound.stderr).to.equal(`unable to prepare context: unable to download remote context ${base}/nope: failed to GET ${base}/nope with status 404 Not Found: not here\n`);

      ok(await build(["-t", "cli-build-git", `${base}/repo.git`]), "git repository");
      expect(await listing("cli-build-git")).to.include.members(["/ctx/Dockerfile", "/ctx/sub/s.txt", "/ctx/.git"]);
      ok(await build(["-t", "cli-build-git-sub", `${base}/repo.git#v1:sub`]), "git ref and folder");
      expect(await run("cli-build-git-sub", ["cat", "/s.txt"])).to.equal("in sub\n");
      const badRef = await build([`${base}/repo.git#nope`]);
      expect(badRef.code).to.equal(1);
      expect(badRef.stderr).to.match(/^unable to prepare context: unable to 'git clone' to temporary context directory: error fetching: .*nope/s);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("cancels the build on Ctrl-C: the running step's container goes", async () => {
    const dir = contextDir({ Dockerfile: "FROM busybox\nRUN echo started && sleep 60\n" });
    const before = ok(await engine(host, ["ps", "-aq"]), "ps").trim();
    const config = makeTempDir("engine-cli-build-config-");
    const proc = spawn(ENGINE, ["-H", host, "build", "--no-cache", dir], { env: { ...process.env, ENGINE_CONFIG: config } });
    let out = "";
    proc.stdout.on("data", (c: Buffer) => (out += c.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
    for (const until = Date.now() + 60_000; !out.includes("started\n") && Date.now() < until; ) await new Promise((r) => setTimeout(r, 100));
    expect(out).to.include("started\n");
    proc.kill("SIGINT");
    const end = await Promise.race([exited, new Promise<undefined>((r) => setTimeout(r, 15_000))]);
    if (!end) proc.kill("SIGKILL");
    expect(end?.signal ?? end?.code).to.be.oneOf(["SIGINT", 130]);
    let after = "";
    for (const until = Date.now() + 30_000; Date.now() < until; ) {
      after = ok(await engine(host, ["ps", "-aq"]), "ps").trim();
      if (after === before) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(after).to.equal(before);
  });
});
