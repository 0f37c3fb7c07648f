/**
 * The daemon's pull where the way to the registry is the fault: a plain-HTTP registry on an
 * address that is not loopback (not insecure by default) refused until it is marked insecure by
 * CIDR or host:port, a forward proxy used or skipped by no-proxy, and a registry mirror that is
 * down with the pull falling back to Docker Hub (a local TLS registry that a loopback forward
 * proxy routes registry-1.docker.io:443 to, its CA put in /etc/engine/certs.d for the run).
 * Network traffic goes only to 127.0.0.1 and to an address of a dummy interface the tests make
 * (198.18.47.1, the benchmarking range); the interface and the files under /etc go after the run.
 */
import "./helpers/root-hooks.js";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { makeTempDir } from "./helpers/engined.js";
import { startRegistry, type TestRegistry } from "./helpers/registry.js";
import { startForwardProxy, type ForwardProxy } from "./helpers/net-proxies.js";
import type { CertSet } from "./helpers/certs.js";
import { makeTar } from "./fixtures/images.js";
import { pushImage, type PushedImage } from "./fixtures/registry-push.js";
import { closedPort, daemonHooks, hostPort, imageCount, inspect, pull, pullOk, randomLayer, start } from "./helpers/pull-api.js";

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
