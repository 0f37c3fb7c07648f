/**
 * The overlay2 storage driver: the shared conformance suite, then what only overlay2 promises
 * (its files on disk, its mount specifications, overlay2.size and xfs project quota).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, readlink, symlink, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import plugin, { overlaySupported } from "../plugins/storage-overlay2/index.js";
import { createOverlay2Driver as createTypedOverlay2Driver, MAX_DEPTH, mountOf, type Overlay2Driver } from "../plugins/storage-overlay2/overlay2.js";
import { throughManifest } from "./helpers/storage-options.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { kernelConfig, makeLoopFilesystem, skipBecause, type LoopFilesystem } from "./helpers/loop-fs.js";
import "./helpers/root-hooks.js";
import { expectOutOfSpace, makeTar, rejects, storageConformance, withMount } from "./storage-conformance.js";

const run = promisify(execFile);
/** Made as the daemon makes it: `--storage-opt` text read through the plugin's manifest. */
const createOverlay2Driver = throughManifest(plugin.manifest, createTypedOverlay2Driver);

storageConformance("overlay2", (home, options) => createOverlay2Driver({ home, options }));

describe("storage overlay2", function () {
  this.timeout(120_000);
  let home: string;
  let driver: Overlay2Driver;

  beforeEach(async () => {
    home = join(makeTempDir("engine-storage-"), "overlay2");
    mkdirSync(home);
    driver = (await createOverlay2Driver({ home, options: {} })) as Overlay2Driver;
    await driver.cleanup();
  });

  it("lays out link, lower, parent, work and the l/ symlinks", async () => {
    await driver.create("base", undefined);
    await driver.create("mid", "base");
    await driver.create("top", "mid");
    await driver.create("ctr", "top", { writable: true });
    const link = async (id: string) => readFile(join(home, id, "link"), "utf8");
    for (const id of ["base", "mid", "top", "ctr"]) {
      const short = await link(id);
      expect(short).to.match(/^[A-Z2-7]{26}$/);
      expect(await readlink(join(home, "l", short))).to.equal(`../${id}/diff`);
      expect((await lstat(join(home, id, "diff"))).isDirectory()).to.equal(true);
      expect(existsSync(join(home, id, ".incomplete"))).to.equal(false);
    }
    expect(existsSync(join(home, "base", "lower"))).to.equal(false);
    expect(existsSync(join(home, "base", "parent"))).to.equal(false);
    expect(await readFile(join(home, "mid", "lower"), "utf8")).to.equal(`l/${await link("base")}`);
    expect(await readFile(join(home, "top", "lower"), "utf8")).to.equal(`l/${await link("mid")}:l/${await link("base")}`);
    expect(await readFile(join(home, "ctr", "lower"), "utf8")).to.equal(`l/${await link("top")}:l/${await link("mid")}:l/${await link("base")}`);
    expect(await readFile(join(home, "top", "parent"), "utf8")).to.equal("mid");
    // Only writable layers have a work directory.
    expect(existsSync(join(home, "top", "work"))).to.equal(false);
    expect(existsSync(join(home, "ctr", "work"))).to.equal(true);
    expect((await readdir(join(home, "l"))).length).to.equal(4);
    await driver.remove("ctr");
    expect((await readdir(join(home, "l"))).length).to.equal(3);
    expect(existsSync(join(home, "ctr"))).to.equal(false);
  });

  it("answers bind mounts for base layers and overlay mounts with absolute paths for chains", async () => {
    await driver.create("base", undefined);
    await driver.create("top", "base");
    await driver.create("ctr", "top", { writable: true });
    await driver.create("scratch", undefined, { writable: true });
    const short = async (id: string) => readFile(join(home, id, "link"), "utf8");
    expect(await driver.mounts("base")).to.deep.equal([{ type: "bind", source: join(home, "base", "diff"), options: ["bind", "ro"] }]);
    expect(await driver.mounts("scratch")).to.deep.equal([{ type: "bind", source: join(home, "scratch", "diff"), options: ["bind"] }]);
    const [ro] = await driver.mounts("top");
    expect(ro.type).to.equal("overlay");
    expect(ro.source).to.equal("overlay");
    expect(ro).to.not.have.property("cwd");
    expect(ro.options).to.include(`lowerdir=${home}/l/${await short("top")}:${home}/l/${await short("base")}`);
    expect(ro.options.some((o) => o.startsWith("upperdir="))).to.equal(false);
    const [rw] = await driver.mounts("ctr");
    expect(rw.options).to.include.members([
      `lowerdir=${home}/l/${await short("top")}:${home}/l/${await short("base")}`,
      `upperdir=${home}/ctr/diff`,
      `workdir=${home}/ctr/work`,
    ]);
    await rejects(driver.mounts("nosuch"));
  });

  it("names lower directories relative to its home, with a cwd, when absolute paths do not fit in a page", async () => {
    const longHome = join(makeTempDir("engine-storage-"), "h".repeat(200), "overlay2");
    await mkdir(longHome, { recursive: true });
    const d = await createOverlay2Driver({ home: longHome, options: {} });
    let parent: string | undefined;
    for (let i = 0; i < 20; i++) {
      await d.create(`layer${i}`, parent);
      await d.applyDiff(`layer${i}`, await makeTar([{ name: `f${i}`, content: String(i) }]));
      parent = `layer${i}`;
    }
    await d.create("ctr", parent, { writable: true });
    const [spec] = (await d.mounts("ctr")) as { type: string; options: string[]; cwd?: string }[];
    expect(spec.cwd).to.equal(longHome);
    expect(spec.options).to.include.members(["upperdir=ctr/diff", "workdir=ctr/work"]);
    expect(spec.options.find((o) => o.startsWith("lowerdir="))).to.match(/^lowerdir=l\/[A-Z2-7]{26}(:l\/[A-Z2-7]{26}){19}$/);
    await withMount(d, "ctr", async (root) => {
      expect((await readdir(root)).length).to.equal(20);
      await writeFile(join(root, "new"), "n");
    });
    expect(existsSync(join(longHome, "ctr", "diff", "new"))).to.equal(true);
  });

  it(`refuses a chain deeper than ${MAX_DEPTH} layers`, async () => {
    let parent: string | undefined;
    for (let i = 0; i <= MAX_DEPTH; i++) {
      await driver.create(`layer${i}`, parent);
      parent = `layer${i}`;
    }
    const err = await rejects(driver.create("toodeep", parent));
    expect(err.message).to.equal(`overlay2: cannot create layer toodeep: more than ${MAX_DEPTH} layers in its chain`);
    expect(await driver.exists("toodeep")).to.equal(false);
  });

  it("refuses layer ids that are not plain names", async () => {
    for (const id of ["../x", "a/b", "l", ".hidden", ""]) {
      expect((await rejects(driver.create(id, undefined))).message).to.match(/invalid layer id/);
    }
  });

  it("cleanup removes half-made layers and dangling links, and restores missing links", async () => {
    await driver.create("base", undefined);
    await driver.create("half", "base");
    await writeFile(join(home, "half", ".incomplete"), "");
    await symlink("../gone/diff", join(home, "l", "AAAAAAAAAAAAAAAAAAAAAAAAAA"));
    await mkdir(join(home, ".removing-old-1234", "diff"), { recursive: true });
    const baseShort = await readFile(join(home, "base", "link"), "utf8");
    await unlink(join(home, "l", baseShort));
    await driver.cleanup();
    expect(await driver.exists("half")).to.equal(false);
    expect((await readdir(home)).sort()).to.deep.equal(["base", "l"]);
    expect(await readdir(join(home, "l"))).to.deep.equal([baseShort]);
    expect(await readlink(join(home, "l", baseShort))).to.equal("../base/diff");
  });

  it("reports its status lines", async () => {
    expect(await driver.status()).to.deep.equal([
      ["Backing Filesystem", "extfs"],
      ["Supports d_type", "true"],
      ["Using metacopy", "false"],
      ["Native Overlay Diff", "true"],
      ["userxattr", "false"],
    ]);
    expect(driver.capabilities).to.deep.equal(["native-diff", "parallel-apply"]);
  });

  it("refuses overlay2.size on ext4, naming the backing filesystem", async () => {
    const other = join(makeTempDir("engine-storage-"), "overlay2");
    const err = await rejects(createOverlay2Driver({ home: other, options: { "overlay2.size": "10G" } }));
    expect(err.message).to.equal(`overlay2.size is only supported on xfs mounted with the pquota option; ${other} is on extfs`);
    expect(existsSync(other), "a driver that refused to start leaves no folder").to.equal(false);
  });

  it("refuses a per-layer size where there is no quota, and unknown per-layer options", async () => {
    await driver.create("base", undefined);
    expect((await rejects(driver.create("c1", "base", { writable: true, storageOpts: { size: "1G" } }))).message).to.match(
      /size option is only supported on xfs mounted with the pquota option/,
    );
    expect((await rejects(driver.create("c2", "base", { writable: true, storageOpts: { nosuch: "1" } }))).message).to.equal(
      "overlay2: unknown storage option nosuch",
    );
    expect(await driver.exists("c1")).to.equal(false);
    expect(await driver.exists("c2")).to.equal(false);
  });

  it("finds the mount that holds a path in mountinfo", () => {
    const info = [
      "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw",
      "50 27 7:0 / /srv/data rw,relatime - xfs /dev/loop0 rw,attr2,inode64,prjquota",
      "51 27 7:1 / /srv/data\\040two rw,relatime - xfs /dev/loop1 rw,noquota",
      "",
    ].join("\n");
    expect(mountOf("/srv/data/engine/overlay2", info)).to.deep.include({ mountPoint: "/srv/data", fsType: "xfs", superOptions: ["rw", "attr2", "inode64", "prjquota"] });
    expect(mountOf("/srv/data two/x", info)?.superOptions).to.deep.equal(["rw", "noquota"]);
    expect(mountOf("/srv/database", info)?.fsType).to.equal("ext4");
  });

  it("is supported only where the kernel has overlay", () => {
    const host = { platform: "linux" as const, arch: "x64", kernel: "6.1.0", cgroupVersion: 2 as const };
    expect(overlaySupported(host, "nodev\tproc\n\text4\nnodev\toverlay\n")).to.equal(true);
    expect(overlaySupported(host, "nodev\tproc\n\text4\n")).to.match(/no overlay filesystem/);
    expect(plugin.manifest.id).to.equal("storage.overlay2");
    expect(plugin.manifest.kind).to.equal("storage");
    expect(Object.keys(plugin.manifest.options ?? {})).to.deep.equal(["overlay2.size"]);
    expect(plugin.supported!(host)).to.equal(true); // this kernel has overlay
  });

  describe("on xfs (a loop file)", () => {
    let xfs: LoopFilesystem | undefined;
    let mnt: string;

    beforeEach(async function () {
      try {
        xfs = await makeLoopFilesystem("xfs", "300M");
      } catch (err) {
        skipBecause(this, `loop devices do not work here: ${(err as Error).message}`);
      }
      mnt = xfs.mountPoint;
    });

    afterEach(async () => {
      await xfs?.remove();
      xfs = undefined;
    });

    it("refuses overlay2.size on xfs mounted without pquota", async () => {
      const xfsHome = join(mnt, "overlay2");
      const err = await rejects(createOverlay2Driver({ home: xfsHome, options: { "overlay2.size": "20M" } }));
      expect(err.message).to.equal(`overlay2.size is only supported on xfs mounted with the pquota option; ${xfsHome} is on xfs without pquota`);
      const d = await createOverlay2Driver({ home: xfsHome, options: {} });
      expect(d.capabilities).to.deep.equal(["native-diff", "parallel-apply"]);
      expect((await d.status())?.[0]).to.deep.equal(["Backing Filesystem", "xfs"]);
    });

    it("accepts overlay2.size on xfs mounted with pquota, and enforces it on writable layers", async function () {
      await xfs!.unmount();
      const noQuota = kernelConfig("CONFIG_XFS_QUOTA") === false;
      try {
        await xfs!.mount(["pquota"]);
      } catch (err) {
        if (noQuota) skipBecause(this, "this kernel's XFS has no quota support (CONFIG_XFS_QUOTA is not set)");
        throw err;
      }
      const xfsHome = join(mnt, "overlay2");
      const tooBig = await rejects(createOverlay2Driver({ home: xfsHome, options: { "overlay2.size": "10T" } }));
      expect(tooBig.message).to.match(/not below the size of the backing filesystem/);

      const d = await createOverlay2Driver({ home: xfsHome, options: { "overlay2.size": "20M" } });
      expect(d.capabilities).to.include("quota");
      await d.create("base", undefined);
      await d.applyDiff("base", await makeTar([{ name: "etc", type: "directory" }, { name: "etc/os", content: "xfs" }]));
      await d.create("ctr", "base", { writable: true });
      const { project } = JSON.parse(await readFile(join(xfsHome, "ctr", "quota"), "utf8")) as { project: number; bytes: number };
      const { stdout } = await run("xfs_io", ["-c", "lsproj", join(xfsHome, "ctr", "diff")]);
      expect(stdout).to.contain(`projid = ${project}`);

      const mib = (n: number) => Buffer.alloc(n * 1024 * 1024, 1);
      await withMount(d, "ctr", async (root) => {
        await writeFile(join(root, "small"), mib(10));
        await expectOutOfSpace(writeFile(join(root, "big"), mib(15)));
        await writeFile(join(root, "etc", "copied-up"), mib(1)); // in a directory copied up from below
        await expectOutOfSpace(writeFile(join(root, "etc", "more"), mib(12)));
      });

      // A per-layer size wins over overlay2.size.
      await d.create("ctr2", "base", { writable: true, storageOpts: { size: "5M" } });
      await withMount(d, "ctr2", async (root) => {
        await writeFile(join(root, "four"), mib(4));
        await expectOutOfSpace(writeFile(join(root, "eight"), mib(8)));
      });
      // Image layers have no quota and refuse a size.
      expect(existsSync(join(xfsHome, "base", "quota"))).to.equal(false);
      await rejects(d.create("img", "base", { storageOpts: { size: "5M" } }));
      await d.remove("ctr");
      await d.remove("ctr2");
    });
  });

  describe("with the Docker CLI (a data root on ext4)", () => {
    let d: TestDaemon | undefined;

    before(async () => {
      d = await startEngined();
      const work = makeTempDir("engine-overlay2-cli-");
      const r = await docker(`unix://${d.socket}`, ["import", "-c", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]);
      expect(r.code, r.stderr).to.equal(0);
    });
    after(async () => d?.stop());

    it("docker create --storage-opt size is refused where overlay2 has no quota (400, its message), leaving nothing", async () => {
      const host = `unix://${d!.socket}`;
      const home = join(d!.dir, "data", "overlay2");
      const r = await docker(host, ["create", "--name", "sized", "--storage-opt", "size=1G", "busybox"]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.contain(`Error response from daemon: overlay2: the size option is only supported on xfs mounted with the pquota option; ${home} is on extfs`);
      const api = await httpRequest({ socketPath: d!.socket }, "POST", "/v1.51/containers/create", { Image: "busybox", HostConfig: { StorageOpt: { size: "1G" } } });
      expect(api.status).to.equal(400);
      expect(JSON.parse(api.body).message).to.match(/^overlay2: the size option is only supported on xfs/);
      expect((await docker(host, ["ps", "-aq"])).stdout).to.equal("");
      const layers = (await readdir(home)).filter((e) => e !== "l");
      expect(layers).to.have.length(1); // the image's only
      // without the option the same container is made
      const ok = await docker(host, ["create", "--name", "sized", "busybox"]);
      expect(ok.code, ok.stderr).to.equal(0);
      expect((await docker(host, ["rm", "sized"])).code).to.equal(0);
    });
  });
});
