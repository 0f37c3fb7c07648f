/**
 * The classic builder's cache as Docker shows and removes BuildKit's: `GET /system/df`'s
 * `BuildCache` (and `docker system df [-v]` with the newest CLI and 20.10), `POST /build/prune`
 * (`docker builder prune`, its filters and space bounds, `docker system prune`), and `builder.gc`
 * from daemon.json after builds and after a reload, against real daemons built into with
 * DOCKER_BUILDKIT=0.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, runCommand, runEngined, sighup, startEngined, type RunResult } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { keepBytes, planPrune } from "../core/build/cache-plan.js";
import { gcRules } from "../core/build/cache-gc-policy.js";
import { pruneRule, type CacheEntry } from "../core/build/cache-rules.js";

const CLI20 = "/usr/bin/docker";

interface Entry {
  ID: string;
  Parents?: string[];
  Parent?: string;
  Type: string;
  Description: string;
  InUse: boolean;
  Shared: boolean;
  Size: number;
  CreatedAt: string;
  LastUsedAt: string | null;
  UsageCount: number;
}

/** A context folder: the Dockerfile and flat files beside it. */
function context(dockerfile: string, files: Record<string, string> = {}): string {
  const dir = makeTempDir("engine-cache-ctx-");
  for (const [name, text] of Object.entries({ Dockerfile: dockerfile, ...files })) writeFileSync(join(dir, name), text);
  return dir;
}

/** A Dockerfile whose one RUN writes `bytes` random bytes (`mark` makes the step its own). */
const blobFile = (mark: string, bytes: number) => `FROM busybox\nRUN echo ${mark} > /mark && head -c ${bytes} /dev/urandom > /blob\n`;

const ok = (r: RunResult, what: string) => {
  expect(r.code, `${what}: ${r.stderr}${r.stdout}`).to.equal(0);
  return r.stdout;
};

async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  for (let i = 0; i < 400 && Date.now() < end; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting: ${what}`);
}

/** A daemon with busybox, and what the tests ask of it. */
async function daemonWithBusybox(rootfs: string, args: string[] = []) {
  const d = await startEngined({ args });
  const host = `unix://${d.socket}`;
  ok(await docker(host, ["import", "-c", 'CMD ["sh"]', rootfs, "busybox"]), "import");
  const api = async (method: string, path: string) => {
    const r = await httpRequest({ socketPath: d.socket }, method, path);
    return { status: r.status, json: JSON.parse(r.body || "null") };
  };
  const build = async (args: string[]) => ok(await docker(host, ["build", ...args], { DOCKER_BUILDKIT: "0" }, { timeoutMs: 120_000 }), `build ${args.join(" ")}`);
  const entries = async (version = "v1.51"): Promise<Entry[]> => (await api("GET", `/${version}/system/df`)).json.BuildCache;
  const exists = async (id: string) => (await docker(host, ["image", "inspect", id])).code === 0;
  return { d, host, api, build, entries, exists };
}

/** The ID of the image a build made (its last `Successfully built`). */
const builtId = (out: string) => /Successfully built ([0-9a-f]{12})\n/.exec(out)![1];

