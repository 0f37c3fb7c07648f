/**
 * The storage conformance suite: what every storage driver must do, tested for real. Layer
 * tars are made in code, chains are mounted with mount(8) from the driver's own mount
 * specifications, and files are read and written through the mounts.
 *
 * A driver's test file calls `storageConformance("<name>", makeDriver)`; `makeDriver(home,
 * options)` makes a driver whose home is `home` (a fresh temporary folder per test). A driver
 * that needs a particular filesystem says where homes are made (`homesIn`, on that filesystem).
 * What a driver may do in its own way is checked for its effect: a snapshot driver's diff
 * hides a directory's old entries with a whiteout each or with an opaque marker, and any diff
 * applied on the parent gives the layer back. A driver whose mount specifications mount(8)
 * cannot mount on this machine (zfs without ZFS, tested through a fake) passes `mount`: how its
 * specifications are mounted instead; one that runs a command per operation may pass a longer
 * `timeoutMs` per test (120 s by default).
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync } from "node:fs";
import { readdir, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { constants } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { expect } from "chai";
import tarStream from "tar-stream";
import type { MountSpec, StorageDriver } from "../core/contracts/storage.js";
import { makeTempDir } from "./helpers/engined.js";
import { mountSpecs as mountAt, unmountAll } from "../host/storage/mount-specs.js";
import "./helpers/root-hooks.js";


// --- tars --------------------------------------------------------------------------------------

export interface TarEntry {
  name: string;
  type?: "file" | "directory" | "symlink" | "link";
  content?: string | Buffer;
  mode?: number;
  linkname?: string;
}

/** An uncompressed tar of `entries`, as a Node stream. */
export async function makeTar(entries: TarEntry[]): Promise<Readable> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    pack.on("data", (chunk: unknown) => chunks.push(chunk as Buffer));
    pack.on("end", () => resolve());
    pack.on("error", reject);
  });
  for (const e of entries) {
    const type = e.type ?? "file";
    const content = typeof e.content === "string" ? Buffer.from(e.content) : (e.content ?? Buffer.alloc(0));
    const mode = e.mode ?? (type === "directory" ? 0o755 : 0o644);
    const header = { name: e.name, type, mode, uid: 0, gid: 0, mtime: new Date(1_700_000_000_000), linkname: e.linkname };
    if (type === "file") pack.entry({ ...header, size: content.length }, content);
    else pack.entry(header);
  }
  pack.finalize();
  await done;
  return Readable.from([Buffer.concat(chunks)]);
}

export interface ReadEntry {
  name: string;
  type: string;
  content: string;
}

