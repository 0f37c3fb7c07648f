/**
 * The daemon's pull against the real registry (docker-registry 2.8.2), through the API
 * (`POST /images/create` over the unix socket, the JSON lines read to the end), when things go
 * wrong on the way: an index narrowed to a platform (or to none), a corrupted blob, a
 * connection dropped mid-layer (resumed, restarted, given up), a token that expires mid-pull,
 * an insecure registry nobody marked insecure, a mirror that is down, proxies and no-proxy, a
 * client that goes away, and the download limit reloaded. Each test checks what is real: the
 * image (or none), its platform, the progress lines, and that no layer or temporary file of a
 * failed pull is left in the data root. Network traffic goes only to 127.0.0.1 and to an
 * address of a dummy interface the tests make (198.18.47.1, the benchmarking range).
 */
import "./helpers/root-hooks.js";
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequestRaw } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { expect } from "chai";
import { makeTempDir, sighup, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { startRegistry, type TestRegistry } from "./helpers/registry.js";
import { startFaultyProxy, startForwardProxy, type FaultyProxy, type ForwardProxy } from "./helpers/net-proxies.js";
import type { CertSet } from "./helpers/certs.js";
import { makeTar } from "./fixtures/images.js";
import { pushImage, pushIndex, type PushedImage } from "./fixtures/registry-push.js";

interface Line {
  status?: string;
  id?: string;
  progressDetail?: { current?: number; total?: number };
  errorDetail?: { message: string };
  error?: string;
}

interface PullAnswer {
  status: number;
  /** The JSON lines of a 200; empty otherwise. */
  lines: Line[];
  /** The error message of a non-200 answer. */
  message?: string;
  body: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Proxy variables of the test's own environment must not reach the daemons. */
const NO_PROXY_ENV = { HTTP_PROXY: undefined, http_proxy: undefined, HTTPS_PROXY: undefined, https_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined };

/** The daemons the running test started: their output is shown when it fails, and they are stopped after it. */
let started: TestDaemon[] = [];

async function start(args: string[] = []): Promise<TestDaemon> {
  const d = await startEngined({ args, env: NO_PROXY_ENV });
  started.push(d);
  return d;
}

/** Root-level hooks of this file's suites: a failure shows what the daemons logged; none outlives its test. */
function daemonHooks(): void {
  afterEach(async function () {
    const failed = this.currentTest?.state === "failed";
    for (const d of started) {
      if (failed) console.log(`--- engined ${d.dir} output (last 4000 chars):\n${d.output().slice(-4000)}`);
      await d.stop();
    }
    started = [];
  });
}

/**
 * `POST /images/create?...` read to the end (bounded). `onResponse` sees the request once
 * the answer starts and every line as it comes (to disconnect mid-pull).
 */
function pull(
  d: TestDaemon,
  query: Record<string, string>,
  opts: { timeoutMs?: number; onLine?: (line: Line, abort: () => void) => void } = {},
): Promise<PullAnswer> {
  return new Promise((resolve, reject) => {
    const path = `/v1.51/images/create?${new URLSearchParams(query).toString()}`;
    let settled = false;
    const why = (err: Error) =>
      new Error(`pull ${path}: ${err.message}${d.proc.exitCode !== null || d.proc.signalCode !== null ? ` (engined exited:\n${d.output().slice(-2000)})` : ""}`);
    const req = httpRequestRaw({ socketPath: d.socket, method: "POST", path, headers: { "content-length": 0 } }, (res) => {
      let text = "";
      const lines: Line[] = [];
      let partial = "";
      const abort = () => {
        settled = true;
        req.destroy();
        resolve({ status: res.statusCode ?? 0, lines, body: text });
      };
      res.on("data", (chunk: Buffer) => {
        const s = chunk.toString();
        text += s;
        if (res.statusCode !== 200) return;
        partial += s;
        let nl: number;
        while (!settled && (nl = partial.indexOf("\n")) >= 0) {
          const raw = partial.slice(0, nl).trim();
          partial = partial.slice(nl + 1);
          if (!raw) continue;
          const line = JSON.parse(raw) as Line;
          lines.push(line);
          opts.onLine?.(line, abort);
        }
      });
      res.on("end", () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (res.statusCode === 200) return resolve({ status: 200, lines, body: text });
        let message: string | undefined;
        try {
          message = (JSON.parse(text) as { message?: string }).message;
        } catch {
          message = text;
        }
        resolve({ status: res.statusCode ?? 0, lines, message, body: text });
      });
      res.on("error", (err) => {
        if (!settled) reject(why(err));
      });
    });
    const timer = setTimeout(() => req.destroy(new Error(`pull ${path} did not end within ${opts.timeoutMs ?? 30_000} ms`)), opts.timeoutMs ?? 30_000);
    req.on("error", (err) => {
      clearTimeout(timer);
      // a cut stream: give the daemon a moment to be seen exiting, if it did
      if (!settled) setTimeout(() => reject(why(err)), 200);
    });
    req.on("close", () => clearTimeout(timer));
    req.end();
  });
}

/** A pull that must succeed: 200, and no error line. */
async function pullOk(d: TestDaemon, query: Record<string, string>): Promise<Line[]> {
  const r = await pull(d, query);
  expect(r.status, r.body).to.equal(200);
  const err = r.lines.find((l) => l.errorDetail || l.error);
  expect(err, `pull failed: ${JSON.stringify(err)}\n${d.output().slice(-3000)}`).to.equal(undefined);
  expect(r.lines.at(-1)?.status, r.body).to.match(/^Status: (Downloaded newer image|Image is up to date) for /);
  return r.lines;
}

/** The stream's last line: the error it ended with. */
function endError(r: PullAnswer): string {
  expect(r.status, r.body).to.equal(200);
  const last = r.lines.at(-1);
  expect(last?.errorDetail, `the stream must end with an error line: ${r.body}`).to.be.an("object");
  expect(last!.error).to.equal(last!.errorDetail!.message);
  return last!.errorDetail!.message;
}

async function inspect(d: TestDaemon, name: string): Promise<{ status: number; image?: Record<string, any> }> {
  const r = await httpRequest({ socketPath: d.socket }, "GET", `/v1.51/images/${name}/json`);
  return { status: r.status, image: r.status === 200 ? JSON.parse(r.body) : undefined };
}

async function imageCount(d: TestDaemon): Promise<number> {
  const r = await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/images/json?all=1");
  expect(r.status).to.equal(200);
  return (JSON.parse(r.body) as unknown[]).length;
}

/**
 * What a pull can leave in the data root: image records, layer records (and the pending marks
 * next to them), blobs, the storage driver's layer folders and short links, temporary files.
 */
function dataFiles(d: TestDaemon): Set<string> {
  const data = join(d.dir, "data");
  const out = new Set<string>();
  const list = (dir: string, recurse: boolean) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      out.add(path);
      if (recurse && e.isDirectory()) list(path, true);
    }
  };
  list(join(data, "image/images"), false);
  list(join(data, "image/layers"), false);
  list(join(data, "image/blobs/sha256"), false);
  list(join(data, "overlay2"), false);
  list(join(data, "overlay2/l"), false);
  list(join(data, "tmp"), true);
  return out;
}

