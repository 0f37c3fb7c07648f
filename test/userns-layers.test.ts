/**
 * The parts of `--userns-remap` that need no daemon: layer tars extracted through an id map
 * (owners shifted to the host, implicit parents given to the remapped root, ids outside the map
 * refused, whiteouts left as overlayfs makes them) and packed back (container ids again), the
 * subordinate-id files, the OCI spec of a remapped container, and the checks of `--rootless`
 * against a described host.
 */
import "./helpers/root-hooks.js";
import { chownSync, lstatSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { expect } from "chai";
import { extract } from "tar-stream";
import { applyLayer, LayerEntryError, packLayer } from "../core/archive/index.js";
import type { IdMap } from "../core/userns/id-map.js";
import { resolveOptions } from "../core/options/resolve.js";
import { baseSpec } from "../plugins/runtime-ocirun/spec.js";
import { freeRangeStart, idRangesOf, readRanges } from "../host/userns/subordinate-ids.js";
import { checkRootless, type RootlessProbe } from "../host/userns/rootless.js";
import { makeTar, type TarEntry } from "./fixtures/layers.js";
import { makeTempDir } from "./helpers/engined.js";

const MAP: IdMap = {
  uids: [{ containerID: 0, hostID: 100000, size: 65536 }],
  gids: [
    { containerID: 0, hostID: 200000, size: 1000 },
    { containerID: 1000, hostID: 300000, size: 64536 },
  ],
};

const owner = (path: string) => {
  const st = lstatSync(path);
  return `${st.uid}:${st.gid}`;
};

function layerDir(): string {
  const dir = join(makeTempDir("engine-userns-layer-"), "layer");
  mkdirSync(dir);
  return dir;
}

async function owners(tar: Readable): Promise<Map<string, string>> {
  const ex = extract();
  tar.pipe(ex as unknown as NodeJS.WritableStream);
  const out = new Map<string, string>();
  for await (const entry of ex) {
    out.set(entry.header.name.replace(/\/$/, ""), `${entry.header.uid}:${entry.header.gid}`);
    for await (const _ of entry);
  }
  return out;
}

const apply = async (entries: TarEntry[], dir: string) =>
  applyLayer(Readable.from([await makeTar(entries)]), dir, { whiteouts: "overlay", idMap: MAP });

describe("userns layers: tars through an id map", function () {
  this.timeout(30_000);

  it("extracts owners as host ids, gives made parents to the remapped root, keeps whiteouts 0:0", async () => {
    const dir = layerDir();
    await apply([
      { name: "a/", type: "directory" },
      { name: "a/f", data: "x", uid: 1000, gid: 1001 },
      { name: "a/l", type: "symlink", linkname: "f", uid: 5, gid: 6 },
      { name: "implicit/deeper/g", data: "y", uid: 0, gid: 999 },
      { name: "a/.wh.gone", data: "" },
    ], dir);
    expect(owner(join(dir, "a"))).to.equal("100000:200000");
    expect(owner(join(dir, "a/f"))).to.equal("101000:300001");
    expect(owner(join(dir, "a/l"))).to.equal("100005:200006");
    expect(owner(join(dir, "implicit"))).to.equal("100000:200000");
    expect(owner(join(dir, "implicit/deeper"))).to.equal("100000:200000");
    expect(owner(join(dir, "implicit/deeper/g"))).to.equal("100000:200999");
    const wh = lstatSync(join(dir, "a/gone"));
    expect(wh.isCharacterDevice()).to.equal(true);
    expect(`${wh.uid}:${wh.gid}`).to.equal("0:0");
  });

  it("refuses an owner the map does not cover, naming the entry", async () => {
    const err = await apply([{ name: "big", data: "z", uid: 70000 }], layerDir()).catch((e: Error) => e);
    expect(err).to.be.instanceOf(LayerEntryError);
    expect((err as Error).message).to.include("big");
    expect((err as Error).message).to.include("container uid 70000 cannot be mapped to a host uid");
  });

  it("packs host ids back to the container's, unmapped ones as the overflow id, whiteouts as 0:0", async () => {
    const dir = layerDir();
    await apply([
      { name: "d/", type: "directory", uid: 0, gid: 0 },
      { name: "d/f", data: "x", uid: 1000, gid: 1001 },
      { name: "d/.wh.gone", data: "" },
    ], dir);
    writeFileSync(join(dir, "hosts-own"), "made by host root");
    chownSync(join(dir, "hosts-own"), 0, 0);
    const got = await owners(packLayer(dir, { whiteouts: "overlay", idMap: MAP }));
    expect(got.get("d")).to.equal("0:0");
    expect(got.get("d/f")).to.equal("1000:1001");
    expect(got.get("d/.wh.gone")).to.equal("0:0");
    expect(got.get("hosts-own")).to.equal("65534:65534");
  });
});

describe("userns subordinate ids: /etc/subuid and /etc/subgid", () => {
  const file = (text: string) => {
    const path = join(makeTempDir("engine-subid-"), "subuid");
    writeFileSync(path, text);
    return path;
  };

  it("maps a user's ranges from container id 0, lowest first, by id before name", () => {
    const f = file("# comment\nalice:200000:10\nbob:400000:65536\nalice:100000:65536\n1001:500000:1000\n");
    expect(idRangesOf(f, ["alice"])).to.deep.equal([
      { containerID: 0, hostID: 100000, size: 65536 },
      { containerID: 65536, hostID: 200000, size: 10 },
    ]);
    expect(idRangesOf(f, ["1001", "alice"])).to.deep.equal([{ containerID: 0, hostID: 500000, size: 1000 }]);
    expect(idRangesOf(f, ["nobody"])).to.deep.equal([]);
    expect(idRangesOf("/nonexistent/subuid", ["alice"])).to.deep.equal([]);
  });

  it("finds the lowest free range of 65536 from 100000 on", () => {
    expect(freeRangeStart(file(""))).to.equal(100000);
    expect(freeRangeStart(file("a:100000:65536\nb:200000:10\n"))).to.equal(200010);
    expect(freeRangeStart(file("a:300000:65536\n"))).to.equal(100000);
    expect(freeRangeStart(file("a:150000:10\n"))).to.equal(150010);
  });

  it("names a malformed line", () => {
    expect(() => readRanges(file("alice:100000\n"))).to.throw(/line 1 is not <name>:<first id>:<count>/);
  });
});

describe("userns oci spec: a remapped container's config.json", () => {
  const daemon = resolveOptions(new Map(), {}).config;
  const ctx = (idMap?: IdMap) => ({
    containerId: "c".repeat(64), config: { Image: "x", Cmd: ["true"] }, hostConfig: {}, imageConfig: {}, daemon,
    host: { platform: "linux" as const, cgroupVersion: 1 as const, systemd: false }, rootfs: "/nonexistent/rootfs", bundleDir: "/nonexistent/bundle",
    ...(idMap ? { idMap } : {}),
  });

  it("has a user namespace with the map, and none without one", () => {
    const spec = baseSpec(ctx(MAP) as never);
    expect(spec.linux!.namespaces!.map((n) => n.type)).to.include("user");
    expect(spec.linux!.uidMappings).to.deep.equal(MAP.uids);
    expect(spec.linux!.gidMappings).to.deep.equal(MAP.gids);
    const plain = baseSpec(ctx() as never);
    expect(plain.linux!.namespaces!.map((n) => n.type)).to.not.include("user");
    expect(plain.linux!.uidMappings).to.equal(undefined);
  });
});

describe("rootless checks against a described host", () => {
  const config = (over: Record<string, unknown> = {}) => ({ ...resolveOptions(new Map(), {}).config, rootless: true, ...over }) as never;
  const host = (over: Partial<RootlessProbe> = {}): RootlessProbe => ({
    euid: 1000, user: "penguin", uidMap: "0 1000 1\n1 100000 65536\n", onPath: () => true, writable: () => true,
    subordinateIds: () => 65536, kernel: "6.1.0", cgroup2: true, ...over,
  });
  const env = { XDG_RUNTIME_DIR: "/run/user/1000", HOME: "/home/penguin" };
  const missing = (probe: RootlessProbe, e: NodeJS.ProcessEnv = env) => {
    try {
      checkRootless(config(), e, probe);
      return "";
    } catch (err) {
      return (err as Error).message;
    }
  };

  it("passes a user inside a user namespace with everything, warning without cgroup v2", () => {
    expect(checkRootless(config(), env, host())).to.deep.equal([]);
    expect(checkRootless(config(), env, host({ cgroup2: false }))[0]).to.include("without cgroup v2");
    expect(checkRootless(config({ rootless: false }), {}, host({ euid: 0, uidMap: "0 0 4294967295" }))).to.deep.equal([]);
  });

  it("refuses root of the host's user namespace, but not root of another", () => {
    expect(missing(host({ euid: 0, uidMap: "         0          0 4294967295\n" }))).to.include("must be executed as a non-privileged user");
    expect(missing(host({ euid: 0 }))).to.equal("");
  });

  it("names each missing piece", () => {
    const text = missing(host({ uidMap: "0 0 4294967295", onPath: () => false, subordinateIds: () => 0, kernel: "5.10.0" }), {});
    for (const want of [
      "a user namespace: engined runs in the host's",
      "XDG_RUNTIME_DIR is not set",
      "HOME is not set",
      "newuidmap and newgidmap not on PATH (Debian package uidmap)",
      "no subordinate ids for user penguin in /etc/subuid",
      "no subordinate ids for user penguin in /etc/subgid",
      "slirp4netns or pasta not on PATH",
      "fuse-overlayfs not on PATH, and Linux 5.10.0 cannot mount overlayfs in a user namespace",
    ]) expect(text).to.include(want);
    expect(missing(host({ uidMap: "0 1000 1\n" }))).to.include("the user namespace maps 1 uids");
    expect(missing(host({ onPath: (c) => c !== "newgidmap" }))).to.include("newgidmap not on PATH");
  });

  it("refuses --userns-remap beside it", () => {
    expect(() => checkRootless(config({ "userns-remap": "default" }), env, host())).to.throw("--userns-remap cannot be used in rootless mode");
  });
});
