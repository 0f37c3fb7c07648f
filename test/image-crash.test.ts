/**
 * A kill -9 of the daemon in the middle of a load leaves a store that lists only whole images,
 * and the next start removes what the load had begun: layers, blobs, temporary files.
 */
import "./helpers/root-hooks.js";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { makeTempDir, startEngined } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { dockerSaveTar, imageOf, makeTar } from "./fixtures/images.js";
import { createOverlay2Driver } from "../plugins/storage-overlay2/overlay2.js";
import { LayerStore } from "../core/images/layer-store.js";
import { BlobStore } from "../core/images/blob-store.js";

const list = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);

describe("image store after a crash", () => {
  it("lists only whole images after a kill -9 during a load, and cleans up at the next start", async () => {
    const dir = makeTempDir();
    const dataRoot = join(dir, "data");
    const small = await makeTar([{ name: "small", data: "small" }]);
    // A large second layer: 48 MiB of incompressible data, in files of 4 MiB.
    const big = await makeTar(Array.from({ length: 12 }, (_, i) => ({ name: `big/${i}`, data: randomBytes(4 * 1024 * 1024) })));
    const whole = imageOf([small], { author: "whole" });
    const partial = imageOf([small, big], { author: "partial" });
    const archive = await dockerSaveTar([{ image: whole, tags: ["whole:1"] }, { image: partial, tags: ["partial:1"] }]);

    const d = await startEngined({ args: ["--data-root", dataRoot] });
    const overlayDir = join(dataRoot, "overlay2");
    // Send the archive; kill the daemon once the partial image's big layer is being applied.
    const req = request({ socketPath: d.socket, method: "POST", path: "/v1.51/images/load", headers: { "content-type": "application/x-tar" } });
    req.on("error", () => undefined);
    req.end(archive);
    const until = Date.now() + 30_000;
    let killed = false;
    while (Date.now() < until) {
      const layerDirs = list(overlayDir).filter((n) => /^[a-f0-9]{64}$/.test(n));
      // Two layer folders: the shared small one (whole) and the big one being written.
      if (layerDirs.length >= 2) {
        d.proc.kill("SIGKILL");
        killed = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(killed, "the load reached the big layer").to.equal(true);
    await new Promise((r) => d.proc.once("exit", r));

    const again = await startEngined({ args: ["--data-root", dataRoot] });
    try {
      const images = JSON.parse((await httpRequest({ socketPath: again.socket }, "GET", "/v1.51/images/json")).body) as { RepoTags: string[]; Id: string }[];
      // The partial image never became whole; the whole one may or may not have been stored before the kill.
      expect(images.map((i) => i.RepoTags).flat()).to.not.include("partial:1");
      for (const image of images) expect(image.Id).to.equal(whole.id);
      const keptLayers = images.length ? 1 : 0;
      // Nothing half-made is left: layers, their records, blobs and temporary files.
      expect(list(overlayDir).filter((n) => /^[a-f0-9]{64}$/.test(n))).to.have.length(keptLayers);
      expect(list(join(dataRoot, "image", "layers"))).to.have.length(keptLayers);
      expect(list(join(dataRoot, "image", "blobs", "sha256"))).to.have.length(images.length ? 2 : 0);
      expect(list(join(dataRoot, "tmp", "image"))).to.deep.equal([]);
      // And the archive loads whole now.
      const ok = await new Promise<number>((resolve, reject) => {
        const r = request({ socketPath: again.socket, method: "POST", path: "/v1.51/images/load", headers: { "content-type": "application/x-tar" } }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        r.on("error", reject);
        r.end(archive);
      });
      expect(ok).to.equal(200);
      const after = JSON.parse((await httpRequest({ socketPath: again.socket }, "GET", "/v1.51/images/json")).body) as { RepoTags: string[] }[];
      expect(after.map((i) => i.RepoTags).flat().sort()).to.deep.equal(["partial:1", "whole:1"]);
    } finally {
      await again.stop();
    }
  });

  it("removes a layer whose registration ended between the driver's layer and its record (the pending mark)", async () => {
    const dir = makeTempDir();
    const home = join(dir, "overlay2");
    const driver = await createOverlay2Driver({ home, options: {} });
    const store = new LayerStore(join(dir, "image"), new BlobStore(join(dir, "blobs"), join(dir, "tmp")), driver);
    // What register() leaves when killed after applyDiff and before the record: a whole driver
    // layer, no record, the pending mark.
    const id = "ab".repeat(32);
    writeFileSync(join(dir, "image", "layers", `${id}.pending`), "");
    await driver.create(id, undefined);
    expect(await driver.exists(id)).to.equal(true);
    await store.recoverPending();
    expect(await driver.exists(id)).to.equal(false);
    expect(list(join(dir, "image", "layers"))).to.deep.equal([]);
  });

  it("removes the layouts of pulled layers that have no record: one half written, one renamed into place", async () => {
    const dir = makeTempDir();
    const driver = await createOverlay2Driver({ home: join(dir, "overlay2"), options: {} });
    const store = new LayerStore(join(dir, "image"), new BlobStore(join(dir, "blobs"), join(dir, "tmp")), driver);
    const layers = join(dir, "image", "layers");
    const whole = "cd".repeat(32);
    const recorded = { chainId: `sha256:${whole}`, diffId: `sha256:${whole}`, size: 0, layout: true, tarSize: 1024 };
    writeFileSync(join(layers, `${whole}.json`), JSON.stringify(recorded));
    writeFileSync(join(layers, `${whole}.layout`), "kept");
    writeFileSync(join(layers, `.${"ef".repeat(32)}.layout-0a1b2c3d4e5f`), "half written");
    writeFileSync(join(layers, `${"ef".repeat(32)}.layout`), "no record");
    await store.recoverPending();
    expect(list(layers).sort()).to.deep.equal([`${whole}.json`, `${whole}.layout`]);
  });
});
