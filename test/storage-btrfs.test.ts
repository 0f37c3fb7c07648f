/**
 * The btrfs storage driver, on a real btrfs filesystem in a loop file: the shared conformance
 * suite, then what only btrfs promises (subvolumes and snapshots, read-only image layers, quota
 * groups for a container's size and btrfs.min_space, nested subvolumes removed, cleanup after a
 * crash), and the Docker CLI against an engined whose data root is on that filesystem.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { link, mkdir, readdir, readFile, rename, rm, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { EngineError } from "../core/errors.js";
import plugin, { btrfsSupported } from "../plugins/storage-btrfs/index.js";
import { createBtrfsDriver as createTypedBtrfsDriver, type BtrfsDriver } from "../plugins/storage-btrfs/btrfs.js";
import { ok, storageDaemon } from "./helpers/storage-daemon.js";
import { throughManifest } from "./helpers/storage-options.js";
import { busyboxRootfs, dockerSaveTar, imageOf, makeTar as makeImageTar, writeFixture } from "./fixtures/images.js";
import { docker } from "./helpers/docker-cli.js";
import { daemonArgs, makeTempDir, runEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { makeLoopFilesystem, type LoopFilesystem } from "./helpers/loop-fs.js";
import "./helpers/root-hooks.js";
import { expectOutOfSpace, makeTar, readTar, rejects, storageConformance, withMount } from "./storage-conformance.js";

const run = promisify(execFile);
/** Made as the daemon makes it: `--storage-opt` text read through the plugin's manifest. */
const createBtrfsDriver = throughManifest(plugin.manifest, createTypedBtrfsDriver);
const btrfs = async (...args: string[]) => (await run("btrfs", args)).stdout;

const mib = (n: number) => Buffer.alloc(n * 1024 * 1024, 1);

