/**
 * `POST /build` with the Docker CLI's classic builder (20.10 with DOCKER_BUILDKIT=0): every
 * instruction, the image's config and history checked against what Docker's own daemon builds
 * from the same Dockerfile (started here in a network namespace of its own), the stream's
 * lines, the cache, multi-stage builds and `--target`, and a failed RUN.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { contextDir } from "./helpers/build-api.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { have, startDockerd, type Dockerd } from "./helpers/dockerd.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const CLI20 = "/usr/bin/docker";

/** Everything the instructions can set, and a RUN that writes. */
const FULL = `# a comment
ARG BASE=busybox
FROM $BASE AS first
LABEL a=b "c d"="e f"
ENV X=1 \\
    Y="two words"
ENV OLD legacy value
WORKDIR /app
COPY a.txt .
COPY dir /d/
ADD a.txt /added
RUN echo $X > x.txt && ls
EXPOSE 80/tcp 53/udp
USER 1:1
VOLUME /data
STOPSIGNAL SIGINT
HEALTHCHECK --interval=5s CMD true
ARG Q=default
RUN echo $Q
SHELL ["/bin/sh", "-xc"]
RUN echo shelled
ONBUILD RUN echo child
ENTRYPOINT ["/bin/echo"]
CMD ["hi"]
`;

/** History entries with the checksums (which differ between daemons) made alike. */
const history = (lines: string) => lines.trim().split("\n").map((l) => l.replace(/(file|dir|multi):[0-9a-f]{64}/g, "$1:<sum>"));

