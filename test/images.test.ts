/**
 * Images with the Docker CLI against engined: import a busybox made from the host's
 * busybox-static, list, inspect, tag, history, save, remove, load again with the same ID; load
 * of a multi-layer `docker save` archive and of an OCI layout; the errors clients read.
 */
import "./helpers/root-hooks.js";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import Docker from "dockerode";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, dockerSaveTar, imageOf, makeTar, ociLayoutTar, writeFixture } from "./fixtures/images.js";

describe("images", () => {
  let d: TestDaemon;
  let host: string;
  let dir: string;
  let rootfs: string;

  before(async () => {
    dir = makeTempDir();
    rootfs = writeFixture(dir, "busybox-rootfs.tar", await busyboxRootfs());
    d = await startEngined();
    host = `unix://${d.socket}`;
  });
  after(async () => {
    await d?.stop();
  });

  const cli = async (...args: string[]) => {
    const r = await docker(host, args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };

  it("imports a busybox root filesystem with changes, and lists it", async () => {
    const out = await cli("import", "--change", 'CMD ["sh"]', "--change", "ENV GREETING=hi", "--message", "from busybox-static", rootfs, "busybox:latest");
    expect(out.trim()).to.match(/^sha256:[a-f0-9]{64}$/);
    const list = await cli("images", "--format", "{{.Repository}}:{{.Tag}} {{.ID}}");
    expect(list).to.match(/^busybox:latest [a-f0-9]{12}$/m);
    const [info] = JSON.parse(await cli("image", "inspect", "busybox"));
    expect(info.Id).to.equal(out.trim());
    expect(info.RepoTags).to.deep.equal(["busybox:latest"]);
    expect(info.Os).to.equal("linux");
    expect(info.Config.Cmd).to.deep.equal(["sh"]);
    expect(info.Config.Env).to.deep.equal(["GREETING=hi"]);
    expect(info.Comment).to.equal("from busybox-static");
    expect(info.RootFS.Layers).to.have.length(1);
    expect(info.GraphDriver.Name).to.equal("overlay2");
    expect(info.Size).to.be.greaterThan(readFileSync("/usr/bin/busybox").length - 1);
  });

  it("tags (answering exactly 201), shows history, and counts images in /info", async () => {
    await cli("tag", "busybox", "mybox:1");
    const raw = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/images/busybox/tag?repo=localhost:5000/team/box&tag=2");
    expect(raw.status).to.equal(201);
    expect(raw.body).to.equal("");
    const tags = (await cli("images", "--format", "{{.Repository}}:{{.Tag}}")).split("\n").filter(Boolean).sort();
    expect(tags).to.deep.equal(["busybox:latest", "localhost:5000/team/box:2", "mybox:1"]);
    const history = await cli("history", "--no-trunc", "--format", "{{.ID}} {{.Comment}}", "busybox");
    expect(history.trim()).to.match(/^sha256:[a-f0-9]{64} from busybox-static$/);
    const info = JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", "/info")).body);
    expect(info.Images).to.equal(1);
    expect(info.Driver).to.equal("overlay2");
    expect(info.DriverStatus.map((s: string[]) => s[0])).to.include("Backing Filesystem");
  });

  it("saves, removes and loads again with the same ID", async () => {
    const [before] = JSON.parse(await cli("image", "inspect", "busybox"));
    const saved = join(dir, "saved.tar");
    await cli("save", "-o", saved, "busybox:latest");
    // the legacy `repositories` file beside manifest.json, as Docker 25+ writes it: name -> tag -> top layer
    const repositories = JSON.parse(execFileSync("tar", ["-xOf", saved, "repositories"], { encoding: "utf8" }));
    expect(repositories).to.deep.equal({ busybox: { latest: before.RootFS.Layers.at(-1).slice(7) } });
    const removed = await cli("rmi", "busybox:latest", "mybox:1", "localhost:5000/team/box:2");
    expect(removed).to.include("Untagged: busybox:latest");
    expect(removed).to.include(`Deleted: ${before.Id}`);
    expect((await cli("images", "-q")).trim()).to.equal("");
    const loaded = await cli("load", "-i", saved);
    // The CLI shows the message, not the JSON it came in.
    expect(loaded).to.equal("Loaded image: busybox:latest\n");
    const [after] = JSON.parse(await cli("image", "inspect", "busybox"));
    expect(after.Id).to.equal(before.Id);
    expect(after.RootFS.Layers).to.deep.equal(before.RootFS.Layers);
  });

  it("loads a multi-layer archive with whiteouts and an OCI layout with gzip layers", async () => {
    const base = await makeTar([
      { name: "etc/", type: "directory" },
      { name: "etc/a", data: "a" },
      { name: "data/", type: "directory" },
      { name: "data/old", data: "old" },
      { name: "data/hard", data: "hard" },
      { name: "data/hardlink", type: "link", linkname: "data/hard" },
    ]);
    const top = await makeTar([
      { name: "etc/.wh.a", data: "" },
      { name: "data/", type: "directory" },
      { name: "data/.wh..wh..opq", data: "" },
      { name: "data/new", data: "new" },
    ]);
    const image = imageOf([base, top]);
    const archive = writeFixture(dir, "two-layers.tar", await dockerSaveTar([{ image, tags: ["two:layers"] }]));
    expect(await cli("load", "-i", archive)).to.include("Loaded image: two:layers");
    const [info] = JSON.parse(await cli("image", "inspect", "two:layers"));
    expect(info.Id).to.equal(image.id);
    expect(info.RootFS.Layers).to.have.length(2);

    const oci = writeFixture(dir, "oci.tar", await ociLayoutTar(imageOf([base], { author: "oci" }), "docker.io/library/oci:1"));
    expect(await cli("load", "-i", oci)).to.include("Loaded image: oci:1");
    const [ociInfo] = JSON.parse(await cli("image", "inspect", "oci:1"));
    expect(ociInfo.Author).to.equal("oci");
    // The base layer is shared, not stored twice.
    expect(ociInfo.RootFS.Layers[0]).to.equal(info.RootFS.Layers[0]);
  });

  it("answers the errors clients read", async () => {
    const missing = await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/images/nosuch/json");
    expect(missing.status).to.equal(404);
    expect(JSON.parse(missing.body)).to.deep.equal({ message: "No such image: nosuch:latest" });
    const r = await docker(host, ["image", "inspect", "nosuch"]);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include("No such image: nosuch");
    const bad = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/images/two:layers/tag?repo=Bad_Name");
    expect(bad.status).to.equal(400);
    expect(JSON.parse(bad.body).message).to.match(/^invalid reference format/);
    // a load's failure is the last line of a 200 stream, as Docker's daemon sends it
    const broken = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/images/load", undefined);
    expect(broken.status).to.equal(200);
    expect(JSON.parse(broken.body).error).to.match(/^invalid image archive: /);
  });

  it("shows an image's history and inspect for the platform asked, and refuses another as Docker's image lookup does", async () => {
    // the Docker CLI sends the platform as an OCI platform in JSON (API 1.48 for history, 1.49 for inspect)
    expect(await cli("image", "history", "--platform", "linux/amd64", "-q", "busybox")).to.match(/^[a-f0-9]{12}\n/);
    expect(await cli("image", "inspect", "--platform", "linux/amd64", "-f", "{{.Os}}", "busybox")).to.equal("linux\n");
    const wrong = "image with reference busybox was found but does not match the specified platform: wanted linux/arm64, actual: linux/amd64";
    for (const args of [["image", "history", "--platform", "linux/arm64", "busybox"], ["image", "inspect", "--platform", "linux/arm64", "busybox"]]) {
      const r = await docker(host, args);
      expect(r.code, args.join(" ")).to.equal(1);
      expect(r.stderr).to.include(wrong);
    }
    const q = (p: string) => `/v1.51/images/busybox/history?platform=${encodeURIComponent(p)}`;
    const half = await httpRequest({ socketPath: d.socket }, "GET", q('{"os":"linux"}'));
    expect([half.status, JSON.parse(half.body).message]).to.deep.equal([400, "both OS and Architecture must be provided"]);
    const notJson = await httpRequest({ socketPath: d.socket }, "GET", q("linux/amd64"));
    expect(notJson.status).to.equal(400);
    expect(JSON.parse(notJson.body).message).to.match(/^failed to parse platform: /);
    // before API 1.48 the parameter is not read
    expect((await httpRequest({ socketPath: d.socket }, "GET", `/v1.47/images/busybox/history?platform=x`)).status).to.equal(200);
  });

  it("removes an image for the platform asked (API 1.50), and refuses another as Docker 28's graphdriver store does", async () => {
    await cli("tag", "busybox", "plat:1");
    const wrong = await docker(host, ["rmi", "--platform", "linux/arm64", "plat:1"]);
    expect(wrong.code).to.equal(1);
    expect(wrong.stderr).to.include("image with reference plat:1 was found but does not match the specified platform: wanted linux/arm64, actual: linux/amd64");
    const del = (q: string, v = "1.51") => httpRequest({ socketPath: d.socket }, "DELETE", `/v${v}/images/plat:1?${q}`);
    const p = (s: string) => `platforms=${encodeURIComponent(s)}`;
    const two = await del(`${p('{"os":"linux","architecture":"amd64"}')}&${p('{"os":"linux","architecture":"arm64"}')}`);
    expect([two.status, JSON.parse(two.body).message]).to.deep.equal([400, "multiple platforms are not supported"]);
    const optional = await del(p('{"variant":"v8"}'));
    expect([optional.status, JSON.parse(optional.body).message]).to.deep.equal([400, "optional platform fields provided, but OS and Architecture are missing"]);
    const notJson = await del(p("linux/amd64"));
    expect(notJson.status).to.equal(400);
    expect(JSON.parse(notJson.body).message).to.match(/^failed to parse platform: /);
    // a malformed platform is refused before the image is looked up
    expect((await httpRequest({ socketPath: d.socket }, "DELETE", `/v1.51/images/nosuch:1?${p("x")}`)).status).to.equal(400);
    expect(await cli("rmi", "--platform", "linux/amd64", "plat:1")).to.equal("Untagged: plat:1\n");
    // before API 1.50 the parameter is not read
    await cli("tag", "busybox", "plat:1");
    const old = await del(p('{"os":"linux","architecture":"arm64"}'), "1.49");
    expect([old.status, JSON.parse(old.body)]).to.deep.equal([200, [{ Untagged: "plat:1" }]]);
  });

  it("works through dockerode too", async () => {
    const client = new Docker({ socketPath: d.socket });
    const list = await client.listImages();
    expect(list.map((i) => i.RepoTags ?? []).flat()).to.include.members(["busybox:latest", "two:layers", "oci:1"]);
    const image = await client.getImage("two:layers").inspect();
    expect(image.RootFS.Layers).to.have.length(2);
    const filtered = await client.listImages({ filters: JSON.stringify({ reference: ["two*"] }) });
    expect(filtered.map((i) => i.RepoTags).flat()).to.deep.equal(["two:layers"]);
  });
});
