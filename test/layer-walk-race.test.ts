/**
 * The walks that read a running container's writable layer (commit, `docker diff`) against a
 * container that swaps directories for symlinks while they run: `packLayer` (overlay2,
 * fuse-overlayfs), `treeChanges` + `packChanges` + `changesUsage` (btrfs, zfs: whole trees,
 * plain folders here). Symlinks to `/` and to a host folder sit at every depth; a directory is
 * swapped for a symlink to the host folder after the walk listed it and before it went on
 * (at a point the walk is known to wait: while a large file streams, or when the tree diff
 * yields to the event loop), and a child process swaps one as fast as it can while the walks
 * run again and again. No name and no byte of the host may show, and no descriptor stays open.
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import { expect } from "chai";
import { extract } from "tar-stream";
import { changesUsage, packChanges, packLayer, treeChanges, type TreeChange } from "../core/archive/index.js";
import { createOverlay2Driver } from "../plugins/storage-overlay2/overlay2.js";
import { makeTempDir } from "./helpers/engined.js";
import "./helpers/root-hooks.js";

interface Entry {
  name: string;
  type: string;
  linkname?: string;
  data: Buffer;
}

/** The entries of a tar stream; `onEntry` runs as each entry's header arrives, before its data is read. */
async function entries(tar: Readable, onEntry: (name: string) => void = () => {}): Promise<Entry[]> {
  const ex = extract();
  tar.once("error", (e) => ex.destroy(e));
  tar.pipe(ex as unknown as NodeJS.WritableStream);
  const out: Entry[] = [];
  for await (const e of ex) {
    onEntry(e.header.name);
    const chunks: Buffer[] = [];
    for await (const c of e) chunks.push(c as Buffer);
    out.push({ name: e.header.name, type: e.header.type ?? "file", linkname: e.header.linkname ?? undefined, data: Buffer.concat(chunks) });
  }
  return out;
}

const openFds = () => readdirSync("/proc/self/fd").length;

/** Larger than every buffer between the walk and the reader: the walk waits inside it until the reader goes on. */
const BIG = Buffer.alloc(8 * 1024 * 1024, "c");

