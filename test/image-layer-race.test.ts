/**
 * An image's removal next to a pull of another image on the same base layer (the soak's race,
 * bench/soak.mjs with 4 clients). The removal's clean-up finds the base unused and removes the
 * layers above it first; a pull that takes the base meanwhile must either keep it (its hold is
 * looked at when the base's turn comes) or, once the base's removal has begun, find it absent,
 * download it again and register it once it has gone. Neither side may fail, and the store must
 * stay whole: every layer record with its driver layer, no pending mark.
 *
 * First the two orders made deterministic on the store itself (the real overlay2 driver, its
 * removals held at a gate), then rounds of `DELETE /images` next to `POST /images/create`
 * against a real registry on 127.0.0.1, the one started at a varying offset from the other.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { makeTempDir, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { startRegistry, type TestRegistry } from "./helpers/registry.js";
import { daemonHooks, pull, pullOk, randomLayer, sleep, start } from "./helpers/pull-api.js";
import { imageOf } from "./fixtures/images.js";
import { pushImage } from "./fixtures/registry-push.js";
import { createOverlay2Driver } from "../plugins/storage-overlay2/overlay2.js";
import { chainIdOf, ImageStore } from "../core/images/image-store.js";
import type { StorageDriver } from "../core/contracts/storage.js";

const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
const hex = (digest: string) => digest.slice("sha256:".length);

/**
 * The driver, with its removals of the layers `arm` names held until `open()`; `removing`
 * resolves with the first of them to arrive. (Other removals, e.g. a registration's of a
 * leftover, pass.)
 */
function gatedDriver(driver: StorageDriver) {
  let arrived!: (id: string) => void;
  const removing = new Promise<string>((resolve) => (arrived = resolve));
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const held = new Set<string>();
  const gated = Object.assign(Object.create(driver) as StorageDriver, {
    remove: async (id: string) => {
      if (held.has(id)) {
        arrived(id);
        await gate;
      }
      return driver.remove(id);
    },
  });
  return { driver: gated, removing, open, arm: (ids: string[]) => ids.forEach((id) => held.add(id)) };
}

/**
 * The layers the store holds, once it is checked whole: every layer record with its driver
 * layer and no driver layer without its record, no pending mark.
 */
function wholeStoreLayers(dir: string): string[] {
  const layers = readdirSync(join(dir, "image", "layers"));
  const records = layers.filter((f) => f.endsWith(".json")).map((f) => f.slice(0, 64)).sort();
  expect(readdirSync(join(dir, "overlay2")).filter((f) => /^[a-f0-9]{64}$/.test(f)).sort(), "driver layers").to.deep.equal(records);
  expect(layers.filter((f) => f.endsWith(".pending")), "pending marks").to.deep.equal([]);
  return records;
}

/** The image `right` (base, right) made from its layers, as a pull ends. */
async function storeRight(store: ImageStore, base: Buffer, right: Buffer, chain: string[]): Promise<void> {
  const { image } = await store.createFromLayers(imageOf([base, right], { author: "right" }).config, chain, ["docker.io/library/right:1"]);
  expect(image.chain).to.deep.equal(chain);
}