const newSince = (before: Set<string>, after: Set<string>) => [...after].filter((p) => !before.has(p)).sort();

/** Waits (bounded) until nothing is in the data root that was not before; resolves with what is. */
async function settleLeftovers(d: TestDaemon, before: Set<string>, ms = 10_000): Promise<string[]> {
  const until = Date.now() + ms;
  let left = newSince(before, dataFiles(d));
  while (left.length > 0 && Date.now() < until) {
    await sleep(100);
    left = newSince(before, dataFiles(d));
  }
  return left;
}

/** A layer tar holding `size` random (incompressible) bytes: its gzip is about as big. */
const randomLayer = (name: string, size: number) => makeTar([{ name: `${name}/`, type: "directory" }, { name: `${name}/data.bin`, data: randomBytes(size) }]);

const hostPort = (host: string) => {
  const i = host.lastIndexOf(":");
  return { host: host.slice(0, i), port: Number(host.slice(i + 1)) };
};

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** The daemon did not fall over on the way (a failed pull must not take it down): its process runs and answers. */
async function expectServing(d: TestDaemon): Promise<void> {
  await sleep(200);
  expect(d.proc.exitCode, `engined exited:\n${d.output().slice(-3000)}`).to.equal(null);
  expect(d.proc.signalCode).to.equal(null);
  expect((await httpRequest({ socketPath: d.socket }, "GET", "/_ping")).body).to.equal("OK");
}

