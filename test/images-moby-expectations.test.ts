/**
 * What moby's integration tests of images (integration/image, Docker 28, API 1.51) expect of a
 * daemon, where engined answered otherwise: an import's `platform=` (TestImportWithCustomPlatform,
 * ...Reject), an import URL that answers 404 (TestImageImportBadSrc), a load of an archive with
 * nulls where Go's decoder reads none (specialimage.Dangling), a tag named `sha256`
 * (TestTagUsingDigestAlgorithmAsName), Docker Hub's legacy registry name (TestTagOfficialNames),
 * the dates of a save's entries (TestSaveCheckTimes), a pull's platform that is none
 * (TestImagePullPlatformInvalid), and the inspect fields Docker leaves out from API 1.45 and
 * 1.44. Against a real engined, with plain HTTP requests as Docker's Go client sends them.
 */
import "./helpers/root-hooks.js";
import { createHash } from "node:crypto";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import tarStream from "tar-stream";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, makeTar } from "./fixtures/images.js";

interface Answer {
  status: number;
  body: Buffer;
}

describe("what moby's image integration tests expect of a daemon", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  const api = (method: string, path: string) => httpRequest({ socketPath: d.socket }, method, path);
  const message = (r: { body: string | Buffer }) => JSON.parse(r.body.toString()).message as string;
  /** A request with a binary body (a tar), and headers of its own. */
  const send = (method: string, path: string, body?: Buffer, headers: Record<string, string> = {}) =>
    new Promise<Answer>((resolve, reject) => {
      const req = request(
        { socketPath: d.socket, method, path, headers: { ...(body ? { "content-type": "application/x-tar", "content-length": body.length } : {}), ...headers }, timeout: 30_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        },
      );
      req.on("timeout", () => req.destroy(new Error("timed out")));
      req.on("error", reject);
      req.end(body);
    });
  const inspect = async (name: string, version = "1.51", headers: Record<string, string> = {}) => {
    const r = await send("GET", `/v${version}/images/${encodeURIComponent(name)}/json`, undefined, headers);
    expect(r.status, r.body.toString()).to.equal(200);
    return JSON.parse(r.body.toString()) as Record<string, any>;
  };
  let emptyTar: Buffer;

  before(async () => {
    makeTempDir("engine-moby-images-");
    d = await startEngined();
    emptyTar = await makeTar([]);
    const rootfs = await busyboxRootfs();
    const r = await send("POST", "/v1.51/images/create?fromSrc=-&repo=busybox&tag=latest", rootfs);
    expect(r.status, r.body.toString()).to.equal(200);
  });
  after(async () => d?.stop());

  describe("an import's platform (TestImportWithCustomPlatform, TestImportWithCustomPlatformReject)", () => {
    const importWith = (platform: string | undefined, tag: string) =>
      send("POST", `/v1.51/images/create?fromSrc=-&repo=import-with-platform&tag=${tag}${platform === undefined ? "" : `&platform=${encodeURIComponent(platform)}`}`, emptyTar);

    it("gives the image the platform asked for, or the host's", async () => {
      const host = (await inspect("busybox")).Architecture as string;
      for (const [platform, tag, os, arch] of [
        [undefined, "tc-0", "linux", host],
        ["linux", "tc-1", "linux", host],
        ["linux/sparc64", "tc-2", "linux", "sparc64"],
      ] as const) {
        const r = await importWith(platform, tag);
        expect(r.status, r.body.toString()).to.equal(200);
        const image = await inspect(`import-with-platform:${tag}`);
        expect([image.Os, image.Architecture], String(platform)).to.deep.equal([os, arch]);
      }
    });

    it("refuses a platform that is none, or of another OS, with 400 in Docker's words", async () => {
      const cases: [string, string][] = [
        ["       ", '"       " is an invalid OS component of "       ": OSAndVersion specifier component must match "^([A-Za-z0-9_-]+)(?:\\\\(([A-Za-z0-9_.-]*)\\\\))?$": invalid argument'],
        ["macos", "operating system is not supported"],
        ["macos/arm64", "operating system is not supported"],
        ["nintendo64", '"nintendo64": unknown operating system or architecture: invalid argument'],
      ];
      for (const [platform, words] of cases) {
        const r = await importWith(platform, "refused");
        expect([r.status, message(r)], JSON.stringify(platform)).to.deep.equal([400, words]);
      }
      expect((await api("GET", "/v1.51/images/import-with-platform:refused/json")).status).to.equal(404);
    });
  });

  describe("an import from a URL that answers 404 (TestImageImportBadSrc)", () => {
    let server: Server;
    let port: number;
    before(async () => {
      // Go's http.NotFound answer, as moby's test server gives it
      server = createServer((_req, res) => res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("404 page not found\n"));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as AddressInfo).port;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("is 404 with the status and the answer, with or without the scheme", async () => {
      for (const fromSrc of [`http://127.0.0.1:${port}/nofile.tar`, `127.0.0.1:${port}/nofile.tar`]) {
        const r = await api("POST", `/v1.51/images/create?fromSrc=${encodeURIComponent(fromSrc)}&repo=import-bad-src&tag=test`);
        expect([r.status, message(r)], fromSrc).to.deep.equal([404, `failed to GET http://127.0.0.1:${port}/nofile.tar with status 404 Not Found: 404 page not found`]);
      }
      const encoded = await api("POST", `/v1.51/images/create?fromSrc=${encodeURIComponent(`127.0.0.1:${port}/%2Fdata%2Ffile.tar`)}&repo=import-bad-src&tag=test`);
      expect(encoded.status, encoded.body).to.equal(404);
    });
  });

  it("loads an archive whose manifest and config hold nulls, as a dangling image with no layers (specialimage.Dangling)", async () => {
    const config = Buffer.from(JSON.stringify({
      architecture: (await inspect("busybox")).Architecture,
      config: { Env: ["PATH=/bin"], Labels: { "test.engine.dangling": "yes" }, OnBuild: null },
      created: null,
      history: [{ created_by: "LABEL test.engine.dangling=yes", empty_layer: true }],
      os: "linux",
      rootfs: { type: "layers", diff_ids: null },
    }));
    const id = createHash("sha256").update(config).digest("hex");
    const archive = await makeTar([
      { name: "manifest.json", data: JSON.stringify([{ Config: `blobs/sha256/${id}`, RepoTags: null, Layers: null }]) },
      { name: "blobs/", type: "directory" },
      { name: "blobs/sha256/", type: "directory" },
      { name: `blobs/sha256/${id}`, data: config },
    ]);
    const r = await send("POST", "/v1.51/images/load?quiet=1", archive);
    expect([r.status, r.body.toString()]).to.deep.equal([200, `${JSON.stringify({ stream: `Loaded image ID: sha256:${id}\n` })}\n`]);
    const image = await inspect(`sha256:${id}`);
    expect(image.RepoTags).to.deep.equal([]);
    expect(image.RootFS).to.deep.equal({ Type: "layers" });
    expect(image.Config.Labels).to.deep.equal({ "test.engine.dangling": "yes" });
    // no creation time: none shown from API 1.44, Go's zero time before
    expect(image).to.not.have.any.keys("Created");
    expect((await inspect(`sha256:${id}`, "1.43")).Created).to.equal("0001-01-01T00:00:00Z");
    const listed = JSON.parse((await api("GET", `/v1.51/images/json?filters=${encodeURIComponent(JSON.stringify({ dangling: ["true"] }))}`)).body) as { Id: string }[];
    expect(listed.map((i) => i.Id)).to.include(`sha256:${id}`);
  });

  it("refuses a tag named as the digest algorithm, before looking the image up (TestTagUsingDigestAlgorithmAsName)", async () => {
    for (const source of ["busybox:latest", "no-such-image"]) {
      const r = await api("POST", `/v1.51/images/${source}/tag?repo=sha256&tag=sometag`);
      expect([r.status, message(r)], source).to.deep.equal([400, "refusing to create an ambiguous tag using digest algorithm as name"]);
    }
    const full = await api("POST", "/v1.51/images/busybox/tag?repo=docker.io%2Flibrary%2Fsha256&tag=x");
    expect(full.status).to.equal(400);
    // a repository of that name in another registry is no digest
    expect((await api("POST", "/v1.51/images/busybox/tag?repo=localhost%3A5000%2Fsha256&tag=x")).status).to.equal(201);
  });

  it("refuses a name that is a 64-hex string alone, which would read as an ID, for a tag, a commit, a build and an import", async () => {
    const hex = "a".repeat(64);
    const words = `invalid repository name (${hex}), cannot specify 64-byte hexadecimal strings`;
    for (const path of [`/v1.51/images/busybox/tag?repo=${hex}`, `/v1.51/commit?container=none&repo=${hex}`, `/v1.51/build?t=${hex}`, `/v1.51/images/create?fromSrc=-&repo=${hex}`]) {
      const r = await api("POST", path);
      expect([r.status, message(r)], path).to.deep.equal([400, words]);
    }
    // the repository alone is what is read (a tag does not save it); in its full form it is a name
    // like any other (the Docker CLI sends that one), and a look-up takes the string alone as an ID
    expect((await api("POST", `/v1.51/images/busybox/tag?repo=${hex}&tag=v1`)).status).to.equal(400);
    expect((await api("POST", `/v1.51/images/busybox/tag?repo=docker.io%2Flibrary%2F${hex}&tag=v1`)).status).to.equal(201);
    const lookup = await api("GET", `/v1.51/images/${"b".repeat(64)}/json`);
    expect(lookup.status).to.equal(404);
  });

  it("reads Docker Hub's legacy registry name index.docker.io as docker.io (TestTagOfficialNames)", async () => {
    for (const name of ["docker.io/busybox", "index.docker.io/busybox", "library/busybox", "docker.io/library/busybox", "index.docker.io/library/busybox"]) {
      const tag = await api("POST", `/v1.51/images/busybox/tag?repo=${encodeURIComponent(name)}&tag=latest`);
      expect(tag.status, `${name}: ${tag.body}`).to.equal(201);
      const tags = (await inspect("busybox")).RepoTags as string[];
      expect(tags, name).to.not.include(`${name}:latest`);
      const again = await api("POST", `/v1.51/images/${name}:latest/tag?repo=test-tag-official-names%2Ffoobar&tag=latest`);
      expect(again.status, `${name}: ${again.body}`).to.equal(201);
    }
    const busybox = await inspect("busybox");
    expect(busybox.RepoTags).to.include("busybox:latest").and.not.include("index.docker.io/busybox:latest");
    expect((await inspect("index.docker.io/library/busybox:latest")).Id).to.equal(busybox.Id);
  });

  it("dates a save's config and layers when the image was made, and the rest at the epoch (TestSaveCheckTimes)", async () => {
    const image = await inspect("busybox");
    const created = Math.floor(Date.parse(image.Created) / 1000);
    const r = await send("GET", "/v1.51/images/get?names=busybox%3Alatest");
    expect(r.status).to.equal(200);
    const mtimes = new Map<string, number>();
    const extract = tarStream.extract();
    const done = new Promise<void>((resolve, reject) => {
      extract.on("entry", (header, stream, next) => {
        mtimes.set(header.name, Math.floor((header.mtime?.getTime() ?? -1) / 1000));
        stream.on("end", next);
        stream.resume();
      });
      extract.on("finish", resolve);
      extract.on("error", reject);
    });
    extract.end(r.body);
    await done;
    const manifest = JSON.parse(await entryText(r.body, "manifest.json")) as { Config: string; Layers: string[] }[];
    expect(mtimes.get(manifest[0].Config)).to.equal(created);
    for (const layer of manifest[0].Layers) expect(mtimes.get(layer), layer).to.equal(created);
    const dated = new Set([manifest[0].Config, ...manifest[0].Layers]);
    const rest = [...mtimes].filter(([name]) => !dated.has(name));
    expect(rest.map(([name]) => name)).to.include.members(["oci-layout", "index.json", "manifest.json", "repositories"]);
    for (const [name, mtime] of rest) expect(mtime, name).to.equal(0);
    // no entry newer than the image (the current moby test)
    for (const [name, mtime] of mtimes) expect(mtime, name).to.be.at.most(created);
  });

  it("refuses a pull's platform that is none in containerd's words (TestImagePullPlatformInvalid)", async () => {
    const r = await api("POST", "/v1.51/images/create?fromImage=docker.io%2Flibrary%2Fbusybox&tag=latest&platform=foobar");
    expect([r.status, message(r)]).to.deep.equal([400, '"foobar": unknown operating system or architecture: invalid argument']);
  });

  it("refuses a build's platform that is none in the same words (TestBuildPlatformInvalid)", async () => {
    const context = await makeTar([{ name: "Dockerfile", data: "FROM busybox\n" }]);
    const r = await send("POST", "/v1.51/build?platform=foobar", context);
    expect([r.status, message(r)]).to.deep.equal([400, '"foobar": unknown operating system or architecture: invalid argument']);
  });

  it("shows Container and ContainerConfig below API 1.45 only, the container when there is one, and to docker-compose 1.x at every version", async () => {
    expect(await inspect("busybox", "1.45")).to.not.have.any.keys("Container", "ContainerConfig");
    expect(await inspect("busybox", "1.51")).to.not.have.any.keys("Container", "ContainerConfig");
    const old = await inspect("busybox", "1.44");
    expect(old).to.not.have.any.keys("Container");
    expect(old.ContainerConfig).to.include({ Image: "", WorkingDir: "" });
    const compose = await inspect("busybox", "1.51", { "user-agent": "docker-compose/1.29.2 docker-py/5.0.3 Linux/6.1.0" });
    expect(compose.ContainerConfig).to.include({ Image: "" });
  });

  it("lists the size shared with other images when asked (from API 1.42), and from API 1.51 the containers made from each", async () => {
    const twin = await send("POST", "/v1.51/images/create?fromSrc=-&repo=busybox-twin&tag=latest", await busyboxRootfs());
    expect(twin.status, twin.body.toString()).to.equal(200);
    const created = await send("POST", "/v1.51/containers/create?name=counted", Buffer.from(JSON.stringify({ Image: "busybox", Cmd: ["true"] })), { "content-type": "application/json" });
    expect(created.status, created.body.toString()).to.equal(201);
    try {
      type Summary = { RepoTags: string[]; Size: number; SharedSize: number; Containers: number };
      const list = async (path: string) => {
        const r = await api("GET", path);
        expect(r.status, r.body).to.equal(200);
        const images = JSON.parse(r.body) as Summary[];
        const find = (tag: string) => images.find((i) => i.RepoTags.includes(tag))!;
        return { busybox: find("busybox:latest"), twin: find("busybox-twin:latest") };
      };
      const shared = await list("/v1.51/images/json?shared-size=1");
      // the two imports of one root filesystem both have its layer
      expect(shared.busybox.SharedSize).to.equal(shared.busybox.Size).and.be.above(0);
      expect(shared.twin.SharedSize).to.equal(shared.twin.Size);
      expect(shared.busybox.Containers).to.equal(1);
      expect(shared.twin.Containers).to.equal(0);
      const plain = await list("/v1.51/images/json");
      expect([plain.busybox.SharedSize, plain.busybox.Containers]).to.deep.equal([-1, 1]);
      const before151 = await list("/v1.50/images/json?shared-size=1");
      expect([before151.busybox.SharedSize, before151.busybox.Containers]).to.deep.equal([shared.busybox.Size, -1]);
      const before142 = await list("/v1.41/images/json?shared-size=1");
      expect([before142.busybox.SharedSize, before142.busybox.Containers]).to.deep.equal([-1, -1]);
    } finally {
      await api("DELETE", "/v1.51/containers/counted?force=1");
    }
  });
});

/** The text of one member of a tar. */
async function entryText(tar: Buffer, name: string): Promise<string> {
  const extract = tarStream.extract();
  let text: string | undefined;
  const done = new Promise<void>((resolve, reject) => {
    extract.on("entry", (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: unknown) => chunks.push(c as Buffer));
      stream.on("end", () => {
        if (header.name === name) text = Buffer.concat(chunks).toString();
        next();
      });
    });
    extract.on("finish", resolve);
    extract.on("error", reject);
  });
  extract.end(tar);
  await done;
  if (text === undefined) throw new Error(`${name} is not in the archive`);
  return text;
}
