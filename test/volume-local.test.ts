/**
 * The local volume driver: the shared conformance suite, then what only `local` promises:
 * Docker's layout (`<home>/<name>/_data`, `opts.json`), its options checked with Docker's
 * messages, and `type`/`device`/`o` volumes mounted with mount(8) on first use and unmounted
 * after the last (tmpfs, and a bind of a host folder whose data a removal leaves alone).
 */
import { existsSync, readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "chai";
import plugin from "../plugins/volume-local/index.js";
import { createLocalVolumeDriver, validateLocalOptions } from "../plugins/volume-local/index.js";
import { makeTempDir } from "./helpers/engined.js";
import "./helpers/root-hooks.js";
import { volumeConformance } from "./volume-conformance.js";

volumeConformance("local", async (home) => createLocalVolumeDriver(home));

const C1 = "c".repeat(64);
const C2 = "d".repeat(64);
const mountedAt = (path: string) => readFileSync("/proc/self/mountinfo", "utf8").split("\n").some((l) => l.split(" ")[4] === path);

describe("volume.local", function () {
  this.timeout(30_000);

  it("is a volume plugin with Docker's option names", function () {
    expect(plugin.manifest).to.deep.include({ id: "volume.local", kind: "volume" });
    expect(Object.keys(plugin.manifest.options ?? {}).sort()).to.deep.equal(["device", "o", "size", "type"]);
  });

  it("checks options with Docker's messages", function () {
    expect(() => validateLocalOptions({ foo: "1" })).to.throw(/^invalid option: "foo"/);
    expect(() => validateLocalOptions({ type: "tmpfs" })).to.throw('missing required option: "device"');
    expect(() => validateLocalOptions({ device: "tmpfs" })).to.throw('missing required option: "type"');
    expect(() => validateLocalOptions({ o: "size=1m", type: "tmpfs" })).to.throw('missing required option: "device"');
    expect(() => validateLocalOptions({ size: "10m" })).to.throw("quota size requested but no quota support");
    expect(() => validateLocalOptions({ type: "none", device: "rel/dir", o: "bind" })).to.throw(/absolute host path/);
    expect(() => validateLocalOptions({ type: "tmpfs", device: "tmpfs", o: "size=1m" })).not.to.throw();
    expect(() => validateLocalOptions({})).not.to.throw();
  });

  it("keeps Docker's layout: <name>/_data, and opts.json for a volume with options", async function () {
    const home = makeTempDir("engine-volume-layout-");
    const driver = createLocalVolumeDriver(home);
    const plain = await driver.create("plain", {});
    expect(plain.mountpoint).to.equal(join(home, "plain", "_data"));
    expect(existsSync(join(home, "plain", "opts.json"))).to.equal(false);
    await driver.create("withopts", { type: "tmpfs", device: "tmpfs", o: "size=1m" });
    expect(JSON.parse(readFileSync(join(home, "withopts", "opts.json"), "utf8"))).to.deep.equal({ type: "tmpfs", device: "tmpfs", o: "size=1m" });
    expect((await driver.get("withopts"))?.options).to.deep.equal({ type: "tmpfs", device: "tmpfs", o: "size=1m" });
    await driver.remove("plain");
    await driver.remove("withopts");
  });

  it("mounts a tmpfs volume on first use and unmounts it after the last", async function () {
    const home = makeTempDir("engine-volume-tmpfs-");
    const driver = createLocalVolumeDriver(home);
    const info = await driver.create("scratch", { type: "tmpfs", device: "tmpfs", o: "size=1m" });
    expect(mountedAt(info.mountpoint)).to.equal(false);
    const path = await driver.mount("scratch", C1);
    expect(mountedAt(path), "mounted after the first mount").to.equal(true);
    await driver.mount("scratch", C2);
    await writeFile(join(path, "f"), "x");
    await driver.unmount("scratch", C1);
    expect(mountedAt(path), "still mounted for the second").to.equal(true);
    await driver.unmount("scratch", C2);
    expect(mountedAt(path), "unmounted after the last").to.equal(false);
    // a tmpfs keeps nothing once unmounted
    expect(existsSync(join(path, "f"))).to.equal(false);
    await driver.remove("scratch");
    expect(existsSync(join(home, "scratch"))).to.equal(false);
  });

  it("binds a host folder with o=bind, and a removal leaves the host's data alone", async function () {
    const home = makeTempDir("engine-volume-bind-");
    const hostDir = makeTempDir("engine-volume-bind-src-");
    await writeFile(join(hostDir, "keep"), "host data");
    const driver = createLocalVolumeDriver(home);
    await driver.create("hostdir", { type: "none", device: hostDir, o: "bind" });
    const path = await driver.mount("hostdir", C1);
    expect(await readFile(join(path, "keep"), "utf8")).to.equal("host data");
    await writeFile(join(path, "from-volume"), "y");
    expect(await readFile(join(hostDir, "from-volume"), "utf8")).to.equal("y");
    // removed while still mounted: the driver unmounts first, never deletes through the bind
    await driver.remove("hostdir");
    expect(mountedAt(path)).to.equal(false);
    expect(await readFile(join(hostDir, "keep"), "utf8")).to.equal("host data");
  });

  it("fails a mount of a device that is not there with mount(8)'s reason", async function () {
    const home = makeTempDir("engine-volume-baddev-");
    const driver = createLocalVolumeDriver(home);
    await driver.create("baddev", { type: "ext4", device: "/dev/engine-no-such-device" });
    let failed: Error | undefined;
    await driver.mount("baddev", C1).catch((e: Error) => (failed = e));
    expect(failed?.message).to.equal(`failed to mount local volume: mount /dev/engine-no-such-device:${join(home, "baddev", "_data")}: no such file or directory`);
    await driver.remove("baddev");
  });
});