const waiting = (lines: Line[]) => lines.filter((l) => l.status === "Waiting");

describe("registry pull faults (real registry, through the API)", function () {
  this.timeout(40_000);
  let reg: TestRegistry;
  /** A daemon of the test's own (one that a daemon bug brought down does not fail the next tests). */
  let d: TestDaemon;

  before(async () => {
    reg = await startRegistry();
  });
  beforeEach(async () => {
    d = await start();
  });
  daemonHooks();
  after(async () => {
    await reg?.stop();
  });

  it("an index (Docker list and OCI index) is narrowed to this host's platform or the one asked for; none matching is a 404", async () => {
    for (const format of ["docker", "oci"] as const) {
      const repo = `lib/multi-${format}`;
      const amd = await pushImage(reg, repo, undefined, [await randomLayer("amd", 2048)], { format, platform: { architecture: "amd64", os: "linux" } });
      const arm = await pushImage(reg, repo, undefined, [await randomLayer("arm", 2048)], { format, platform: { architecture: "arm64", os: "linux", variant: "v8" } });
      const index = await pushIndex(reg, repo, "v1", [
        { image: amd, platform: { architecture: "amd64", os: "linux" } },
        { image: arm, platform: { architecture: "arm64", os: "linux", variant: "v8" } },
      ], { format });
      const name = `${reg.host}/${repo}`;

      const plain = await pullOk(d, { fromImage: name, tag: "v1" });
      expect(plain.some((l) => l.status === `Digest: ${index.digest}`)).to.equal(true);
      let img = (await inspect(d, `${name}:v1`)).image!;
      expect(img.Architecture).to.equal("amd64");
      expect(img.Id).to.equal(amd.configDigest);

      await pullOk(d, { fromImage: name, tag: "v1", platform: "linux/arm64" });
      img = (await inspect(d, `${name}:v1`)).image!;
      expect(img.Architecture).to.equal("arm64");
      expect(img.Id).to.equal(arm.configDigest);

      const none = await pull(d, { fromImage: name, tag: "v1", platform: "linux/s390x" });
      expect(none.status, none.body).to.equal(404);
      expect(none.message).to.include("no matching manifest for linux/s390x");

      // By digest: the index's digest names the host's image, and it is what RepoDigests shows.
      const byDigest = await pullOk(d, { fromImage: `${name}@${index.digest}` });
      expect(byDigest.some((l) => l.status === `Digest: ${index.digest}`)).to.equal(true);
      const viaDigest = await inspect(d, `${name}@${index.digest}`);
      expect(viaDigest.status).to.equal(200);
      expect(viaDigest.image!.Id).to.equal(amd.configDigest);
      expect(viaDigest.image!.Architecture).to.equal("amd64");
      expect(viaDigest.image!.RepoDigests).to.include(`${name}@${index.digest}`);
      // The tag still names the arm64 image.
      expect((await inspect(d, `${name}:v1`)).image!.Id).to.equal(arm.configDigest);
    }
  });

  it("a corrupted blob ends the stream with a digest mismatch, leaving no image and no layer", async () => {
    // The corrupted top layer's download ends (a proxy holds its last byte till then) once the
    // base is being extracted: its failed check cancels an extraction under way.
    const img = await pushImage(reg, "lib/corrupt", "v1", [await randomLayer("base", 1024 * 1024), await randomLayer("top", 1024 * 1024)]);
    const bad = img.layerDigests[1];
    writeFileSync(reg.blobPath(bad), randomBytes(img.layerBlobs[1].length));
    const proxy = await startFaultyProxy(hostPort(reg.host));
    try {
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      const fallback = setTimeout(release, 10_000);
      proxy.faults = [{ path: new RegExp(`/blobs/${bad}$`), method: "GET", holdEnd: released }];
      const before = dataFiles(d);
      const images = await imageCount(d);
      const base = img.layerDigests[0].slice(7, 19);
      const r = await pull(d, { fromImage: `${proxy.host}/lib/corrupt`, tag: "v1" }, {
        onLine: (line) => {
          if (line.id === base && line.status === "Extracting") release();
        },
      });
      clearTimeout(fallback);
      const message = endError(r);
      expect(message).to.include(bad).and.include("digest mismatch");
      expect(r.lines.some((l) => l.id === base && l.status === "Extracting"), "the base was being extracted").to.equal(true);
      expect((await inspect(d, `${proxy.host}/lib/corrupt:v1`)).status).to.equal(404);
      expect(await imageCount(d)).to.equal(images);
      expect(await settleLeftovers(d, before)).to.deep.equal([]);
      await expectServing(d);

      // The same straight from the registry, a few times: when the failure lands is up to the
      // scheduler then (a daemon that fell over here did so on an abort mid-extraction).
      for (let i = 0; i < 4; i++) {
        await expectServing(d);
        const again = await pushImage(reg, `lib/corrupt-${i}`, "v1", [await randomLayer(`b${i}`, 1024 * 1024), await randomLayer(`t${i}`, 1024 * 1024)]);
        writeFileSync(reg.blobPath(again.layerDigests[1]), randomBytes(again.layerBlobs[1].length));
        const failed = await pull(d, { fromImage: `${reg.host}/lib/corrupt-${i}`, tag: "v1" });
        expect(endError(failed)).to.include(again.layerDigests[1]).and.include("digest mismatch");
        await expectServing(d);
      }
      expect(await imageCount(d)).to.equal(images);
      expect(await settleLeftovers(d, before)).to.deep.equal([]);
    } finally {
      await proxy.stop();
    }
  });

  describe("a connection dropped mid-layer", () => {
    let proxy: FaultyProxy;
    let img: PushedImage;
    const layerPath = () => new RegExp(`/blobs/${img.layerDigests[0]}$`);

    before(async () => {
      img = await pushImage(reg, "lib/drop", "v1", [await randomLayer("big", 256 * 1024)]);
      proxy = await startFaultyProxy(hostPort(reg.host));
    });
    after(async () => {
      await proxy?.stop();
    });
    beforeEach(() => {
      proxy.faults = [];
      proxy.requests = [];
    });

    it("is resumed with a range request, and the pull succeeds", async () => {
      proxy.faults = [{ path: layerPath(), method: "GET", dropAfterBytes: 100 * 1024, times: 1 }];
      const name = `${proxy.host}/lib/drop`;
      const lines = await pullOk(d, { fromImage: name, tag: "v1" });
      expect(lines.some((l) => /^Retrying in 1 second$/.test(l.status ?? ""))).to.equal(true);
      const gets = proxy.requests.filter((r) => layerPath().test(r.path));
      expect(gets.length).to.equal(2);
      expect(gets[0].range).to.equal(undefined);
      const m = /^bytes=(\d+)-$/.exec(gets[1].range ?? "");
      expect(m, `the second request's Range: ${gets[1].range}`).to.not.equal(null);
      expect(Number(m![1])).to.be.greaterThan(0).and.at.most(100 * 1024);
      expect(gets[1].status).to.equal(206);
      expect((await inspect(d, `${name}:v1`)).image!.Id).to.equal(img.configDigest);
    });

    it("starts over when the registry ignores the range, and succeeds", async () => {
      proxy.faults = [
        { path: layerPath(), method: "GET", dropAfterBytes: 100 * 1024, times: 1 },
        { path: layerPath(), method: "GET", ignoreRange: true, times: 1 },
      ];
      const name = `${proxy.host}/lib/drop`;
      await pullOk(d, { fromImage: name, tag: "v1" });
      const gets = proxy.requests.filter((r) => layerPath().test(r.path));
      expect(gets.length).to.equal(2);
      expect(gets[1].range).to.match(/^bytes=\d+-$/);
      expect(gets[1].status).to.equal(200);
      expect((await inspect(d, `${name}:v1`)).image!.Id).to.equal(img.configDigest);
    });

    it("on every try: fails after --max-download-attempts, with a Retrying line, and leaves nothing", async () => {
      const limited = await start(["--max-download-attempts", "2"]);
      try {
        proxy.faults = [{ path: layerPath(), method: "GET", dropAfterBytes: 50 * 1024 }];
        const before = dataFiles(limited);
        const r = await pull(limited, { fromImage: `${proxy.host}/lib/drop`, tag: "v1" });
        const message = endError(r);
        expect(message).to.include(`download of ${img.layerDigests[0]} failed after 2 attempts`);
        expect(r.lines.some((l) => l.status === "Retrying in 1 second")).to.equal(true);
        expect(proxy.requests.filter((x) => layerPath().test(x.path)).length).to.equal(2);
        expect((await inspect(limited, `${proxy.host}/lib/drop:v1`)).status).to.equal(404);
        expect(await imageCount(limited)).to.equal(0);
        expect(await settleLeftovers(limited, before)).to.deep.equal([]);
        await expectServing(limited);
      } finally {
        await limited.stop();
      }
    });
  });

  it("a token that expires mid-pull is renewed, and the pull succeeds", async () => {
    const tok = await startRegistry({ auth: "token", tokenLifetimeSeconds: 2, advertisedExpiresIn: 3600 });
    const proxy = await startFaultyProxy(hostPort(tok.host));
    try {
      const img = await pushImage(tok, "team/expiring", "v1", [await randomLayer("one", 16 * 1024), await randomLayer("two", 16 * 1024)]);
      const issuedBefore = tok.token!.issued;
      // The second layer's request waits 3.5 s before it reaches the registry: its token has expired by then.
      const second = new RegExp(`/blobs/${img.layerDigests[1]}$`);
      proxy.faults = [{ path: second, method: "GET", delayMs: 3500, times: 1 }];
      const name = `${proxy.host}/team/expiring`;
      await pullOk(d, { fromImage: name, tag: "v1" });
      expect((await inspect(d, `${name}:v1`)).image!.Id).to.equal(img.configDigest);
      const layerTwo = proxy.requests.filter((r) => second.test(r.path));
      expect(layerTwo.map((r) => r.status)).to.deep.equal([401, 200]);
      expect(tok.token!.issued - issuedBefore).to.be.greaterThan(1);
    } finally {
      await proxy.stop();
      await tok.stop();
    }
  });

  it("a client that disconnects mid-pull leaves no image, layer or temporary file; a later pull succeeds", async () => {
    const proxy = await startFaultyProxy(hostPort(reg.host));
    try {
      const img = await pushImage(reg, "lib/gone", "v1", [await randomLayer("a", 128 * 1024), await randomLayer("b", 128 * 1024)]);
      const layers = new RegExp(`/blobs/(${img.layerDigests.join("|")})$`);
      proxy.faults = [{ path: layers, method: "GET", delayMs: 3000 }];
      const name = `${proxy.host}/lib/gone`;
      const before = dataFiles(d);
      const images = await imageCount(d);
      let sawTemp = false;
      const r = await pull(d, { fromImage: name, tag: "v1" }, {
        onLine: (line, abort) => {
          if (line.status !== "Pulling fs layer") return;
          // Disconnect once both downloads are under way (their requests wait in the proxy).
          void (async () => {
            for (let i = 0; i < 40 && proxy.requests.filter((x) => layers.test(x.path)).length < 2; i++) await sleep(50);
            // downloads to files in the temporary folder, or (extracted as they download, the
            // layers kept as layouts) the layouts being written beside the layers' records
            const layouts = readdirSync(join(d.dir, "data/image/layers")).filter((f) => /^\.[0-9a-f]{64}\.layout-/.test(f));
            sawTemp = readdirSync(join(d.dir, "data/tmp/image")).length + layouts.length > 0;
            abort();
          })();
        },
      });
      expect(r.status).to.equal(200);
      expect(r.lines.some((l) => l.status === "Pulling fs layer")).to.equal(true);
      expect(r.lines.some((l) => l.status === "Pull complete")).to.equal(false);
      expect(sawTemp, "the downloads had temporary files when the client left").to.equal(true);
      expect(await settleLeftovers(d, before)).to.deep.equal([]);
      // Still nothing once the delayed requests would have been answered.
      await sleep(3200);
      expect(newSince(before, dataFiles(d))).to.deep.equal([]);
      expect((await inspect(d, `${name}:v1`)).status).to.equal(404);
      expect(await imageCount(d)).to.equal(images);
      await expectServing(d);

      proxy.faults = [];
      await pullOk(d, { fromImage: name, tag: "v1" });
      expect((await inspect(d, `${name}:v1`)).image!.Id).to.equal(img.configDigest);
      expect(readdirSync(join(d.dir, "data/tmp/image"))).to.deep.equal([]);
      expect(readdirSync(join(d.dir, "data/image/layers")).filter((f) => f.startsWith("."))).to.deep.equal([]);
    } finally {
      await proxy.stop();
    }
  });

  it("max-concurrent-downloads 1 makes layers wait; raised to 4 by a reload, the next pull has none waiting", async () => {
    const dir = makeTempDir();
    const file = join(dir, "daemon.json");
    writeFileSync(file, JSON.stringify({ "max-concurrent-downloads": 1 }));
    const limited = await start(["--config-file", file]);
    try {
      const four = async (tag: string) => Promise.all([1, 2, 3, 4].map((i) => randomLayer(`${tag}-${i}`, 4096))).then((l) => pushImage(reg, "lib/four", tag, l));
      const [one, two] = [await four("one"), await four("two")];
      const first = await pullOk(limited, { fromImage: `${reg.host}/lib/four`, tag: "one" });
      expect(waiting(first).length).to.equal(3);
      expect(first.filter((l) => l.status === "Pull complete").length).to.equal(4);
      expect((await inspect(limited, `${reg.host}/lib/four:one`)).image!.Id).to.equal(one.configDigest);

      writeFileSync(file, JSON.stringify({ "max-concurrent-downloads": 4 }));
      expect(await sighup(limited)).to.include("reloaded max-concurrent-downloads: 1 -> 4");
      const second = await pullOk(limited, { fromImage: `${reg.host}/lib/four`, tag: "two" });
      expect(waiting(second)).to.deep.equal([]);
      expect(second.filter((l) => l.status === "Pull complete").length).to.equal(4);
      expect((await inspect(limited, `${reg.host}/lib/four:two`)).image!.Id).to.equal(two.configDigest);
    } finally {
      await limited.stop();
    }
  });
});

