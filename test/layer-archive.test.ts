/**
 * core/archive against real files as root: extraction with every kind of metadata, whiteouts in
 * both forms (and through a real overlay mount), and packing back to the OCI form. Decompression
 * is in layer-archive-decompress.test.ts, hostile tars in layer-archive-hostile.test.ts.
 */
import "./helpers/root-hooks.js";
import { getAttributeSync, listAttributesSync } from "@napi-rs/xattr";
import { expect } from "chai";
import { execFileSync, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { applyLayer, LayerEntryError, packLayer } from "../core/archive/index.js";
import {
  capabilityBytes,
  lowerLayerEntries,
  makeTar,
  MIB,
  MTIME,
  normalLayerEntries,
  opaqueOrderEntries,
  SPARSE_MARK,
  SPARSE_OFFSET,
  SPARSE_SIZE,
  whiteoutLayerEntries,
  type TarEntry,
} from "./fixtures/layers.js";
import { makeTempDir } from "./helpers/engined.js";
import { apply, collect, freshDir, readTar, type TarRecord } from "./helpers/layer-archive.js";

describe("layer archive", function () {
  this.timeout(120_000);

  describe("applyLayer: a normal layer", () => {
    let dir: string;
    let size: number;
    const at = (p: string) => join(dir, p);

    before(async () => {
      dir = freshDir();
      ({ size } = await apply(normalLayerEntries(), dir, { whiteouts: "overlay" }));
    });

    it("keeps owners and modes, setuid, setgid and sticky included", () => {
      const expectStat = (p: string, mode: number, uid: number, gid: number) => {
        const st = lstatSync(at(p));
        expect([st.mode & 0o7777, st.uid, st.gid], p).to.deep.equal([mode, uid, gid]);
      };
      expectStat("etc/app.conf", 0o644, 1000, 1000);
      expectStat("home/user", 0o750, 1000, 1000);
      expectStat("home/user/notes.txt", 0o600, 1000, 1000);
      expectStat("tmp", 0o1777, 0, 0);
      expectStat("usr/bin/suid-tool", 0o4755, 0, 0);
      expectStat("usr/bin/sgid-tool", 0o2755, 0, 50);
      expectStat("var/lib/sparse.img", 0o640, 1000, 1000);
    });

    it("keeps mtimes to the second, of files, directories and symlinks", () => {
      const mtime = (p: string) => Math.floor(lstatSync(at(p)).mtimeMs / 1000);
      expect(mtime("etc/app.conf")).to.equal(MTIME);
      expect(mtime("home/user/notes.txt")).to.equal(MTIME - 60);
      expect(mtime("etc/abs-link")).to.equal(MTIME - 100);
      expect(mtime("home/user")).to.equal(MTIME - 7200); // set after notes.txt was written in it
      expect(mtime("home")).to.equal(MTIME - 3600);
      expect(mtime("usr/bin")).to.equal(MTIME);
    });

    it("keeps symlink targets and hard links", () => {
      expect(readlinkSync(at("etc/abs-link"))).to.equal("/etc/app.conf");
      expect(readlinkSync(at("usr/bin/tool-link"))).to.equal("suid-tool");
      const a = statSync(at("etc/app.conf"));
      const b = statSync(at("etc/app.conf.bak"));
      expect(b.ino).to.equal(a.ino);
      expect(a.nlink).to.equal(2);
    });

    it("keeps security.capability byte for byte (getcap agrees) and other xattrs", () => {
      expect(getAttributeSync(at("usr/bin/ping"), "security.capability")).to.deep.equal(capabilityBytes("cap_net_raw+ep"));
      expect(getAttributeSync(at("usr/bin/become"), "security.capability")).to.deep.equal(capabilityBytes("cap_setuid+ep"));
      expect(getAttributeSync(at("usr/bin/ping"), "user.comment")?.toString()).to.equal("pings");
      expect(execFileSync("getcap", [at("usr/bin/ping")]).toString()).to.include("cap_net_raw");
      expect(execFileSync("getcap", [at("usr/bin/become")]).toString()).to.include("cap_setuid");
    });

    it("writes runs of zeros as holes", () => {
      const st = statSync(at("var/lib/sparse.img"));
      expect(st.size).to.equal(SPARSE_SIZE);
      expect(st.blocks * 512).to.be.below(64 * 1024);
      const content = readFileSync(at("var/lib/sparse.img"));
      expect(content.toString("utf8", SPARSE_OFFSET, SPARSE_OFFSET + SPARSE_MARK.length)).to.equal(SPARSE_MARK);
      expect(createHash("sha256").update(content).digest("hex")).to.equal(
        createHash("sha256").update(Buffer.concat([Buffer.alloc(SPARSE_OFFSET), Buffer.from(SPARSE_MARK), Buffer.alloc(SPARSE_SIZE - SPARSE_OFFSET - SPARSE_MARK.length)])).digest("hex"),
      );
    });

    it("reports the bytes of the regular files it wrote", () => {
      const files = normalLayerEntries().filter((e) => (e.type ?? "file") === "file");
      expect(size).to.equal(files.reduce((n, e) => n + Buffer.byteLength(e.data ?? ""), 0));
    });

    it("writes a file fed in chunks that split its blocks anywhere, with the same bytes and its zeros as holes", async () => {
      // data, 64 KiB of zeros, data, 64 KiB of zeros, a short tail: fed in chunks of odd sizes
      // so partial 4 KiB blocks are carried from one chunk into the next
      const data = Buffer.concat([randomBytes(10_000), Buffer.alloc(65_536), randomBytes(5_000), Buffer.alloc(65_536), randomBytes(333)]);
      const tar = await makeTar([{ name: "chunked.bin", data }]);
      const sizes = [1, 511, 4095, 4097, 7777, 100_000];
      const chunks: Buffer[] = [];
      for (let at = 0, i = 0; at < tar.length; i++) {
        const n = sizes[i % sizes.length];
        chunks.push(Buffer.from(tar.subarray(at, at + n)));
        at += n;
      }
      const dir = freshDir();
      await applyLayer(Readable.from(chunks), dir, { whiteouts: "overlay" });
      const out = join(dir, "chunked.bin");
      expect(readFileSync(out).equals(data)).to.equal(true);
      expect(statSync(out).blocks * 512).to.be.below(data.length - 65_536);
    });

    it("extracts a tar GNU tar made with --xattrs and PAX sparse files", async () => {
      const src = makeTempDir("engine-gnutar-");
      writeFileSync(join(src, "ping"), "#!/bin/sh\n", { mode: 0o755 });
      execFileSync("setcap", ["cap_setuid,cap_net_raw+ep", join(src, "ping")]);
      execFileSync("truncate", ["-s", `${SPARSE_SIZE}`, join(src, "disk.img")]);
      execFileSync("dd", [`of=${join(src, "disk.img")}`, "bs=1", `seek=${SPARSE_OFFSET}`, "conv=notrunc", "status=none"], { input: SPARSE_MARK });
      const tar = execFileSync("tar", ["--format=posix", "--xattrs", "--xattrs-include=*", "-S", "-cf", "-", "-C", src, "ping", "disk.img"], { maxBuffer: 64 * MIB });
      const out = freshDir();
      const { size: got } = await applyLayer(Readable.from([tar]), out, { whiteouts: "overlay" });
      expect(got).to.equal(SPARSE_SIZE + 10);
      expect(execFileSync("getcap", [join(out, "ping")]).toString()).to.match(/cap_net_raw,cap_setuid|cap_setuid,cap_net_raw/);
      const st = statSync(join(out, "disk.img"));
      expect(st.size).to.equal(SPARSE_SIZE);
      expect(st.blocks * 512).to.be.below(64 * 1024);
      expect(readFileSync(join(out, "disk.img")).equals(readFileSync(join(src, "disk.img")))).to.equal(true);
      expect(readdirSync(out).sort()).to.deep.equal(["disk.img", "ping"]);
    });

    it("makes devices and fifos only when allowed", async () => {
      const entries: TarEntry[] = [
        { name: "dev/", type: "directory" },
        { name: "dev/null", type: "character-device", devmajor: 1, devminor: 3, mode: 0o666 },
        { name: "dev/loop9", type: "block-device", devmajor: 7, devminor: 9, mode: 0o660, gid: 6 },
        { name: "dev/fifo", type: "fifo", mode: 0o620, uid: 1000 },
      ];
      const out = freshDir();
      await apply(entries, out, { whiteouts: "overlay", allowDevices: true });
      const nul = lstatSync(join(out, "dev/null"));
      expect([nul.isCharacterDevice(), nul.rdev, nul.mode & 0o7777]).to.deep.equal([true, 0x103, 0o666]);
      const loop = lstatSync(join(out, "dev/loop9"));
      expect([loop.isBlockDevice(), loop.rdev, loop.mode & 0o7777, loop.gid]).to.deep.equal([true, 0x709, 0o660, 6]);
      const fifo = lstatSync(join(out, "dev/fifo"));
      expect([fifo.isFIFO(), fifo.mode & 0o7777, fifo.uid]).to.deep.equal([true, 0o620, 1000]);
      expect(Math.floor(fifo.mtimeMs / 1000)).to.equal(MTIME);
      const err = await apply(entries, freshDir(), { whiteouts: "overlay" }).catch((e: Error) => e);
      expect((err as Error).message).to.include('"dev/null"');
    });
  });

  describe("applyLayer: broken input", () => {
    it("rejects what is not a tar, a truncated tar and a failing input", async () => {
      const garbage = await applyLayer(Readable.from([randomBytes(4096)]), freshDir(), { whiteouts: "overlay" }).catch((e: Error) => e);
      expect(garbage).to.be.instanceOf(Error);
      const tar = await makeTar([{ name: "f", data: Buffer.alloc(4096, 1) }]);
      const truncated = await applyLayer(Readable.from([tar.subarray(0, 2048)]), freshDir(), { whiteouts: "overlay" }).catch((e: Error) => e);
      expect(truncated).to.be.instanceOf(Error);
      const input = new PassThrough();
      input.write(tar.subarray(0, 1024));
      setTimeout(() => input.destroy(new Error("registry went away")), 20);
      const failed = await applyLayer(input, freshDir(), { whiteouts: "overlay" }).catch((e: Error) => e);
      expect((failed as Error).message).to.equal("registry went away");
      // an input that fails at once, before applyLayer has looked at its folder, is no uncaught error
      const early = new PassThrough();
      const failedEarly = applyLayer(early, freshDir(), { whiteouts: "overlay" }).catch((e: Error) => e);
      early.destroy(new Error("cut at once"));
      expect(((await failedEarly) as Error).message).to.equal("cut at once");
    });

    it("takes an archive that ends right after its last entry's data, as Go's reader does (the Docker CLI's `build -f -` context)", async () => {
      const tar = await makeTar([{ name: "a", data: "first\n" }, { name: "last", data: "FROM busybox\n" }]);
      // the second header is at 1024; its 13 bytes of data follow it, then nothing
      const cut = tar.subarray(0, 1024 + 512 + 13);
      const dir = freshDir();
      await applyLayer(Readable.from([cut]), dir, { whiteouts: "overlay" });
      expect(readFileSync(join(dir, "last"), "utf8")).to.equal("FROM busybox\n");
      // cut inside the data, it is still a truncated archive
      const inside = await applyLayer(Readable.from([tar.subarray(0, 1024 + 512 + 5)]), freshDir(), { whiteouts: "overlay" }).catch((e: Error) => e);
      expect(inside).to.be.instanceOf(Error);
    });

    it("refuses old GNU sparse entries, naming the entry", async () => {
      const src = makeTempDir("engine-gnusparse-");
      execFileSync("truncate", ["-s", "1M", join(src, "holes.img")]);
      const tar = execFileSync("tar", ["--format=gnu", "-S", "-cf", "-", "-C", src, "holes.img"]);
      const err = await applyLayer(Readable.from([tar]), freshDir(), { whiteouts: "overlay" }).catch((e: Error) => e);
      expect(err).to.be.instanceOf(LayerEntryError);
      expect((err as Error).message).to.match(/"holes.img".*unsupported entry type/);
    });
  });

  describe("applyLayer: whiteouts", () => {
    it('"overlay": 0:0 character devices and the opaque attribute, no .wh. files', async () => {
      const dir = freshDir();
      await apply(whiteoutLayerEntries(), dir, { whiteouts: "overlay" });
      for (const p of ["etc/app.conf", "tmp"]) {
        const st = lstatSync(join(dir, p));
        expect([st.isCharacterDevice(), st.rdev], p).to.deep.equal([true, 0]);
        expect(Math.floor(st.mtimeMs / 1000), p).to.equal(p === "tmp" ? MTIME - 5 : MTIME - 10);
      }
      expect(getAttributeSync(join(dir, "opt/data"), "trusted.overlay.opaque")?.toString()).to.equal("y");
      expect(readdirSync(join(dir, "opt/data"))).to.deep.equal(["new.txt"]);
      expect(readdirSync(join(dir, "etc"))).to.deep.equal(["app.conf"]);
      expect(readdirSync(dir).sort()).to.deep.equal(["etc", "opt", "tmp"]);
    });

    it('"oci": keeps the .wh. files as they are, and no whiteout of a path the layer itself writes', async () => {
      const dir = freshDir();
      await apply(
        [...whiteoutLayerEntries(), { name: "etc/.wh.mine", mode: 0o600 }, { name: "etc/mine", data: "mine\n" }, { name: "own", data: "own\n" }, { name: ".wh.own", mode: 0o600 }],
        dir,
        { whiteouts: "oci" },
      );
      expect(readdirSync(dir).sort()).to.deep.equal([".wh.tmp", "etc", "opt", "own"]);
      expect(readdirSync(join(dir, "etc")).sort()).to.deep.equal([".wh.app.conf", "mine"]);
      expect(readdirSync(join(dir, "opt/data")).sort()).to.deep.equal([".wh..wh..opq", "new.txt"]);
      const wh = lstatSync(join(dir, "etc/.wh.app.conf"));
      expect([wh.isFile(), wh.size, wh.mode & 0o7777, Math.floor(wh.mtimeMs / 1000)]).to.deep.equal([true, 0, 0o600, MTIME - 10]);
      expect(listAttributesSync(join(dir, "opt/data"))).to.deep.equal([]);
      // and packed, the same whiteouts come back once each
      const packed = await readTar(packLayer(dir, { whiteouts: "mixed" }));
      expect(packed.map((r) => r.name).filter((n) => n.includes(".wh.")).sort()).to.deep.equal([".wh.tmp", "etc/.wh.app.conf", "opt/data/.wh..wh..opq"]);
    });

    it('"remove": deletes what whiteouts name and empties opaque directories', async () => {
      const dir = freshDir();
      await apply(lowerLayerEntries(), dir, { whiteouts: "remove" });
      await apply(whiteoutLayerEntries(), dir, { whiteouts: "remove" });
      expect(readdirSync(dir).sort()).to.deep.equal(["etc", "opt"]);
      expect(readdirSync(join(dir, "etc"))).to.deep.equal(["keep.conf"]);
      expect(readdirSync(join(dir, "opt/data"))).to.deep.equal(["new.txt"]);
      expect(listAttributesSync(join(dir, "opt/data"))).to.deep.equal([]);
    });

    it('"remove": an opaque marker hides the layers below, not its own layer\'s entries', async () => {
      const dir = freshDir();
      await apply(lowerLayerEntries(), dir, { whiteouts: "remove" });
      await apply(opaqueOrderEntries(), dir, { whiteouts: "remove" });
      expect(readdirSync(join(dir, "opt/data")).sort()).to.deep.equal(["!early.txt", "late.txt"]);
    });

    it("overlayfs mounted on two extracted layers hides what the upper one whites out", async () => {
      const base = makeTempDir("engine-overlay-");
      const [lower1, lower2, upper, work, mnt] = ["lower1", "lower2", "upper", "work", "mnt"].map((d) => join(base, d));
      for (const d of [lower1, lower2, upper, work, mnt]) mkdirSync(d);
      await apply(lowerLayerEntries(), lower1, { whiteouts: "overlay" });
      await apply(whiteoutLayerEntries(), lower2, { whiteouts: "overlay" });
      execFileSync("mount", ["-t", "overlay", "overlay", "-o", `lowerdir=${lower2}:${lower1},upperdir=${upper},workdir=${work}`, mnt]);
      try {
        expect(readdirSync(mnt).sort()).to.deep.equal(["etc", "opt"]);
        expect(readdirSync(join(mnt, "etc"))).to.deep.equal(["keep.conf"]);
        expect(existsSync(join(mnt, "etc/app.conf"))).to.equal(false);
        expect(readdirSync(join(mnt, "opt/data"))).to.deep.equal(["new.txt"]);
        expect(readFileSync(join(mnt, "opt/data/new.txt"), "utf8")).to.equal("new\n");
      } finally {
        const umount = spawnSync("umount", [mnt]);
        if (umount.status !== 0) spawnSync("umount", ["-l", mnt]);
      }
      expect(readdirSync(mnt)).to.deep.equal([]);
    });
  });

  describe("packLayer", () => {
    const comparable = (records: TarRecord[]) =>
      records.map((r) => ({ ...r, mode: r.type === "symlink" ? 0 : r.mode, linkname: r.linkname ?? null }));
    const fromEntries = async (entries: TarEntry[]) => readTar(Readable.from([await makeTar(entries)]));

    it("gives back the OCI form of whiteouts after an overlay apply", async () => {
      const dir = freshDir();
      await apply(whiteoutLayerEntries(), dir, { whiteouts: "overlay" });
      const packed = await readTar(packLayer(dir, { whiteouts: "overlay" }));
      const want = await fromEntries(whiteoutLayerEntries());
      const byName = (a: TarRecord, b: TarRecord) => (a.name < b.name ? -1 : 1);
      expect(comparable(packed).sort(byName)).to.deep.equal(comparable(want).sort(byName));
      expect(packed.findIndex((r) => r.name === "opt/data/.wh..wh..opq")).to.equal(packed.findIndex((r) => r.name === "opt/data") + 1);
    });

    it("gives back a normal layer: metadata, links, xattrs, contents, in walk order", async () => {
      const dir = freshDir();
      const entries = normalLayerEntries();
      await apply(entries, dir, { whiteouts: "overlay" });
      const packed = await readTar(packLayer(dir, { whiteouts: "overlay" }));
      expect(comparable(packed)).to.deep.equal(comparable(await fromEntries(entries)));
    });

    it("writes xattrs GNU tar restores (getcap on what GNU tar extracted)", async () => {
      const dir = freshDir();
      await apply(normalLayerEntries(), dir, { whiteouts: "overlay" });
      const tar = await collect(packLayer(dir, { whiteouts: "overlay" }));
      const out = freshDir();
      execFileSync("tar", ["--xattrs", "--xattrs-include=*", "-xpf", "-", "-C", out], { input: tar });
      expect(execFileSync("getcap", [join(out, "usr/bin/ping")]).toString()).to.include("cap_net_raw");
      expect(execFileSync("getcap", [join(out, "usr/bin/become")]).toString()).to.include("cap_setuid");
      expect(statSync(join(out, "usr/bin/suid-tool")).mode & 0o7777).to.equal(0o4755);
    });

    it('"none" keeps whiteout devices as character devices and skips overlay xattrs', async () => {
      const dir = freshDir();
      await apply(whiteoutLayerEntries(), dir, { whiteouts: "overlay" });
      const packed = await readTar(packLayer(dir, { whiteouts: "none" }));
      expect(packed.filter((r) => r.type === "character-device").map((r) => r.name).sort()).to.deep.equal(["etc/app.conf", "tmp"]);
      expect(packed.some((r) => r.name.includes(".wh."))).to.equal(false);
      expect(packed.every((r) => Object.keys(r.xattrs).length === 0)).to.equal(true);
    });

    it("fails as a stream when the folder cannot be read", async () => {
      const err = await collect(packLayer(join(freshDir(), "missing"), { whiteouts: "overlay" })).catch((e: Error) => e);
      expect((err as NodeJS.ErrnoException).code).to.equal("ENOENT");
    });
  });
});
