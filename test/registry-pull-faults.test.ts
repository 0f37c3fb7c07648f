/**
 * The daemon's pull against the real registry (docker-registry 2.8.2), through the API
 * (`POST /images/create` over the unix socket, the JSON lines read to the end), when things go
 * wrong on the way: an index narrowed to a platform (or to none), a corrupted blob, a
 * connection dropped mid-layer (resumed, restarted, given up), a token that expires mid-pull, a
 * client that goes away, and the download limit reloaded. Each test checks what is real: the
 * image (or none), its platform, the progress lines, and that no layer or temporary file of a
 * failed pull is left in the data root. Network traffic goes only to 127.0.0.1. Insecure
 * registries, proxies and a mirror that is down are in registry-pull-faults-network.test.ts.
 */
import "./helpers/root-hooks.js";
import { randomBytes } from "node:crypto";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { makeTempDir, sighup, type TestDaemon } from "./helpers/engined.js";
import { startRegistry, type TestRegistry } from "./helpers/registry.js";
import { startFaultyProxy, type FaultyProxy } from "./helpers/net-proxies.js";
import { pushImage, pushIndex, type PushedImage } from "./fixtures/registry-push.js";
import {
  dataFiles,
  daemonHooks,
  endError,
  expectServing,
  hostPort,
  imageCount,
  inspect,
  newSince,
  pull,
  pullOk,
  randomLayer,
  settleLeftovers,
  sleep,
  start,
  waiting,
} from "./helpers/pull-api.js";