/** An address of a dummy interface: not loopback, so not insecure by default; still on this host. */
const DUMMY_IF = "engreg0";
const DUMMY_ADDR = "198.18.47.1";

function ip(args: string[]): void {
  execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
}

describe("registry pull faults: insecure registries and proxies (a dummy interface)", function () {
  this.timeout(40_000);
  let reg: TestRegistry;
  let fwd: ForwardProxy;
  let img: PushedImage;
  let ifaceMade = false;

  before(async function () {
    // A leftover of an interrupted run goes first.
    spawnSync("ip", ["link", "del", DUMMY_IF], { stdio: "ignore" });
    try {
      // A dummy interface; where the kernel has no dummy module, a bridge without ports does
      // the same here (an address of this host that is not loopback).
      if (spawnSync("ip", ["link", "add", DUMMY_IF, "type", "dummy"], { stdio: "ignore" }).status !== 0) ip(["link", "add", DUMMY_IF, "type", "bridge"]);
      ifaceMade = true;
      ip(["link", "set", DUMMY_IF, "up"]);
      ip(["addr", "add", `${DUMMY_ADDR}/32`, "dev", DUMMY_IF]);
    } catch (err) {
      if (!ifaceMade) this.skip();
      throw err;
    }
    reg = await startRegistry({ address: DUMMY_ADDR });
    expect(reg.host).to.match(/^198\.18\.47\.1:\d+$/);
    img = await pushImage(reg, "lib/far", "v1", [await randomLayer("far", 8192)]);
    fwd = await startForwardProxy({ dialable: [DUMMY_ADDR] });
  });
  after(async () => {
    try {
      await fwd?.stop();
      await reg?.stop();
    } finally {
      if (ifaceMade) spawnSync("ip", ["link", "del", DUMMY_IF], { stdio: "ignore" });
    }
  });
  beforeEach(() => {
    if (fwd) fwd.seen = [];
  });
  daemonHooks();

  it("a plain-HTTP registry not marked insecure is refused with HTTP 500 telling how to mark it", async () => {
    const d = await start();
    try {
      const r = await pull(d, { fromImage: `${reg.host}/lib/far`, tag: "v1" });
      expect(r.status, r.body).to.equal(500);
      expect(r.message).to.include(`--insecure-registry ${reg.host}`);
      expect(r.message).to.match(/secure it with TLS/);
      expect(await imageCount(d)).to.equal(0);
    } finally {
      await d.stop();
    }
  });

  it("marked insecure by CIDR or by host:port, it is pulled over plain HTTP", async () => {
    for (const mark of ["198.18.47.0/24", reg.host]) {
      const d = await start(["--insecure-registry", mark]);
      try {
        await pullOk(d, { fromImage: `${reg.host}/lib/far`, tag: "v1" });
        const got = await inspect(d, `${reg.host}/lib/far:v1`);
        expect(got.image?.Id, `marked by ${mark}`).to.equal(img.configDigest);
      } finally {
        await d.stop();
      }
    }
  });

  it("with a proxy set, the registry's traffic goes through it unless no-proxy names it", async () => {
    const proxied = ["--insecure-registry", "198.18.47.0/24", "--http-proxy", fwd.url, "--https-proxy", fwd.url];
    const exempt = await start([...proxied, "--no-proxy", DUMMY_ADDR]);
    try {
      await pullOk(exempt, { fromImage: `${reg.host}/lib/far`, tag: "v1" });
      expect((await inspect(exempt, `${reg.host}/lib/far:v1`)).image?.Id).to.equal(img.configDigest);
      expect(fwd.seen).to.deep.equal([]);
    } finally {
      await exempt.stop();
    }
    const through = await start(proxied);
    try {
      await pullOk(through, { fromImage: `${reg.host}/lib/far`, tag: "v1" });
      expect((await inspect(through, `${reg.host}/lib/far:v1`)).image?.Id).to.equal(img.configDigest);
      expect(fwd.seen.length).to.be.greaterThan(0);
      expect(fwd.seen.every((s) => s.target === reg.host && !s.refused), JSON.stringify(fwd.seen)).to.equal(true);
      // The TLS try (a tunnel) came first, then the plain-HTTP one that worked.
      expect(fwd.seen[0].method).to.equal("CONNECT");
    } finally {
      await through.stop();
    }
  });
});