/** The entries of a tar stream, names without a leading `./` or trailing `/`. */
export async function readTar(stream: Readable): Promise<ReadEntry[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  const extract = tarStream.extract();
  const out: ReadEntry[] = [];
  extract.end(Buffer.concat(chunks));
  for await (const entry of extract) {
    const parts: Buffer[] = [];
    for await (const part of entry) parts.push(part as Buffer);
    out.push({ name: entry.header.name.replace(/^\.\//, "").replace(/\/$/, ""), type: entry.header.type ?? "file", content: Buffer.concat(parts).toString() });
  }
  return out;
}

// --- mounts ------------------------------------------------------------------------------------

/** How a driver's mount specifications are mounted on a folder (host/storage/mount-specs.ts by default). */
export type MountFunction = (specs: readonly MountSpec[], target: string) => Promise<void>;

/** Mounts `specs` on `target`; resolves with the function that unmounts them. */
export async function mountSpecs(specs: MountSpec[], target: string, mount: MountFunction = mountAt): Promise<() => Promise<void>> {
  await mount(specs, target);
  return () => unmountAll(target, specs.length);
}

/** Mounts the chain of `id` on a fresh folder, runs `fn` with its path, and always unmounts. */
export async function withMount<T>(driver: StorageDriver, id: string, fn: (root: string) => Promise<T>, mount?: MountFunction): Promise<T> {
  const target = makeTempDir("engine-storage-mnt-");
  const unmount = await mountSpecs(await driver.mounts(id), target, mount);
  try {
    return await fn(target);
  } finally {
    await unmount();
    await rm(target, { recursive: true, force: true });
  }
}

/** The module's withMount, for the suite, whose own `withMount` passes the driver's mount function on. */
const withMountOf = withMount;

/** The error `promise` rejects with (matching `pattern`, when given); fails if it resolves. */
export async function rejects(promise: Promise<unknown>, pattern?: RegExp): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    if (pattern) expect((err as Error).message).to.match(pattern);
    return err as Error;
  }
  throw new Error("expected a rejects");
}

/** `promise` (a write) fails for want of space: ENOSPC, or EDQUOT past a quota (which Node names only by its number). */
export async function expectOutOfSpace(promise: Promise<unknown>): Promise<void> {
  const err = (await rejects(promise)) as NodeJS.ErrnoException;
  expect(-(err.errno ?? 0), `${err.code}: ${err.message}`).to.be.oneOf([constants.errno.ENOSPC, constants.errno.EDQUOT]);
}

/** A tar stream that breaks after its first entry, as a download cut off half way would. */
async function brokenTar(): Promise<Readable> {
  const whole = await makeTar([
    { name: "first", content: "x".repeat(600) },
    { name: "second", content: "y".repeat(10_000) },
  ]);
  const chunks: Buffer[] = [];
  for await (const c of whole) chunks.push(c as Buffer);
  const part = Buffer.concat(chunks).subarray(0, 2048);
  let sent = false;
  return new Readable({
    read() {
      if (sent) return void this.destroy(new Error("connection reset"));
      sent = true;
      this.push(part);
    },
  });
}

// --- the suite ---------------------------------------------------------------------------------

export interface ConformanceOptions {
  /** The folder a test's driver home is made in (default: a fresh temporary folder); asked in each test. */
  homesIn?: () => string;
  /** How the driver's mount specifications are mounted, when mount(8) cannot (a fake's). */
  mount?: MountFunction;
  /** The time a test may take (default 120 s). */
  timeoutMs?: number;
}

export function storageConformance(
  name: string,
  makeDriver: (home: string, options: Record<string, string>) => Promise<StorageDriver>,
  opts: ConformanceOptions = {},
): void {
  /** A fresh, empty home for a driver. */
  const newHome = () => {
    const home = join(opts.homesIn ? mkdtempSync(join(opts.homesIn(), "engine-storage-")) : makeTempDir("engine-storage-"), name);
    mkdirSync(home);
    return home;
  };

  const withMount = <T>(driver: StorageDriver, id: string, fn: (root: string) => Promise<T>) => withMountOf(driver, id, fn, opts.mount);
  describe(`storage conformance: ${name}`, function () {
    // A driver that runs a command per layer operation (zfs) needs longer on a loaded machine.
    this.timeout(opts.timeoutMs ?? 120_000);
    let home: string;
    let driver: StorageDriver;

    beforeEach(async () => {
      home = newHome();
      driver = await makeDriver(home, {});
      await driver.cleanup();
    });

    it("creates layers, knows they exist and their parents", async () => {
      expect(await driver.exists("base")).to.equal(false);
      await driver.create("base", undefined);
      await driver.create("child", "base");
      expect(await driver.exists("base")).to.equal(true);
      expect(await driver.exists("child")).to.equal(true);
      expect(await driver.parent("base")).to.equal(undefined);
      expect(await driver.parent("child")).to.equal("base");
      expect(driver.name).to.equal(name);
    });

    it("refuses to create a layer twice", async () => {
      await driver.create("base", undefined);
      await rejects(driver.create("base", undefined), /exists/);
    });

    it("refuses to create a layer on a missing parent", async () => {
      await rejects(driver.create("child", "nosuch"), /nosuch/);
      expect(await driver.exists("child")).to.equal(false);
    });

    it("applies a layer tar and shows its files through the mount", async () => {
      await driver.create("base", undefined);
      const bytes = await driver.applyDiff(
        "base",
        await makeTar([
          { name: "etc", type: "directory" },
          { name: "etc/hostname", content: "base\n" },
          { name: "bin", type: "directory" },
          { name: "bin/tool", content: "#!/bin/sh\n", mode: 0o755 },
          { name: "bin/alias", type: "symlink", linkname: "tool" },
        ]),
      );
      // as Docker's drivers count an applied layer: overlay ones its folder's size (a symlink its
      // target's length), naive-diff ones (btrfs, zfs) the tar's file bytes
      expect([5 + 10, 5 + 10 + "tool".length]).to.include(bytes);
      await withMount(driver, "base", async (root) => {
        expect(await readFile(join(root, "etc/hostname"), "utf8")).to.equal("base\n");
        expect(await readFile(join(root, "bin/alias"), "utf8")).to.equal("#!/bin/sh\n");
        // An image layer is mounted read-only.
        await rejects(writeFile(join(root, "etc/new"), "x"), /EROFS|read-only/i);
      });
      await driver.create("second", "base");
      await driver.applyDiff("second", await makeTar([{ name: "etc/hostname", content: "second\n" }, { name: "added", content: "a" }]));
      await withMount(driver, "second", async (root) => {
        expect(await readFile(join(root, "etc/hostname"), "utf8")).to.equal("second\n");
        expect(await readFile(join(root, "bin/tool"), "utf8")).to.equal("#!/bin/sh\n");
        expect(await readFile(join(root, "added"), "utf8")).to.equal("a");
      });
    });

    it("shows a 3-layer chain merged: whiteouts hide files, an opaque directory hides its old contents", async () => {
      await driver.create("l1", undefined);
      await driver.applyDiff(
        "l1",
        await makeTar([
          { name: "a", content: "a1" },
          { name: "keep", content: "keep1" },
          { name: "dir", type: "directory" },
          { name: "dir/x", content: "x1" },
          { name: "dir/y", content: "y1" },
          { name: "other", type: "directory" },
          { name: "other/o", content: "o1" },
        ]),
      );
      await driver.create("l2", "l1");
      await driver.applyDiff("l2", await makeTar([{ name: "b", content: "b2" }, { name: "dir/z", content: "z2" }]));
      await driver.create("l3", "l2");
      await driver.applyDiff(
        "l3",
        await makeTar([
          { name: ".wh.a", content: "" },
          { name: "dir", type: "directory" },
          { name: "dir/.wh..wh..opq", content: "" },
          { name: "dir/new", content: "new3" },
          { name: "other/.wh.o", content: "" },
        ]),
      );
      await withMount(driver, "l3", async (root) => {
        expect((await readdir(root)).sort()).to.deep.equal(["b", "dir", "keep", "other"]);
        expect((await readdir(join(root, "dir"))).sort()).to.deep.equal(["new"]);
        expect(await readdir(join(root, "other"))).to.deep.equal([]);
        expect(await readFile(join(root, "keep"), "utf8")).to.equal("keep1");
        expect(await readFile(join(root, "dir/new"), "utf8")).to.equal("new3");
      });
      // The middle of the chain still shows what it showed.
      await withMount(driver, "l2", async (root) => {
        expect((await readdir(root)).sort()).to.deep.equal(["a", "b", "dir", "keep", "other"]);
        expect((await readdir(join(root, "dir"))).sort()).to.deep.equal(["x", "y", "z"]);
      });
      // And its diff gives the whiteouts back in the OCI form: overlay's own, or what a tree
      // comparison finds (dir's old entries hidden by an opaque marker or a whiteout each).
      const names = (await readTar(await driver.diff("l3"))).map((e) => e.name).sort();
      expect(names).to.include.members([".wh.a", "dir/new", "other/.wh.o"]);
      const hidden = names.includes("dir/.wh..wh..opq") || ["x", "y", "z"].every((n) => names.includes(`dir/.wh.${n}`));
      expect(hidden, `dir's old entries are hidden: ${names.join(" ")}`).to.equal(true);
      if (driver.capabilities.includes("native-diff")) expect(names).to.include("dir/.wh..wh..opq");
      expect(names.filter((n) => !n.includes(".wh.") && !["dir", "other"].includes(n))).to.deep.equal(["dir/new"]);
      // Applied on l2 as a layer of its own, that diff shows what l3 shows.
      await driver.create("l3again", "l2");
      await driver.applyDiff("l3again", await driver.diff("l3"));
      await withMount(driver, "l3again", async (root) => {
        expect((await readdir(root)).sort()).to.deep.equal(["b", "dir", "keep", "other"]);
        expect(await readdir(join(root, "dir"))).to.deep.equal(["new"]);
        expect(await readdir(join(root, "other"))).to.deep.equal([]);
      });
    });

    it("writes through a writable layer; its diff has the new file and a whiteout for the deleted one", async () => {
      await driver.create("image", undefined);
      await driver.applyDiff(
        "image",
        await makeTar([
          { name: "etc", type: "directory" },
          { name: "etc/gone", content: "bye" },
          { name: "etc/kept", content: "kept" },
        ]),
      );
      await driver.create("image2", "image");
      await driver.applyDiff("image2", await makeTar([{ name: "readme", content: "r" }]));
      await driver.create("container", "image2", { writable: true });
      await withMount(driver, "container", async (root) => {
        await writeFile(join(root, "etc/new"), "hello");
        await unlink(join(root, "etc/gone"));
        expect((await readdir(join(root, "etc"))).sort()).to.deep.equal(["kept", "new"]);
      });
      const entries = await readTar(await driver.diff("container"));
      const byName = new Map(entries.map((e) => [e.name, e]));
      expect(byName.get("etc/new")?.content).to.equal("hello");
      expect(byName.has("etc/.wh.gone"), `entries: ${[...byName.keys()].join(" ")}`).to.equal(true);
      expect(byName.has("etc/kept")).to.equal(false);
      expect(byName.has("readme")).to.equal(false);
      // The image layers did not change.
      await withMount(driver, "image2", async (root) => {
        expect((await readdir(join(root, "etc"))).sort()).to.deep.equal(["gone", "kept"]);
      });
      // Mounted again, the container sees what it wrote.
      await withMount(driver, "container", async (root) => {
        expect(await readFile(join(root, "etc/new"), "utf8")).to.equal("hello");
        expect(existsSync(join(root, "etc/gone"))).to.equal(false);
      });
    });

    it("writes through a writable layer that has no parent", async () => {
      await driver.create("scratch", undefined, { writable: true });
      await withMount(driver, "scratch", async (root) => writeFile(join(root, "file"), "data"));
      const entries = await readTar(await driver.diff("scratch"));
      expect(entries.find((e) => e.name === "file")?.content).to.equal("data");
    });

    it("reports a layer's usage as Docker counts a layer's size: its own bytes (all but directories, a symlink its target's length) and inodes, hard links once", async () => {
      await driver.create("base", undefined);
      await driver.applyDiff("base", await makeTar([{ name: "big", content: "b".repeat(5000) }]));
      await driver.create("top", "base");
      await driver.applyDiff(
        "top",
        await makeTar([
          { name: "dir", type: "directory" },
          { name: "dir/file", content: "f".repeat(1000) },
          { name: "dir/hard", type: "link", linkname: "dir/file" },
          { name: "dir/sym", type: "symlink", linkname: "file" },
          { name: "small", content: "s".repeat(24) },
        ]),
      );
      const usage = await driver.usage("top");
      expect(usage.size).to.equal(1024 + "file".length);
      expect(usage.inodes).to.equal(4); // dir, dir/file (= dir/hard), dir/sym, small
      expect((await driver.usage("base")).size).to.equal(5000);
    });

    it("tells its layers' folders (metadata, when it has them): the layer's own files in UpperDir, its parents' in LowerDir, nearest first", async function () {
      if (!driver.metadata) this.skip();
      await driver.create("base", undefined);
      await driver.applyDiff("base", await makeTar([{ name: "in-base", content: "b" }]));
      await driver.create("mid", "base");
      await driver.applyDiff("mid", await makeTar([{ name: "in-mid", content: "m" }]));
      await driver.create("rw", "mid", { writable: true });
      const base = await driver.metadata!("base");
      expect(base).to.not.have.property("LowerDir");
      expect(readdirSync(base.UpperDir)).to.deep.equal(["in-base"]);
      const rw = await driver.metadata!("rw");
      const lowers = rw.LowerDir.split(":");
      expect(lowers.map((l) => readdirSync(l))).to.deep.equal([["in-mid"], ["in-base"]]);
      expect(readdirSync(rw.UpperDir)).to.deep.equal([]);
      if (rw.WorkDir !== undefined) expect(statSync(rw.WorkDir).isDirectory()).to.equal(true);
    });

    it("refuses to remove a parent that has children; removing twice is fine", async () => {
      await driver.create("base", undefined);
      await driver.create("child", "base");
      await rejects(driver.remove("base"), /child|parent/);
      expect(await driver.exists("base")).to.equal(true);
      await driver.remove("child");
      await driver.remove("child");
      await driver.remove("base");
      await driver.remove("base");
      expect(await driver.exists("base")).to.equal(false);
      expect(await driver.exists("child")).to.equal(false);
      await driver.remove("never-was");
      // The id can be used again.
      await driver.create("base", undefined);
    });

    it("mounts a chain of 120 layers", async () => {
      let parent: string | undefined;
      for (let i = 0; i < 120; i++) {
        const id = `layer${String(i).padStart(3, "0")}`.padEnd(64, "0");
        await driver.create(id, parent);
        await driver.applyDiff(id, await makeTar([{ name: `f${i}`, content: String(i) }, { name: "top", content: String(i) }]));
        parent = id;
      }
      for (const spec of await driver.mounts(parent!)) expect(spec.options.join(",").length).to.be.at.most(4095);
      await withMount(driver, parent!, async (root) => {
        const names = await readdir(root);
        expect(names.length).to.equal(121);
        expect(await readFile(join(root, "f0"), "utf8")).to.equal("0");
        expect(await readFile(join(root, "f119"), "utf8")).to.equal("119");
        expect(await readFile(join(root, "top"), "utf8")).to.equal("119");
      });
      // And a container on top of it.
      await driver.create("c".repeat(64), parent, { writable: true });
      await withMount(driver, "c".repeat(64), async (root) => {
        await writeFile(join(root, "f0"), "changed");
        expect(await readFile(join(root, "f0"), "utf8")).to.equal("changed");
      });
    });

    it("with parallel-apply: a chain created first, then its diffs applied at once, shows them merged", async function () {
      if (!driver.capabilities.includes("parallel-apply")) this.skip();
      await driver.create("p1", undefined);
      await driver.create("p2", "p1");
      await driver.create("p3", "p2");
      // the child's tar finishes first; the whiteout and the opaque directory act on the merged view only
      const tars = await Promise.all([
        makeTar([{ name: "a", content: "a1" }, { name: "dir", type: "directory" }, { name: "dir/x", content: "x1" }, { name: "big", content: Buffer.alloc(1 << 20, 1) }]),
        makeTar([{ name: "b", content: "b2" }, { name: ".wh.a", content: "" }, { name: "big", content: Buffer.alloc(1 << 19, 2) }]),
        makeTar([{ name: "dir", type: "directory" }, { name: "dir/.wh..wh..opq", content: "" }, { name: "dir/y", content: "y3" }]),
      ]);
      const sizes = await Promise.all([driver.applyDiff("p3", tars[2]), driver.applyDiff("p1", tars[0]), driver.applyDiff("p2", tars[1])]);
      expect(sizes).to.deep.equal([2, 2 + 2 + (1 << 20), 2 + (1 << 19)]);
      await withMount(driver, "p3", async (root) => {
        expect((await readdir(root)).sort()).to.deep.equal(["b", "big", "dir"]);
        expect(await readdir(join(root, "dir"))).to.deep.equal(["y"]);
        expect((await readFile(join(root, "big"))).equals(Buffer.alloc(1 << 19, 2))).to.equal(true);
      });
      await withMount(driver, "p1", async (root) => expect((await readdir(root)).sort()).to.deep.equal(["a", "big", "dir"]));
    });

    it("cleanup removes a layer whose diff never finished", async () => {
      await driver.create("base", undefined);
      await driver.applyDiff("base", await makeTar([{ name: "ok", content: "ok" }]));
      await driver.create("half", "base");
      await rejects(driver.applyDiff("half", await brokenTar()));
      // The daemon "crashed" here: no remove. The next start cleans up.
      const again = await makeDriver(home, {});
      await again.cleanup();
      expect(await again.exists("half")).to.equal(false);
      expect(await again.exists("base")).to.equal(true);
      await again.create("half", "base");
      await withMount(again, "half", async (root) => {
        expect(await readdir(root)).to.deep.equal(["ok"]);
      });
    });

    it("rejects an unknown option, naming it", async () => {
      const other = newHome();
      await rejects(makeDriver(other, { [`${name}.nosuchoption`]: "1" }), new RegExp(`unknown option ${name}\\.nosuchoption`));
    });
  });
}
