/**
 * The rest of the image endpoints: lookups by ID and prefix, list filters, forced removal,
 * prune, import from a URL, /system/df, and the storage driver's selection.
 */
import "./helpers/root-hooks.js";
import { mkdirSync } from "node:fs";
import { createServer, request as httpRaw } from "node:http";
import { join } from "node:path";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { dockerSaveTar, imageOf, makeTar, writeFixture } from "./fixtures/images.js";
import { selectStorageDriver, storageOptions } from "../host/storage/select-driver.js";

describe("images: lookups, filters, removal, prune, df", () => {
  let d: TestDaemon;
  let dir: string;
  const get = async (path: string) => {
    const r = await httpRequest({ socketPath: d.socket }, "GET", path);
    return { status: r.status, json: JSON.parse(r.body) };
  };
  const cli = async (...args: string[]) => {
    const r = await docker(`unix://${d.socket}`, args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const base = imageOf([Buffer.alloc(0)], {}); // replaced in before()
  let one: typeof base;
  let two: typeof base;

  before(async () => {
    dir = makeTempDir();
    const shared = await makeTar([{ name: "shared", data: "x".repeat(5000) }]);
    const own = await makeTar([{ name: "own", data: "y".repeat(3000) }]);
    one = imageOf([shared], { created: "2026-01-01T00:00:00Z", config: { Labels: { tier: "web" } } });
    two = imageOf([shared, own], { created: "2026-02-01T00:00:00Z", config: { Labels: { tier: "db" } } });
    d = await startEngined();
    const archive = writeFixture(dir, "two.tar", await dockerSaveTar([{ image: one, tags: ["one:1", "one:latest"] }, { image: two, tags: ["two:1"] }]));
    await cli("load", "-i", archive);
  });
  after(async () => {
    await d?.stop();
  });

  it("finds an image by full ID, sha256: prefix and bare hex prefix", async () => {
    const hex = one.id.slice(7);
    for (const name of [one.id, hex, `sha256:${hex.slice(0, 10)}`, hex.slice(0, 12)]) {
      const r = await get(`/v1.51/images/${name}/json`);
      expect(r.status, name).to.equal(200);
      expect(r.json.Id).to.equal(one.id);
    }
  });

  it("filters the list by reference glob, label, dangling, before and since", async () => {
    const tags = async (filters: object) =>
      ((await get(`/v1.51/images/json?filters=${encodeURIComponent(JSON.stringify(filters))}`)).json as { RepoTags: string[] }[])
        .flatMap((i) => i.RepoTags).sort();
    expect(await tags({ reference: ["one"] })).to.deep.equal(["one:1", "one:latest"]);
    expect(await tags({ reference: ["t*:1"] })).to.deep.equal(["two:1"]);
    expect(await tags({ label: ["tier=db"] })).to.deep.equal(["two:1"]);
    expect(await tags({ label: ["tier"] })).to.deep.equal(["one:1", "one:latest", "two:1"]);
    expect(await tags({ before: ["two:1"] })).to.deep.equal(["one:1", "one:latest"]);
    expect(await tags({ since: { "one:1": true } })).to.deep.equal(["two:1"]);
    expect(await tags({ dangling: ["true"] })).to.deep.equal([]);
    const bad = await httpRequest({ socketPath: d.socket }, "GET", `/v1.51/images/json?filters=${encodeURIComponent('{"colour":["red"]}')}`);
    expect(bad.status).to.equal(400);
    expect(JSON.parse(bad.body).message).to.equal("invalid filter 'colour'");
  });

  it("reports disk usage with shared layers counted once", async () => {
    const df = (await get("/v1.51/system/df")).json;
    const byId = Object.fromEntries(df.Images.map((i: { Id: string }) => [i.Id, i]));
    expect(byId[one.id].SharedSize).to.equal(byId[one.id].Size);
    expect(byId[two.id].SharedSize).to.be.lessThan(byId[two.id].Size);
    expect(df.LayersSize).to.equal(byId[two.id].Size);
    expect(df.Containers).to.deep.equal([]);
  });

  it("untags by name, refuses to remove an image named in several repositories by ID without force", async () => {
    await cli("tag", "one:1", "other:1");
    const conflict = await httpRequest({ socketPath: d.socket }, "DELETE", `/v1.51/images/${one.id}`);
    expect(conflict.status).to.equal(409);
    expect(JSON.parse(conflict.body).message).to.match(/^conflict: unable to delete [a-f0-9]{12} \(must be forced\) - image is referenced in multiple repositories$/);
    const untag = JSON.parse((await httpRequest({ socketPath: d.socket }, "DELETE", "/v1.51/images/other:1")).body);
    expect(untag).to.deep.equal([{ Untagged: "other:1" }]);
    const forced = JSON.parse((await httpRequest({ socketPath: d.socket }, "DELETE", `/v1.51/images/${one.id}?force=1&noprune=1`)).body);
    expect(forced).to.deep.include.members([{ Untagged: "one:1" }, { Untagged: "one:latest" }, { Deleted: one.id }]);
    // noprune kept the shared layer, which two:1 still uses anyway.
    expect((await get("/v1.51/images/two:1/json")).status).to.equal(200);
  });

  it("prunes dangling images only, unless told dangling=false", async () => {
    const loaded = writeFixture(dir, "one-again.tar", await dockerSaveTar([{ image: one, tags: [] }]));
    await cli("load", "-i", loaded);
    expect((await get(`/v1.51/images/${one.id}/json`)).json.RepoTags).to.deep.equal([]);
    const pruned = (await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/images/prune")).body;
    expect(JSON.parse(pruned).ImagesDeleted).to.deep.include({ Deleted: one.id });
    expect((await get("/v1.51/images/two:1/json")).status).to.equal(200);
    const all = JSON.parse((await httpRequest({ socketPath: d.socket }, "POST", `/v1.51/images/prune?filters=${encodeURIComponent('{"dangling":["false"]}')}`)).body);
    expect(all.ImagesDeleted).to.deep.include({ Deleted: two.id });
    expect((await get("/v1.51/images/json")).json).to.deep.equal([]);
  });

  it("imports from a URL (a server on loopback)", async () => {
    const tar = await makeTar([{ name: "hello", data: "hello" }]);
    const server = createServer((_req, res) => res.end(tar));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    try {
      const port = (server.address() as { port: number }).port;
      const r = await httpRequest({ socketPath: d.socket }, "POST", `/v1.51/images/create?fromSrc=${encodeURIComponent(`http://127.0.0.1:${port}/rootfs.tar`)}&repo=fromurl&tag=1`);
      expect(r.status).to.equal(200);
      const id = JSON.parse(r.body.trim()).status;
      const info = (await get("/v1.51/images/fromurl:1/json")).json;
      expect(info.Id).to.equal(id);
      expect((await get("/v1.51/images/fromurl:1/history")).json[0].Comment).to.equal(`Imported from http://127.0.0.1:${port}/rootfs.tar`);
    } finally {
      server.close();
    }
  });

  // (no registry is contacted: these fail before any connection; pulls are in the registry suites)
  it("refuses a pull of a malformed name before any stream, and a push of an image it does not have in the stream, as Docker's daemon", async () => {
    const pull = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/images/create?fromImage=Not_Valid&tag=latest");
    expect(pull.status).to.equal(400);
    expect(JSON.parse(pull.body).message).to.match(/^invalid reference format/);
    const lines = (body: string) => body.trim().split("\n").map((l) => JSON.parse(l) as { status?: string; error?: string });
    const push = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/images/127.0.0.1:1/nosuch/push?tag=1");
    expect(push.status).to.equal(200);
    expect(lines(push.body)).to.deep.equal([
      { status: "The push refers to repository [127.0.0.1:1/nosuch]" },
      { errorDetail: { message: "An image does not exist locally with the tag: 127.0.0.1:1/nosuch" }, error: "An image does not exist locally with the tag: 127.0.0.1:1/nosuch" },
    ]);
    // the repository is here (a tag of the image the import above made), not that tag
    await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/images/fromurl:1/tag?repo=127.0.0.1:1/here&tag=a");
    const tag = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/images/127.0.0.1:1/here/push?tag=b");
    expect(lines(tag.body).at(-1)!.error).to.equal("tag does not exist: 127.0.0.1:1/here:b");
    const auth = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRaw({ socketPath: d.socket, method: "POST", path: "/v1.51/images/create?fromImage=127.0.0.1:1/x&tag=1", headers: { "X-Registry-Auth": "bm90IGpzb24" } }, (res) => {
        let body = "";
        res.on("data", (c) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.end();
    });
    expect(auth.status).to.equal(400);
    expect(JSON.parse(auth.body).message).to.equal("invalid X-Registry-Auth header: not base64-encoded JSON");
  });
});

describe("storage driver selection", () => {
  it("takes the configured driver, else the one whose state exists, else overlay2, and refuses two", () => {
    const root = makeTempDir();
    const known = ["overlay2", "btrfs"];
    expect(selectStorageDriver("btrfs", root, known)).to.equal("btrfs");
    expect(selectStorageDriver("", root, known)).to.equal("overlay2");
    mkdirSync(join(root, "btrfs"));
    expect(selectStorageDriver("", root, known)).to.equal("btrfs");
    mkdirSync(join(root, "overlay2"));
    expect(() => selectStorageDriver("", root, known)).to.throw(`${root} contains state of several storage drivers (overlay2, btrfs); choose one with --storage-driver`);
    expect(selectStorageDriver("overlay2", root, known)).to.equal("overlay2");
  });

  it("reads --storage-opt entries, refusing malformed ones", () => {
    expect(storageOptions(["overlay2.size=10G", " Btrfs.Min_Space = 1G "])).to.deep.equal({ "overlay2.size": "10G", "btrfs.min_space": "1G" });
    expect(() => storageOptions(["size"])).to.throw('invalid storage option "size"');
  });

  it("stops the daemon when the driver refuses its options", async () => {
    const d = await startEngined({ args: ["--storage-opt", "overlay2.size=1G"], timeoutMs: 10_000 }).catch((e: Error) => e);
    expect(d).to.be.instanceOf(Error);
    expect((d as Error).message).to.include("overlay2.size is only supported on xfs mounted with the pquota option");
  });
});