describe("build cache: df, prune and gc (classic builder)", function () {
  this.timeout(300_000);
  let rootfs: string;
  let t: Awaited<ReturnType<typeof daemonWithBusybox>>;

  before(async () => {
    rootfs = writeFixture(makeTempDir("engine-cache-"), "rootfs.tar", await busyboxRootfs());
    t = await daemonWithBusybox(rootfs);
  });
  after(async () => {
    await t?.d.stop();
  });

  it("lists a build's step images in /system/df with Docker's fields, their sizes, uses and parents; the CLIs render them", async () => {
    const dir = context("FROM busybox\nENV A=1\nCOPY f /f\nRUN head -c 100000 /dev/urandom > /blob\nCMD [\"sh\"]\n", { f: "x".repeat(5000) });
    const out = await t.build(["-t", "tagged", dir]);
    const tagged = builtId(out);
    const busybox = (await t.api("GET", "/images/busybox/json")).json.Id.slice(7);
    const df = (await t.api("GET", "/v1.51/system/df")).json;
    const cache: Entry[] = df.BuildCache;
    // ENV, COPY and RUN: the tagged image (CMD's) is an image, not cache; the others lead to it
    expect(cache).to.have.length(3);
    const step = (text: string) => cache.find((e) => e.Description.includes(text))!;
    const [run, copy, env] = [step("head -c"), step("COPY"), step("ENV")];
    expect(run.Description).to.equal("/bin/sh -c head -c 100000 /dev/urandom > /blob");
    expect(copy.Description).to.match(/^\/bin\/sh -c #\(nop\) COPY file:[0-9a-f]{64} in \/f $/);
    expect(env.Description).to.equal("/bin/sh -c #(nop)  ENV A=1");
    expect([run.Type, copy.Type, env.Type]).to.deep.equal(["regular", "source.local", "regular"]);
    for (const e of cache) {
      expect(e).to.include({ InUse: false, Shared: true, UsageCount: 1 });
      expect(e.ID).to.match(/^[0-9a-f]{64}$/);
      expect(Date.parse(e.CreatedAt)).to.be.closeTo(Date.now(), 120_000);
      expect(e.LastUsedAt).to.be.a("string");
      expect(e).not.to.have.property("Parent");
    }
    expect(run.Size).to.be.within(100_000, 110_000);
    expect(copy.Size).to.be.within(5000, 6000);
    expect(env.Size).to.equal(0);
    expect([run.Parents, copy.Parents, env.Parents]).to.deep.equal([[copy.ID], [env.ID], [busybox]]);
    // the hidden intermediate images are cache, not images (Docker's df lists what `images` lists)
    expect(df.Images.map((i: { Id: string }) => i.Id.slice(7, 19)).sort()).to.deep.equal([busybox.slice(0, 12), tagged].sort());
    expect(df).not.to.have.property("BuilderSize");
    const old = (await t.api("GET", "/v1.41/system/df")).json;
    expect(old.BuilderSize).to.equal(cache.reduce((n, e) => n + e.Size, 0));
    expect(old.BuildCache.find((e: Entry) => e.ID === env.ID)).to.include({ Parent: busybox }).and.not.have.property("Parents");

    // a rebuild uses each step again
    const again = await t.build(["-t", "tagged", dir]);
    expect(again.match(/Using cache/g)).to.have.length(4);
    const reused = await t.entries();
    expect(reused.map((e) => e.UsageCount)).to.deep.equal([2, 2, 2]);
    expect(Date.parse(reused.find((e) => e.ID === run.ID)!.LastUsedAt!)).to.be.greaterThan(Date.parse(run.LastUsedAt!));

    for (const cli of ["docker", CLI20]) {
      const env = { DOCKER_CONFIG: makeTempDir() };
      const summary = ok(await runCommand(cli, ["-H", t.host, "system", "df"], { env }), `${cli} system df`);
      expect(summary).to.match(/\nBuild Cache +3 +0 +\S+ +\S+\n?/);
      const verbose = ok(await runCommand(cli, ["-H", t.host, "system", "df", "-v"], { env }), `${cli} system df -v`);
      expect(verbose).to.match(/Build cache usage: /);
      expect(verbose).to.include(run.ID.slice(0, 12)).and.include("source.local");
    }
  });

  it("prune without --all keeps shared and in-use entries and removes an untagged build's; -a removes the rest and the tagged image stays whole", async () => {
    const dangling = builtId(await t.build([context(blobFile("dangling", 40_000))]));
    const container = builtId(await t.build([context("FROM busybox\nENV B=2\nRUN echo held > /held\n")]));
    const held = (await t.entries()).find((e) => e.Description.includes("ENV B=2"))!;
    ok(await docker(t.host, ["create", "--name", "holder", "--network", "none", held.ID]), "create");
    expect((await t.entries()).find((e) => e.ID === held.ID)).to.include({ InUse: true, Shared: false });

    const pruned = ok(await docker(t.host, ["builder", "prune", "-f"]), "builder prune");
    expect(pruned).to.match(/^Deleted build cache objects:\n/);
    expect(pruned).to.include(dangling).and.to.include(container);
    expect(pruned).to.match(/Total reclaimed space: (39|4\d)(\.\d+)?kB\n$/);
    expect(await t.exists(dangling)).to.equal(false);
    const left = await t.entries();
    expect(left.filter((e) => !e.Shared).map((e) => e.ID)).to.deep.equal([held.ID]);

    // until=1h: everything was used within the hour
    expect(ok(await docker(t.host, ["builder", "prune", "-a", "-f", "--filter", "until=1h"]), "prune until")).to.equal("Total reclaimed space: 0B\n");
    const all = ok(await docker(t.host, ["builder", "prune", "-a", "-f"]), "prune -a");
    expect(all).to.include(left.find((e) => e.Description.includes("COPY"))!.ID);
    expect((await t.entries()).map((e) => e.ID)).to.deep.equal([held.ID]); // the container's
    ok(await docker(t.host, ["rm", "holder"]), "rm");

    // the tagged image keeps its layers and runs; its history lost the parents' IDs, as Docker shows missing ones
    expect(ok(await docker(t.host, ["run", "--rm", "--network", "none", "tagged", "wc", "-c", "/f", "/blob"]), "run")).to.match(/5000 \/f\n +100000 \/blob\n/);
    const history = ok(await docker(t.host, ["history", "--format", "{{.ID}}|{{.CreatedBy}}", "tagged"]), "history").trim().split("\n");
    expect(history[0]).to.match(/^[0-9a-f]{12}\|\/bin\/sh -c #\(nop\)  CMD/);
    expect(history.slice(1).every((l) => l.startsWith("<missing>|"))).to.equal(true);
    expect((await t.api("GET", "/images/tagged/json")).json.Parent).to.equal("");
    // the cache is gone: a rebuild makes every step again
    const dir = context("FROM busybox\nENV A=1\nRUN true\n");
    await t.build([dir]);
    expect(await t.build([dir])).to.include("Using cache");
    ok(await docker(t.host, ["builder", "prune", "-a", "-f"]), "prune -a");
    expect(await t.build([dir])).not.to.include("Using cache");
  });

  it("takes the API's filters (until, unused-for, id, type) and refuses what Docker refuses", async () => {
    const a = builtId(await t.build([context(blobFile("filter-a", 1000))]));
    const b = builtId(await t.build([context(blobFile("filter-b", 1000))]));
    const prune = (query: string) => t.api("POST", `/v1.51/build/prune?${query}`);
    const filters = (f: Record<string, string[]>) => `filters=${encodeURIComponent(JSON.stringify(f))}`;
    expect((await prune(filters({ until: ["1h"] }))).json).to.deep.equal({ CachesDeleted: null, SpaceReclaimed: 0 });
    expect((await prune(filters({ type: ["source.local"] }))).json.CachesDeleted).to.equal(null);
    const byId = await prune(filters({ id: [`^${a}`] }));
    expect(byId.json.CachesDeleted).to.have.length(1);
    expect(byId.json.CachesDeleted[0]).to.match(new RegExp(`^${a}[0-9a-f]{52}$`));
    expect(byId.json.SpaceReclaimed).to.be.within(1000, 2000);
    await new Promise((r) => setTimeout(r, 50));
    const old = await prune(filters({ "unused-for": ["10ms"] }));
    expect(old.json.CachesDeleted.map((id: string) => id.slice(0, 12))).to.include(b);
    expect(await t.exists(b)).to.equal(false);

    for (const [query, message] of [
      [filters({ until: ["1h"], "unused-for": ["1h"] }), 'conflicting filters: "until" and "unused-for"'],
      [filters({ color: ["red"] }), "invalid filter 'color'"],
      [filters({ type: ["regular", "source.local"] }), "filters expect only one value"],
      [filters({ until: ["soon"] }), `"until" filter expects a duration (e.g., '24h') or a timestamp`],
      ["keep-storage=lots", "keep-storage is in bytes and expects an integer, got lots"],
    ]) {
      expect(await prune(query), query).to.deep.equal({ status: 400, json: { message } });
    }
  });

  it("keeps the most recently used entries under keep-storage, removing the least recently used first", async () => {
    const older = builtId(await t.build([context(blobFile("keep-old", 60_000))]));
    const newer = builtId(await t.build([context(blobFile("keep-new", 60_000))]));
    const r = await t.api("POST", "/v1.47/build/prune?keep-storage=70000");
    expect(r.json.CachesDeleted.map((id: string) => id.slice(0, 12))).to.deep.equal([older]);
    expect(await t.exists(older)).to.equal(false);
    expect(await t.exists(newer)).to.equal(true);
    // before API 1.48 the other bounds are not read (reserved-space is 1.48's name for keep-storage)
    const before148 = await t.api("POST", "/v1.47/build/prune?reserved-space=bogus&max-used-space=bogus&keep-storage=70000");
    expect(before148.json).to.deep.equal({ CachesDeleted: null, SpaceReclaimed: 0 });
    // the newest CLI's --keep-storage (reserved-space at API 1.48 and up) likewise
    ok(await docker(t.host, ["builder", "prune", "-f", "--keep-storage", "1000"]), "prune --keep-storage");
    expect(await t.exists(newer)).to.equal(false);
  });

  it("docker system prune (both CLIs) leaves no unshared build cache", async () => {
    for (const cli of ["docker", CLI20]) {
      const id = builtId(await t.build([context(`FROM busybox\nENV SP=${cli.length}\nRUN echo ${cli} > /cli\n`)]));
      expect((await t.entries()).some((e) => !e.Shared)).to.equal(true);
      const out = ok(await runCommand(cli, ["-H", t.host, "system", "prune", "-f"], { env: { DOCKER_CONFIG: makeTempDir() } }), `${cli} system prune`);
      expect(out).to.include(id).and.to.match(/Total reclaimed space: /);
      expect((await t.entries()).filter((e) => !e.Shared)).to.deep.equal([]);
    }
  });

  it("runs builder.gc's policy from daemon.json after builds that pass its bound and after a reload changed it", async () => {
    const dir = makeTempDir("engine-gc-");
    const file = join(dir, "daemon.json");
    const write = (gc: unknown) => writeFileSync(file, JSON.stringify({ builder: { gc } }));
    write({ enabled: false, policy: [{ keepStorage: "100KB" }] });
    const g = await daemonWithBusybox(rootfs, ["--config-file", file]);
    try {
      const kept = builtId(await g.build(["-t", "kept", context("FROM busybox\nRUN head -c 30000 /dev/urandom > /k\nCMD [\"sh\"]\n")]));
      const a = builtId(await g.build([context(blobFile("gc-a", 60_000))]));
      const b = builtId(await g.build([context(blobFile("gc-b", 60_000))]));
      await new Promise((r) => setTimeout(r, 500));
      expect([await g.exists(a), await g.exists(b)]).to.deep.equal([true, true]); // turned off

      write({ policy: [{ keepStorage: "100KB" }] });
      expect(await sighup(g.d)).to.include("reloaded builder");
      await until("the reload's gc removes the least recently used entry", async () => !(await g.exists(a)));
      expect(await g.exists(b)).to.equal(true);

      const c = builtId(await g.build([context(blobFile("gc-c", 60_000))]));
      await until("the gc after a build removes the next", async () => !(await g.exists(b)));
      expect(await g.exists(c)).to.equal(true);
      expect(await g.exists(kept)).to.equal(true);
      expect((await g.entries()).filter((e) => e.Shared)).to.have.length(1); // kept's RUN
      expect(g.d.output()).to.match(/build cache garbage collection removed entries/);

      // a policy a prune would refuse: the reload fails and the old one stays
      write({ policy: [{ filter: ["until=1h", "unused-for=1h"] }] });
      expect(await sighup(g.d)).to.include("reload failed");
    } finally {
      await g.d.stop();
    }
  });

  it("plans as BuildKit: the last of a chain first, least recently used first under a bound; Docker's default policy from the disk", () => {
    const now = Date.now();
    const entry = (id: string, parents: string[], lastUsed: number, size = 10, more: Partial<CacheEntry> = {}): CacheEntry => ({
      id, parents, type: "regular", description: "", inUse: false, shared: false, size, createdAt: 0, lastUsedAt: now - lastUsed, usageCount: 1, labels: {}, ...more,
    });
    const chain = [entry("a", [], 50), entry("b", ["a"], 40), entry("c", ["b"], 30), entry("x", [], 60), entry("s", [], 99, 10, { shared: true }), entry("u", [], 99, 10, { inUse: true })];
    const rule = (filters: Record<string, string[]>, opts = {}) => pruneRule(new Map(Object.entries(filters)), { all: false, ...opts }, now);
    expect(planPrune(chain, rule({}), Infinity, now)).to.deep.equal(["c", "x", "b", "a"]);
    expect(planPrune(chain, rule({}, { all: true }), Infinity, now)).to.deep.equal(["c", "x", "s", "b", "a"]);
    // over 35 bytes of the 50 unshared: the least recently used leaf goes, then the next
    expect(planPrune(chain, rule({}, { reservedSpace: 35 }), Infinity, now)).to.deep.equal(["x", "c"]);
    expect(planPrune(chain, rule({ until: ["45ms"] }), Infinity, now)).to.deep.equal(["x"]);
    expect(planPrune(chain, rule({ id: ["^[ax]"] }), Infinity, now)).to.deep.equal(["x"]);
    expect(keepBytes(100, 5, { ...rule({}), maxUsedSpace: 80, minFreeSpace: 30 })).to.equal(75);
    expect(keepBytes(100, 50, { ...rule({}), minFreeSpace: 30 })).to.equal(100);
    expect(keepBytes(100, 50, rule({}))).to.equal(0);
    const policy = gcRules({}, 100 * 2 ** 30, now);
    expect(policy.map((r) => [r.all, r.keepDuration / 3_600_000, r.reservedSpace, r.maxUsedSpace, r.minFreeSpace])).to.deep.equal([
      [false, 48, 0, 1_519_933_825, 0], // 13.8% (e·π·φ) of the reserved space
      [false, 1440, 11e9, 81e9, 21e9],
      [false, 0, 11e9, 81e9, 21e9],
      [true, 0, 11e9, 81e9, 21e9],
    ]);
    expect(gcRules({ gc: { enabled: false } }, undefined, now)).to.deep.equal([]);
    expect(gcRules({ gc: { defaultKeepStorage: "1GB" } }, 100 * 2 ** 30, now)[2]).to.include({ reservedSpace: 2 ** 30, maxUsedSpace: 0 });
  });

  it("engined --validate checks builder.gc: Docker 28's names, filters a prune takes", async () => {
    const dir = makeTempDir();
    const check = (gc: unknown) => {
      const file = join(dir, `${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(file, JSON.stringify({ builder: { gc } }));
      return runEngined(["--validate", "--config-file", file]);
    };
    const good = await check({ defaultReservedSpace: "2GB", defaultMaxUsedSpace: "20GB", defaultMinFreeSpace: "1GB", policy: [{ reservedSpace: "1GB", maxUsedSpace: "5GB", filter: ["type=source.local", "until=48h"] }, { all: true, filter: { "unused-for": { "168h": true } } }] });
    expect(good.stdout, good.stderr).to.equal("configuration OK\n");
    for (const [gc, message] of [
      [{ policy: [{ filter: ["color=red"] }] }, "invalid filter 'color'"],
      [{ policy: [{ filter: ["until=soon"] }] }, `"until" filter expects a duration`],
      [{ policy: [{ maxUsedSpace: "lots" }] }, "expected a size"],
      [{ policy: [{ keepstorage: "1GB" }] }, "builder"],
    ] as const) {
      const r = await check(gc);
      expect(r.code, JSON.stringify(gc)).to.equal(1);
      expect(r.stderr, JSON.stringify(gc)).to.include(message);
    }
  });
});
