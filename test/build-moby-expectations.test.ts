/**
 * What moby's tests of the classic builder (integration/build, integration-cli's build tests;
 * Docker 28, API 1.51) expect of a daemon, where engined answered otherwise: the owners a
 * `COPY --from` keeps (TestBuildPreserveOwnership), a context whose names climb out with `..`
 * (TestBuildUncleanTarFilenames), the image `create` event of a build
 * (TestBuildEmitsImageCreateEvent), and the words and rules of the Dockerfile parser Docker 28
 * uses (BuildKit 0.20's: parse errors, HEALTHCHECK's flags). Against a real engined, with `POST /build` as Docker's Go
 * client sends it.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { contextTar, postBuild, type BuildAnswer, type BuildRequest } from "./helpers/build-api.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { docker } from "./helpers/docker-cli.js";
import { busyboxRootfs, makeTar, writeFixture } from "./fixtures/images.js";

describe("what moby's build tests expect of the classic builder", function () {
  this.timeout(240_000);
  let d: TestDaemon;
  const build = (req: BuildRequest) => postBuild(d.socket, { timeoutMs: 120_000, ...req, query: { rm: "1", forcerm: "1", ...req.query } });
  const built = (a: BuildAnswer) => {
    expect([a.status, a.error], a.body).to.deep.equal([200, undefined]);
    expect(a.text).to.match(/Successfully built [0-9a-f]{12}\n/);
    return a;
  };

  before(async () => {
    const rootfs = writeFixture(makeTempDir("engine-moby-build-"), "rootfs.tar", await busyboxRootfs());
    d = await startEngined();
    const imported = await docker(`unix://${d.socket}`, ["import", rootfs, "busybox"]);
    expect(imported.code, imported.stderr).to.equal(0);
  });
  after(async () => d?.stop());

  it("keeps the owners of a COPY --from's files (the folder made for it is root's), and --chown sets them all (TestBuildPreserveOwnership)", async () => {
    const paths = ["/file", "/dir", "/dir/subdir", "/dir/subdir/nestedfile", "/existingdir", "/existingdir/existingsubdir", "/existingdir/existingfile", "/existingdir/subdir", "/existingdir/subdir/nestedfile"];
    const dockerfile = [
      "FROM busybox AS source",
      "RUN touch /file && chown 100:200 /file && mkdir -p /dir/subdir && touch /dir/subdir/nestedfile && chown 100:200 /dir && chown 101:201 /dir/subdir && chown 102:202 /dir/subdir/nestedfile",
      "FROM busybox AS base",
      "RUN mkdir -p /existingdir/existingsubdir && touch /existingdir/existingfile && chown 500:600 /existingdir && chown 501:601 /existingdir/existingsubdir /existingdir/existingfile",
      "FROM base AS kept",
      "COPY --from=source /file .",
      "COPY --from=source /dir /dir",
      "COPY --from=source /dir/. /existingdir",
      `RUN stat -c 'owner %n %u:%g' ${paths.join(" ")}`,
      "FROM base AS chowned",
      "COPY --from=source --chown=300:400 /file .",
      "COPY --from=source --chown=300:400 /dir /dir",
      "COPY --from=source --chown=300:400 /dir/. /existingdir",
      `RUN stat -c 'owner %n %u:%g' ${paths.join(" ")}`,
    ].join("\n");
    const body = await contextTar({ Dockerfile: dockerfile });
    const owners = (a: BuildAnswer) => a.text.split("\n").filter((l) => l.startsWith("owner ")).map((l) => l.slice(6));
    const existing = ["/existingdir 500:600", "/existingdir/existingsubdir 501:601", "/existingdir/existingfile 501:601"];
    expect(owners(built(await build({ body, query: { target: "kept" } })))).to.deep.equal([
      "/file 100:200", "/dir 0:0", "/dir/subdir 101:201", "/dir/subdir/nestedfile 102:202", ...existing, "/existingdir/subdir 101:201", "/existingdir/subdir/nestedfile 102:202",
    ]);
    expect(owners(built(await build({ body, query: { target: "chowned" } })))).to.deep.equal([
      "/file 300:400", "/dir 300:400", "/dir/subdir 300:400", "/dir/subdir/nestedfile 300:400", ...existing, "/existingdir/subdir 300:400", "/existingdir/subdir/nestedfile 300:400",
    ]);
  });

  it("takes a context whose names climb out with `..` or start with `/` as names in it, as Docker's chrooted untar does (TestBuildUncleanTarFilenames)", async () => {
    const dockerfile = "FROM busybox\nCOPY foo /\nCOPY bar /\nRUN echo \"got $(cat /foo) $(cat /bar)\"\n";
    const context = (n: number) => makeTar([{ name: "Dockerfile", data: dockerfile }, { name: "../foo", data: `foo${n}` }, { name: "/bar", data: `bar${n}` }, { name: "sub/../../../up", data: "up" }]);
    const first = built(await build({ body: await context(0) }));
    expect(first.text).to.include("got foo0 bar0\n");
    const second = built(await build({ body: await context(1) }));
    expect(second.text).to.include("got foo1 bar1\n");
    expect(second.text).not.to.include("Using cache");
  });

  it("words a Dockerfile's bad instruction as Docker 28 does: `on line N`, the keyword as written, a suggestion", async () => {
    for (const [dockerfile, message] of [
      ["FROM busybox\nRUNN true\n", "dockerfile parse error on line 2: unknown instruction: RUNN (did you mean RUN?)"],
      ["FROM busybox\ncopi a b\n", "dockerfile parse error on line 2: unknown instruction: copi (did you mean copy?)"],
      ["FROM busybox\nFOOBAR x\n", "dockerfile parse error on line 2: unknown instruction: FOOBAR"],
      ["FROM busybox\nENV\n", "dockerfile parse error on line 2: ENV requires at least one argument"],
      ["FROM busybox\nHEALTHCHECK --retries=-1 CMD true\n", "dockerfile parse error on line 2: --retries cannot be negative (-1)"],
    ]) {
      const a = await build({ body: await contextTar({ Dockerfile: dockerfile }) });
      expect([a.status, JSON.parse(a.body).message], dockerfile).to.deep.equal([400, message]);
    }
  });

  it("refuses a RUN with a flag, BuildKit's (--mount, --network), when the step runs, as Docker 28's classic builder does", async () => {
    for (const flag of ["--mount=type=cache,target=/c", "--network=none"]) {
      const a = await build({ body: await contextTar({ Dockerfile: `FROM busybox\nRUN ${flag} true\n` }) });
      expect(a.status).to.equal(200);
      expect(a.text).to.include(`Step 2/2 : RUN ${flag} true\n`);
      expect(a.error).to.equal(`the --${flag.slice(2, flag.indexOf("="))} option requires BuildKit. Refer to https://docs.docker.com/go/buildkit/ to learn how to build images with BuildKit enabled`);
    }
    const unknown = await build({ body: await contextTar({ Dockerfile: "FROM busybox\nRUN --security=insecure true\n" }) });
    expect([unknown.status, JSON.parse(unknown.body).message]).to.deep.equal([400, "dockerfile parse error on line 2: Unknown flag: security"]);
  });

  it("takes HEALTHCHECK --start-interval, a duration of 0 and 0 retries, as Docker 28's parser does", async () => {
    built(await build({ body: await contextTar({ Dockerfile: "FROM busybox\nHEALTHCHECK --interval=0s --start-interval=2s --retries=0 CMD true\n" }), query: { t: "hc-28" } }));
    const r = await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/images/hc-28/json");
    expect(JSON.parse(r.body).Config.Healthcheck).to.deep.equal({ Test: ["CMD-SHELL", "true"], StartInterval: 2_000_000_000 });
  });

  it("notes a HEALTHCHECK that overrides one, and takes a STOPSIGNAL only as Go's signal.ParseSignal does (dispatchHealthcheck, dispatchStopSignal)", async () => {
    const notes = built(await build({ body: await contextTar({ Dockerfile: "FROM busybox\nHEALTHCHECK CMD true\nHEALTHCHECK CMD [\"/bin/check\", \"-q\"]\nHEALTHCHECK NONE\nHEALTHCHECK CMD x\nSTOPSIGNAL sigusr1\nSTOPSIGNAL 99\n" }) }));
    expect(notes.text.split("\n").filter((l) => l.startsWith("Note:"))).to.deep.equal([
      "Note: overriding previous HEALTHCHECK: [CMD-SHELL true]",
      "Note: overriding previous HEALTHCHECK: [CMD /bin/check -q]",
    ]);
    expect(notes.text).to.include("Step 3/7 : HEALTHCHECK CMD [\"/bin/check\", \"-q\"]\nNote: overriding previous HEALTHCHECK: [CMD-SHELL true]\n ---> ");
    for (const signal of ["foo", "0", "SIGNOPE"]) {
      const a = await build({ body: await contextTar({ Dockerfile: `FROM busybox\nSTOPSIGNAL ${signal}\n` }) });
      expect(a.error, signal).to.equal(`Invalid signal: ${signal}`);
    }
  });

  it("substitutes the forms of Docker 28's lexer: without `:`, patterns, replacements", async () => {
    const a = built(await build({ body: await contextTar({ Dockerfile: "FROM busybox\nARG F=release-1.2.tar.gz\nENV BASE=${F%%.tar*} EXT=${F##*.} MAJOR=${F#release-} DASH=${F//./-} DEF=${UNSET-none} EMPTY=\nENV ALT=${EMPTY+set} ALT2=${EMPTY:+set}\nRUN echo \"$BASE|$EXT|$MAJOR|$DASH|$DEF|$ALT|$ALT2\"\n" }), query: { t: "lex-28" } }));
    expect(a.text).to.include("release-1.2|gz|1.2.tar.gz|release-1-2-tar-gz|none|set|\n");
    const bad = await build({ body: await contextTar({ Dockerfile: "FROM busybox\nENV A=${B:=x}\n" }) });
    expect(bad.error).to.equal('failed to process "${B:=x}": unsupported modifier (:=) in substitution');
  });

  it("commits a configuration step through a container it removes after, and attaches to a RUN's, as Docker's classic builder: the events of a build", async () => {
    const body = await contextTar({ Dockerfile: "FROM busybox\nLABEL a=b\nENV X=1\nRUN true\nCOPY f /g\n", f: "data\n" });
    const since = Date.now() / 1000;
    const a = await build({ body, query: { nocache: "1", t: "events-of:1" } });
    built(a);
    expect(a.text).to.match(/Step 2\/5 : LABEL a=b\n ---> Running in ([0-9a-f]{12})\nRemoving intermediate container \1\n ---> [0-9a-f]{12}\n/);
    const until = Date.now() / 1000 + 0.001;
    const r = await httpRequest({ socketPath: d.socket }, "GET", `/v1.51/events?since=${since.toFixed(3)}&until=${until.toFixed(3)}&filters=${encodeURIComponent('{"type":["container","image"]}')}`);
    expect(r.status, r.body).to.equal(200);
    const events = r.body.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as { Type: string; Action: string });
    expect(events.map((e) => `${e.Type} ${e.Action}`)).to.deep.equal([
      ...["LABEL", "ENV"].flatMap(() => ["container create", "image create", "container destroy"]),
      "container create", "container attach", "container start", "container die", "image create", "container destroy",
      "image create", // COPY: no container
      "image tag",
    ]);
  });

  it("commits WORKDIR through a container as Docker's dispatchWorkdir does, and a stage FROM scratch's steps through one made from no image", async () => {
    const body = await contextTar({ Dockerfile: "FROM scratch\nENV A=1\nWORKDIR /app/sub\nWORKDIR /app\n" });
    const since = Date.now() / 1000;
    const a = built(await build({ body, query: { nocache: "1", t: "workdir-scratch:1" } }));
    for (const [n, step] of ["ENV A=1", "WORKDIR /app/sub", "WORKDIR /app"].entries()) {
      expect(a.text).to.match(new RegExp(`Step ${n + 2}/4 : ${step}\n ---> Running in ([0-9a-f]{12})\nRemoving intermediate container \\1\n ---> [0-9a-f]{12}\n`));
    }
    const until = Date.now() / 1000 + 0.001;
    const r = await httpRequest({ socketPath: d.socket }, "GET", `/v1.51/events?since=${since.toFixed(3)}&until=${until.toFixed(3)}&filters=${encodeURIComponent('{"type":["container"]}')}`);
    const events = r.body.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as { Action: string; Actor: { Attributes: Record<string, string> } });
    expect(events.map((e) => e.Action)).to.deep.equal(["create", "destroy", "create", "destroy", "create", "destroy"]);
    // the first has no image: no `image` attribute, as Docker leaves it out for an empty one
    expect(Object.keys(events[0].Actor.Attributes)).to.deep.equal(["name"]);
    expect(events[2].Actor.Attributes.image).to.match(/^sha256:[0-9a-f]{64}$/);
    // one layer, /app/sub's (the init layer's entries left out: every size 0); /app was there
    const image = JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/images/workdir-scratch:1/json")).body);
    expect(image.RootFS.Layers).to.have.length(1);
    const history = JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/images/workdir-scratch:1/history")).body) as { CreatedBy: string; Size: number }[];
    expect(history.map((h) => `${h.CreatedBy}|${h.Size}`)).to.deep.equal(["/bin/sh -c #(nop) WORKDIR /app|0", "/bin/sh -c #(nop) WORKDIR /app/sub|0", "/bin/sh -c #(nop)  ENV A=1|0"]);
    // the folders are there for a container of the image
    const host = `unix://${d.socket}`;
    const made = await docker(host, ["create", "--name", "workdir-scratch", "workdir-scratch:1", "x"]);
    expect(made.code, made.stderr).to.equal(0);
    const stat = await httpRequest({ socketPath: d.socket }, "HEAD", "/v1.51/containers/workdir-scratch/archive?path=/app/sub");
    expect(stat.status).to.equal(200);
    expect(JSON.parse(Buffer.from(String(stat.headers["x-docker-container-path-stat"]), "base64").toString()).mode).to.equal(0o20000000755);
    expect((await docker(host, ["rm", "workdir-scratch"])).code).to.equal(0);
  });

  it("tells of each image a step makes with an image `create` event, and of none for a cache hit (TestBuildEmitsImageCreateEvent)", async () => {
    const body = await contextTar({ Dockerfile: "FROM busybox\nRUN echo hello > /hello\nLABEL built=yes\n" });
    const creates = async (query: Record<string, string>) => {
      const since = Date.now() / 1000;
      const a = built(await build({ body, query }));
      const until = Date.now() / 1000 + 0.001;
      const r = await httpRequest({ socketPath: d.socket }, "GET", `/v1.51/events?since=${since.toFixed(3)}&until=${until.toFixed(3)}&filters=${encodeURIComponent('{"type":["image"]}')}`);
      expect(r.status, r.body).to.equal(200);
      const events = r.body.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as { Action: string; Actor: { ID: string; Attributes: Record<string, string> } });
      return { image: a.imageId, events: events.filter((e) => e.Action === "create") };
    };
    const made = await creates({ nocache: "1" });
    expect(made.events).to.have.length(2);
    // the last is the built image, named by its ID, with its labels
    expect(made.events[1].Actor).to.deep.equal({ ID: made.image, Attributes: { built: "yes", name: made.image } });
    expect((await creates({})).events).to.deep.equal([]);
  });
});
