/**
 * `POST /commit` against a real engined with the Docker CLI: a committed container's files (and
 * not the ones it deleted) are in the new image, `-c` changes and `-m`/`-a` apply, the image's
 * history and inspect show its parent and layers, a running container is committed with and
 * without pausing, a container that changed nothing adds no layer, and bad requests are refused.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

describe("commit", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let host: string;
  let baseId: string;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const inspectImage = async (ref: string, version = "1.51") => {
    const r = await httpRequest({ socketPath: d.socket }, "GET", `/v${version}/images/${encodeURIComponent(ref)}/json`);
    expect(r.status, r.body).to.equal(200);
    return JSON.parse(r.body) as Record<string, any>;
  };

  before(async function () {
    const work = makeTempDir("engine-commit-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    baseId = ok(await docker(host, ["import", "-c", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import").trim();
  });

  after(async () => d?.stop());

  it("docker commit makes an image of the container's changes, with -c, -m and -a, on its image", async () => {
    ok(await docker(host, ["run", "--name", "commit-src", "--network", "none", "busybox", "sh", "-c", "echo committed > /new && rm /etc/group"]), "docker run");
    const id = ok(
      await docker(host, ["commit", "-c", 'CMD ["cat","/new"]', "-c", "ENV A=b", "-m", "my message", "-a", "Ann <ann@example.com>", "commit-src", "committed:v1"]),
      "docker commit",
    ).trim();
    expect(id).to.match(/^sha256:[0-9a-f]{64}$/);
    try {
      // the new image's CMD, and its files: the one written, not the one deleted
      expect(ok(await docker(host, ["run", "--rm", "--network", "none", "committed:v1"]), "run committed")).to.equal("committed\n");
      const check = "test ! -e /etc/group && test -e /etc/passwd && echo $A";
      expect(ok(await docker(host, ["run", "--rm", "--network", "none", "committed:v1", "sh", "-c", check]), "run check")).to.equal("b\n");
      // the base image is untouched
      expect(ok(await docker(host, ["run", "--rm", "--network", "none", "busybox", "sh", "-c", "test -e /etc/group && test ! -e /new && echo base"]), "run base")).to.equal("base\n");

      const history = ok(await docker(host, ["history", "--no-trunc", "--format", "{{.ID}}|{{.CreatedBy}}|{{.Comment}}", "committed:v1"]), "history").trim().split("\n");
      expect(history).to.have.length(2);
      expect(history[0]).to.equal(`${id}|sh -c echo committed > /new && rm /etc/group|my message`);
      expect(history[1].split("|")[0]).to.equal(baseId);

      const image = JSON.parse(ok(await docker(host, ["image", "inspect", "committed:v1"]), "inspect"))[0];
      const base = await inspectImage("busybox");
      expect(image.Id).to.equal(id);
      expect(image.Parent).to.equal(baseId);
      expect(image.RepoTags).to.deep.equal(["committed:v1"]);
      expect(image.RootFS.Layers).to.have.length(2);
      expect(image.RootFS.Layers[0]).to.equal(base.RootFS.Layers[0]);
      expect(image.Config.Cmd).to.deep.equal(["cat", "/new"]);
      expect(image.Config.Env).to.include("A=b");
      expect(image.Author).to.equal("Ann <ann@example.com>");
      expect(image.Comment).to.equal("my message");
      const src = JSON.parse(ok(await docker(host, ["inspect", "commit-src"]), "inspect container"))[0];
      // the container and its configuration below API 1.45 only, as Docker's daemon shows them
      // (docker-compose 1.x keeps them at every version: host/images/compose-legacy.ts); an
      // image that was not committed has no container (Docker 28's field is omitempty)
      expect(image).to.not.have.any.keys("Container", "ContainerConfig");
      const old = await inspectImage("committed:v1", "1.44");
      expect(old.Container).to.equal(src.Id);
      expect(old.ContainerConfig.Cmd).to.deep.equal(["sh", "-c", "echo committed > /new && rm /etc/group"]);
      expect(await inspectImage("busybox", "1.44")).to.not.have.any.keys("Container");
      // the image config shows the container's other fields (Hostname, Tty, Image...) up to API
      // 1.49 only; from 1.50 it is the OCI image config's fields and Docker's three
      expect(old.Config).to.include({ Hostname: src.Config.Hostname, Tty: false });
      expect(Object.keys(image.Config).filter((k) => ["Hostname", "Domainname", "Tty", "Image", "AttachStdout", "OpenStdin"].includes(k))).to.deep.equal([]);

      // the parent stays while the committed image does
      const rm = await httpRequest({ socketPath: d.socket }, "DELETE", `/v1.51/images/${baseId}`);
      expect(rm.status).to.equal(409);
      expect(JSON.parse(rm.body).message).to.match(/image has dependent child images/);
    } finally {
      await docker(host, ["rm", "-f", "commit-src"]);
      ok(await docker(host, ["rmi", "committed:v1"]), "rmi committed");
    }
  });

  it("commits a running container paused (it runs on afterwards), or not paused with --pause=false", async () => {
    const c = ok(await docker(host, ["run", "-d", "--name", "commit-live", "--network", "none", "busybox", "sh", "-c", "echo live > /live && echo ready && exec sleep 300"]), "run -d").trim();
    try {
      for (let i = 0; i < 100 && !(await docker(host, ["logs", c])).stdout.includes("ready"); i++) await new Promise((r) => setTimeout(r, 100));
      const actions = async (since: string) => {
        const until = (Date.now() / 1000).toFixed(9);
        const r = ok(await docker(host, ["events", "--since", since, "--until", until, "--filter", `container=${c}`, "--format", "{{.Action}}"]), "events");
        return r.trim().split("\n");
      };
      let since = (Date.now() / 1000).toFixed(9);
      ok(await docker(host, ["commit", "--pause=false", "commit-live", "live:nopause"]), "commit --pause=false");
      expect(await actions(since)).to.deep.equal(["commit"]);
      since = (Date.now() / 1000).toFixed(9);
      ok(await docker(host, ["commit", "commit-live", "live:paused"]), "commit");
      expect(await actions(since)).to.deep.equal(["pause", "unpause", "commit"]);
      for (const tag of ["live:nopause", "live:paused"]) {
        expect(ok(await docker(host, ["run", "--rm", "--network", "none", tag, "cat", "/live"]), `run ${tag}`)).to.equal("live\n");
      }
      const state = JSON.parse(ok(await docker(host, ["inspect", c]), "inspect"))[0].State;
      expect(state).to.include({ Running: true, Paused: false, Status: "running" });
    } finally {
      await docker(host, ["rm", "-f", c]);
      await docker(host, ["rmi", "live:nopause", "live:paused"]);
    }
  });

  it("a container that changed nothing gives an image without a new layer", async () => {
    ok(await docker(host, ["create", "--name", "commit-untouched", "--network", "none", "busybox", "true"]), "create");
    try {
      const id = ok(await docker(host, ["commit", "commit-untouched"]), "commit").trim();
      const image = await inspectImage(id);
      expect(image.RootFS.Layers).to.deep.equal((await inspectImage("busybox")).RootFS.Layers);
      expect(image.RepoTags).to.deep.equal([]);
      const history = ok(await docker(host, ["history", "--format", "{{.Size}}", id]), "history").trim().split("\n");
      expect(history).to.have.length(2);
      expect(history[0]).to.equal("0B");
      ok(await docker(host, ["rmi", id]), "rmi");
    } finally {
      await docker(host, ["rm", "-f", "commit-untouched"]);
    }
  });

  it("refuses an unknown container, a bad or digest reference and a bad change", async () => {
    const none = await docker(host, ["commit", "no-such-container", "x:1"]);
    expect(none.code).to.equal(1);
    expect(none.stderr).to.include("No such container: no-such-container");
    const c = ok(await docker(host, ["create", "--name", "commit-bad", "--network", "none", "busybox", "true"]), "create").trim();
    try {
      const post = (query: string) => httpRequest({ socketPath: d.socket }, "POST", `/v1.51/commit?container=${c.slice(0, 12)}&${query}`);
      const bad = await post("repo=Bad_Repo");
      expect(bad.status).to.equal(400);
      expect(JSON.parse(bad.body).message).to.match(/^invalid reference format/);
      const badTag = await post("repo=ok&tag=no%20spaces");
      expect(badTag.status).to.equal(400);
      const digest = await post(`repo=ok@sha256:${"a".repeat(64)}`);
      expect(digest.status).to.equal(400);
      // Docker 28 reads repo and tag as for an import (httputils.RepoTagReference), and says so
      expect(JSON.parse(digest.body).message).to.equal("cannot import digest reference");
      const change = await post(`changes=${encodeURIComponent("RUN echo no")}`);
      expect(change.status).to.equal(400);
      // Docker's words, the instruction as written
      expect(JSON.parse(change.body).message).to.equal("RUN is not a valid change command");
      const unknown = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/commit?container=nope");
      expect(unknown.status).to.equal(404);
      // nothing was made by the refused requests
      expect(ok(await docker(host, ["images", "-q"]), "images").trim().split("\n")).to.have.length(1);
    } finally {
      await docker(host, ["rm", "-f", c]);
    }
  });

  it("takes a configuration in the body, filled from the container's, and the changes over it", async () => {
    const c = ok(await docker(host, ["create", "--name", "commit-body", "--network", "none", "-e", "FROM_CONTAINER=1", "-w", "/tmp", "busybox", "true"]), "create").trim();
    try {
      const r = await httpRequest({ socketPath: d.socket }, "POST", `/v1.51/commit?container=commit-body&repo=bodied&changes=${encodeURIComponent("LABEL x=y")}`, {
        Cmd: ["echo", "from body"],
        Env: ["FROM_BODY=1"],
      });
      expect(r.status, r.body).to.equal(201);
      const { Id } = JSON.parse(r.body);
      const image = await inspectImage("bodied:latest");
      expect(image.Id).to.equal(Id);
      expect(image.Config.Cmd).to.deep.equal(["echo", "from body"]);
      expect(image.Config.Env).to.include.members(["FROM_BODY=1", "FROM_CONTAINER=1"]);
      expect(image.Config.WorkingDir).to.equal("/tmp");
      expect(image.Config.Labels).to.deep.equal({ x: "y" });
      ok(await docker(host, ["rmi", "bodied"]), "rmi");
    } finally {
      await docker(host, ["rm", "-f", c]);
    }
  });
});
