/**
 * The volume-driver conformance suite: what every volume driver must do (core/contracts/
 * volume.ts), tested for real: files are written through the host paths `mount` returns, and a
 * second driver made on the same home stands for a daemon restart.
 *
 * A driver's test file calls `volumeConformance("<name>", makeDriver)`; `makeDriver(home)`
 * makes a driver whose home is `home` (a fresh temporary folder per test, the same folder when
 * called twice in one test).
 */
import { existsSync, statSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "chai";
import type { VolumeDriver } from "../core/contracts/volume.js";
import { makeTempDir } from "./helpers/engined.js";
import "./helpers/root-hooks.js";

const C1 = "a".repeat(64);
const C2 = "b".repeat(64);

export function volumeConformance(name: string, makeDriver: (home: string) => Promise<VolumeDriver>): void {
  describe(`volume driver conformance: ${name}`, function () {
    this.timeout(30_000);
    let home: string;
    let driver: VolumeDriver;
    const made: VolumeDriver[] = [];

    beforeEach(async function () {
      home = makeTempDir(`engine-volume-${name}-`);
      driver = await makeDriver(home);
      made.push(driver);
    });
    afterEach(async function () {
      // Whatever a test left mounted or made goes, through the drivers themselves.
      for (const d of made.splice(0)) {
        for (const v of await d.list().catch(() => [])) {
          await d.unmount(v.name, C1).catch(() => {});
          await d.unmount(v.name, C2).catch(() => {});
          await d.remove(v.name).catch(() => {});
        }
      }
    });

    it("says who it is", async function () {
      expect(driver.name).to.equal(name);
      expect(["local", "global"]).to.include(driver.scope);
      expect(await driver.status()).to.be.an("array");
      expect(Boolean(driver.usage)).to.equal(driver.capabilities.includes("usage"));
    });

    it("creates a volume it then gets and lists, with its options", async function () {
      const info = await driver.create("conf-one", {});
      expect(info.name).to.equal("conf-one");
      expect(info.mountpoint).to.be.a("string").and.not.equal("");
      expect(Number.isNaN(Date.parse(info.createdAt))).to.equal(false);
      expect(await driver.get("conf-one")).to.deep.include({ name: "conf-one", mountpoint: info.mountpoint });
      expect((await driver.list()).map((v) => v.name)).to.include("conf-one");
      expect(await driver.get("conf-none")).to.equal(undefined);
    });

    it("refuses a name it already has, and options it does not know", async function () {
      await driver.create("conf-twice", {});
      let failed: Error | undefined;
      await driver.create("conf-twice", {}).catch((e: Error) => (failed = e));
      expect(failed, "second create").to.be.instanceOf(Error);
      expect(() => driver.validateOptions({ "engine-conformance-unknown": "1" })).to.throw(/engine-conformance-unknown/);
      const refused = await driver.create("conf-badopt", { "engine-conformance-unknown": "1" }).then(() => undefined, (e: Error) => e);
      expect(refused?.message).to.match(/engine-conformance-unknown/);
      expect(await driver.get("conf-badopt")).to.equal(undefined);
    });

    it("mounts a volume for several containers at one host path, and its data stays", async function () {
      await driver.create("conf-data", {});
      const p1 = await driver.mount("conf-data", C1);
      expect(statSync(p1).isDirectory()).to.equal(true);
      await writeFile(join(p1, "f"), "hello");
      const p2 = await driver.mount("conf-data", C2);
      expect(await readFile(join(p2, "f"), "utf8")).to.equal("hello");
      // the same container twice counts once; unmounting one that holds nothing is fine
      await driver.mount("conf-data", C1);
      await driver.unmount("conf-data", C1);
      await driver.unmount("conf-data", C1);
      await driver.unmount("conf-data", C2);
      const again = await driver.mount("conf-data", C1);
      expect(await readFile(join(again, "f"), "utf8")).to.equal("hello");
      await driver.unmount("conf-data", C1);
    });

    it("refuses to mount a volume it does not have", async function () {
      let failed: Error | undefined;
      await driver.mount("conf-missing", C1).catch((e: Error) => (failed = e));
      expect(failed).to.be.instanceOf(Error);
    });

    it("keeps volumes and data for the next driver on the same home (a restart)", async function () {
      await driver.create("conf-keep", {});
      await writeFile(join(await driver.mount("conf-keep", C1), "kept"), "yes");
      await driver.unmount("conf-keep", C1);
      const next = await makeDriver(home);
      made.push(next);
      expect((await next.list()).map((v) => v.name)).to.include("conf-keep");
      expect(await readFile(join(await next.mount("conf-keep", C1), "kept"), "utf8")).to.equal("yes");
      await next.unmount("conf-keep", C1);
    });

    it("removes a volume and its data; removing it again is fine", async function () {
      const info = await driver.create("conf-gone", {});
      const path = await driver.mount("conf-gone", C1);
      await writeFile(join(path, "f"), "x");
      await driver.unmount("conf-gone", C1);
      await driver.remove("conf-gone");
      expect(await driver.get("conf-gone")).to.equal(undefined);
      expect((await driver.list()).map((v) => v.name)).not.to.include("conf-gone");
      expect(existsSync(join(info.mountpoint, "f"))).to.equal(false);
      await driver.remove("conf-gone");
    });

    it("reports usage in bytes when it says it can", async function () {
      if (!driver.usage) this.skip();
      await driver.create("conf-usage", {});
      const path = await driver.mount("conf-usage", C1);
      await writeFile(join(path, "blob"), Buffer.alloc(12_345, 1));
      expect(await driver.usage!("conf-usage")).to.be.at.least(12_345);
      await driver.unmount("conf-usage", C1);
    });
  });
}
