/**
 * The winfilter storage driver, the win platform's. What runs on every platform is tested
 * here: its options (`size`, Docker's units), its refusal to be the driver of a Linux daemon,
 * and what its skeleton says it would call. The host compute service calls themselves never
 * ran (plugins/storage-winfilter/README.md).
 */
import { join } from "node:path";
import { Readable } from "node:stream";
import { expect } from "chai";
import plugin, { createWinfilterDriver as createTypedWinfilterDriver, winfilterSupported } from "../plugins/storage-winfilter/index.js";
import { sandboxSizeFor, winfilterOptionsOf } from "../plugins/storage-winfilter/options.js";
import { storageOptionsOf, throughManifest } from "./helpers/storage-options.js";
import { daemonArgs, makeTempDir, runEngined } from "./helpers/engined.js";
import "./helpers/root-hooks.js";
import { rejects as rejection } from "./storage-conformance.js";

const GiB = 1024 ** 3;
/** Made as the daemon makes it: `--storage-opt` text read through the plugin's manifest. */
const createWinfilterDriver = throughManifest(plugin.manifest, createTypedWinfilterDriver);
/** The daemon's `--storage-opt` for winfilter, read as the daemon reads them (its manifest), as the driver takes them. */
const parseWinfilterOptions = (options: Record<string, string>) => winfilterOptionsOf(storageOptionsOf(plugin.manifest, options));
const host = { platform: "linux" as NodeJS.Platform, arch: "x64", kernel: "6.1.0", cgroupVersion: 2 as const };