const HUB = "registry-1.docker.io";
const HUB_CERTS_DIR = join("/etc/engine/certs.d", HUB);

/** A CA and a server certificate for registry-1.docker.io (and 127.0.0.1, for the test's own pushes). */
function hubCerts(dir: string): CertSet {
  mkdirSync(dir, { recursive: true });
  const openssl = (args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=engine-test-hub-ca", "-keyout", "ca-key.pem", "-out", "ca.pem"]);
  writeFileSync(join(dir, "server.ext"), `subjectAltName=DNS:${HUB},IP:127.0.0.1\nextendedKeyUsage=serverAuth\n`);
  openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", `/CN=${HUB}`, "-keyout", "server-key.pem", "-out", "server.csr"]);
  openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial", "-days", "2", "-extfile", "server.ext", "-out", "server.pem"]);
  return { dir, ca: join(dir, "ca.pem"), serverCert: join(dir, "server.pem"), serverKey: join(dir, "server-key.pem"), clientDir: "", rogueDir: "" };
}

describe("registry pull faults: a mirror that is down", function () {
  this.timeout(40_000);
  let hub: TestRegistry | undefined;
  let fwd: ForwardProxy | undefined;
  /** What this suite created under /etc/engine, deepest last. */
  const created: string[] = [];
  daemonHooks();

  before(async function () {
    if (existsSync(join(HUB_CERTS_DIR, "ca.crt"))) this.skip();
    const certs = hubCerts(join(makeTempDir("engine-hub-certs-"), "certs"));
    for (const dir of ["/etc/engine", "/etc/engine/certs.d", HUB_CERTS_DIR]) {
      if (!existsSync(dir)) {
        mkdirSync(dir);
        created.push(dir);
      }
    }
    writeFileSync(join(HUB_CERTS_DIR, "ca.crt"), execFileSync("cat", [certs.ca]));
    created.push(join(HUB_CERTS_DIR, "ca.crt"));
    hub = await startRegistry({ tls: true, certs });
  });
  after(async () => {
    try {
      await fwd?.stop();
      await hub?.stop();
    } finally {
      for (const path of created.reverse()) {
        if (path.endsWith(".crt")) rmSync(path, { force: true });
        else {
          try {
            rmdirSync(path);
          } catch {
            // not empty: something else put files there meanwhile
          }
        }
      }
    }
  });

  it("falls back to Docker Hub (a local TLS registry behind a loopback forward proxy)", async () => {
    const img = await pushImage(hub!, "library/busybox", "latest", [await makeTar([{ name: "bin/", type: "directory" }, { name: "bin/hello", data: "hello from the hub\n", mode: 0o755 }])]);
    fwd = await startForwardProxy({ routes: { [`${HUB}:443`]: hostPort(hub!.host) } });
    const mirror = `http://127.0.0.1:${await closedPort()}`;
    const d = await start(["--registry-mirror", mirror, "--https-proxy", fwd.url]);
    try {
      const lines = await pullOk(d, { fromImage: "busybox", tag: "latest" });
      expect(lines.at(-1)?.status).to.equal("Status: Downloaded newer image for busybox:latest");
      const got = await inspect(d, "busybox:latest");
      expect(got.image?.Id).to.equal(img.configDigest);
      expect(got.image?.RepoDigests).to.include(`busybox@${img.manifestDigest}`);
      expect(fwd.seen.some((s) => s.method === "CONNECT" && s.target === `${HUB}:443`), JSON.stringify(fwd.seen)).to.equal(true);
      expect(fwd.seen.filter((s) => s.refused)).to.deep.equal([]);
      expect(fwd.seen.every((s) => s.target === `${HUB}:443`), JSON.stringify(fwd.seen)).to.equal(true);
    } finally {
      await d.stop();
    }
  });
});
