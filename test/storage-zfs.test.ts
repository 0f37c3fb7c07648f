/**
 * The zfs storage driver. These machines have no ZFS (no module, no zfsutils), so the driver
 * runs against a fake `zfs` command (test/fixtures/fake-zfs.ts) that keeps datasets, snapshots,
 * clones and properties, and fails where zfs fails with zfs's messages; a dataset's files are
 * a folder that the tests bind-mount where `mount -t zfs` would mount the dataset. The shared
 * conformance suite runs through it; then what only zfs promises (its calls, quota, the
 * messages it passes on, zfs.fsname), the fake's own faithfulness, and the refusal to start on
 * a host without ZFS.
 */
import { mkdirSync } from "node:fs";
import { mkdir, open, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "chai";
import plugin, { zfsSupported } from "../plugins/storage-zfs/index.js";
import { createZfsDriver as createTypedZfsDriver, type ZfsDriver, type ZfsDriverHooks } from "../plugins/storage-zfs/zfs-driver.js";
import { throughManifest } from "./helpers/storage-options.js";
import { daemonArgs, makeTempDir, runEngined } from "./helpers/engined.js";
import { startFakeZfs } from "./helpers/fake-zfs.js";
import "./helpers/root-hooks.js";
import { makeTar, readTar, rejects, storageConformance, withMount } from "./storage-conformance.js";

const fake = startFakeZfs(["tank"]);
/** Made as the daemon makes it: `--storage-opt` text read through the plugin's manifest. */
const createZfsDriver = throughManifest(plugin.manifest, createTypedZfsDriver);
const hooks: ZfsDriverHooks = { zfsCommand: fake.zfsPath, zpoolCommand: fake.zpoolPath, mount: fake.mount };

/** A dataset of its own for each driver home, kept when a test makes a second driver on the same home. */
const datasetOfHome = new Map<string, string>();

async function freshDataset(): Promise<string> {
  const name = `tank/t${datasetOfHome.size + 1}`;
  const made = await fake.zfs(["create", name]);
  if (made.code !== 0) throw new Error(made.stderr);
  return name;
}

async function makeDriver(home: string, options: Record<string, string>): Promise<ZfsDriver> {
  let fsname = datasetOfHome.get(home);
  if (!fsname) {
    fsname = await freshDataset();
    datasetOfHome.set(home, fsname);
  }
  return createZfsDriver({ home, options: { "zfs.fsname": fsname, ...options } }, hooks);
}

// The 120-layer chain is 360 runs of the fake (a Node.js start each): minutes on a loaded machine.
storageConformance("zfs", makeDriver, { mount: (specs, target) => fake.mountAll(specs, target), timeoutMs: 600_000 });

/** `zfs get -H -p -o value <prop> <name>` through the fake. */
async function prop(name: string, property: string): Promise<string> {
  const res = await fake.zfs(["get", "-H", "-p", "-o", "value", property, name]);
  if (res.code !== 0) throw new Error(res.stderr);
  return res.stdout.trim();
}

async function zfsList(name: string, type: string): Promise<string[]> {
  const res = await fake.zfs(["list", "-H", "-o", "name", "-t", type, "-r", name]);
  return res.stdout.split("\n").filter(Boolean);
}

describe("storage zfs", function () {
  this.timeout(120_000);
  let home: string;
  let fsname: string;
  let driver: ZfsDriver;

  beforeEach(async () => {
    home = join(makeTempDir("engine-storage-"), "zfs");
    mkdirSync(home);
    driver = await makeDriver(home, {});
    fsname = driver.fsname;
    await driver.cleanup();
  });

  /** The zfs calls made from now on, without the `zfs` word. */
  const callsSince = () => {
    const before = fake.calls().length;
    return () => fake.calls().slice(before).map((c) => c.slice(1));
  };

  it("makes a base layer with zfs create and a child as a clone of a snapshot of its parent, marked for deferred destruction", async () => {
    const calls = callsSince();
    await driver.create("base", undefined);
    await driver.create("child", "base");
    await driver.create("ctr", "child", { writable: true });
    expect(calls()).to.deep.equal([
      ["create", "-o", "mountpoint=legacy", "-o", "com.engine:layer=image", `${fsname}/base`],
      ["snapshot", `${fsname}/base@child`],
      ["clone", "-o", "mountpoint=legacy", "-o", "com.engine:layer=image", `${fsname}/base@child`, `${fsname}/child`],
      ["destroy", "-d", `${fsname}/base@child`],
      ["snapshot", `${fsname}/child@ctr`],
      ["clone", "-o", "mountpoint=legacy", "-o", "com.engine:layer=container", `${fsname}/child@ctr`, `${fsname}/ctr`],
      ["destroy", "-d", `${fsname}/child@ctr`],
    ]);
    expect(await prop(`${fsname}/child`, "origin")).to.equal(`${fsname}/base@child`);
    expect(await prop(`${fsname}/ctr`, "mountpoint")).to.equal("legacy");
    // The snapshot stays while its clone lives, marked to go with it.
    expect(await prop(`${fsname}/base@child`, "defer_destroy")).to.equal("on");
    expect(await prop(`${fsname}/base@child`, "clones")).to.equal(`${fsname}/child`);
    expect(await driver.mounts("child")).to.deep.equal([{ type: "zfs", source: `${fsname}/child`, options: ["ro"] }]);
    expect(await driver.mounts("ctr")).to.deep.equal([{ type: "zfs", source: `${fsname}/ctr`, options: [] }]);
  });

  it("removes a layer with zfs destroy -r; the parent's snapshot goes with its last clone", async () => {
    await driver.create("base", undefined);
    await driver.create("child", "base");
    const calls = callsSince();
    await driver.remove("child");
    expect(calls()).to.deep.equal([["destroy", "-r", `${fsname}/child`]]);
    expect(await zfsList(fsname, "snapshot")).to.deep.equal([]);
    await driver.remove("base");
    expect(await zfsList(fsname, "filesystem")).to.deep.equal([fsname]);
  });

  it("gives a container's size to its dataset as a ZFS quota", async () => {
    await driver.create("base", undefined);
    const calls = callsSince();
    await driver.create("ctr", "base", { writable: true, storageOpts: { size: "64M" } });
    expect(calls()).to.deep.include(["set", "quota=67108864", `${fsname}/ctr`]);
    expect(await prop(`${fsname}/ctr`, "quota")).to.equal(String(64 * 1024 * 1024));
    expect((await driver.status()).find(([k]) => k === "Parent Quota")).to.deep.equal(["Parent Quota", "no"]);
    expect(driver.capabilities).to.deep.equal(["quota"]);
  });

  it("refuses a size on an image layer, a size that is not one, and unknown per-layer options, leaving nothing", async () => {
    await driver.create("base", undefined);
    const cases: [string, Parameters<ZfsDriver["create"]>[2], string][] = [
      ["img", { storageOpts: { size: "1G" } }, "zfs: the size option applies to writable layers only (layer img)"],
      ["c1", { writable: true, storageOpts: { size: "lots" } }, 'zfs: invalid size "lots": expected a size such as 64m, 64MiB or 1g'],
      ["c2", { writable: true, storageOpts: { size: "0" } }, 'zfs: invalid size "0": must be larger than 0'],
      ["c3", { writable: true, storageOpts: { nosuch: "1" } }, "zfs: unknown storage option nosuch"],
    ];
    for (const [id, opts, message] of cases) {
      expect((await rejects(driver.create(id, "base", opts))).message).to.equal(message);
      expect(await driver.exists(id)).to.equal(false);
    }
    expect(await zfsList(fsname, "filesystem")).to.deep.equal([fsname, `${fsname}/base`]);
    expect(await readdir(join(home, "incomplete"))).to.deep.equal([]);
  });

  describe("passes zfs's refusals on", () => {
    it("a parent with a dependent clone", async () => {
      await driver.create("base", undefined);
      await driver.create("child", "base");
      const err = await rejects(driver.remove("base"));
      expect(err.message).to.equal(
        `zfs: cannot remove layer base: cannot destroy '${fsname}/base': filesystem has dependent clones\n` +
          `use '-R' to destroy the following datasets:\n${fsname}/child`,
      );
      expect(await driver.exists("base")).to.equal(true);
    });

    it("a layer mounted and in use", async () => {
      await driver.create("base", undefined);
      await driver.create("ctr", "base", { writable: true });
      const target = makeTempDir("engine-zfs-mnt-");
      const [spec] = await driver.mounts("ctr");
      await fake.mount(spec, target);
      await writeFile(join(target, "held"), "x");
      const held = await open(join(target, "held"));
      try {
        const err = await rejects(driver.remove("ctr"));
        expect(err.message).to.equal(`zfs: cannot remove layer ctr: cannot unmount '${target}': pool or dataset is busy`);
      } finally {
        await held.close();
      }
      // No longer busy: zfs unmounts it and destroys it, as it does a mounted legacy dataset.
      await driver.remove("ctr");
      expect(await driver.exists("ctr")).to.equal(false);
      expect(await readdir(target)).to.deep.equal([]);
    });

    it("a dataset that someone else made under the same name, which it leaves alone", async () => {
      expect((await fake.zfs(["create", `${fsname}/theirs`])).code).to.equal(0);
      const err = await rejects(driver.create("theirs", undefined));
      expect(err.message).to.equal(`zfs: cannot create layer theirs: cannot create '${fsname}/theirs': dataset already exists`);
      expect(await zfsList(fsname, "filesystem")).to.include(`${fsname}/theirs`);
      expect(await readdir(join(home, "incomplete"))).to.deep.equal([]);
    });

    it("a zfs.fsname dataset destroyed under the running driver", async () => {
      expect((await fake.zfs(["destroy", "-r", fsname])).code).to.equal(0);
      const err = await rejects(driver.create("base", undefined));
      expect(err.message).to.equal(`zfs: cannot create layer base: cannot create '${fsname}/base': parent does not exist`);
    });
  });

  it("refuses a zfs.fsname that does not exist, with zfs's message, and leaves no folder", async () => {
    const other = join(makeTempDir("engine-storage-"), "zfs");
    const err = await rejects(createZfsDriver({ home: other, options: { "zfs.fsname": "tank/nosuch" } }, hooks));
    expect(err.message).to.equal("zfs: cannot find root filesystem tank/nosuch: cannot open 'tank/nosuch': dataset does not exist");
    expect((await readdir(join(other, ".."))).length).to.equal(0);
    const bad = await rejects(createZfsDriver({ home: other, options: { "zfs.fsname": "/tank" } }, hooks));
    expect(bad.message).to.match(/invalid zfs.fsname "\/tank"/);
  });

  it("takes zfs.fsname by default from the ZFS filesystem mounted at the data root (mountinfo)", async () => {
    expect((await fake.zfs(["create", "tank/engine-root"])).code).to.equal(0);
    const dataRoot = makeTempDir("engine-data-");
    const mountinfo = [
      "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw",
      `90 27 0:55 / ${dataRoot.replace(/ /g, "\\040")} rw,relatime - zfs tank/engine-root rw,xattr,posixacl`,
      "",
    ].join("\n");
    const d = await createZfsDriver({ home: join(dataRoot, "zfs"), options: {} }, { ...hooks, mountinfo });
    expect(d.fsname).to.equal("tank/engine-root");
    await d.create("base", undefined);
    expect(await zfsList("tank/engine-root", "filesystem")).to.deep.equal(["tank/engine-root", "tank/engine-root/base"]);
    await d.remove("base");

    const onExt4 = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n";
    const err = await rejects(createZfsDriver({ home: join(dataRoot, "zfs2"), options: {} }, { ...hooks, mountinfo: onExt4 }));
    expect(err.message).to.equal(
      `zfs: the data root ${dataRoot} is on ext4, not on a ZFS filesystem; put it on one, or name the dataset to use with --storage-opt zfs.fsname=<pool>/<dataset>`,
    );
  });

  it("cleanup destroys what a crash left: a half-made layer, its parent's snapshot, and its own mounts", async () => {
    await driver.create("base", undefined);
    // A crash after `zfs clone` and before `zfs destroy -d`: the marker names the parent.
    await writeFile(join(home, "incomplete", "half"), "base");
    expect((await fake.zfs(["snapshot", `${fsname}/base@half`])).code).to.equal(0);
    expect((await fake.zfs(["clone", "-o", "mountpoint=legacy", `${fsname}/base@half`, `${fsname}/half`])).code).to.equal(0);
    // And a crash during applyDiff, with the dataset mounted in mnt/.
    const aside = join(home, "mnt", "base-0000");
    await mkdir(aside);
    await fake.mount({ type: "zfs", source: `${fsname}/base`, options: [] }, aside);

    const again = await makeDriver(home, {});
    expect(await again.exists("half")).to.equal(true);
    await again.cleanup();
    expect(await again.exists("half")).to.equal(false);
    expect(await zfsList(fsname, "all")).to.deep.equal([fsname, `${fsname}/base`]);
    expect(await readdir(join(home, "mnt"))).to.deep.equal([]);
    expect(await readdir(join(home, "incomplete"))).to.deep.equal([]);
    expect(await prop(`${fsname}/base`, "mounted")).to.equal("no");
  });

  it("applies a tar into a clone: files of the parent are there, whiteouts delete them", async () => {
    await driver.create("base", undefined);
    await driver.applyDiff("base", await makeTar([{ name: "a", content: "a" }, { name: "b", content: "b" }]));
    await driver.create("top", "base");
    const calls = callsSince();
    expect(await driver.applyDiff("top", await makeTar([{ name: ".wh.a", content: "" }, { name: "c", content: "cc" }]))).to.equal(2);
    expect(calls()).to.deep.equal([]); // the driver mounts the dataset itself; no zfs call is needed
    await withMount(driver, "top", async (root) => expect((await readdir(root)).sort()).to.deep.equal(["b", "c"]), (specs, target) => fake.mountAll(specs, target));
    expect((await readTar(await driver.diff("top"))).map((e) => e.name).sort()).to.deep.equal([".wh.a", "c"]);
    expect(await readdir(join(home, "mnt"))).to.deep.equal([]);
  });

  it("reports Docker's status lines for the zfs driver", async () => {
    const status = await driver.status();
    expect(status.map(([k]) => k)).to.deep.equal(["Zpool", "Zpool Health", "Parent Dataset", "Space Used By Parent", "Space Available", "Parent Quota", "Compression"]);
    expect(status[0]).to.deep.equal(["Zpool", "tank"]);
    expect(status[1]).to.deep.equal(["Zpool Health", "ONLINE"]);
    expect(status[2]).to.deep.equal(["Parent Dataset", fsname]);
    expect(Number(status[4][1])).to.be.greaterThan(0);
  });

  it("is supported only where the kernel has zfs and the zfs command is on PATH, and says which is missing", () => {
    const host = { platform: "linux" as const, arch: "x64", kernel: "6.1.0", cgroupVersion: 2 as const };
    const withZfs = "nodev\tproc\n\text4\n\tzfs\n";
    expect(zfsSupported(host, { filesystems: withZfs, zfsCommand: "/usr/sbin/zfs" })).to.equal(true);
    expect(zfsSupported(host, { filesystems: "\text4\n", zfsCommand: "/usr/sbin/zfs" })).to.equal(
      "this host has no ZFS: the kernel has no zfs filesystem (not in /proc/filesystems; load the zfs module: modprobe zfs, Debian package zfs-dkms)",
    );
    expect(zfsSupported(host, { filesystems: withZfs, zfsCommand: undefined })).to.equal(
      "this host has no ZFS: the zfs command is not on PATH (Debian package zfsutils-linux)",
    );
    expect(zfsSupported({ ...host, platform: "darwin" })).to.equal("zfs needs Linux, this host is darwin");
    expect(plugin.manifest.id).to.equal("storage.zfs");
    expect(Object.keys(plugin.manifest.options ?? {})).to.deep.equal(["zfs.fsname"]);
  });

  it("stops a daemon asked for --storage-driver zfs on this host without ZFS, saying why", async function () {
    const host = { platform: process.platform, arch: process.arch, kernel: "", cgroupVersion: 2 as const };
    const reason = zfsSupported(host);
    if (reason === true) {
      const runnable = this.test!;
      runnable.title += " (skipped: this host has ZFS)";
      this.skip();
    }
    const dir = makeTempDir();
    const res = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "s.sock")}`, "--storage-driver", "zfs"]);
    expect(res.code).to.equal(1);
    expect(res.stderr).to.include(`plugin storage.zfs was selected but is not supported on this host: ${reason}`);
    expect(res.stderr).to.include("ENGINE_ERR_PLUGIN_NOT_SUPPORTED");
  });
});

describe("storage zfs: the fake zfs fails where zfs fails", function () {
  this.timeout(60_000);
  const zfs = (...args: string[]) => fake.zfs(args);

  before(async () => {
    expect((await zfs("create", "tank/f")).code).to.equal(0);
  });

  it("create, snapshot, clone: an existing dataset, a missing parent, an unknown or read-only property, a bad number", async () => {
    const cases: [string[], string, number][] = [
      [["create", "tank/f"], "cannot create 'tank/f': dataset already exists", 1],
      [["create", "tank/nope/x"], "cannot create 'tank/nope/x': parent does not exist", 1],
      [["create", "pool2/x"], "cannot create 'pool2/x': no such pool 'pool2'", 1],
      [["create", "-o", "bogus=1", "tank/f/x"], "cannot create 'tank/f/x': invalid property 'bogus'", 1],
      [["create", "-o", "used=1", "tank/f/x"], "cannot create 'tank/f/x': 'used' is readonly", 1],
      [["create", "-o", "quota=lots", "tank/f/x"], "cannot create 'tank/f/x': bad numeric value 'lots'", 1],
      [["create", "-o", "quota=5Q", "tank/f/x"], "cannot create 'tank/f/x': invalid numeric suffix 'Q'", 1],
      [["frobnicate"], "unrecognized command 'frobnicate'", 2],
      [["snapshot", "tank/nope@s"], "cannot open 'tank/nope': dataset does not exist\nusage:\n\tsnapshot [-r] [-o property=value] ... <filesystem|volume>@<snap> ...", 2],
      [["clone", "tank/f", "tank/x"], "cannot open 'tank/f': missing '@' delimiter in snapshot name", 1],
      [["destroy", "-d", "tank/f"], "cannot open 'tank/f': missing '@' delimiter in snapshot name", 1],
    ];
    for (const [args, stderr, code] of cases) {
      const res = await zfs(...args);
      expect({ args, code: res.code, stderr: res.stderr }).to.deep.equal({ args, code, stderr: `${stderr}\n` });
    }
  });

  it("set quota: 0 is refused, none clears it, below what is used is refused", async () => {
    expect((await zfs("set", "quota=0", "tank/f")).stderr).to.equal("cannot set property for 'tank/f': use 'none' to disable quota/refquota\n");
    await writeFile(join(fake.model.folderOf("tank/f")!, "data"), Buffer.alloc(4096, 1));
    expect((await zfs("set", "quota=1K", "tank/f")).stderr).to.equal("cannot set property for 'tank/f': size is less than current used or reserved space\n");
    expect((await zfs("set", "quota=1G", "tank/f")).code).to.equal(0);
    expect(await prop("tank/f", "quota")).to.equal(String(1024 ** 3));
    expect((await zfs("set", "quota=none", "tank/f")).code).to.equal(0);
    expect(await prop("tank/f", "quota")).to.equal("0");
  });

  it("destroy: snapshots and children need -r, clones need -R, a snapshot with clones stays unless deferred", async () => {
    expect((await zfs("create", "tank/d")).code).to.equal(0);
    await writeFile(join(fake.model.folderOf("tank/d")!, "data"), "d");
    expect((await zfs("snapshot", "tank/d@s1")).code).to.equal(0);
    expect((await zfs("snapshot", "tank/d@s1")).stderr).to.equal("cannot create snapshot 'tank/d@s1': dataset already exists\n");
    expect((await zfs("clone", "tank/d@nosuch", "tank/e")).stderr).to.equal("cannot open 'tank/d@nosuch': dataset does not exist\n");
    expect((await zfs("clone", "tank/d@s1", "tank/e")).code).to.equal(0);
    expect((await zfs("destroy", "tank/d")).stderr).to.equal(
      "cannot destroy 'tank/d': filesystem has children\nuse '-r' to destroy the following datasets:\ntank/d@s1\n",
    );
    expect((await zfs("destroy", "-r", "tank/d")).stderr).to.equal(
      "cannot destroy 'tank/d': filesystem has dependent clones\nuse '-R' to destroy the following datasets:\ntank/e\n",
    );
    expect((await zfs("destroy", "tank/d@s1")).stderr).to.equal(
      "cannot destroy 'tank/d@s1': snapshot has dependent clones\nuse '-R' to destroy the following datasets:\ntank/e\n",
    );
    expect((await zfs("destroy", "tank")).stderr).to.match(/^cannot destroy 'tank': operation does not apply to pools\n/);
    expect((await zfs("destroy", "tank/nosuch")).stderr).to.equal("cannot open 'tank/nosuch': dataset does not exist\n");
    expect((await zfs("destroy", "tank/d@nosuch")).stderr).to.equal("could not find any snapshots to destroy; check snapshot names.\n");
    // Deferred: the snapshot stays until its last clone goes.
    expect((await zfs("destroy", "-d", "tank/d@s1")).code).to.equal(0);
    expect(await prop("tank/d@s1", "defer_destroy")).to.equal("on");
    expect((await zfs("destroy", "tank/e")).code).to.equal(0);
    expect(await zfsList("tank/d", "snapshot")).to.deep.equal([]);
    // The clone's contents were its origin's.
    expect((await zfs("snapshot", "tank/d@s2")).code).to.equal(0);
    expect((await zfs("clone", "tank/d@s2", "tank/k")).code).to.equal(0);
    expect(await readdir(fake.model.folderOf("tank/k")!)).to.deep.equal(["data"]);
    expect((await zfs("destroy", "-R", "tank/d@s2")).code).to.equal(0);
    expect(await zfsList("tank/d", "all")).to.deep.equal(["tank/d"]);
    expect(await zfsList("tank", "filesystem")).to.not.include("tank/k");
  });
});
