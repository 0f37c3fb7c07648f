/**
 * The fuse-overlayfs storage driver on real fuse-overlayfs mounts: the shared conformance suite,
 * what is its own (FUSE mounts, whiteouts kept in the OCI form, the diff of what fuse-overlayfs
 * writes as root and as it writes without mknod, a data root on overlayfs where overlay2 cannot
 * work, options refused), and the Docker CLI against an engined started with
 * `--storage-driver fuse-overlayfs`.
 */
import { execFile } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { getAttributeSync, listAttributesSync } from "@napi-rs/xattr";
import { expect } from "chai";
import plugin, { fuseOverlayfsSupported } from "../plugins/storage-fuse-overlayfs/index.js";
import { createFuseOverlayfsDriver as createTypedFuseOverlayfsDriver } from "../plugins/storage-fuse-overlayfs/fuse-overlayfs.js";
import { throughManifest } from "./helpers/storage-options.js";
import { createOverlay2Driver } from "../plugins/storage-overlay2/overlay2.js";
import type { StorageDriver } from "../core/contracts/storage.js";
import {docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import "./helpers/root-hooks.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { makeTar, readTar, rejects, storageConformance, withMount } from "./storage-conformance.js";

const run = promisify(execFile);
/** Made as the daemon makes it: `--storage-opt` text read through the plugin's manifest. */
const createFuseOverlayfsDriver = throughManifest(plugin.manifest, createTypedFuseOverlayfsDriver);

storageConformance("fuse-overlayfs", (home, options) => createFuseOverlayfsDriver({ home, options }));

/** Mount points of fuse-overlayfs mounts at or under `dir`, from mountinfo. */
function fuseMountsUnder(dir: string): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((line) => line.includes(" - fuse.fuse-overlayfs "))
    .map((line) => line.split(" ")[4])
    .filter((m) => m === dir || m.startsWith(`${dir}/`));
}

/** An image of two layers (the second deletes, replaces a directory's contents) and a container on it. */
async function imageAndContainer(driver: StorageDriver): Promise<void> {
  await driver.create("base", undefined);
  await driver.applyDiff(
    "base",
    await makeTar([
      { name: "etc", type: "directory" },
      { name: "etc/gone", content: "bye" },
      { name: "etc/kept", content: "kept" },
      { name: "data", type: "directory" },
      { name: "data/old", content: "old" },
      { name: "var", type: "directory" },
      { name: "var/lib", type: "directory" },
      { name: "var/lib/x", content: "x" },
    ]),
  );
  await driver.create("top", "base");
  await driver.applyDiff("top", await makeTar([{ name: "var/.wh.lib", content: "" }, { name: "readme", content: "r" }]));
  await driver.create("ctr", "top", { writable: true });
}

/** What a container does to the image: writes, deletes, empties a directory and fills it again. */
async function changeThroughMount(driver: StorageDriver): Promise<void> {
  await withMount(driver, "ctr", async (root) => {
    await writeFile(join(root, "etc/new"), "hello");
    await unlink(join(root, "etc/gone"));
    await rm(join(root, "data"), { recursive: true });
    await mkdir(join(root, "data"));
    await writeFile(join(root, "data/fresh"), "fresh");
    await unlink(join(root, "readme"));
  });
}

/** The container's diff must be the OCI form of exactly those changes, each whiteout once. */
async function expectContainerDiff(driver: StorageDriver): Promise<void> {
  const entries = await readTar(await driver.diff("ctr"));
  const names = entries.map((e) => e.name);
  expect(names.filter((n) => n.includes(".wh.")).sort(), names.join(" ")).to.deep.equal([".wh.readme", "data/.wh..wh..opq", "etc/.wh.gone"]);
  expect(names).to.include.members(["etc/new", "data/fresh"]);
  expect(names).to.not.include.members(["etc/kept", "data/old"]);
  expect(entries.find((e) => e.name === "etc/new")?.content).to.equal("hello");
  // the opaque marker comes right after its directory, as Docker writes it
  expect(names.indexOf("data/.wh..wh..opq")).to.equal(names.indexOf("data") + 1);
}