describe("storage winfilter", function () {
  this.timeout(60_000);

  describe("options", () => {
    it("size defaults to 20G, a 20 GiB sandbox", () => {
      expect(plugin.manifest.options?.size.default).to.equal("20G");
      expect(parseWinfilterOptions({})).to.deep.equal({ sandboxBytes: 20 * GiB });
    });

    it("reads sizes in Docker's units: powers of 1024, with or without B or iB, any case, decimals", () => {
      const cases: [string, number][] = [
        ["40G", 40 * GiB],
        ["40GB", 40 * GiB],
        ["40GiB", 40 * GiB],
        ["40g", 40 * GiB],
        ["1.5G", 1.5 * GiB],
        ["512m", 512 * 1024 ** 2],
        ["1T", 1024 * GiB],
        ["123456", 123456],
      ];
      for (const [value, bytes] of cases) expect(parseWinfilterOptions({ size: value }).sandboxBytes, value).to.equal(bytes);
    });

    it("refuses what is not a size, a size of 0, and any option but size, naming it", () => {
      const cases: [Record<string, string>, string][] = [
        [{ size: "40X" }, 'winfilter: invalid size "40X": expected a size such as 64m, 64MiB or 1g'],
        [{ size: "big" }, 'winfilter: invalid size "big": expected a size such as 64m, 64MiB or 1g'],
        [{ size: "-1G" }, 'winfilter: invalid size "-1G": expected a size such as 64m, 64MiB or 1g'],
        [{ size: "" }, 'winfilter: invalid size "": expected a size such as 64m, 64MiB or 1g'],
        [{ size: "iB" }, 'winfilter: invalid size "iB": expected a size such as 64m, 64MiB or 1g'],
        [{ size: "0" }, 'winfilter: invalid size "0": must be larger than 0'],
        [{ "winfilter.size": "20G" }, "winfilter: unknown option winfilter.size"],
        [{ "overlay2.size": "20G" }, "winfilter: unknown option overlay2.size"],
      ];
      for (const [options, message] of cases) expect(() => parseWinfilterOptions(options), JSON.stringify(options)).to.throw(message);
    });

    it("a container's own size wins over the daemon's; it is checked the same way", () => {
      const defaults = parseWinfilterOptions({ size: "30G" });
      expect(sandboxSizeFor({ writable: true }, defaults)).to.equal(30 * GiB);
      expect(sandboxSizeFor({ writable: true, storageOpts: { size: "50G" } }, defaults)).to.equal(50 * GiB);
      expect(sandboxSizeFor({ writable: true, storageOpts: { Size: "60G" } }, defaults)).to.equal(60 * GiB);
      expect(() => sandboxSizeFor({ storageOpts: { size: "lots" } }, defaults)).to.throw('winfilter: invalid size "lots"');
      expect(() => sandboxSizeFor({ storageOpts: { quota: "1G" } }, defaults)).to.throw("winfilter: unknown storage option quota");
    });
  });

  describe("the skeleton driver", () => {
    it("checks its options when made, and says what it would call instead of pretending", async () => {
      const home = join(makeTempDir("engine-storage-"), "winfilter");
      await rejection(createWinfilterDriver({ home, options: { size: "huge" } })).then((err) => expect(err.message).to.match(/^winfilter: invalid size "huge"/));
      const driver = await createWinfilterDriver({ home, options: { size: "40G" } });
      expect(driver.name).to.equal("winfilter");
      expect(await driver.status()).to.deep.equal([
        ["Windows", ""],
        ["Sandbox Size", "40GiB"],
      ]);
      await driver.cleanup();
      const sandbox = await rejection(driver.create("ctr", "image", { writable: true }));
      expect(sandbox.message).to.equal(
        `winfilter: creating a 40GiB sandbox is not implemented by this engine; on the win platform it is CreateSandboxLayer on the parent's layer chain, then ExpandSandboxSize to ${40 * GiB} bytes of the host compute service (vmcompute.dll)`,
      );
      expect((await rejection(driver.create("ctr", "image", { writable: true, storageOpts: { size: "64G" } }))).message).to.include(`ExpandSandboxSize to ${64 * GiB} bytes`);
      expect((await rejection(driver.create("ctr", "image", { writable: true, storageOpts: { size: "64Q" } }))).message).to.equal(
        'winfilter: invalid size "64Q": expected a size such as 64m, 64MiB or 1g',
      );
      expect((await rejection(driver.create("img", undefined, { storageOpts: { size: "1G" } }))).message).to.equal(
        "winfilter: storage options apply to a container's sandbox only (layer img)",
      );
      expect((await rejection(driver.create("img", undefined))).message).to.match(/CreateLayer of the host compute service/);
      expect((await rejection(driver.mounts("img"))).message).to.match(/ActivateLayer, PrepareLayer with the layer chain, then GetLayerMountPath/);
      expect((await rejection(driver.applyDiff("img", Readable.from([])))).message).to.match(/ImportLayer/);
      expect((await rejection(driver.diff("img"))).message).to.match(/ExportLayer/);
      expect((await rejection(driver.remove("img"))).message).to.match(/DestroyLayer/);
      expect((await rejection(driver.exists("../x"))).message).to.equal('winfilter: invalid layer id "../x"');
    });
  });

  describe("on a Linux host", () => {
    it("the plugin says it is not for this host, naming the platform", () => {
      expect(winfilterSupported({ ...host, platform: "win32" })).to.equal(true);
      expect(winfilterSupported(host)).to.equal(
        "winfilter is the storage driver of the win platform (layers kept by its host compute service), and this host's platform is linux; on Linux choose overlay2, fuse-overlayfs, btrfs, zfs or vfs",
      );
      expect(plugin.supported!(host)).to.equal(winfilterSupported(host));
      expect(plugin.manifest.id).to.equal("storage.winfilter");
      expect(Object.keys(plugin.manifest.options ?? {})).to.deep.equal(["size"]);
    });

    it("a daemon asked for --storage-driver winfilter refuses to start, naming the platform", async function () {
      if (process.platform === "win32") this.skip();
      const dir = makeTempDir();
      const res = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "s.sock")}`, "--storage-driver", "winfilter", "--storage-opt", "size=40G"]);
      expect(res.code).to.equal(1);
      expect(res.stderr).to.include(
        `plugin storage.winfilter was selected but is not supported on this host: winfilter is the storage driver of the win platform (layers kept by its host compute service), and this host's platform is ${process.platform}`,
      );
      expect(res.stderr).to.include("ENGINE_ERR_PLUGIN_NOT_SUPPORTED");
      expect(res.stderr).to.not.include("daemon has completed initialization");
    });
  });
});