describe("registry pull faults (real registry, through the API)", function () {
  this.timeout(40_000);
  let reg: TestRegistry;
  /** A daemon of the test's own (one that a daemon bug brought down does not fail the next tests). */
  let d: TestDaemon;

  before(async () => {
    reg = await startRegistry();
  });
  beforeEach(async () => {
    d = await start();
  });
  daemonHooks();
  after(async () => {
    await reg?.stop();
  });

  it("an index (Docker list and OCI index) is narrowed to this host's platform or the one asked for; none matching is a 404", async () => {
    for (const format of ["docker", "oci"] as const) {
      const repo = `lib/multi-${format}`;
      const amd = await pushImage(reg, repo, undefined, [await randomLayer("amd", 2048)], { format, platform: { architecture: "amd64", os: "linux" } });
      const arm = await pushImage(reg, repo, undefined, [await randomLayer("arm", 2048)], { format, platform: { architecture: "arm64", os: "linux", variant: "v8" } });
      const index = await pushIndex(reg, repo, "v1", [
        { image: amd, platform: { architecture: "amd64", os: "linux" } },
        { image: arm, platform: { architecture: "arm64", os: "linux", variant: "v8" } },
      ], { format });
      const name = `${reg.host}/${repo}`;

      const plain = await pullOk(d, { fromImage: name, tag: "v1" });
      expect(plain.some((l) => l.status === `Digest: ${index.digest}`)).to.equal(true);
      let img = (await inspect(d, `${name}:v1`)).image!;
      expect(img.Architecture).to.equal("amd64");
      expect(img.Id).to.equal(amd.configDigest);

      await pullOk(d, { fromImage: name, tag: "v1", platform: "linux/arm64" });
      img = (await inspect(d, `${name}:v1`)).image!;
      expect(img.Architecture).to.equal("arm64");
      expect(img.Id).to.equal(arm.configDigest);

      const none = await pull(d, { fromImage: name, tag: "v1", platform: "linux/s390x" });
      expect(none.status, none.body).to.equal(404);
      expect(none.message).to.include("no matching manifest for linux/s390x");

      // By digest: the index's digest names the host's image, and it is what RepoDigests shows.
      const byDigest = await pullOk(d, { fromImage: `${name}@${index.digest}` });
      expect(byDigest.some((l) => l.status === `Digest: ${index.digest}`)).to.equal(true);
      const viaDigest = await inspect(d, `${name}@${index.digest}`);
      expect(viaDigest.status).to.equal(200);
      expect(viaDigest.image!.Id).to.equal(amd.configDigest);
      expect(viaDigest.image!.Architecture).to.equal("amd64");
      expect(viaDigest.image!.RepoDigests).to.include(`${name}@${index.digest}`);
      // The tag still names the arm64 image.
      expect((await inspect(d, `${name}:v1`)).image!.Id).to.equal(arm.configDigest);
    }
  });

  it("a corrupted blob ends the stream with a digest mismatch, leaving no image and no layer", async () => {
    // The corrupted top layer's download ends (a proxy holds its last byte till then) once the
    // base is being extracted: its failed check cancels an extraction under way.
    const img = await pushImage(reg, "lib/corrupt", "v1", [await randomLayer("base", 1024 * 1024), await randomLayer("top", 1024 * 1024)]);
    const bad = img.layerDigests[1];
    writeFileSync(reg.blobPath(bad), randomBytes(img.layerBlobs[1].length));
    const proxy = await startFaultyProxy(hostPort(reg.host));
    try {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      const fallback = setTimeout(release, 10_000);
      proxy.faults = [{ path: new RegExp(`/blobs/${bad}$`), method: "GET", holdEnd: released }];
      const before = dataFiles(d);
      const images = await imageCount(d);
      const base = img.layerDigests[0].slice(7, 19);
      const r = await pull(d, { fromImage: `${proxy.host}/lib/corrupt`, tag: "v1" }, {
        onLine: (line) => {
          if (line.id === base && line.status === "Extracting") release();
        },
      });
      clearTimeout(fallback);
      const message = endError(r);
      expect(message).to.include(bad).and.include("digest mismatch");
      expect(r.lines.some((l) => l.id === base && l.status === "Extracting"), "the base was being extracted").to.equal(true);
      expect((await inspect(d, `${proxy.host}/lib/corrupt:v1`)).status).to.equal(404);
      expect(await imageCount(d)).to.equal(images);
      expect(await settleLeftovers(d, before)).to.deep.equal([]);
      await expectServing(d);

      // The same straight from the registry, a few times: when the failure lands is up to the
      // scheduler then (a daemon that fell over here did so on an abort mid-extraction).
      for (let i = 0; i < 4; i++) {
        await expectServing(d);
        const again = await pushImage(reg, `lib/corrupt-${i}`, "v1", [await randomLayer(`b${i}`, 1024 * 1024), await randomLayer(`t${i}`, 1024 * 1024)]);
        writeFileSync(reg.blobPath(again.layerDigests[1]), randomBytes(again.layerBlobs[1].length));
        const failed = await pull(d, { fromImage: `${reg.host}/lib/corrupt-${i}`, tag: "v1" });
        expect(endError(failed)).to.include(again.layerDigests[1]).and.include("digest mismatch");
        await expectServing(d);
      }
      expect(await imageCount(d)).to.equal(images);
      expect(await settleLeftovers(d, before)).to.deep.equal([]);
    } finally {
      await proxy.stop();
    }
  });

  describe("a connection dropped mid-layer", () => {
    let proxy: FaultyProxy;
    let img: PushedImage;
    const layerPath = () => new RegExp(`/blobs/${img.layerDigests[0]}$`);

    before(async () => {
      img = await pushImage(reg, "lib/drop", "v1", [await randomLayer("big", 256 * 1024)]);
      proxy = await startFaultyProxy(hostPort(reg.host));
    });
    after(async () => {
      await proxy?.stop();
    });
    beforeEach(() => {
      proxy.faults = [];
      proxy.requests = [];
    });

    it("is resumed with a range request, and the pull succeeds", async () => {
      proxy.faults = [{ path: layerPath(), method: "GET", dropAfterBytes: 100 * 1024, times: 1 }];
      const name = `${proxy.host}/lib/drop`;
      const lines = await pullOk(d, { fromImage: name, tag: "v1" });
      expect(lines.some((l) => /^Retrying in 1 second$/.test(l.status ?? ""))).to.equal(true);
      const gets = proxy.requests.filter((r) => layerPath().test(r.path));
      expect(gets.length).to.equal(2);
      expect(gets[0].range).to.equal(undefined);
      const m = /^bytes=(\d+)-$/.exec(gets[1].range ?? "");
      expect(m, `the second request's Range: ${gets[1].range}`).to.not.equal(null);
      expect(Number(m![1])).to.be.greaterThan(0).and.at.most(100 * 1024);
      expect(gets[1].status).to.equal(206);
      expect((await inspect(d, `${name}:v1`)).image!.Id).to.equal(img.configDigest);
    });

    it("starts over when the registry ignores the range, and succeeds", async () => {
      proxy.faults = [
        { path: layerPath(), method: "GET", dropAfterBytes: 100 * 1024, times: 1 },
        { path: layerPath(), method: "GET", ignoreRange: true, times: 1 },
      ];
      const name = `${proxy.host}/lib/drop`;
      await pullOk(d, { fromImage: name, tag: "v1" });
      const gets = proxy.requests.filter((r) => layerPath().test(r.path));
      expect(gets.length).to.equal(2);
      expect(gets[1].range).to.match(/^bytes=\d+-$/);
      expect(gets[1].status).to.equal(200);
      expect((await inspect(d, `${name}:v1`)).image!.Id).to.equal(img.configDigest);
    });

    it("on every try: fails after --max-download-attempts, with a Retrying line, and leaves nothing", async () => {
      const limited = await start(["--max-download-attempts", "2"]);
      try {
        proxy.faults = [{ path: layerPath(), method: "GET", dropAfterBytes: 50 * 1024 }];
        const before = dataFiles(limited);
        const r = await pull(limited, { fromImage: `${proxy.host}/lib/drop`, tag: "v1" });
        const message = endError(r);
        expect(message).to.include(`download of ${img.layerDigests[0]} failed after 2 attempts`);
        expect(r.lines.some((l) => l.status === "Retrying in 1 second")).to.equal(true);
        expect(proxy.requests.filter((x) => layerPath().test(x.path)).length).to.equal(2);
        expect((await inspect(limited, `${proxy.host}/lib/drop:v1`)).status).to.equal(404);
        expect(await imageCount(limited)).to.equal(0);
        expect(await settleLeftovers(limited, before)).to.deep.equal([]);
        await expectServing(limited);
      } finally {
        await limited.stop();
      }
    });
  });

  it("a token that expires mid-pull is renewed, and the pull succeeds", async () => {
    const tok = await startRegistry({ auth: "token", tokenLifetimeSeconds: 2, advertisedExpiresIn: 3600 });
    const proxy = await startFaultyProxy(hostPort(tok.host));
    try {
      const img = await pushImage(tok, "team/expiring", "v1", [await randomLayer("one", 16 * 1024), await randomLayer("two", 16 * 1024)]);
      const issuedBefore = tok.token!.issued;
      // The second layer's request waits 3.5 s before it reaches the registry: its token has expired by then.
      const second = new RegExp(`/blobs/${img.layerDigests[1]}$`);
      proxy.faults = [{ path: second, method: "GET", delayMs: 3500, times: 1 }];
      const name = `${proxy.host}/team/expiring`;
      await pullOk(d, { fromImage: name, tag: "v1" });
      expect((await inspect(d, `${name}:v1`)).image!.Id).to.equal(img.configDigest);
      const layerTwo = proxy.requests.filter((r) => second.test(r.path));
      expect(layerTwo.map((r) => r.status)).to.deep.equal([401, 200]);
      expect(tok.token!.issued - issuedBefore).to.be.greaterThan(1);
    } finally {
      await proxy.stop();
      await tok.stop();
    }
  });

  it("a client that disconnects mid-pull leaves no image, layer or temporary file; a later pull succeeds", async () => {
    const proxy = await startFaultyProxy(hostPort(reg.host));
    try {
      const img = await pushImage(reg, "lib/gone", "v1", [await randomLayer("a", 128 * 1024), await randomLayer("b", 128 * 1024)]);
      const layers = new RegExp(`/blobs/(${img.layerDigests.join("|")})$`);
      proxy.faults = [{ path: layers, method: "GET", delayMs: 3000 }];
      const name = `${proxy.host}/lib/gone`;
      const before = dataFiles(d);
      const images = await imageCount(d);
      let sawTemp = false;
      const r = await pull(d, { fromImage: name, tag: "v1" }, {
        onLine: (line, abort) => {
          if (line.status !== "Pulling fs layer") return;
          // Disconnect once both downloads are under way (their requests wait in the proxy).
          void (async () => {
            // (bounded by time, not by a count of polls: on a loaded machine the requests come late)
            const until = Date.now() + 10_000;
            while (Date.now() < until && proxy.requests.filter((x) => layers.test(x.path)).length < 2) await sleep(50);
            // downloads to files in the temporary folder, or (extracted as they download, the
            // layers kept as layouts) the layouts being written beside the layers' records;
            // looked for until the proxy's 3 s delay would end
            for (const seenUntil = Date.now() + 2_000; ; await sleep(50)) {
              const layouts = readdirSync(join(d.dir, "data/image/layers")).filter((f) => /^\.[0-9a-f]{64}\.layout-/.test(f));
              sawTemp = readdirSync(join(d.dir, "data/tmp/image")).length + layouts.length > 0;
              if (sawTemp || Date.now() >= seenUntil) break;
            }
            abort();
          })();
        },
      });
      expect(r.status).to.equal(200);
      expect(r.lines.some((l) => l.status === "Pulling fs layer")).to.equal(true);
      expect(r.lines.some((l) => l.status === "Pull complete")).to.equal(false);
      expect(sawTemp, "the downloads had temporary files when the client left").to.equal(true);
      expect(await settleLeftovers(d, before)).to.deep.equal([]);
      // Still nothing once the delayed requests would have been answered.
      await sleep(3200);
      expect(newSince(before, dataFiles(d))).to.deep.equal([]);
      expect((await inspect(d, `${name}:v1`)).status).to.equal(404);
      expect(await imageCount(d)).to.equal(images);
      await expectServing(d);

      proxy.faults = [];
      await pullOk(d, { fromImage: name, tag: "v1" });
      expect((await inspect(d, `${name}:v1`)).image!.Id).to.equal(img.configDigest);
      expect(readdirSync(join(d.dir, "data/tmp/image"))).to.deep.equal([]);
      expect(readdirSync(join(d.dir, "data/image/layers")).filter((f) => f.startsWith("."))).to.deep.equal([]);
    } finally {
      await proxy.stop();
    }
  });

  it("max-concurrent-downloads 1 makes layers wait; raised to 4 by a reload, the next pull has none waiting", async () => {
    const dir = makeTempDir();
    const file = join(dir, "daemon.json");
    writeFileSync(file, JSON.stringify({ "max-concurrent-downloads": 1 }));
    const limited = await start(["--config-file", file]);
    try {
      const four = async (tag: string) => Promise.all([1, 2, 3, 4].map((i) => randomLayer(`${tag}-${i}`, 4096))).then((l) => pushImage(reg, "lib/four", tag, l));
      const [one, two] = [await four("one"), await four("two")];
      const first = await pullOk(limited, { fromImage: `${reg.host}/lib/four`, tag: "one" });
      expect(waiting(first).length).to.equal(3);
      expect(first.filter((l) => l.status === "Pull complete").length).to.equal(4);
      expect((await inspect(limited, `${reg.host}/lib/four:one`)).image!.Id).to.equal(one.configDigest);

      writeFileSync(file, JSON.stringify({ "max-concurrent-downloads": 4 }));
      expect(await sighup(limited)).to.include("reloaded max-concurrent-downloads: 1 -> 4");
      const second = await pullOk(limited, { fromImage: `${reg.host}/lib/four`, tag: "two" });
      expect(waiting(second)).to.deep.equal([]);
      expect(second.filter((l) => l.status === "Pull complete").length).to.equal(4);
      expect((await inspect(limited, `${reg.host}/lib/four:two`)).image!.Id).to.equal(two.configDigest);
    } finally {
      await limited.stop();
    }
  });
});
