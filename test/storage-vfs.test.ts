/**
 * The vfs storage driver: the shared conformance suite, then what only vfs promises (a child is
 * an exact copy of its parent's tree, so comparing them finds nothing; the layout Docker's vfs
 * keeps; a container's size refused for want of quota; crash leftovers cleaned; user namespace
 * owners), and the Docker CLI against an engined started with `--storage-driver vfs`: a
 * container, commit, diff, save and load, a build, inspect and info as Docker's vfs shows them.
 */
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { expect } from "chai";
import tarStream from "tar-stream";
import type { StorageDriver } from "../core/contracts/storage.js";
import { EngineError } from "../core/errors.js";
import { xattr } from "../core/fs/xattr.js";
import type { IdMap } from "../core/userns/id-map.js";
import plugin, { vfsSupported } from "../plugins/storage-vfs/index.js";
import { createVfsDriver as createTypedVfsDriver } from "../plugins/storage-vfs/vfs.js";
import { docker } from "./helpers/docker-cli.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { daemonArgs, makeTempDir, runEngined, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { xfsWithPquota } from "./helpers/loop-fs.js";
import { ok, storageDaemon } from "./helpers/storage-daemon.js";
import { throughManifest } from "./helpers/storage-options.js";
import "./helpers/root-hooks.js";
import { expectOutOfSpace, makeTar, readTar, rejects, storageConformance, withMount } from "./storage-conformance.js";

/** Made as the daemon makes it: `--storage-opt` text read through the plugin's manifest. */
const createVfsDriver = throughManifest(plugin.manifest, createTypedVfsDriver);

/** What a copy must keep of an entry: type and mode, owner, size, mtime to the nanosecond, links, device, xattrs, blocks. */
function described(path: string): Record<string, unknown> {
  const st = lstatSync(path, { bigint: true });
  const attrs = st.isSymbolicLink() ? [] : xattr().listAttributesSync(path).sort();
  return {
    mode: st.mode.toString(8),
    owner: `${st.uid}:${st.gid}`,
    size: st.isDirectory() ? undefined : st.size,
    mtime: st.isDirectory() ? undefined : st.mtimeNs,
    nlink: st.isDirectory() ? undefined : st.nlink,
    rdev: st.rdev,
    // holes stay holes: a sparse file takes (about) as many blocks in the copy
    blocks: st.isFile() ? st.blocks : undefined,
    xattrs: Object.fromEntries(attrs.map((a) => [a, xattr().getAttributeSync(path, a)?.toString("hex")])),
  };
}

/** Every path under `root` (relative, sorted), with what a copy must keep of it. */
function treeOf(root: string): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = { ".": described(root) };
  for (const rel of readdirSync(root, { recursive: true }) as string[]) out[rel] = described(join(root, rel));
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

