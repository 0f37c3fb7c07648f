/**
 * What moby's CLI integration tests of images (integration-cli: docker_cli_rmi_test,
 * docker_cli_tag_test, docker_cli_import_test, docker_cli_save_load_test, ...) expect of a
 * daemon, where engined answered otherwise, with Docker 28's daemon as the reference: a removal
 * of a blank name (TestRmiBlank), a `repo` that holds a digest or a tag of its own for a tag, a
 * commit and an import (httputils.RepoTagReference), the refusal of a repository with capitals
 * (TestTagInvalidUnprefixedRepo) and the parent links a save keeps and a load restores
 * (TestSaveLoadParents). Against a real engined, with the Docker CLI and plain HTTP requests.
 */
import "./helpers/root-hooks.js";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

describe("what moby's CLI tests of images expect of a daemon", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let host: string;
  let work: string;
  const api = (method: string, path: string, body?: unknown, type?: string) => httpRequest({ socketPath: d.socket }, method, path, body, type);
  const answer = (r: { status: number; body: string }) => [r.status, JSON.parse(r.body).message as string];
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout.trim();
  };
  const tagsOf = async (name: string) => JSON.parse((await api("GET", `/v1.51/images/${encodeURIComponent(name)}/json`)).body).RepoTags as string[];

  before(async () => {
    work = makeTempDir("engine-moby-images-cli-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    ok(await docker(host, ["import", "-c", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
  });
  after(async () => d?.stop());

  it("refuses to remove a name of spaces as blank, with 400 (TestRmiBlank)", async () => {
    expect(answer(await api("DELETE", "/v1.51/images/%20"))).to.deep.equal([400, "image name cannot be blank"]);
    const cli = await docker(host, ["rmi", " "]);
    expect([cli.code, cli.stderr]).to.deep.equal([1, "Error response from daemon: image name cannot be blank\n"]);
  });

  it("refuses a repo with a digest for a tag, a commit and an import, in Docker 28's words", async () => {
    const digested = encodeURIComponent(`foo@sha256:${"a".repeat(64)}`);
    const id = JSON.parse((await api("POST", "/v1.51/containers/create", { Image: "busybox" })).body).Id as string;
    for (const path of [`/v1.51/images/busybox/tag?repo=${digested}`, `/v1.51/commit?container=${id}&repo=${digested}`, `/v1.51/images/create?fromSrc=-&repo=${digested}`]) {
      expect(answer(await api("POST", path)), path).to.deep.equal([400, "cannot import digest reference"]);
    }
    expect(JSON.parse((await api("GET", "/v1.51/images/json")).body).flatMap((i: { RepoDigests: string[] }) => i.RepoDigests)).to.not.include(`foo@sha256:${"a".repeat(64)}`);
  });

  it("gives a repo's own tag way to the tag parameter, for a tag, a commit and an import", async () => {
    expect((await api("POST", "/v1.51/images/busybox/tag?repo=own-tag:bar&tag=baz")).status).to.equal(201);
    expect(await tagsOf("own-tag:baz")).to.include("own-tag:baz").and.not.include("own-tag:bar");
    const id = JSON.parse((await api("POST", "/v1.51/containers/create", { Image: "busybox" })).body).Id as string;
    expect((await api("POST", `/v1.51/commit?container=${id}&repo=own-commit:bar&tag=baz`)).status).to.equal(201);
    expect(await tagsOf("own-commit:baz")).to.include("own-commit:baz").and.not.include("own-commit:bar");
    const exported = join(work, "exported.tar");
    ok(await docker(host, ["export", "-o", exported, id]), "docker export");
    const imported = await api("POST", "/v1.51/images/create?fromSrc=-&repo=own-import:bar&tag=baz", readFileSync(exported), "application/x-tar");
    expect(imported.status, imported.body).to.equal(200);
    expect(await tagsOf("own-import:baz")).to.include("own-import:baz").and.not.include("own-import:bar");
  });

  it("answers a tag without a repo 200 and tags nothing, before looking the image up, as Docker 28's router does", async () => {
    const before = JSON.parse((await api("GET", "/v1.51/images/json")).body).flatMap((i: { RepoTags: string[] }) => i.RepoTags);
    for (const path of ["/v1.51/images/busybox/tag", "/v1.51/images/busybox/tag?tag=x", "/v1.24/images/busybox/tag?repo=", "/v1.51/images/nosuch/tag"]) {
      const r = await api("POST", path);
      expect([r.status, r.body], path).to.deep.equal([200, ""]);
    }
    expect(JSON.parse((await api("GET", "/v1.51/images/json")).body).flatMap((i: { RepoTags: string[] }) => i.RepoTags)).to.deep.equal(before);
  });

  it("refuses a repository with capitals as such before anything else, naming it whole (TestTagInvalidUnprefixedRepo)", async () => {
    for (const [repo, named] of [["Foo@3cc", "library/Foo@3cc"], ["Fo^3", "library/Fo^3"], ["me/App:x", "me/App"], ["localhost:5000/Up", "Up"]]) {
      expect(answer(await api("POST", `/v1.51/images/busybox/tag?repo=${encodeURIComponent(repo)}`)), repo).to.deep.equal([400, `invalid reference format: repository name (${named}) must be lowercase`]);
    }
    // no capital: the plain refusal; a registry's name may have capitals
    expect(answer(await api("POST", `/v1.51/images/busybox/tag?repo=${encodeURIComponent("fo$z$")}`))).to.deep.equal([400, "invalid reference format"]);
    expect((await api("POST", `/v1.51/images/busybox/tag?repo=${encodeURIComponent("FOO/bar")}`)).status).to.equal(201);
  });

  it("keeps the parent links among the images a save holds, and a load puts them back (TestSaveLoadParents)", async () => {
    const commitOf = async (image: string, file: string) => {
      const c = ok(await docker(host, ["run", "-d", "--network", "none", image, "touch", file]), "docker run");
      ok(await docker(host, ["wait", c]), "docker wait");
      const id = ok(await docker(host, ["commit", c]), "docker commit");
      ok(await docker(host, ["rm", "-f", c]), "docker rm");
      return id;
    };
    const foo = await commitOf("busybox", "foo");
    const bar = await commitOf(foo, "bar");
    const archive = join(work, "parents.tar");
    ok(await docker(host, ["save", "-o", archive, bar, foo]), "docker save");
    const manifest = JSON.parse(execFileSync("tar", ["-xOf", archive, "manifest.json"]).toString()) as Record<string, unknown>[];
    const entry = (id: string) => manifest.find((m) => m.Config === `blobs/sha256/${id.slice(7)}`)!;
    // the parent when it is saved too, none for the base (its parent, busybox, is not in the archive); no tags: null
    expect(entry(bar)).to.include({ Parent: foo, RepoTags: null });
    expect(entry(foo)).to.not.have.property("Parent");
    // saved alone, an image keeps no link
    const alone = join(work, "alone.tar");
    ok(await docker(host, ["save", "-o", alone, bar]), "docker save alone");
    expect(JSON.parse(execFileSync("tar", ["-xOf", alone, "manifest.json"]).toString())[0]).to.not.have.property("Parent");

    ok(await docker(host, ["rmi", bar]), "docker rmi");
    ok(await docker(host, ["load", "-i", archive]), "docker load");
    expect(ok(await docker(host, ["inspect", "-f", "{{.Parent}}", bar]), "inspect bar")).to.equal(foo);
    expect(ok(await docker(host, ["inspect", "-f", "{{.Parent}}", foo]), "inspect foo")).to.equal(JSON.parse((await api("GET", `/v1.51/images/${foo}/json`)).body).Parent);
  });

  it("refuses a parent link whose history is not the image's but its last entry, in Docker's loader's words", async () => {
    const archive = join(work, "parents.tar");
    const manifest = JSON.parse(execFileSync("tar", ["-xOf", archive, "manifest.json"]).toString()) as Record<string, unknown>[];
    // the base claims the child as its parent: its history is one entry shorter, not longer
    const [child, base] = manifest[0].Parent ? [manifest[0], manifest[1]] : [manifest[1], manifest[0]];
    const childId = `sha256:${String(child.Config).split("/").pop()}`;
    const baseId = `sha256:${String(base.Config).split("/").pop()}`;
    delete child.Parent;
    base.Parent = childId;
    const bad = join(work, "bad-parents");
    mkdirSync(bad);
    execFileSync("tar", ["-xf", archive, "-C", bad]);
    writeFileSync(join(bad, "manifest.json"), JSON.stringify(manifest));
    const badTar = join(work, "bad-parents.tar");
    execFileSync("tar", ["-cf", badTar, "-C", bad, "."]);
    const r = await docker(host, ["load", "-i", badTar]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain(`image ${childId} is not a valid parent for ${baseId}`);
  });

  it("removes an anonymous volume reached through --volumes-from with whichever container goes last with -v (TestDuplicateMountpointsForVolumesFrom)", async () => {
    const volumeOf = async (name: string) => ok(await docker(host, ["inspect", "--format", "{{(index .Mounts 0).Name}}", name]), "inspect");
    const volumes = async () => ok(await docker(host, ["volume", "ls", "-q"]), "volume ls").split("\n");
    for (const order of [["data", "app"], ["app", "data"]]) {
      ok(await docker(host, ["create", "--name", "data", "-v", "/tmp/data", "busybox"]), "create data");
      ok(await docker(host, ["create", "--name", "app", "--volumes-from", "data", "busybox"]), "create app");
      const volume = await volumeOf("data");
      expect(await volumeOf("app")).to.equal(volume);
      ok(await docker(host, ["rm", "-v", order[0]]), `rm -v ${order[0]}`);
      // the other still uses it
      expect(await volumes(), order.join(" then ")).to.include(volume);
      ok(await docker(host, ["rm", "-v", order[1]]), `rm -v ${order[1]}`);
      expect(await volumes(), order.join(" then ")).to.not.include(volume);
    }
    // a named volume stays, whoever mounted it
    ok(await docker(host, ["create", "--name", "data", "-v", "kept:/tmp/data", "busybox"]), "create data");
    ok(await docker(host, ["create", "--name", "app", "--volumes-from", "data", "busybox"]), "create app");
    ok(await docker(host, ["rm", "-v", "data", "app"]), "rm -v");
    expect(await volumes()).to.include("kept");
  });
});