describe("storage fuse-overlayfs", function () {
  this.timeout(120_000);
  let home: string;
  let driver: StorageDriver;

  beforeEach(async () => {
    home = join(makeTempDir("engine-storage-"), "fuse-overlayfs");
    mkdirSync(home);
    driver = await createFuseOverlayfsDriver({ home, options: {} });
    await driver.cleanup();
  });

  afterEach(() => {
    expect(fuseMountsUnder(home), "a test left a fuse-overlayfs mount").to.deep.equal([]);
  });

  it("mounts chains with fuse-overlayfs (type fuse.fuse-overlayfs), bases as bind mounts, in overlay2's layout", async () => {
    await driver.create("base", undefined);
    await driver.create("top", "base");
    await driver.create("ctr", "top", { writable: true });
    const short = async (id: string) => readFile(join(home, id, "link"), "utf8");
    expect(await readFile(join(home, "ctr", "lower"), "utf8")).to.equal(`l/${await short("top")}:l/${await short("base")}`);
    expect(await driver.mounts("base")).to.deep.equal([{ type: "bind", source: join(home, "base", "diff"), options: ["bind", "ro"] }]);
    expect(await driver.mounts("top")).to.deep.equal([
      { type: "fuse.fuse-overlayfs", source: "fuse-overlayfs", options: [`lowerdir=${home}/l/${await short("top")}:${home}/l/${await short("base")}`] },
    ]);
    expect(await driver.mounts("ctr")).to.deep.equal([
      {
        type: "fuse.fuse-overlayfs",
        source: "fuse-overlayfs",
        options: [`lowerdir=${home}/l/${await short("top")}:${home}/l/${await short("base")}`, `upperdir=${home}/ctr/diff`, `workdir=${home}/ctr/work`],
      },
    ]);
    await withMount(driver, "ctr", async (root) => {
      const line = readFileSync("/proc/self/mountinfo", "utf8").split("\n").find((l) => l.split(" ")[4] === root);
      expect(line, "the mount in mountinfo").to.match(/ - fuse\.fuse-overlayfs fuse-overlayfs /);
      await writeFile(join(root, "written"), "w");
    });
    expect(await readFile(join(home, "ctr", "diff", "written"), "utf8")).to.equal("w");
  });

  it("keeps an image layer's whiteouts as the OCI .wh. files, without devices or trusted attributes", async () => {
    await driver.create("base", undefined);
    await driver.applyDiff("base", await makeTar([{ name: "a", content: "a" }, { name: "dir", type: "directory" }, { name: "dir/x", content: "x" }]));
    await driver.create("top", "base");
    await driver.applyDiff(
      "top",
      await makeTar([
        { name: ".wh.a", content: "" },
        { name: "dir", type: "directory" },
        { name: "dir/.wh..wh..opq", content: "" },
        { name: "dir/y", content: "y" },
        // this layer's own file is not hidden by its own whiteout, wherever that comes in the tar
        { name: ".wh.own", content: "" },
        { name: "own", content: "mine" },
      ]),
    );
    const diff = join(home, "top", "diff");
    expect((await readdir(diff)).sort()).to.deep.equal([".wh.a", "dir", "own"]);
    expect((await readdir(join(diff, "dir"))).sort()).to.deep.equal([".wh..wh..opq", "y"]);
    for (const p of [".wh.a", "dir/.wh..wh..opq"]) {
      const st = lstatSync(join(diff, p));
      expect([st.isFile(), st.size], p).to.deep.equal([true, 0]);
    }
    expect(listAttributesSync(join(diff, "dir")).filter((k) => k.includes("overlay"))).to.deep.equal([]);
    await withMount(driver, "top", async (root) => {
      expect((await readdir(root)).sort()).to.deep.equal(["dir", "own"]);
      expect(await readdir(join(root, "dir"))).to.deep.equal(["y"]);
      expect(await readFile(join(root, "own"), "utf8")).to.equal("mine");
    });
    const names = (await readTar(await driver.diff("top"))).map((e) => e.name);
    expect(names).to.deep.equal([".wh.a", "dir", "dir/.wh..wh..opq", "dir/y", "own"]);
  });

  it("diffs what fuse-overlayfs writes as root: 0:0 devices, and an attribute with a .wh..wh..opq file", async () => {
    await imageAndContainer(driver);
    await changeThroughMount(driver);
    const upper = join(home, "ctr", "diff");
    const gone = lstatSync(join(upper, "etc/gone"));
    expect([gone.isCharacterDevice(), gone.rdev]).to.deep.equal([true, 0]);
    expect(getAttributeSync(join(upper, "data"), "trusted.overlay.opaque")?.toString()).to.equal("y");
    expect(lstatSync(join(upper, "data/.wh..wh..opq")).isFile()).to.equal(true);
    await expectContainerDiff(driver);
  });

  it("diffs what fuse-overlayfs writes where it may not mknod: .wh. files", async () => {
    await imageAndContainer(driver);
    // fuse-overlayfs writes whiteouts as an unprivileged user does (mount(8) passes the environment on)
    process.env.FUSE_OVERLAYFS_DISABLE_OVL_WHITEOUT = "1";
    try {
      await changeThroughMount(driver);
    } finally {
      delete process.env.FUSE_OVERLAYFS_DISABLE_OVL_WHITEOUT;
    }
    const upper = join(home, "ctr", "diff");
    expect(lstatSync(join(upper, "etc/.wh.gone")).isFile()).to.equal(true);
    expect(existsSync(join(upper, "etc/gone"))).to.equal(false);
    await expectContainerDiff(driver);
    // and mounted again, the container still sees its changes
    await withMount(driver, "ctr", async (root) => {
      expect((await readdir(join(root, "etc"))).sort()).to.deep.equal(["kept", "new"]);
      expect(await readdir(join(root, "data"))).to.deep.equal(["fresh"]);
      expect(existsSync(join(root, "var/lib"))).to.equal(false);
    });
  });

  it("works with its data root on overlayfs, where overlay2 refuses to", async () => {
    const base = makeTempDir("engine-on-overlay-");
    const [lower, upper, work, merged] = ["lower", "upper", "work", "merged"].map((d) => join(base, d));
    for (const d of [lower, upper, work, merged]) mkdirSync(d);
    await run("mount", ["-t", "overlay", "overlay", "-o", `lowerdir=${lower},upperdir=${upper},workdir=${work}`, merged]);
    try {
      const err = await rejects(createOverlay2Driver({ home: join(merged, "overlay2"), options: {} }));
      expect(err.message).to.match(/is on overlayfs, which overlay cannot use/);
      const onOverlay = await createFuseOverlayfsDriver({ home: join(merged, "fuse-overlayfs"), options: {} });
      await imageAndContainer(onOverlay);
      await withMount(onOverlay, "top", async (root) => {
        expect((await readdir(root)).sort()).to.deep.equal(["data", "etc", "readme", "var"]);
        expect(await readdir(join(root, "var"))).to.deep.equal([]);
      });
      await changeThroughMount(onOverlay);
      await expectContainerDiff(onOverlay);
      for (const id of ["ctr", "top", "base"]) await onOverlay.remove(id);
      expect(fuseMountsUnder(merged)).to.deep.equal([]);
    } finally {
      await run("umount", [merged]).catch(() => run("umount", ["-l", merged]));
    }
  });

  it("refuses options: any daemon option, a per-layer size (no quota), unknown per-layer options", async () => {
    const other = join(makeTempDir("engine-storage-"), "fuse-overlayfs");
    const err = await rejects(createFuseOverlayfsDriver({ home: other, options: { "fuse-overlayfs.size": "10G" } }));
    expect(err.message).to.equal("fuse-overlayfs: unknown option fuse-overlayfs.size (the fuse-overlayfs storage driver has no options)");
    expect(existsSync(other), "a driver that refused to start leaves no folder").to.equal(false);
    await driver.create("base", undefined);
    expect((await rejects(driver.create("c1", "base", { writable: true, storageOpts: { size: "1G" } }))).message).to.equal(
      "fuse-overlayfs: the size option is not supported: fuse-overlayfs has no quota, a layer's size cannot be limited",
    );
    expect((await rejects(driver.create("c2", "base", { writable: true, storageOpts: { nosuch: "1" } }))).message).to.equal(
      "fuse-overlayfs: unknown storage option nosuch",
    );
    expect(await driver.exists("c1")).to.equal(false);
    expect(await driver.exists("c2")).to.equal(false);
  });

  it("reports no status lines (as Docker's fuse-overlayfs driver) and its capabilities", async () => {
    expect(await driver.status()).to.deep.equal([]);
    expect(driver.capabilities).to.deep.equal(["native-diff", "parallel-apply"]);
    expect(plugin.manifest.id).to.equal("storage.fuse-overlayfs");
    expect(plugin.manifest.options).to.deep.equal({});
  });

  it("is supported where the binary, /dev/fuse and mount(8)'s FUSE helper are, and says which is missing", () => {
    const host = { platform: "linux" as const, arch: "x64", kernel: "6.1.0", cgroupVersion: 2 as const };
    expect(plugin.supported!(host)).to.equal(true); // this machine has all three
    const empty = makeTempDir("engine-no-bin-");
    expect(fuseOverlayfsSupported(host, { path: empty })).to.equal("the fuse-overlayfs binary is not on PATH (Debian package fuse-overlayfs)");
    expect(fuseOverlayfsSupported(host, { device: join(empty, "fuse") })).to.match(/fuse is missing: the kernel has no FUSE/);
    expect(fuseOverlayfsSupported(host, { helperDirs: [empty] })).to.match(/no FUSE helper \(mount\.fuse3/);
    expect(fuseOverlayfsSupported({ ...host, platform: "win32" })).to.equal("fuse-overlayfs needs Linux, this host is win32");
  });
});

describe("storage fuse-overlayfs with the Docker CLI", function () {
  this.timeout(180_000);
  let d: TestDaemon;
  let host: string;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };

  before(async () => {
    const work = makeTempDir("engine-fuse-cli-");
    d = await startEngined({ args: ["--storage-driver", "fuse-overlayfs"] });
    host = `unix://${d.socket}`;
    ok(await docker(host, ["import", "-c", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
  });

  after(async () => {
    await d?.stop();
  });

  it("docker info names the driver, with no status lines", async () => {
    const json = await docker(host, ["info", "--format", "{{json .}}"]);
    expect([json.code, json.stderr]).to.deep.equal([0, ""]);
    const info = JSON.parse(json.stdout);
    expect(info.Driver).to.equal("fuse-overlayfs");
    expect(info.DriverStatus).to.deep.equal([]);
    const text = await docker(host, ["info"]);
    expect(text.stderr).to.equal("");
    // the driver's name, and no status lines under it (the next line is not indented further)
    expect(text.stdout).to.match(/\n Storage Driver: fuse-overlayfs\n [A-Z]/);
  });

  it("runs a container on a fuse-overlayfs root, commits its writes and deletions, runs the new image", async () => {
    ok(await docker(host, ["run", "-d", "--name", "fuse-live", "--network", "none", "busybox", "sleep", "300"]), "run -d");
    expect(fuseMountsUnder(d.dir), "the running container's root filesystem").to.have.length(1);
    ok(await docker(host, ["rm", "-f", "fuse-live"]), "rm -f");

    const run1 = "mkdir -p /opt/d && echo 1 > /opt/d/a && echo 2 > /opt/d/b";
    ok(await docker(host, ["run", "--name", "fuse-one", "--network", "none", "busybox", "sh", "-c", run1]), "run one");
    ok(await docker(host, ["commit", "fuse-one", "fuse-committed:v1"]), "commit one");
    // deletes a file and a directory of the base layer, and empties a directory of the layer below
    const run2 = "echo written > /new && rm /etc/group && rm -r /root && rm -r /opt/d && mkdir /opt/d && echo 3 > /opt/d/c";
    ok(await docker(host, ["run", "--name", "fuse-two", "--network", "none", "fuse-committed:v1", "sh", "-c", run2]), "run two");
    const diff = ok(await docker(host, ["diff", "fuse-two"]), "diff").trim().split("\n").sort();
    expect(diff).to.include.members(["A /new", "D /etc/group", "D /root", "C /opt/d", "A /opt/d/c", "D /opt/d/a", "D /opt/d/b"]);
    ok(await docker(host, ["commit", "fuse-two", "fuse-committed:v2"]), "commit two");
    ok(await docker(host, ["rm", "fuse-one", "fuse-two"]), "rm");

    const check = "cat /new && test ! -e /etc/group && test ! -e /root && test -e /etc/passwd && ls /opt/d";
    expect(ok(await docker(host, ["run", "--rm", "--network", "none", "fuse-committed:v2", "sh", "-c", check]), "run v2")).to.equal("written\nc\n");
    // the images below are untouched
    const v1 = "test -e /etc/group && test -d /root && test ! -e /new && ls /opt/d";
    expect(ok(await docker(host, ["run", "--rm", "--network", "none", "fuse-committed:v1", "sh", "-c", v1]), "run v1")).to.equal("a\nb\n");

    // docker save gives the deletions as OCI whiteouts in the top layer
    const work = makeTempDir("engine-fuse-save-");
    ok(await docker(host, ["save", "-o", join(work, "v2.tar"), "fuse-committed:v2"]), "save");
    await run("tar", ["-xf", join(work, "v2.tar"), "-C", work]);
    const manifest = JSON.parse(await readFile(join(work, "manifest.json"), "utf8")) as { Layers: string[] }[];
    const top = manifest[0].Layers.at(-1)!;
    const { stdout } = await run("tar", ["-tf", join(work, top)]);
    expect(stdout.split("\n").filter((n) => n.includes(".wh.")).sort()).to.deep.equal([".wh.root", "etc/.wh.group", "opt/d/.wh..wh..opq"]);

    ok(await docker(host, ["rmi", "fuse-committed:v2", "fuse-committed:v1"]), "rmi");
    expect(ok(await docker(host, ["ps", "-aq"]), "ps").trim()).to.equal("");
    expect(fuseMountsUnder(d.dir), "no fuse-overlayfs mount is left after the containers are gone").to.deep.equal([]);
    const layers = (await readdir(join(d.dir, "data", "fuse-overlayfs"))).filter((n) => n !== "l");
    expect(layers, "busybox's layer only").to.have.length(1);
  });
});