describe("storage vfs", function () {
  this.timeout(300_000);

  storageConformance("vfs", (home, options) => createVfsDriver({ home, options }));

  describe("vfs driver", () => {
    let home: string;
    let driver: StorageDriver;

    beforeEach(async () => {
      home = join(makeTempDir("engine-vfs-"), "vfs");
      driver = await createVfsDriver({ home, options: {} });
      await driver.cleanup();
    });

    it("keeps each layer as a plain directory under dir/<id>, as Docker's vfs, and its status and inspect data as Docker's (none)", async () => {
      await driver.create("base", undefined);
      await driver.applyDiff("base", await makeTar([{ name: "etc", type: "directory" }, { name: "etc/os", content: "vfs" }]));
      await driver.create("ctr", "base", { writable: true });
      expect(readFileSync(join(home, "dir", "base", "etc", "os"), "utf8")).to.equal("vfs");
      expect(readFileSync(join(home, "dir", "ctr", "etc", "os"), "utf8")).to.equal("vfs");
      expect(statSync(join(home, "dir")).mode & 0o777).to.equal(0o710);
      expect(statSync(join(home, "dir", "base")).mode & 0o777).to.equal(0o755);
      expect(await driver.mounts("base")).to.deep.equal([{ type: "bind", source: join(home, "dir", "base"), options: ["bind", "ro"] }]);
      expect(await driver.mounts("ctr")).to.deep.equal([{ type: "bind", source: join(home, "dir", "ctr"), options: ["bind"] }]);
      expect(await driver.status()).to.equal(null);
      expect(driver.metadata).to.equal(undefined); // GraphDriver.Data null, as Docker's vfs (GetMetadata has nothing)
      expect(driver.capabilities).to.deep.equal([]); // no quota on ext4
    });

    it("copies the parent's tree exactly (owners, modes, ns times, xattrs, hard links, devices, fifos, holes): the copy's diff is empty", async () => {
      const src = makeTempDir("engine-vfs-src-");
      mkdirSync(join(src, "bin"));
      writeFileSync(join(src, "bin", "ping"), "#!/bin/sh\n", { mode: 0o4755 });
      execFileSync("setcap", ["cap_net_raw+ep", join(src, "bin", "ping")]);
      xattr().setAttributeSync(join(src, "bin", "ping"), "user.note", "kept");
      await link(join(src, "bin", "ping"), join(src, "bin", "ping6"));
      execFileSync("mknod", [join(src, "null"), "c", "1", "3"]);
      execFileSync("mkfifo", [join(src, "fifo")]);
      execFileSync("truncate", ["-s", "64M", join(src, "disk.img")]);
      execFileSync("dd", [`of=${join(src, "disk.img")}`, "bs=1", "seek=4096", "conv=notrunc", "status=none"], { input: "data" });
      execFileSync("chown", ["-h", "1000:2000", join(src, "bin")]);
      execFileSync("touch", ["-h", "-d", "2001-02-03 04:05:06.123456789", join(src, "bin", "ping")]);
      const tar = execFileSync("tar", ["--format=posix", "--xattrs", "--xattrs-include=*", "-S", "--numeric-owner", "-cf", "-", "-C", src, "."], { maxBuffer: 1 << 26 });
      await driver.create("base", undefined);
      await driver.applyDiff("base", Readable.from([tar]));
      await driver.create("copy", "base");
      const base = treeOf(join(home, "dir", "base"));
      expect(Object.keys(base)).to.include.members(["bin/ping", "bin/ping6", "null", "fifo", "disk.img"]);
      expect(base["bin/ping"].nlink).to.equal(2n);
      expect(Object.keys(base["bin/ping"].xattrs as object)).to.include.members(["security.capability", "user.note"]);
      expect(treeOf(join(home, "dir", "copy"))).to.deep.equal(base);
      expect(await readTar(await driver.diff("copy"))).to.deep.equal([]);
      expect(await driver.usage("copy")).to.deep.equal({ size: 0, inodes: 0 });
      // a change in the copy is the copy's alone
      await writeFile(join(home, "dir", "copy", "bin", "ping"), "changed");
      expect(await readFile(join(home, "dir", "base", "bin", "ping"), "utf8")).to.equal("#!/bin/sh\n");
    });

    it("without project quota (here: ext4) refuses vfs.size, a container's size, and any other layer option with a 400 naming it, making nothing", async () => {
      const elsewhere = join(makeTempDir("engine-vfs-"), "vfs");
      const start = await rejects(createVfsDriver({ home: elsewhere, options: { "vfs.size": "1G" } }));
      expect(start.message).to.equal(`vfs.size is only supported on xfs mounted with the pquota option; ${elsewhere} is on extfs (Filesystem does not support, or has not enabled quotas)`);
      expect(existsSync(elsewhere), "a driver that refused to start leaves no folder").to.equal(false);
      await driver.create("base", undefined);
      const size = await rejects(driver.create("ctr", "base", { writable: true, storageOpts: { size: "1G" } }));
      expect(size).to.be.instanceOf(EngineError);
      expect((size as EngineError).statusCode).to.equal(400);
      expect(size.message).to.equal(
        `vfs: the size option is only supported on xfs mounted with the pquota option; ${home} is on extfs (Filesystem does not support, or has not enabled quotas)`,
      );
      expect((await rejects(driver.create("img", "base", { storageOpts: { size: "1G" } }))).message).to.equal("vfs: the size option applies to writable layers only (layer img)");
      const other = await rejects(driver.create("ctr", "base", { writable: true, storageOpts: { inodes: "10" } }));
      expect(other.message).to.equal("vfs: unknown storage option inodes");
      expect(await driver.exists("ctr")).to.equal(false);
      expect(readdirSync(join(home, "dir"))).to.deep.equal(["base"]);
    });

    it("cleanup removes half-made layers and trees without a layer (a crash during create or remove)", async () => {
      await driver.create("base", undefined);
      await driver.applyDiff("base", await makeTar([{ name: "f", content: "x" }]));
      await driver.create("half", "base");
      await writeFile(join(home, "layers", "half", ".incomplete"), "");
      await mkdir(join(home, "dir", "orphan", "deep"), { recursive: true });
      const again = await createVfsDriver({ home, options: {} });
      await again.cleanup();
      expect(await again.exists("half")).to.equal(false);
      expect(readdirSync(join(home, "dir"))).to.deep.equal(["base"]);
      expect(readdirSync(join(home, "layers"))).to.deep.equal(["base"]);
      await rejects(again.mounts("half"), /does not exist/);
    });

    it("under --userns-remap keeps the remapped owners on disk and gives the container's back in its diffs", async () => {
      const idMap: IdMap = { uids: [{ containerID: 0, hostID: 100000, size: 65536 }], gids: [{ containerID: 0, hostID: 100000, size: 65536 }] };
      const remapped = await createVfsDriver({ home: join(makeTempDir("engine-vfs-userns-"), "vfs"), options: {}, idMap });
      const dirOf = (id: string) => join((remapped as unknown as { home: string }).home, "dir", id);
      await remapped.create("base", undefined);
      expect(statSync(dirOf("base")).uid).to.equal(100000);
      await remapped.applyDiff("base", await makeTar([{ name: "etc", type: "directory" }, { name: "etc/os", content: "x" }]));
      expect(statSync(join(dirOf("base"), "etc", "os")).uid).to.equal(100000);
      await remapped.create("ctr", "base", { writable: true });
      expect(statSync(dirOf("ctr")).uid).to.equal(100000);
      // the base layer's diff is all of it, owned by container root again
      const extract = tarStream.extract();
      const owners: string[] = [];
      extract.on("entry", (h, stream, next) => {
        owners.push(`${h.name}:${h.uid}:${h.gid}`);
        stream.on("end", next);
        stream.resume();
      });
      const done = new Promise<void>((resolve, reject) => (extract.on("finish", () => resolve()), extract.on("error", reject)));
      (await remapped.diff("base")).pipe(extract);
      await done;
      expect(owners).to.deep.equal(["etc/:0:0", "etc/os:0:0"]);
    });

    it("works with its data root on overlayfs (a daemon nested in a container), where overlay2 cannot", async () => {
      const base = makeTempDir("engine-vfs-on-overlay-");
      const [lower, upper, work, merged] = ["lower", "upper", "work", "merged"].map((d) => join(base, d));
      for (const d of [lower, upper, work, merged]) mkdirSync(d);
      execFileSync("mount", ["-t", "overlay", "overlay", "-o", `lowerdir=${lower},upperdir=${upper},workdir=${work}`, merged]);
      try {
        const onOverlay = await createVfsDriver({ home: join(merged, "vfs"), options: {} });
        await onOverlay.create("base", undefined);
        await onOverlay.applyDiff("base", await makeTar([{ name: "etc", type: "directory" }, { name: "etc/gone", content: "g" }, { name: "etc/kept", content: "k" }]));
        await onOverlay.create("ctr", "base", { writable: true });
        await withMount(onOverlay, "ctr", async (root) => {
          await writeFile(join(root, "etc", "new"), "n");
          await unlink(join(root, "etc", "gone"));
        });
        const names = (await readTar(await onOverlay.diff("ctr"))).map((e) => e.name);
        expect(names).to.deep.equal(["etc", "etc/.wh.gone", "etc/new"]);
        for (const id of ["ctr", "base"]) await onOverlay.remove(id);
        expect(readdirSync(join(merged, "vfs", "dir"))).to.deep.equal([]);
      } finally {
        execFileSync("umount", [merged]);
      }
    });

    it("with its data root on xfs mounted with pquota, limits a container's whole filesystem (its image's files copied in count): vfs.size, or its own size", async function () {
      const xfs = await xfsWithPquota(this, "300M");
      try {
        const xfsHome = join(xfs.mountPoint, "vfs");
        const d = await createVfsDriver({ home: xfsHome, options: { "vfs.size": "20M" } });
        expect(d.capabilities).to.deep.equal(["quota"]);
        await d.create("base", undefined);
        await d.applyDiff("base", await makeTar([{ name: "etc", type: "directory" }, { name: "etc/image-file", content: Buffer.alloc(4 << 20, 1) }]));
        await d.create("ctr", "base", { writable: true });
        const { project, bytes } = JSON.parse(readFileSync(join(xfsHome, "layers", "ctr", "quota"), "utf8")) as { project: number; bytes: number };
        expect(bytes).to.equal(20 << 20);
        expect(execFileSync("xfs_io", ["-c", "lsproj", join(xfsHome, "dir", "ctr", "etc", "image-file")]).toString()).to.contain(`projid = ${project}`);
        await withMount(d, "ctr", async (root) => {
          await writeFile(join(root, "ten"), Buffer.alloc(10 << 20, 1)); // 4 MiB of the image + 10
          await expectOutOfSpace(writeFile(join(root, "eight"), Buffer.alloc(8 << 20, 1)));
        });
        // a container's own size wins; one smaller than its image's files cannot be made
        await d.create("small", "base", { writable: true, storageOpts: { size: "6M" } });
        await withMount(d, "small", async (root) => expectOutOfSpace(writeFile(join(root, "four"), Buffer.alloc(4 << 20, 1))));
        await rejects(d.create("tiny", "base", { writable: true, storageOpts: { size: "1M" } }), /quota|space/i);
        expect(await d.exists("tiny")).to.equal(false);
        // image layers have no quota
        expect(existsSync(join(xfsHome, "layers", "base", "quota"))).to.equal(false);
        for (const id of ["ctr", "small", "base"]) await d.remove(id);
        expect(readdirSync(join(xfsHome, "dir"))).to.deep.equal([]);
      } finally {
        await xfs.remove();
      }
    });

    it("is supported on Linux only; its manifest declares vfs.size", () => {
      const host = { platform: "linux" as const, arch: "x64", kernel: "6.1.0", cgroupVersion: 2 as const };
      expect(vfsSupported(host)).to.equal(true);
      expect(vfsSupported({ ...host, platform: "win32" })).to.match(/needs Linux/);
      expect(plugin.manifest.id).to.equal("storage.vfs");
      expect(Object.keys(plugin.manifest.options ?? {})).to.deep.equal(["vfs.size"]);
    });
  });

  describe("engined --storage-driver vfs with the Docker CLI", () => {
    const dataRoot = join(makeTempDir("engine-vfs-data-"), "data");
    const engined = storageDaemon(() => ["--storage-driver", "vfs", "--data-root", dataRoot]);
    let host: string;
    let d: TestDaemon;
    beforeEach(() => {
      d = engined.daemon();
      host = engined.host();
    });
    const layerCount = () => readdirSync(join(dataRoot, "vfs", "layers")).length;

    it("docker info and inspect show the driver as Docker's vfs does: Driver vfs, DriverStatus null, GraphDriver {Name: vfs, Data: null}", async () => {
      const info = JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/info")).body) as { Driver: string; DriverStatus: unknown };
      expect(info.Driver).to.equal("vfs");
      expect(info.DriverStatus).to.equal(null);
      expect(ok(await docker(host, ["info", "--format", "{{.Driver}}"]), "docker info").trim()).to.equal("vfs");
      ok(await docker(host, ["create", "--name", "vfs-inspect", "busybox"]), "docker create");
      expect(ok(await docker(host, ["inspect", "-f", "{{.GraphDriver.Name}}", "vfs-inspect", "busybox"]), "inspect name")).to.equal("vfs\nvfs\n");
      expect(ok(await docker(host, ["inspect", "-f", "{{json .GraphDriver}}", "vfs-inspect", "busybox"]), "inspect data")).to.equal('{"Data":null,"Name":"vfs"}\n'.repeat(2));
      ok(await docker(host, ["rm", "vfs-inspect"]), "docker rm");
    });

    it("runs a container, diffs and commits it, runs the committed image; removing both leaves no layer", async () => {
      const before = layerCount();
      ok(await docker(host, ["run", "--name", "vfs-src", "--network", "none", "busybox", "sh", "-c", "echo on vfs > /etc/motd && rm /etc/group"]), "docker run");
      const changes = ok(await docker(host, ["diff", "vfs-src"]), "docker diff").trim().split("\n");
      expect(changes).to.include.members(["C /etc", "A /etc/motd", "D /etc/group"]);
      ok(await docker(host, ["commit", "vfs-src", "vfs-committed:v1"]), "docker commit");
      const check = "cat /etc/motd && test ! -e /etc/group && test -e /etc/passwd && echo ok";
      expect(ok(await docker(host, ["run", "--rm", "--network", "none", "vfs-committed:v1", "sh", "-c", check]), "run committed")).to.equal("on vfs\nok\n");
      expect(ok(await docker(host, ["run", "--rm", "--network", "none", "busybox", "sh", "-c", "test -e /etc/group && test ! -e /etc/motd && echo base"]), "run base")).to.equal("base\n");
      ok(await docker(host, ["rm", "vfs-src"]), "docker rm");
      ok(await docker(host, ["rmi", "vfs-committed:v1"]), "docker rmi");
      expect(layerCount()).to.equal(before);
      expect(readdirSync(join(dataRoot, "vfs", "dir")).length).to.equal(before);
    });

    it("saves an image and loads it back with the same ID and contents", async () => {
      ok(await docker(host, ["run", "--name", "vfs-save", "--network", "none", "busybox", "sh", "-c", "mkdir /srv && echo saved > /srv/file"]), "docker run");
      ok(await docker(host, ["commit", "vfs-save", "vfs-saved:v1"]), "docker commit");
      ok(await docker(host, ["rm", "vfs-save"]), "docker rm");
      const id = ok(await docker(host, ["inspect", "-f", "{{.Id}}", "vfs-saved:v1"]), "inspect").trim();
      const archive = join(makeTempDir("engine-vfs-save-"), "saved.tar");
      ok(await docker(host, ["save", "-o", archive, "vfs-saved:v1"]), "docker save");
      ok(await docker(host, ["rmi", "vfs-saved:v1"]), "docker rmi");
      expect(ok(await docker(host, ["load", "-i", archive]), "docker load")).to.contain("Loaded image: vfs-saved:v1");
      expect(ok(await docker(host, ["inspect", "-f", "{{.Id}}", "vfs-saved:v1"]), "inspect").trim()).to.equal(id);
      expect(ok(await docker(host, ["run", "--rm", "--network", "none", "vfs-saved:v1", "cat", "/srv/file"]), "run loaded")).to.equal("saved\n");
      ok(await docker(host, ["rmi", "vfs-saved:v1"]), "docker rmi");
    });

    it("builds a small Dockerfile (COPY, RUN) and runs the result", async () => {
      const ctx = makeTempDir("engine-vfs-build-");
      writeFileSync(join(ctx, "greeting"), "hello vfs\n");
      writeFileSync(join(ctx, "Dockerfile"), 'FROM busybox\nCOPY greeting /\nRUN cat /greeting > /copied && rm /etc/group\nCMD ["cat", "/copied"]\n');
      ok(await docker(host, ["build", "-t", "vfs-built", ctx], { DOCKER_BUILDKIT: "0" }, { timeoutMs: 120_000 }), "docker build");
      expect(ok(await docker(host, ["run", "--rm", "--network", "none", "vfs-built"]), "run built")).to.equal("hello vfs\n");
      expect(ok(await docker(host, ["run", "--rm", "--network", "none", "vfs-built", "sh", "-c", "test ! -e /etc/group && echo gone"]), "run built")).to.equal("gone\n");
      ok(await docker(host, ["rmi", "vfs-built"]), "docker rmi");
    });

    it("refuses a container's --storage-opt size without quota with a 400 in Docker's words, leaving nothing", async () => {
      const before = layerCount();
      const r = await docker(host, ["create", "--storage-opt", "size=1G", "busybox"]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.contain("Filesystem does not support, or has not enabled quotas");
      const api = await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/containers/create", { Image: "busybox", HostConfig: { StorageOpt: { size: "1G" } } });
      expect(api.status).to.equal(400);
      expect(layerCount()).to.equal(before);
      expect(existsSync(join(dataRoot, "vfs", "dir"))).to.equal(true);
    });

    it("a daemon restarted on its data root without --storage-driver stays on vfs with its images and containers (moby's TestGraphDriverPersistence)", async () => {
      const root = join(makeTempDir("engine-vfs-restart-"), "data");
      const first = await startEngined({ args: ["--storage-driver", "vfs", "--data-root", root] });
      try {
        const h = `unix://${first.socket}`;
        ok(await docker(h, ["import", "-c", 'CMD ["sh"]', writeFixture(makeTempDir("engine-vfs-restart-"), "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
        ok(await docker(h, ["run", "--name", "kept", "--network", "none", "busybox", "sh", "-c", "echo kept > /kept"]), "docker run");
      } finally {
        await first.stop();
      }
      const again = await startEngined({ args: ["--data-root", root] });
      try {
        const h = `unix://${again.socket}`;
        expect(ok(await docker(h, ["info", "--format", "{{.Driver}}"]), "docker info").trim()).to.equal("vfs");
        expect(ok(await docker(h, ["inspect", "-f", "{{.GraphDriver.Name}}", "busybox", "kept"]), "inspect")).to.equal("vfs\nvfs\n");
        expect(ok(await docker(h, ["start", "-a", "kept"]), "docker start")).to.equal("");
        expect(ok(await docker(h, ["diff", "kept"]), "docker diff")).to.contain("A /kept");
        ok(await docker(h, ["rm", "kept"]), "docker rm");
      } finally {
        await again.stop();
      }
    });

    it("a daemon given vfs.size without quota, a bad vfs.size or another vfs option does not start, and says why", async () => {
      const dir = makeTempDir("engine-vfs-opt-");
      const start = (...opts: string[]) => runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "engine.sock")}`, "--storage-driver", "vfs", ...opts.flatMap((o) => ["--storage-opt", o])]);
      const noQuota = await start("vfs.size=10G");
      expect(noQuota.code).to.equal(1);
      expect(noQuota.stderr).to.contain(`vfs.size is only supported on xfs mounted with the pquota option; ${join(dir, "data", "vfs")} is on extfs (Filesystem does not support, or has not enabled quotas)`);
      expect((await start("vfs.size=lots")).stderr).to.match(/vfs: invalid vfs.size \\"lots\\": expected a size/); // quotes escaped in the log line
      expect((await start("vfs.xattrs=i_want_broken_containers")).stderr).to.contain("vfs: unknown option vfs.xattrs");
    });
  });
});
