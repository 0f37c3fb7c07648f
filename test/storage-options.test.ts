/**
 * `--storage-opt` belongs to the selected storage driver: an option of another driver stops a
 * real daemon start (and `--validate`) naming that driver, an option of no driver is unknown,
 * the driver checks its own. And `/info`'s DriverStatus, read with `docker info`, is the driver's
 * own status lines.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { builtinStorageManifests, checkStorageOptions } from "../host/storage/option-owners.js";
import {docker } from "./helpers/docker-cli.js";
import { daemonArgs, makeTempDir, ROOT, runEngined, startEngined, type RunResult } from "./helpers/engined.js";
import "./helpers/root-hooks.js";

const BUILTIN = join(ROOT, "dist", "plugins");
/** The btrfs driver is a plugin of its own; whether this build has it decides what its option is here. */
const HAS_BTRFS = existsSync(join(BUILTIN, "storage-btrfs", "manifest.js"));

/** Starts engined with these flags in a folder of its own; it must refuse and exit. */
async function refusedStart(args: string[]): Promise<RunResult> {
  const dir = makeTempDir("engine-storage-opt-");
  const res = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "engine.sock")}`, ...args], { timeoutMs: 30_000 });
  expect(res.code, res.stderr + res.stdout).to.equal(1);
  expect(existsSync(join(dir, "engine.sock")), "it never listened").to.equal(false);
  return res;
}

describe("storage options (--storage-opt) and /info", function () {
  this.timeout(60_000);

  it("reads the owners of options from the built-in storage plugins' manifests", async () => {
    const known = await builtinStorageManifests(BUILTIN);
    expect([...known.keys()]).to.include.members(["overlay2", "fuse-overlayfs"]);
    expect(Object.keys(known.get("overlay2")!.options ?? {})).to.deep.equal(["overlay2.size"]);
    // the selected driver's own pass, whether it declares them (it checks the value) or not (it says unknown)
    expect(() => checkStorageOptions({ "overlay2.size": "1G", "overlay2.nosuch": "1" }, "overlay2", known)).to.not.throw();
    expect(() => checkStorageOptions({ "overlay2.size": "1G" }, "fuse-overlayfs", known)).to.throw(
      "overlay2.size is an option of the overlay2 storage driver, not of fuse-overlayfs",
    );
    expect(() => checkStorageOptions({ "fuse-overlayfs.x": "1" }, "overlay2", known)).to.throw(
      "fuse-overlayfs.x is an option of the fuse-overlayfs storage driver, not of overlay2",
    );
    expect(() => checkStorageOptions({ "nosuch.x": "1" }, "overlay2", known)).to.throw(
      "unknown storage option nosuch.x: no storage driver has it (overlay2 takes overlay2.size)",
    );
    // `size` is winfilter's (the spec's table): named as such, not as unknown
    expect(() => checkStorageOptions({ size: "1G" }, "fuse-overlayfs", known)).to.throw("size is an option of the winfilter storage driver, not of fuse-overlayfs");
    // a third-party driver (not built in) passes its manifest and its namespace
    const thirdParty = { id: "storage.mine", kind: "storage" as const, options: { "mine.speed": { description: "" }, flavour: { description: "" } } };
    expect(() => checkStorageOptions({ "mine.speed": "1", flavour: "x", "mine.other": "2" }, "mine", known, thirdParty)).to.not.throw();
    expect(() => checkStorageOptions({ "overlay2.size": "1G" }, "mine", known, thirdParty)).to.throw(/not of mine$/);
  });

  it("a daemon refuses to start with an option of another storage driver, naming it", async () => {
    const fuse = await refusedStart(["--storage-driver", "fuse-overlayfs", "--storage-opt", "overlay2.size=10G"]);
    expect(fuse.stderr + fuse.stdout).to.include("overlay2.size is an option of the overlay2 storage driver, not of fuse-overlayfs");
    const btrfs = await refusedStart(["--storage-driver", "overlay2", "--storage-opt", "btrfs.min_space=1G"]);
    expect(btrfs.stderr + btrfs.stdout).to.include(
      HAS_BTRFS ? "btrfs.min_space is an option of the btrfs storage driver, not of overlay2" : "unknown storage option btrfs.min_space",
    );
    // the default driver (overlay2 on a fresh data root) is the selected one when none is named
    const implicit = await refusedStart(["--storage-opt", "fuse-overlayfs.x=1"]);
    expect(implicit.stderr + implicit.stdout).to.include("fuse-overlayfs.x is an option of the fuse-overlayfs storage driver, not of overlay2");
  });

  it("a daemon refuses an option of no driver as unknown, and the driver refuses what it does not know of its own", async () => {
    const unknown = await refusedStart(["--storage-opt", "nosuch.size=1"]);
    expect(unknown.stderr + unknown.stdout).to.include("unknown storage option nosuch.size: no storage driver has it (overlay2 takes overlay2.size)");
    const own = await refusedStart(["--storage-driver", "fuse-overlayfs", "--storage-opt", "fuse-overlayfs.size=1G"]);
    expect(own.stderr + own.stdout).to.include("fuse-overlayfs: unknown option fuse-overlayfs.size (the fuse-overlayfs storage driver has no options)");
  });

  it("--validate reports an option of another driver, or of none, or a bad value, without loading a driver", async () => {
    const dir = makeTempDir("engine-storage-validate-");
    const other = await runEngined(["--validate", "--storage-driver", "fuse-overlayfs", "--storage-opt", "overlay2.size=10G"]);
    expect(other.code).to.equal(1);
    expect(other.stdout).to.equal("");
    expect(other.stderr).to.equal("engined: overlay2.size is an option of the overlay2 storage driver, not of fuse-overlayfs\n");
    const config = join(dir, "daemon.json");
    writeFileSync(config, JSON.stringify({ "storage-driver": "overlay2", "storage-opts": ["nosuch.x=1"] }));
    const unknown = await runEngined(["--validate", "--config-file", config]);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.equal("engined: unknown storage option nosuch.x: no storage driver has it (overlay2 takes overlay2.size)\n");
    const malformed = await runEngined(["--validate", "--storage-opt", "overlay2.size"]);
    expect(malformed.code).to.equal(1);
    expect(malformed.stderr).to.include('invalid storage option "overlay2.size"');
    // An option of the selected driver is read by its declared type (overlay2.size: a size above 0);
    // whether the filesystem can honour it is the driver's to judge when it starts.
    const badValue = await runEngined(["--validate", "--data-root", join(dir, "data"), "--storage-opt", "overlay2.size=lots"]);
    expect([badValue.code, badValue.stderr]).to.deep.equal([1, 'engined: overlay2: invalid overlay2.size "lots": expected a size such as 64m, 64MiB or 1g\n']);
    const fine = await runEngined(["--validate", "--data-root", join(dir, "data"), "--storage-opt", "overlay2.size=10G"]);
    expect(fine.stderr).to.equal("");
    expect(fine.stdout).to.equal("configuration OK\n");
    expect(existsSync(join(dir, "data")), "--validate made no data root").to.equal(false);
  });

  it("docker info shows the driver's status lines: overlay2's", async () => {
    const d = await startEngined({ args: ["--storage-driver", "overlay2"] });
    try {
      const r = await docker(`unix://${d.socket}`, ["info", "--format", "{{json .DriverStatus}}"]);
      expect([r.code, r.stderr], r.stderr).to.deep.equal([0, ""]);
      expect(JSON.parse(r.stdout)).to.deep.equal([
        ["Backing Filesystem", "extfs"],
        ["Supports d_type", "true"],
        ["Using metacopy", "false"],
        ["Native Overlay Diff", "true"],
        ["userxattr", "false"],
      ]);
      const text = await docker(`unix://${d.socket}`, ["info"]);
      expect(text.stdout).to.match(/Storage Driver: overlay2\n\s+Backing Filesystem: extfs\n\s+Supports d_type: true\n\s+Using metacopy: false\n\s+Native Overlay Diff: true\n\s+userxattr: false\n/);
    } finally {
      await d.stop();
    }
  });
});
