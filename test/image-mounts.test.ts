/**
 * `image` mounts (API 1.48): an image's root filesystem, or a folder or file of it, read-only in a
 * container, as moby's TestRunMountImage and TestRunMountImageMultipleTimes expect: the mounted
 * content, subpaths (links followed inside the image, refused where they lead out, a missing one
 * and a backtracking one refused in Docker's words), the image counted as used by the container
 * (`rmi` refused; `rmi -f` of a stopped container's keeps its layers for the next start), the
 * same image at two places, inspect's `Mounts`, and nothing left mounted once the container stops.
 * Against a real engined with the Docker CLI and the raw API.
 */
import "./helpers/root-hooks.js";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { dockerChecks } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";

describe("image mounts", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let host: string;
  let imageTar: string;
  const { ok: cli, run } = dockerChecks(() => host);
  const api = (method: string, path: string, body?: unknown) => httpRequest({ socketPath: d.socket }, method, path, body);
  const message = (r: { body: string }) => JSON.parse(r.body).message as string;
  /** This daemon's image mounts in the host's mount table. */
  const imageMountsMounted = () => readFileSync("/proc/self/mountinfo", "utf8").split("\n").filter((l) => l.includes(join(d.dir, "exec", "image-mounts")));

  before(async () => {
    const dir = makeTempDir("engine-image-mounts-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    await cli("import", "--change", 'CMD ["sh"]', writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox");
    // moby's test image: foo, subdir/hello, and two links, one inside and one leading out
    const tree = join(dir, "tree");
    mkdirSync(join(tree, "subdir"), { recursive: true });
    mkdirSync(join(tree, "hack"));
    writeFileSync(join(tree, "foo"), "bar");
    writeFileSync(join(tree, "subdir", "hello"), "world");
    symlinkSync("../subdir", join(tree, "hack", "good"));
    symlinkSync("../../../../../docker", join(tree, "hack", "bad"));
    imageTar = join(dir, "image.tar");
    execFileSync("tar", ["-C", tree, "-cf", imageTar, "."]);
  });
  beforeEach(async () => {
    await cli("import", imageTar, "test-image");
  });
  afterEach(async () => {
    const ids = (await run("ps", "-aq")).stdout.split("\n").filter(Boolean);
    if (ids.length) await run("rm", "-f", ...ids);
    await run("rmi", "-f", "test-image");
  });
  after(async () => d?.stop());

  /** Creates and starts a container mounting `source` at /image; its output, or the refusal. */
  const runWith = async (mount: object, cmd: string[]) => {
    const create = await api("POST", "/v1.51/containers/create", { Image: "busybox", Cmd: cmd, HostConfig: { Mounts: [{ Type: "image", Target: "/image", ...mount }] } });
    if (create.status !== 201) return { refused: `${create.status} ${message(create)}` };
    const id = JSON.parse(create.body).Id as string;
    const start = await api("POST", `/v1.51/containers/${id}/start`);
    if (start.status !== 204) return { id, refused: `${start.status} ${message(start)}` };
    await api("POST", `/v1.51/containers/${id}/wait`);
    return { id, output: (await cli("logs", id)).trim() };
  };

  it("mounts the image's root filesystem read-only, by name or tag (image, image_tag)", async () => {
    expect(await runWith({ Source: "test-image" }, ["cat", "/image/foo"])).to.include({ output: "bar" });
    await cli("tag", "test-image", "test-image:foo");
    expect(await runWith({ Source: "test-image:foo" }, ["sh", "-c", "cat /image/foo; touch /image/x 2>/dev/null || echo read-only"])).to.include({ output: "barread-only" });
    await cli("rmi", "test-image:foo");
    expect(imageMountsMounted()).to.deep.equal([]);
  });

  it("mounts a folder or file of the image, links followed inside it, and refuses the others in Docker's words", async () => {
    expect(await runWith({ Source: "test-image", ImageOptions: { Subpath: "subdir" } }, ["ls", "/image"])).to.include({ output: "hello" });
    expect(await runWith({ Source: "test-image", ImageOptions: { Subpath: "hack/good" } }, ["ls", "/image"])).to.include({ output: "hello" });
    expect(await runWith({ Source: "test-image", ImageOptions: { Subpath: "subdir/hello" } }, ["cat", "/image"])).to.include({ output: "world" });
    const out = await runWith({ Source: "test-image", ImageOptions: { Subpath: "hack/bad" } }, ["ls", "/image"]);
    expect(out.refused).to.match(/^400 path concatenation escapes the base directory/);
    const missing = await runWith({ Source: "test-image", ImageOptions: { Subpath: "not-existing-path" } }, ["cat", "/image"]);
    expect(missing.refused).to.match(/^404 cannot access path .*not-existing-path: no such file or directory$/);
    const back = await runWith({ Source: "test-image", ImageOptions: { Subpath: "../../../../../../etc/passwd" } }, ["cat", "/image"]);
    expect(back.refused).to.equal('400 invalid mount config for type "image": subpath must be a relative path within the volume');
    expect(await runWith({ Source: "no-such-image" }, ["true"])).to.deep.equal({ refused: "404 No such image: no-such-image:latest" });
    expect(imageMountsMounted()).to.deep.equal([]);
  });

  it("counts the image as used by the container: rmi refused, and rmi -f of a stopped one keeps it for the next start (image_remove, image_remove_force)", async () => {
    const first = await runWith({ Source: "test-image" }, ["cat", "/image/foo"]);
    expect(first).to.include({ output: "bar" });
    const imageId = (await cli("image", "inspect", "-f", "{{.Id}}", "test-image")).trim().slice("sha256:".length);
    const refused = await run("rmi", "test-image");
    expect(refused.stderr).to.include(`container ${first.id!.slice(0, 12)} is using its referenced image ${imageId.slice(0, 12)}`);
    await cli("rmi", "-f", "test-image");
    await cli("start", first.id!);
    await api("POST", `/v1.51/containers/${first.id}/wait`);
    expect((await cli("logs", first.id!)).trim()).to.equal("barbar");
  });

  it("mounts one image at two places, and inspect shows both (TestRunMountImageMultipleTimes)", async () => {
    const create = await api("POST", "/v1.51/containers/create", {
      Image: "busybox",
      Cmd: ["sleep", "60"],
      HostConfig: { Mounts: [{ Type: "image", Source: "test-image", Target: "/etc/foo" }, { Type: "image", Source: "test-image", Target: "/etc/bar" }] },
    });
    expect(create.status, create.body).to.equal(201);
    const id = JSON.parse(create.body).Id as string;
    await cli("start", id);
    expect(await cli("exec", id, "cat", "/etc/foo/foo", "/etc/bar/foo")).to.equal("barbar");
    const mounts = JSON.parse(await cli("inspect", "-f", "{{json .Mounts}}", id)) as Record<string, unknown>[];
    expect(mounts.map((m) => [m.Type, m.Name, m.Destination, m.RW, m.Propagation])).to.have.deep.members([
      ["image", "test-image", "/etc/foo", false, "rprivate"],
      ["image", "test-image", "/etc/bar", false, "rprivate"],
    ]);
    expect(imageMountsMounted()).to.have.length(2);
    // docker cp reads through them, and cannot write into them (read-only)
    expect(execFileSync("tar", ["-xO"], { input: execFileSync("docker", ["-H", host, "cp", `${id}:/etc/foo/foo`, "-"]) }).toString()).to.equal("bar");
    const into = await run("cp", imageTar, `${id}:/etc/bar/`);
    expect(into.code).to.equal(1);
    expect(into.stderr).to.match(/read-only/);
    await cli("stop", "-t", "0", id);
    expect(imageMountsMounted()).to.deep.equal([]);
  });

  it("refuses options of other mount types on an image mount, and image options on others", async () => {
    const bind = await api("POST", "/v1.51/containers/create", {
      Image: "busybox",
      HostConfig: { Mounts: [{ Type: "image", Source: "test-image", Target: "/i", BindOptions: { Propagation: "rslave" } }] },
    });
    expect([bind.status, message(bind)]).to.deep.equal([400, 'BindOptions must not be specified on mount type "image"']);
    const tmpfs = await api("POST", "/v1.51/containers/create", { Image: "busybox", HostConfig: { Mounts: [{ Type: "tmpfs", Target: "/t", ImageOptions: { Subpath: "a" } }] } });
    expect([tmpfs.status, message(tmpfs)]).to.deep.equal([400, 'ImageOptions must not be specified on mount type "tmpfs"']);
  });
});