describe("an image's removal next to a pull on its base layer", function () {
  this.timeout(60_000);

  async function storeWith(dir: string) {
    const gated = gatedDriver(await createOverlay2Driver({ home: join(dir, "overlay2"), options: {} }));
    const store = await ImageStore.open(join(dir, "image"), join(dir, "tmp"), gated.driver);
    return { store, ...gated };
  }

  const layer = (name: string) => randomLayer(name, 64 * 1024);

  it("a pull that takes the base while the layers above it go keeps it: the removal leaves it, the pull builds on it", async () => {
    const dir = makeTempDir("engine-layer-race-");
    const [base, left, right] = await Promise.all([layer("base"), layer("left"), layer("right")]);
    const { store, removing, open, arm } = await storeWith(dir);
    const leftImage = imageOf([base, left], { author: "left" });
    await store.create(leftImage.config, await tarFiles(dir, [base, left]), ["left:1"]);
    const leftTop = chainIdOf(sha(base), sha(left));
    arm([hex(leftTop), hex(sha(base))]);

    // the removal of `left` stops at its first layer's driver removal (the top one)
    const deleting = store.delete("left:1", { force: false, noprune: false });
    expect(await removing).to.equal(hex(leftTop));
    // a pull of `right` now: it holds its chain, finds the base there and registers on it
    const rightChain = [sha(base), chainIdOf(sha(base), sha(right))];
    const release = store.hold(rightChain);
    try {
      expect(await store.layers.present(rightChain[0]), "the base, not on its way out yet").to.not.equal(undefined);
      await store.layers.registerChain(rightChain[0], [{ tar: Readable.from(right), diffId: sha(right) }]);
      open();
      const deleted = await deleting;
      // the top layer went, the base (held when its turn came) stayed
      expect(deleted.map((e) => Object.values(e)[0])).to.deep.equal(["left:1", leftImage.id, leftTop]);
      await storeRight(store, base, right, rightChain);
    } finally {
      release();
    }
    expect(wholeStoreLayers(dir)).to.deep.equal(rightChain.map(hex).sort());
  });

  it("a pull that comes once the base's removal has begun finds it absent, and registers it again once it has gone", async () => {
    const dir = makeTempDir("engine-layer-race-");
    const [base, right] = await Promise.all([layer("base"), layer("right")]);
    const { store, removing, open, arm } = await storeWith(dir);
    const baseImage = imageOf([base], { author: "base only" });
    await store.create(baseImage.config, await tarFiles(dir, [base]), ["base:1"]);
    arm([hex(sha(base))]);

    const deleting = store.delete("base:1", { force: false, noprune: false });
    expect(await removing).to.equal(hex(sha(base)));
    const rightChain = [sha(base), chainIdOf(sha(base), sha(right))];
    const release = store.hold(rightChain);
    try {
      expect(await store.layers.present(rightChain[0]), "a layer being removed is not one to build on").to.equal(undefined);
      // the pull downloads the base again: its registration waits for the removal, then makes it anew
      const registering = store.layers.registerChain(undefined, [
        { tar: Readable.from(base), diffId: sha(base) },
        { tar: Readable.from(right), diffId: sha(right) },
      ]);
      await sleep(200);
      const records = readdirSync(join(dir, "image", "layers")).filter((f) => f.endsWith(".json"));
      expect(records, "nothing registered before the removal has ended").to.deep.equal([]);
      open();
      expect((await deleting).map((e) => Object.values(e)[0])).to.deep.equal(["base:1", baseImage.id, sha(base)]);
      const registered = await registering;
      expect(registered.map((r) => [r.layer.chainId, r.existed])).to.deep.equal([[rightChain[0], false], [rightChain[1], false]]);
      await storeRight(store, base, right, rightChain);
    } finally {
      release();
    }
    expect(wholeStoreLayers(dir)).to.deep.equal(rightChain.map(hex).sort());
  });

  it("a container made on an image removed while the create held its layers keeps them: later clean-ups leave them alone", async () => {
    const dir = makeTempDir("engine-layer-race-");
    const [base, top, other] = await Promise.all([layer("base"), layer("top"), layer("other")]);
    const { store, driver } = await storeWith(dir);
    const made = imageOf([base, top], { author: "used" });
    await store.create(made.config, await tarFiles(dir, [base, top]), ["used:1"]);
    const image = store.resolve("used:1");
    let container: string | undefined;
    store.setUsers((id) => (id === image.id && container ? { stopped: container } : {}));
    // the create looked the image up and holds its chain; the image is removed meanwhile
    const release = store.hold(image.chain);
    const deleted = await store.delete("used:1", { force: false, noprune: false });
    expect(deleted.map((e) => Object.values(e)[0])).to.deep.equal(["used:1", made.id]);
    // the create goes on: its layer on the image's top, its record, then the store is told
    container = "c0ffee".padEnd(64, "0");
    await driver.create(container, hex(image.chain.at(-1)!), { writable: true, storageOpts: {} });
    await store.keepForNewContainer(image);
    release();
    // a later removal's clean-up (another image) does not try to take the container's layers
    const second = imageOf([other], { author: "other" });
    await store.create(second.config, await tarFiles(join(dir, "second"), [other]), ["other:1"]);
    expect((await store.delete("other:1", { force: false, noprune: false })).map((e) => Object.values(e)[0])).to.deep.equal(["other:1", second.id, sha(other)]);
    expect(store.isRetained(image.id)).to.equal(true);
    // once the container is gone, they go with the next clean-up
    await driver.remove(container);
    container = undefined;
    const third = imageOf([other], { author: "third" });
    await store.create(third.config, await tarFiles(join(dir, "third"), [other]), ["third:1"]);
    const last = (await store.delete("third:1", { force: false, noprune: false })).map((e) => Object.values(e)[0]);
    expect(last).to.include.members([image.chain[1], image.chain[0]]);
    expect(wholeStoreLayers(dir)).to.deep.equal([]);
  });

  describe("through the API, against a real registry", function () {
    this.timeout(240_000);
    let reg: TestRegistry;
    let d: TestDaemon;
    before(async () => {
      reg = await startRegistry();
      const base = await randomLayer("base", 1 << 20);
      await pushImage(reg, "race/left", "v1", [base, await randomLayer("left", 256 * 1024)]);
      await pushImage(reg, "race/right", "v1", [base, await randomLayer("right", 256 * 1024)]);
    });
    daemonHooks();
    after(async () => {
      await reg?.stop();
    });

    it("round after round, removing one image while the other is pulled: both succeed and the store stays whole", async () => {
      d = await start();
      const name = (which: string) => `${reg.host}/race/${which}:v1`;
      await pullOk(d, { fromImage: `${reg.host}/race/left`, tag: "v1" });
      let have = "left";
      let want = "right";
      const until = Date.now() + 150_000;
      let rounds = 0;
      for (; rounds < 40 && Date.now() < until; rounds++) {
        // the removal starts from 30 ms before the pull to 30 ms after it
        const offset = ((rounds * 13) % 61) - 30;
        const pulling = sleep(Math.max(0, -offset)).then(() => pull(d, { fromImage: `${reg.host}/race/${want}`, tag: "v1" }, { timeoutMs: 60_000 }));
        const removing = sleep(Math.max(0, offset)).then(() => httpRequest({ socketPath: d.socket }, "DELETE", `/v1.51/images/${name(have)}`));
        const [pulled, removed] = await Promise.all([pulling, removing]);
        const pullError = pulled.status !== 200 ? pulled.body : pulled.lines.find((l) => l.errorDetail)?.errorDetail?.message;
        expect({ round: rounds, offset, removal: removed.status === 200 ? "ok" : `${removed.status} ${removed.body}`, pull: pullError ?? "ok" }).to.deep.equal({ round: rounds, offset, removal: "ok", pull: "ok" });
        const images = JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/images/json")).body) as { RepoTags: string[] }[];
        expect(images.flatMap((i) => i.RepoTags)).to.deep.equal([name(want)]);
        [have, want] = [want, have];
      }
      expect(rounds, "rounds run in the time").to.be.greaterThan(10);
      expect(wholeStoreLayers(join(d.dir, "data"))).to.have.length(2);
      // and the image left runs on what the store kept
      const inspect = await httpRequest({ socketPath: d.socket }, "GET", `/v1.51/images/${name(have)}/json`);
      expect(inspect.status).to.equal(200);
    });
  });
});

/** Layer tars as files (the store's `create` moves them into itself). */
async function tarFiles(dir: string, tars: Buffer[]): Promise<string[]> {
  mkdirSync(join(dir, "in"), { recursive: true });
  return tars.map((t, i) => {
    const file = join(dir, "in", `${i}.tar`);
    writeFileSync(file, t);
    return file;
  });
}
