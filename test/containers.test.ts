/**
 * Containers without running them yet: create, list, inspect, remove with the Docker CLI, and
 * the rules clients meet (names, 404s, an image in use).
 */
import "./helpers/root-hooks.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

describe("containers (create, list, inspect, remove)", () => {
  let d: TestDaemon;
  let host: string;
  const cli = async (...args: string[]) => {
    const r = await docker(host, args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };

  before(async () => {
    const dir = makeTempDir();
    d = await startEngined();
    host = `unix://${d.socket}`;
    await cli("import", "--change", 'CMD ["sh"]', "--change", "ENV A=1", writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox");
  });
  after(async () => {
    await d?.stop();
  });

  it("creates with the Docker CLI, lists with ps -a, and inspects with the effective configuration", async () => {
    const id = (await cli("create", "--name", "first", "-e", "B=2", "--label", "tier=web", "busybox", "echo", "hi")).trim();
    expect(id).to.match(/^[a-f0-9]{64}$/);
    const ps = await cli("ps", "-a", "--no-trunc", "--format", "{{.ID}} {{.Names}} {{.Image}} {{.Command}} {{.Status}}");
    expect(ps.trim()).to.equal(`${id} first busybox "echo hi" Created`);
    expect((await cli("ps", "-q")).trim()).to.equal("");
    const [info] = JSON.parse(await cli("inspect", "first"));
    expect(info.Id).to.equal(id);
    expect(info.Name).to.equal("/first");
    expect(info.Path).to.equal("echo");
    expect(info.Args).to.deep.equal(["hi"]);
    // Docker's order: the request's entries, then the image's it leaves
    expect(info.Config.Env).to.deep.equal(["B=2", "A=1"]);
    expect(info.Config.Labels).to.deep.equal({ tier: "web" });
    expect(info.State.Status).to.equal("created");
    expect(info.GraphDriver.Name).to.equal("overlay2");
    expect(info.LogPath).to.equal(join(d.dir, "data", "containers", id, `${id}-json.log`));
    // Its writable layer exists in the storage driver.
    expect(existsSync(join(d.dir, "data", "overlay2", id, "diff"))).to.equal(true);
    // Found by a unique prefix too.
    expect(JSON.parse(await cli("inspect", id.slice(0, 6)))[0].Id).to.equal(id);
  });

  it("lists only the containers that have every label a filter gives, as Docker's MatchKVList does (docker-compose numbers a service's containers by it)", async () => {
    await cli("create", "--name", "lab-web", "--label", "project=p", "--label", "service=web", "busybox");
    await cli("create", "--name", "lab-db", "--label", "project=p", "--label", "service=db", "busybox");
    const names = async (...filters: string[]) =>
      (await cli("ps", "-a", "--format", "{{.Names}}", ...filters.flatMap((f) => ["--filter", `label=${f}`]))).split("\n").filter(Boolean).sort();
    expect(await names("project=p", "service=web")).to.deep.equal(["lab-web"]);
    expect(await names("project=p", "service")).to.deep.equal(["lab-db", "lab-web"]);
    expect(await names("project=p", "service=cache")).to.deep.equal([]);
    await cli("rm", "lab-web", "lab-db");
  });

  it("keeps names unique, generates one when none is given, and refuses bad ones", async () => {
    const taken = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/containers/create?name=first", { Image: "busybox" });
    expect(taken.status).to.equal(409);
    expect(JSON.parse(taken.body).message).to.match(/^Conflict\. The container name "\/first" is already in use by container "[a-f0-9]{64}"\. You have to remove \(or rename\) that container to be able to reuse that name\.$/);
    const bad = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/containers/create?name=no%20spaces", { Image: "busybox" });
    expect(bad.status).to.equal(400);
    const unnamed = JSON.parse((await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/containers/create", { Image: "busybox" })).body);
    const [info] = JSON.parse(await cli("inspect", unnamed.Id));
    expect(info.Name).to.match(/^\/[a-z]+_[a-z]+\d*$/);
    expect(info.Path).to.equal("sh");
    await cli("rm", unnamed.Id);
  });

  it("answers the errors clients read: no image, no container, bad body", async () => {
    const noImage = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/containers/create", { Image: "nosuch" });
    expect(noImage.status).to.equal(404);
    expect(JSON.parse(noImage.body).message).to.equal("No such image: nosuch:latest");
    const missing = await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/containers/nosuch/json");
    expect(missing.status).to.equal(404);
    expect(JSON.parse(missing.body).message).to.equal("No such container: nosuch");
    const badBody = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/containers/create", { Image: 7 });
    expect(badBody.status).to.equal(400);
    expect(JSON.parse(badBody.body).message).to.include("field Image: expected string");
    // none of the container's own settings: Docker's words, before anything else
    for (const body of [undefined, {}, { HostConfig: { Memory: 1 << 20 } }]) {
      const empty = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/containers/create", body);
      expect([empty.status, JSON.parse(empty.body).message], JSON.stringify(body)).to.deep.equal([400, "Config cannot be empty in order to create a container"]);
    }
    // a list's limit read as Go's strconv.Atoi reads it
    const limit = await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/containers/json?limit=abc");
    expect([limit.status, JSON.parse(limit.body).message]).to.deep.equal([400, 'strconv.Atoi: parsing "abc": invalid syntax']);
  });

  it("refuses to remove an image a container uses, then removes the container and its layer", async () => {
    const rmi = await docker(host, ["rmi", "busybox"]);
    expect(rmi.code).to.not.equal(0);
    expect(rmi.stderr).to.match(/conflict: unable to remove repository reference "busybox" \(must force\) - container [a-f0-9]{12} is using its referenced image [a-f0-9]{12}/);
    const info = JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", "/info")).body);
    expect(info.Containers).to.equal(1);
    expect(info.ContainersStopped).to.equal(1);
    const [c] = JSON.parse(await cli("inspect", "first"));
    expect((await cli("rm", "first")).trim()).to.equal("first");
    expect(existsSync(join(d.dir, "data", "overlay2", c.Id))).to.equal(false);
    expect((await cli("ps", "-aq")).trim()).to.equal("");
    expect(await cli("rmi", "busybox")).to.include("Untagged: busybox:latest");
  });
});