describe("storage btrfs", function () {
  this.timeout(300_000);
  let fs: LoopFilesystem;

  before(async () => {
    fs = await makeLoopFilesystem("btrfs", "2G");
  });
  after(async () => fs?.remove());

  storageConformance("btrfs", (home, options) => createBtrfsDriver({ home, options }), { homesIn: () => fs.mountPoint });

  describe("btrfs driver", () => {
    let home: string;
    let driver: BtrfsDriver;
    /** Subvolume paths (relative to the filesystem) under this test's home. */
    const subvolumesUnder = async (dir: string) => {
      const rel = dir.slice(fs.mountPoint.length + 1);
      return (await btrfs("subvolume", "list", fs.mountPoint))
        .split("\n")
        .map((l) => /path (.*)$/.exec(l)?.[1])
        .filter((p): p is string => p !== undefined && p.startsWith(`${rel}/`));
    };
    const newHome = () => join(mkdtempSync(join(fs.mountPoint, "engine-btrfs-")), "btrfs");

    beforeEach(async () => {
      home = newHome();
      driver = (await createBtrfsDriver({ home, options: {} })) as BtrfsDriver;
      await driver.cleanup();
    });

    it("keeps a layer as a subvolume, a child as a snapshot of its parent, mounted by a bind mount (read-only for image layers)", async () => {
      await driver.create("base", undefined);
      await driver.applyDiff("base", await makeTar([{ name: "etc", type: "directory" }, { name: "etc/os", content: "btrfs" }]));
      await driver.create("child", "base");
      await driver.applyDiff("child", await makeTar([{ name: "added", content: "a" }]));
      await driver.create("ctr", "child", { writable: true });
      const uuid = async (id: string, field: string) => new RegExp(`${field}:\\s+(\\S+)`).exec(await btrfs("subvolume", "show", join(home, "subvolumes", id)))?.[1];
      expect(await uuid("child", "Parent UUID")).to.equal(await uuid("base", "UUID"));
      expect(await uuid("ctr", "Parent UUID")).to.equal(await uuid("child", "UUID"));
      expect(await readFile(join(home, "layers", "child", "parent"), "utf8")).to.equal("base");
      expect(existsSync(join(home, "layers", "ctr", "writable"))).to.equal(true);
      expect(await driver.mounts("child")).to.deep.equal([{ type: "bind", source: join(home, "subvolumes", "child"), options: ["bind", "ro"] }]);
      expect(await driver.mounts("ctr")).to.deep.equal([{ type: "bind", source: join(home, "subvolumes", "ctr"), options: ["bind"] }]);
      // The snapshot holds the whole chain; the layer's own files are what it added.
      expect(await readFile(join(home, "subvolumes", "ctr", "etc", "os"), "utf8")).to.equal("btrfs");
      expect(await driver.usage("child")).to.deep.equal({ size: 1, inodes: 1 });
      expect((await driver.usage("ctr")).size).to.equal(0);
      expect(driver.capabilities).to.not.include("parallel-apply");
      // Removing them (children first) leaves no subvolume.
      await driver.remove("ctr");
      await driver.remove("child");
      await driver.remove("base");
      expect(await subvolumesUnder(home)).to.deep.equal([]);
    });

    it("reports its status: btrfs-progs' version, quota, min_space", async () => {
      const status = await driver.status();
      expect(status[0][0]).to.equal("Build Version");
      expect(status[0][1]).to.match(/^btrfs-progs v\d/);
      expect(status).to.deep.include(["Backing Filesystem", "btrfs"]);
      const quota = (await driver.status()).find(([k]) => k === "Quota")?.[1];
      expect(quota).to.be.oneOf(["enabled", "disabled"]);
      const withMin = await createBtrfsDriver({ home: newHome(), options: { "btrfs.min_space": "16M" } });
      expect(await withMin.status()).to.deep.include.members([["Quota", "enabled"], ["Min Space", "16MiB"]]);
      expect(withMin.capabilities).to.deep.equal(["quota"]);
    });

    it("enforces a container's size with a quota group limit: writing past it fails", async () => {
      const d = await createBtrfsDriver({ home, options: { "btrfs.min_space": "16M" } });
      await d.create("base", undefined);
      await d.applyDiff("base", await makeTar([{ name: "etc", type: "directory" }, { name: "etc/os", content: "btrfs" }]));
      await d.create("ctr", "base", { writable: true, storageOpts: { size: "24M" } });
      expect(await readFile(join(home, "layers", "ctr", "quota"), "utf8")).to.equal(String(24 * 1024 * 1024));
      const qgroups = await btrfs("qgroup", "show", "-r", "--raw", join(home, "subvolumes", "ctr"));
      expect(qgroups).to.contain(String(24 * 1024 * 1024));
      await withMount(d, "ctr", async (root) => {
        await writeFile(join(root, "ten"), mib(10));
        await expectOutOfSpace(writeFile(join(root, "twenty"), mib(20)));
      });
      // A container without a size has no limit.
      await d.create("free", "base", { writable: true });
      await withMount(d, "free", async (root) => writeFile(join(root, "forty"), mib(40)));
      await d.remove("ctr");
      await d.remove("free");
    });

    it("refuses a size below btrfs.min_space, a bad size, a size for an image layer and unknown options (400s), leaving nothing", async () => {
      const d = await createBtrfsDriver({ home, options: { "btrfs.min_space": "16M" } });
      await d.create("base", undefined);
      const refused = async (id: string, opts: Parameters<BtrfsDriver["create"]>[2], message: string | RegExp) => {
        const err = await rejects(d.create(id, "base", opts));
        expect(err).to.be.instanceOf(EngineError);
        expect((err as EngineError).statusCode).to.equal(400);
        if (typeof message === "string") expect(err.message).to.equal(message);
        else expect(err.message).to.match(message);
        expect(await d.exists(id)).to.equal(false);
      };
      await refused("small", { writable: true, storageOpts: { size: "8M" } }, "btrfs: storage size 8MiB cannot be less than btrfs.min_space (16MiB)");
      await refused("bad", { writable: true, storageOpts: { size: "lots" } }, /^btrfs: invalid size "lots": expected a size/);
      await refused("zero", { writable: true, storageOpts: { size: "0" } }, 'btrfs: invalid size "0": must be larger than 0');
      await refused("image", { storageOpts: { size: "20M" } }, "btrfs: the size option applies to writable layers only (layer image)");
      await refused("unknown", { writable: true, storageOpts: { inodes: "10" } }, "btrfs: unknown storage option inodes");
      expect(await subvolumesUnder(home)).to.deep.equal([`${home.slice(fs.mountPoint.length + 1)}/subvolumes/base`]);
      expect((await readdir(join(home, "layers"))).sort()).to.deep.equal(["base"]);
    });

    it("refuses a bad btrfs.min_space, an unknown option, and a home that is not on btrfs", async () => {
      const err = await rejects(createBtrfsDriver({ home: newHome(), options: { "btrfs.min_space": "much" } }));
      expect(err.message).to.match(/^btrfs: invalid btrfs.min_space "much": expected a size/);
      expect((await rejects(createBtrfsDriver({ home: newHome(), options: { "btrfs.size": "1G" } }))).message).to.equal("btrfs: unknown option btrfs.size");
      const elsewhere = join(makeTempDir("engine-storage-"), "btrfs");
      const notBtrfs = await rejects(createBtrfsDriver({ home: elsewhere, options: {} }));
      expect(notBtrfs.message).to.match(new RegExp(`^btrfs: ${elsewhere} is on \\w+, not btrfs`));
      expect(existsSync(elsewhere), "a driver that refused to start leaves no folder").to.equal(false);
    });

    it("removes the subvolumes a container made inside its own, the deepest first", async () => {
      await driver.create("base", undefined);
      await driver.create("ctr", "base", { writable: true });
      const root = join(home, "subvolumes", "ctr");
      await btrfs("subvolume", "create", join(root, "nested"));
      await btrfs("subvolume", "create", join(root, "nested", "deeper"));
      await mkdir(join(root, "var", "lib"), { recursive: true });
      await btrfs("subvolume", "create", join(root, "var", "lib", "other"));
      await writeFile(join(root, "nested", "deeper", "file"), "x");
      // one moved after it was made: found by id, not by where it was made
      await rename(join(root, "var", "lib", "other"), join(root, "var", "moved"));
      expect(await subvolumesUnder(home)).to.have.length(5);
      await driver.remove("ctr");
      expect(await driver.exists("ctr")).to.equal(false);
      expect((await subvolumesUnder(home)).map((p) => p.split("/").pop())).to.deep.equal(["base"]);
    });

    it("cleanup removes half-made and half-removed layers and subvolumes without a layer, and keeps whole layers", async () => {
      await driver.create("base", undefined);
      await driver.applyDiff("base", await makeTar([{ name: "ok", content: "ok" }]));
      await driver.create("ctr", "base", { writable: true });
      await driver.create("half", "base");
      // What a crash leaves: a layer marked incomplete (a removal cut short, with a subvolume
      // the container made in its own), a layer half made, a subvolume whose layer folder was
      // never made, a layer folder without its subvolume.
      await btrfs("subvolume", "create", join(home, "subvolumes", "ctr", "inner"));
      await writeFile(join(home, "layers", "ctr", ".incomplete"), "");
      await writeFile(join(home, "layers", "half", ".incomplete"), "");
      await btrfs("subvolume", "create", join(home, "subvolumes", "orphan"));
      await mkdir(join(home, "layers", "ghost"));
      const again = await createBtrfsDriver({ home, options: {} });
      await again.cleanup();
      for (const gone of ["ctr", "half", "ghost", "orphan"]) expect(await again.exists(gone), gone).to.equal(false);
      expect(await again.exists("base")).to.equal(true);
      expect((await readdir(join(home, "layers"))).sort()).to.deep.equal(["base"]);
      expect((await subvolumesUnder(home)).map((p) => p.split("/").pop())).to.deep.equal(["base"]);
      await withMount(again, "base", async (root) => expect(await readdir(root)).to.deep.equal(["ok"]));
    });

    it("diffs by comparing with the parent: a rewrite of the same size and mtime, a remade directory as opaque, hard links once", async () => {
      await driver.create("base", undefined);
      await driver.applyDiff(
        "base",
        await makeTar([
          { name: "same", content: "aaaa" },
          { name: "dir", type: "directory" },
          { name: "dir/old", content: "o" },
          { name: "kept", type: "directory" },
          { name: "kept/k", content: "k" },
        ]),
      );
      await driver.create("ctr", "base", { writable: true });
      await withMount(driver, "ctr", async (root) => {
        await writeFile(join(root, "same"), "bbbb"); // same size...
        const then = new Date(1_700_000_000_000);
        await utimes(join(root, "same"), then, then); // ...and the tar's mtime: only the ctime tells
        await rm(join(root, "dir"), { recursive: true });
        await mkdir(join(root, "dir"));
        await writeFile(join(root, "dir", "new"), "n");
        await writeFile(join(root, "kept", "file"), "12345");
        await link(join(root, "kept", "file"), join(root, "kept", "hard"));
      });
      const entries = await readTar(await driver.diff("ctr"));
      expect(entries.map((e) => `${e.name}:${e.type}`)).to.deep.equal([
        "dir:directory",
        "dir/.wh..wh..opq:file",
        "dir/new:file",
        "kept:directory",
        "kept/file:file",
        "kept/hard:link",
        "same:file",
      ]);
      expect(entries.find((e) => e.name === "same")?.content).to.equal("bbbb");
      expect(await driver.usage("ctr")).to.deep.equal({ size: 4 + 1 + 5, inodes: 5 });
    });

    it("engined --storage-driver btrfs does not start on a data root that is not on btrfs, and says why", async () => {
      const dir = makeTempDir("engine-btrfs-daemon-");
      const r = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "engine.sock")}`, "--storage-driver", "btrfs"]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain(`plugin storage.btrfs was selected but is not supported on this host: the data root ${join(dir, "data")} is on extfs, not btrfs`);
      // and with btrfs.min_space below what it can read
      const bad = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "engine.sock")}`, "--storage-driver", "btrfs", "--data-root", join(fs.mountPoint, "bad-data"), "--storage-opt", "btrfs.min_space=lots"]);
      expect(bad.code).to.equal(1);
      expect(bad.stderr).to.match(/failed to start daemon: btrfs: invalid btrfs.min_space \\"lots\\": expected a size/); // quotes escaped in the log line
    });

    it("is supported only with btrfs in the kernel, the btrfs command and the data root on btrfs", () => {
      const host = { platform: "linux" as const, arch: "x64", kernel: "6.1.0", cgroupVersion: 2 as const };
      const kernel = "nodev\tproc\n\text4\n\tbtrfs\n";
      expect(btrfsSupported(host, { filesystems: kernel, hasCommand: true })).to.equal(true);
      expect(btrfsSupported(host, { filesystems: "\text4\n", hasCommand: true })).to.match(/no btrfs filesystem/);
      expect(btrfsSupported(host, { filesystems: kernel, hasCommand: false })).to.match(/btrfs command is missing .*btrfs-progs/);
      expect(btrfsSupported({ ...host, dataRoot: "/srv/engine" }, { filesystems: kernel, hasCommand: true, dataRootFs: "extfs" })).to.equal(
        "the data root /srv/engine is on extfs, not btrfs",
      );
      expect(btrfsSupported({ ...host, platform: "win32" })).to.match(/needs Linux/);
      // this host: btrfs-progs installed, the loop filesystem is btrfs, the temporary folder is not
      expect(plugin.supported!({ ...host, dataRoot: join(fs.mountPoint, "data") })).to.equal(true);
      expect(plugin.supported!({ ...host, dataRoot: makeTempDir("engine-data-") })).to.match(/is on \w+, not btrfs/);
      expect(plugin.manifest.id).to.equal("storage.btrfs");
      expect(Object.keys(plugin.manifest.options ?? {})).to.deep.equal(["btrfs.min_space"]);
    });
  });

  describe("btrfs with the Docker CLI", () => {
    let dataRoot = "";
    before(() => {
      dataRoot = join(mkdtempSync(join(fs.mountPoint, "engine-data-")), "data");
      mkdirSync(dataRoot);
    });
    const engined = storageDaemon(() => ["--storage-driver", "btrfs", "--data-root", dataRoot, "--storage-opt", "btrfs.min_space=16M"]);
    let host: string;
    let d: TestDaemon;
    beforeEach(() => {
      d = engined.daemon();
      host = engined.host();
    });
    const layerCount = async () => (await readdir(join(dataRoot, "btrfs", "layers"))).length;

    it("docker info names the driver and its status", async () => {
      const info = JSON.parse(ok(await docker(host, ["info", "--format", "{{json .}}"]), "docker info")) as { Driver: string; DriverStatus: [string, string][] };
      expect(info.Driver).to.equal("btrfs");
      expect(info.DriverStatus).to.deep.include.members([["Backing Filesystem", "btrfs"], ["Quota", "enabled"], ["Min Space", "16MiB"]]);
    });

    it("runs a container, commits it, runs the committed image and sees the change; removing everything leaves no subvolume", async () => {
      const before = await layerCount();
      ok(await docker(host, ["run", "--name", "btrfs-src", "--network", "none", "busybox", "sh", "-c", "echo on btrfs > /etc/motd && rm /etc/group"]), "docker run");
      ok(await docker(host, ["commit", "btrfs-src", "btrfs-committed:v1"]), "docker commit");
      const check = "cat /etc/motd && test ! -e /etc/group && test -e /etc/passwd && echo ok";
      expect(ok(await docker(host, ["run", "--rm", "--network", "none", "btrfs-committed:v1", "sh", "-c", check]), "run committed")).to.equal("on btrfs\nok\n");
      expect(ok(await docker(host, ["run", "--rm", "--network", "none", "busybox", "sh", "-c", "test -e /etc/group && test ! -e /etc/motd && echo base"]), "run base")).to.equal("base\n");
      const changes = ok(await docker(host, ["diff", "btrfs-src"]), "docker diff").trim().split("\n");
      expect(changes).to.include.members(["C /etc", "A /etc/motd", "D /etc/group"]);
      ok(await docker(host, ["rm", "btrfs-src"]), "docker rm");
      ok(await docker(host, ["rmi", "btrfs-committed:v1"]), "docker rmi");
      expect(await layerCount()).to.equal(before);
      expect((await readdir(join(dataRoot, "btrfs", "subvolumes"))).length).to.equal(before);
    });

    it("docker load of a 3-layer image applies its layers one on the other, whiteouts and an opaque directory too", async () => {
      const before = await layerCount();
      const layers = [
        await busyboxRootfs(),
        await makeImageTar([{ name: "etc/", type: "directory" }, { name: "etc/motd", data: "two\n" }, { name: "srv/", type: "directory" }, { name: "srv/a", data: "a" }, { name: "srv/b", data: "b" }]),
        await makeImageTar([{ name: "etc/", type: "directory" }, { name: "etc/.wh.group", data: "" }, { name: "srv/", type: "directory" }, { name: "srv/.wh..wh..opq", data: "" }, { name: "srv/c", data: "c" }]),
      ];
      const work = makeTempDir("engine-btrfs-load-");
      ok(await docker(host, ["load", "-i", writeFixture(work, "three.tar", await dockerSaveTar([{ image: imageOf(layers), tags: ["three:layers"] }]))]), "docker load");
      expect(await layerCount()).to.equal(before + 2); // the busybox layer is shared
      const check = "cat /etc/motd; ls /srv; test ! -e /etc/group && test -e /etc/passwd && echo ok";
      expect(ok(await docker(host, ["run", "--rm", "--network", "none", "three:layers", "sh", "-c", check]), "run loaded")).to.equal("two\nc\nok\n");
      ok(await docker(host, ["rmi", "three:layers"]), "docker rmi");
      expect(await layerCount()).to.equal(before);
    });

    it("docker run --storage-opt size limits the container's filesystem", async () => {
      const r = await docker(host, ["run", "--rm", "--network", "none", "--storage-opt", "size=24M", "busybox", "sh", "-c", "dd if=/dev/zero of=/big bs=1M count=64 2>&1; sync"]);
      expect(r.stdout).to.match(/Disk quota exceeded|No space left/);
      expect(ok(await docker(host, ["run", "--rm", "--network", "none", "--storage-opt", "size=32M", "busybox", "sh", "-c", "dd if=/dev/zero of=/f bs=1M count=8 2>/dev/null && echo wrote"]), "run within size")).to.equal("wrote\n");
    });

    it("docker create --storage-opt size below btrfs.min_space is refused, leaving nothing", async () => {
      const before = await layerCount();
      const containers = ok(await docker(host, ["ps", "-aq"]), "ps");
      const r = await docker(host, ["create", "--name", "too-small", "--storage-opt", "size=8M", "busybox"]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.contain("Error response from daemon: btrfs: storage size 8MiB cannot be less than btrfs.min_space (16MiB)");
      const unknown = await docker(host, ["create", "--storage-opt", "inodes=10", "busybox"]);
      expect(unknown.stderr).to.contain("btrfs: unknown storage option inodes");
      // over the API: a 400, the message in Docker's error body
      const api = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/containers/create", { Image: "busybox", HostConfig: { StorageOpt: { size: "1M" } } });
      expect(api.status).to.equal(400);
      expect(JSON.parse(api.body)).to.deep.equal({ message: "btrfs: storage size 1MiB cannot be less than btrfs.min_space (16MiB)" });
      expect(ok(await docker(host, ["ps", "-aq"]), "ps")).to.equal(containers);
      expect(await layerCount()).to.equal(before);
      // the name is free: nothing holds it
      ok(await docker(host, ["create", "--name", "too-small", "--storage-opt", "size=16M", "busybox"]), "create at min_space");
      ok(await docker(host, ["rm", "too-small"]), "rm");
    });
  });
});