describe("layer walks against a symlink-swapping container (core/archive)", function () {
  this.timeout(120_000);
  let token: string;
  let secret: string;
  let hostDir: string;
  let layer: string;

  /** Asserts that nothing of the host (the marker's name or secret, the host's `/` names under a link) is in `tar` or `names`. */
  const clean = (tar: Entry[], names: string[] = tar.map((e) => e.name)) => {
    for (const name of names) expect(name, "a host name").to.not.include(token);
    for (const e of tar) expect(e.data.includes(secret), `host bytes in ${e.name}`).to.equal(false);
  };

  beforeEach(() => {
    token = randomBytes(6).toString("hex");
    secret = `host-secret-${token}`;
    hostDir = makeTempDir("engine-walk-host-");
    // what a walk that followed a swapped `d` would find: the names the container's own `d` has
    mkdirSync(join(hostDir, "sub"));
    writeFileSync(join(hostDir, "sub", "own"), secret);
    writeFileSync(join(hostDir, "sub", `marker-${token}`), secret);
    writeFileSync(join(hostDir, `marker-${token}`), secret);
    layer = join(makeTempDir("engine-walk-layer-"), "layer");
    mkdirSync(join(layer, "d", "sub"), { recursive: true });
    writeFileSync(join(layer, "d", "sub", "own"), "container-own");
  });

  /** The container's `d` moves aside and `d` becomes a symlink to the host folder. */
  const swap = () => {
    renameSync(join(layer, "d"), join(layer, "d-moved"));
    symlinkSync(hostDir, join(layer, "d"));
  };

  it("packs symlinks to / and to a host folder at every depth as symlinks", async () => {
    let dir = layer;
    for (const depth of [0, 1, 2, 3]) {
      symlinkSync("/", join(dir, `root-${depth}`));
      symlinkSync(hostDir, join(dir, `host-${depth}`));
      symlinkSync("../../../../../../..", join(dir, `climb-${depth}`));
      dir = join(dir, `level-${depth}`);
      mkdirSync(dir);
    }
    const before = openFds();
    const tar = await entries(packLayer(layer, { whiteouts: "overlay" }));
    clean(tar);
    const links = tar.filter((e) => e.type === "symlink").map((e) => `${e.name} ${e.linkname}`);
    expect(links).to.include.members(["root-0 /", `host-0 ${hostDir}`, "level-0/level-1/level-2/root-3 /", `level-0/level-1/level-2/host-3 ${hostDir}`]);
    expect(tar.filter((e) => e.type !== "symlink").map((e) => e.name)).to.deep.equal(["d/", "d/sub/", "d/sub/own", "level-0/", "level-0/level-1/", "level-0/level-1/level-2/", "level-0/level-1/level-2/level-3/"]);

    const changes = await treeChanges(layer, undefined);
    clean([], changes.map((c) => c.path));
    clean(await entries(packChanges(layer, changes)));
    expect(changesUsage(layer, changes).inodes).to.equal(changes.length);
    expect(openFds()).to.equal(before);
  });

  it("packLayer: a directory swapped for a symlink after the walk listed it is not followed", async () => {
    writeFileSync(join(layer, "d", "big"), BIG);
    const before = openFds();
    let swapped = false;
    const tar = await entries(packLayer(layer, { whiteouts: "overlay" }), (name) => {
      if (name === "d/big") {
        swap(); // the walk has listed d (big, sub) and waits inside big
        swapped = true;
      }
    });
    expect(swapped).to.equal(true);
    clean(tar);
    // the walk stayed in the directory it listed: the container's own, wherever it went
    const own = tar.find((e) => e.name === "d/sub/own");
    expect(own?.data.toString()).to.equal("container-own");
    expect(openFds()).to.equal(before);
  });

  it("packLayer: a directory swapped before the walk reaches it is packed as the symlink it became", async () => {
    writeFileSync(join(layer, "a-big"), BIG);
    const tar = await entries(packLayer(layer, { whiteouts: "overlay" }), (name) => {
      if (name === "a-big") swap();
    });
    clean(tar);
    expect(tar.filter((e) => e.name.startsWith("d")).map((e) => `${e.type} ${e.name} ${e.linkname ?? ""}`)).to.deep.equal([`symlink d ${hostDir}`]);
  });

  it("treeChanges: the live tree's directory swapped while the walk is in it is not followed", async () => {
    const parent = join(layer, "..", "parent");
    mkdirSync(join(parent, "d"), { recursive: true });
    // more entries in d than the walk compares before it yields to the event loop (then it swaps)
    for (let i = 0; i < 5000; i++) {
      const name = `f${String(i).padStart(4, "0")}`;
      writeFileSync(join(parent, "d", name), "");
      writeFileSync(join(hostDir, name), secret);
    }
    mkdirSync(join(hostDir, "zsub"));
    writeFileSync(join(hostDir, "zsub", `marker-${token}`), secret);
    execFileSync("cp", ["-a", `${join(parent, "d")}/.`, join(layer, "d")]); // (join would drop the `.`)
    mkdirSync(join(layer, "d", "zsub"));
    writeFileSync(join(layer, "d", "zsub", "own"), "container-own");
    const before = openFds();
    let settled = false;
    const swapped = nextTurn().then(() => {
      expect(settled, "the walk yielded inside d").to.equal(false);
      swap();
    });
    const changes = await treeChanges(layer, parent).finally(() => (settled = true));
    await swapped;
    const paths = changes.map((c) => `${c.kind} ${c.path}`);
    clean([], paths);
    // what the walk saw is the container's own directory, which it held
    expect(paths.filter((p) => p.includes("zsub"))).to.deep.equal(["added d/zsub", "added d/zsub/own"]);
    // packed after the swap: `d` is a symlink now, and nothing is read through it
    const tar = await entries(packChanges(layer, changes));
    clean(tar);
    expect(tar.filter((e) => e.name.startsWith("d")).map((e) => `${e.type} ${e.name}`)).to.deep.equal(["symlink d"]);
    // the link itself (its target's length, as Docker counts a symlink), nothing behind it
    expect(changesUsage(layer, changes).size).to.equal(Buffer.byteLength(hostDir));
    expect(openFds()).to.equal(before);
  });

  it("a layer's usage (overlay2's docker ps -s, system df): a directory swapped while the walk is in it is not followed", async () => {
    const home = join(makeTempDir("engine-walk-usage-"), "overlay2");
    mkdirSync(home);
    const driver = await createOverlay2Driver({ home, options: {} });
    // the host folder holds the names the container's d holds, each with the secret: a walk that
    // followed the swapped d would count their bytes
    for (let i = 0; i < 5000; i++) writeFileSync(join(hostDir, `f${String(i).padStart(4, "0")}`), secret);
    // The swap comes after 1 turn of the event loop (where a descriptor walk yields once, inside
    // d: it has more entries than the walk counts between turns) or after more (where a walk
    // that awaits each entry is somewhere inside d).
    for (const turns of [1, 3, 10, 30, 100, 300, 1000]) {
      const id = `c${turns}`;
      await driver.create(id, undefined, { writable: true });
      const diff = join(home, id, "diff");
      mkdirSync(join(diff, "d"));
      for (let i = 0; i < 5000; i++) writeFileSync(join(diff, "d", `f${String(i).padStart(4, "0")}`), "");
      const before = openFds();
      let settled = false;
      const swapped = (async () => {
        for (let t = 0; t < turns && !settled; t++) await nextTurn();
        renameSync(join(diff, "d"), join(diff, "d-moved"));
        symlinkSync(hostDir, join(diff, "d"));
      })();
      const usage = await driver.usage(id).finally(() => (settled = true));
      await swapped;
      // at most the link itself (its target's length, as Docker counts a symlink), if the walk saw it
      const link = Buffer.byteLength(hostDir);
      expect(usage.size, `bytes of the host's files were counted (swap after ${turns} turns)`).to.be.oneOf([0, link]);
      expect(openFds()).to.equal(before);
      // once swapped, the link is counted as a link, and nothing behind it
      expect((await driver.usage(id)).size).to.equal(link);
    }
  });

  it("packChanges: a directory swapped for a symlink while its changes stream is not followed", async () => {
    writeFileSync(join(layer, "d", "big"), BIG);
    const changes: TreeChange[] = ["d", "d/big", "d/sub", "d/sub/own"].map((path) => ({ path, kind: "added" }));
    const before = openFds();
    const tar = await entries(packChanges(layer, changes), (name) => {
      if (name === "d/big") swap();
    });
    clean(tar);
    expect(tar.find((e) => e.name === "d/sub/own")?.data.toString()).to.equal("container-own");
    expect(openFds()).to.equal(before);
  });

  it("closes every descriptor when the reader stops early", async () => {
    writeFileSync(join(layer, "d", "big"), BIG);
    mkdirSync(join(layer, "d", "sub", "deeper", "still"), { recursive: true });
    const before = openFds();
    for (const tar of [packLayer(layer, { whiteouts: "overlay" }), packChanges(layer, await treeChanges(layer, undefined))]) {
      await new Promise<void>((resolve) => {
        tar.once("data", () => {
          tar.destroy();
          resolve();
        });
      });
      await new Promise((r) => setTimeout(r, 50)); // the walk notices on its next step
    }
    expect(openFds()).to.equal(before);
  });

  it("never follows a directory a child process swaps as fast as it can, in hundreds of walks", async () => {
    const parent = join(layer, "..", "parent");
    mkdirSync(join(parent, "w", "real", "sub"), { recursive: true });
    mkdirSync(join(layer, "w", "real", "sub"), { recursive: true });
    writeFileSync(join(layer, "w", "real", "sub", "own"), "container-own");
    symlinkSync(hostDir, join(layer, "w", "lnhost"));
    mkdirSync(join(hostDir, "real", "sub"), { recursive: true });
    writeFileSync(join(hostDir, "real", "sub", `marker-${token}`), secret);
    // the swapper: `w/d` is the container's directory, then a symlink to the host folder, and so on (bounded in count and time)
    const w = join(layer, "w");
    const script = `
      const { renameSync } = require("node:fs");
      const w = ${JSON.stringify(w)};
      const end = Date.now() + 60000;
      for (let i = 0; i < 5000000 && Date.now() < end; i++) {
        renameSync(w + "/real", w + "/d"); renameSync(w + "/d", w + "/real");
        renameSync(w + "/lnhost", w + "/d"); renameSync(w + "/d", w + "/lnhost");
      }`;
    const child = spawn(process.execPath, ["-e", script], { stdio: "ignore" });
    const before = openFds();
    try {
      const deadline = Date.now() + 45_000;
      let rounds = 0;
      for (; rounds < 300 && Date.now() < deadline; rounds++) {
        clean(await entries(packLayer(layer, { whiteouts: "overlay" })));
        const changes = await treeChanges(layer, parent, { snapshot: true });
        clean([], changes.map((c) => c.path));
        clean(await entries(packChanges(layer, changes)));
        changesUsage(layer, changes);
      }
      expect(rounds).to.be.greaterThan(50);
    } finally {
      child.kill();
      await new Promise((r) => (child.exitCode === null ? child.once("exit", r) : r(undefined)));
    }
    expect(openFds()).to.equal(before);
  });
});