describe("build (classic builder, Docker CLI)", function () {
  this.timeout(300_000);
  let d: TestDaemon;
  let host: string;
  let ref: Dockerd | undefined;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}${r.stdout}`).to.equal(0);
    return r.stdout;
  };
  const build = (h: string, args: string[], env: NodeJS.ProcessEnv = {}) => docker(h, ["build", ...args], { DOCKER_BUILDKIT: "0", ...env }, { timeoutMs: 120_000 });

  before(async function () {
    const work = makeTempDir("engine-build-");
    const rootfs = writeFixture(work, "rootfs.tar", await busyboxRootfs());
    d = await startEngined();
    host = `unix://${d.socket}`;
    ok(await docker(host, ["import", "-c", 'CMD ["sh"]', rootfs, "busybox"]), "import");
    if (have("dockerd")) {
      ref = await startDockerd();
      ok(await docker(ref.host, ["import", "-c", 'CMD ["sh"]', rootfs, "busybox"]), "import into dockerd");
    }
  });

  after(async () => {
    await d?.stop();
    await ref?.stop();
  });

  it("builds every instruction into the config and history Docker's daemon makes, and the image runs", async function () {
    const dir = contextDir({ Dockerfile: FULL, "a.txt": "hello\n", "dir/x": "x\n", "dir/sub/y": "y\n" });
    const out = ok(await build(host, ["-t", "full", "--build-arg", "Q=given", dir]), "build");
    expect(out).to.match(/Step 1\/22 : ARG BASE=busybox\n/);
    expect(out).to.include("Step 4/22 : ENV X=1     Y=\"two words\"\n");
    expect(out).to.match(/Step 10\/22 : RUN echo \$X > x.txt && ls\n ---> Running in [0-9a-f]{12}\na.txt\nx.txt\nRemoving intermediate container [0-9a-f]{12}\n ---> [0-9a-f]{12}\n/);
    expect(out).to.include("given\n");
    expect(out).to.match(/Successfully built [0-9a-f]{12}\nSuccessfully tagged full:latest\n$/);
    expect(ok(await docker(host, ["run", "--rm", "--network", "none", "-u", "0", "full"]), "run")).to.equal("hi\n");
    expect(ok(await docker(host, ["run", "--rm", "--network", "none", "-u", "0", "--entrypoint", "cat", "full", "/app/x.txt", "/app/a.txt", "/added", "/d/x", "/d/sub/y"]), "files")).to.equal("1\nhello\nhello\nx\ny\n");

    const mine = JSON.parse(ok(await docker(host, ["image", "inspect", "full"]), "inspect"))[0];
    const minesHistory = history(ok(await docker(host, ["history", "--no-trunc", "--format", "{{.CreatedBy}}|{{.Size}}", "full"]), "history"));
    if (!ref) this.skip();
    ok(await build(ref.host, ["-t", "full", "--build-arg", "Q=given", dir]), "dockerd build");
    const theirs = JSON.parse(ok(await docker(ref.host, ["image", "inspect", "full"]), "dockerd inspect"))[0];
    const theirHistory = history(ok(await docker(ref.host, ["history", "--no-trunc", "--format", "{{.CreatedBy}}|{{.Size}}", "full"]), "dockerd history"));
    // dockerd 20.10's HEALTHCHECK entry has no StartInterval (Docker 25 added it)
    expect(minesHistory).to.deep.equal(theirHistory.map((h) => h.replace(`"0s" "0s" '\\x00'`, `"0s" "0s" "0s" '\\x00'`)));
    for (const key of ["User", "ExposedPorts", "Env", "Cmd", "Healthcheck", "Volumes", "WorkingDir", "Entrypoint", "OnBuild", "Labels", "StopSignal", "Shell"]) {
      expect(mine.Config[key], key).to.deep.equal(theirs.Config[key]);
    }
    expect(mine.RootFS.Layers).to.have.length(theirs.RootFS.Layers.length);
  });

  it("uses the cache for an unchanged rebuild, and builds again from the first COPY whose files changed", async () => {
    const dir = contextDir({ Dockerfile: "FROM busybox\nENV A=1\nCOPY f /f\nRUN cat /f\n", f: "one\n" });
    const first = ok(await build(host, ["-t", "cached", dir]), "first build");
    expect(first).not.to.include("Using cache");
    const again = ok(await build(host, ["-t", "cached", dir]), "rebuild");
    expect(again.match(/ ---> Using cache\n/g)).to.have.length(3);
    expect(again.match(/Successfully built (\w+)/)![1]).to.equal(first.match(/Successfully built (\w+)/)![1]);
    writeFileSync(join(dir, "f"), "two\n");
    const changed = ok(await build(host, ["-t", "cached", dir]), "changed build");
    expect(changed.match(/ ---> Using cache\n/g)).to.have.length(1); // the ENV only
    expect(changed).to.include("two\n");
    const nocache = ok(await build(host, ["--no-cache", "-t", "cached", dir]), "--no-cache");
    expect(nocache).not.to.include("Using cache");
  });

  it("builds multi-stage Dockerfiles, COPY --from a stage by name and by index, and stops at --target", async () => {
    const dir = contextDir({
      Dockerfile: "FROM busybox AS builder\nRUN echo built > /out\nFROM scratch\nCOPY --from=builder /out /from-name\nCOPY --from=0 /out /from-index\nFROM busybox AS last\nCOPY --from=1 / /copied/\nCMD cat /copied/from-name /copied/from-index\n",
    });
    const out = ok(await build(host, ["-t", "multi", dir]), "build");
    expect(out).to.include("Step 3/8 : FROM scratch\n ---> \n");
    expect(ok(await docker(host, ["run", "--rm", "--network", "none", "multi"]), "run")).to.equal("built\nbuilt\n");
    const target = ok(await build(host, ["-t", "multi-builder", "--target", "builder", dir]), "--target");
    expect(target).to.include("Step 2/2 : RUN echo built > /out");
    const missing = await build(host, ["--target", "nope", dir]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include("failed to reach build target nope in Dockerfile");
  });

  it("answers a failed RUN with Docker's message and exit code, and leaves no layer or image of it", async () => {
    const dir = contextDir({ Dockerfile: "FROM busybox\nRUN echo before; exit 3\n" });
    const images = ok(await docker(host, ["images", "-aq"]), "images");
    const r = await build(host, ["--force-rm", dir]);
    expect(r.code).to.equal(3);
    expect(r.stdout).to.include("before\n");
    expect(r.stderr).to.include("The command '/bin/sh -c echo before; exit 3' returned a non-zero code: 3");
    expect(ok(await docker(host, ["images", "-aq"]), "images after")).to.equal(images);
    expect(ok(await docker(host, ["ps", "-aq"]), "ps")).to.equal("");
  });

  it("builds with the newest Docker CLI on the machine too", async function () {
    const dir = contextDir({ Dockerfile: "FROM busybox\nRUN echo new-cli > /n\nCMD cat /n\n" });
    const r = await docker(host, ["build", "-t", "newcli", dir], { DOCKER_BUILDKIT: "0" }, { timeoutMs: 120_000 });
    expect(r.code, r.stderr).to.equal(0);
    expect(ok(await docker(host, ["run", "--rm", "--network", "none", "newcli"]), "run")).to.equal("new-cli\n");
  });

  it("builds a context folder with the Dockerfile given on stdin (`-f -`), whose tar the CLI ends without its padding", async function () {
    const dir = contextDir({ "data.txt": "from the context\n" });
    const dockerfile = "FROM busybox\nCOPY data.txt /d\nCMD cat /d\n";
    const r = await docker(host, ["build", "-t", "stdin-df", "-f", "-", dir], { DOCKER_BUILDKIT: "0" }, { timeoutMs: 120_000, input: dockerfile });
    expect(r.code, r.stderr).to.equal(0);
    expect(ok(await docker(host, ["run", "--rm", "--network", "none", "stdin-df"]), "run")).to.equal("from the context\n");
  });

  it("runs with the 20.10 CLI explicitly", async function () {
    const dir = contextDir({ Dockerfile: "FROM busybox\nCMD echo old-cli\n" });
    const { runCommand } = await import("./helpers/engined.js");
    const r = await runCommand(CLI20, ["-H", host, "build", "-q", "-t", "oldcli", dir], { env: { DOCKER_BUILDKIT: "0", DOCKER_CONFIG: makeTempDir("engine-cfg-") }, timeoutMs: 120_000 });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout.trim()).to.match(/^sha256:[0-9a-f]{64}$/);
  });
});
