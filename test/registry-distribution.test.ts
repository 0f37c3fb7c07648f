/**
 * `GET /distribution/{name}/json` and `GET /images/search` against engined and Debian's
 * docker-registry 2.8.2 on loopback: the descriptor and platforms of a manifest list and of a
 * single manifest (by tag and by digest), Docker's statuses for a missing tag or repository and
 * for a registry that demands a login (401, then 200 with `X-Registry-Auth`), docker-py's
 * `get_registry_data`. Search: Debian's registry speaks only v2 and has no search, so the
 * answer is an error naming it (`docker search`, raw HTTP); Docker Hub cannot be reached here
 * (engined runs with an https proxy on a closed loopback port, so nothing leaves the host) and
 * the answer is an error naming it, not a hang. For real results, a registry that offers search
 * is a tiny HTTP server in this file speaking the v1 endpoint (`GET /v1/search?q=&n=`), since
 * Debian's registry has none: `docker search` with its filters and limit, and docker-py.
 */
import "./helpers/root-hooks.js";
import { createServer, request as httpReq, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { runCommand, startEngined, type TestDaemon } from "./helpers/engined.js";
import { freePort, startRegistry, type TestRegistry } from "./helpers/registry.js";
import { MEDIA, pushImage, pushIndex, type PushedImage } from "./fixtures/registry-push.js";

const USER = "tester";
const PASSWORD = "s3cret-pass";

/** A GET over the daemon's socket, with an X-Registry-Auth header when given. */
function get(socketPath: string, path: string, auth?: object): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (auth) headers["x-registry-auth"] = Buffer.from(JSON.stringify(auth)).toString("base64url");
    const req = httpReq({ socketPath, method: "GET", path, headers, timeout: 60_000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("request timed out")));
    req.on("error", reject);
    req.end();
  });
}

const SEARCH_RESULTS = [
  { name: "library/alpha", description: "official, many stars", star_count: 50, is_official: true, is_automated: true },
  { name: "team/beta", description: "some stars", star_count: 5, is_official: false, is_automated: false },
  { name: "team/gamma", description: "no stars", star_count: 0, is_official: false, is_automated: false },
];

describe("registry distribution and search", function () {
  this.timeout(180_000);
  let d: TestDaemon;
  let reg: TestRegistry;
  let tokenReg: TestRegistry;
  let single: PushedImage;
  let amd64: PushedImage;
  let index: { digest: string; manifest: Buffer; mediaType: string };
  let v1: Server;
  let v1Host = "";
  const v1Queries: string[] = [];

  const cli = (args: string[]) =>
    runCommand("docker", ["-H", `unix://${d.socket}`, ...args], {
      env: { DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined, DOCKER_TLS_VERIFY: undefined, DOCKER_CERT_PATH: undefined },
      timeoutMs: 60_000,
    });
  const py = (script: string, ...args: string[]) => runCommand("python3", ["-c", `import docker, sys, json\nc = docker.DockerClient(base_url='unix://' + sys.argv[1])\n${script}`, d.socket, ...args], { timeoutMs: 60_000 });

  before(async function () {
    // nothing listens on this port: Docker Hub through it fails at once, on loopback
    const closed = await freePort();
    d = await startEngined({ args: ["--https-proxy", `http://127.0.0.1:${closed}`] });
    reg = await startRegistry();
    tokenReg = await startRegistry({ auth: "token", requireLogin: true });
    const layer = Buffer.alloc(1024, 1);
    single = await pushImage(reg, "dist/single", "1", [layer], { platform: { architecture: "amd64", os: "linux" } });
    amd64 = await pushImage(reg, "dist/multi", undefined, [layer], { platform: { architecture: "amd64", os: "linux" } });
    const arm = await pushImage(reg, "dist/multi", undefined, [Buffer.alloc(1024, 2)], { platform: { architecture: "arm64", os: "linux", variant: "v8" } });
    index = await pushIndex(reg, "dist/multi", "latest", [
      { image: amd64, platform: { architecture: "amd64", os: "linux" } },
      { image: arm, platform: { architecture: "arm64", os: "linux", variant: "v8" } },
    ]);
    await pushImage(tokenReg, "dist/private", "1", [layer]);
    v1 = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname !== "/v1/search") {
        res.writeHead(404).end();
        return;
      }
      v1Queries.push(url.search);
      const n = Number(url.searchParams.get("n") ?? 25);
      const results = SEARCH_RESULTS.slice(0, n);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ num_results: results.length, query: url.searchParams.get("q"), results }));
    });
    await new Promise<void>((r) => v1.listen(0, "127.0.0.1", () => r()));
    v1Host = `127.0.0.1:${(v1.address() as AddressInfo).port}`;
  });

  after(async function () {
    await new Promise<void>((r) => (v1 ? v1.close(() => r()) : r()));
    await reg?.stop();
    await tokenReg?.stop();
    await d?.stop();
  });

  describe("GET /distribution/{name}/json", function () {
    it("answers a manifest list's descriptor and each of its platforms", async function () {
      const r = await get(d.socket, `/v1.51/distribution/${encodeURIComponent(`${reg.host}/dist/multi`)}/json`);
      expect(r.status, r.body).to.equal(200);
      expect(JSON.parse(r.body)).to.deep.equal({
        Descriptor: { mediaType: MEDIA.dockerList, digest: index.digest, size: index.manifest.length },
        Platforms: [
          { architecture: "amd64", os: "linux" },
          { architecture: "arm64", os: "linux", variant: "v8" },
        ],
      });
    });

    it("answers a single manifest with the platform of its config, by tag and by digest", async function () {
      for (const name of [`${reg.host}/dist/single:1`, `${reg.host}/dist/single@${single.manifestDigest}`]) {
        const r = await get(d.socket, `/v1.51/distribution/${name}/json`);
        expect(r.status, r.body).to.equal(200);
        expect(JSON.parse(r.body)).to.deep.equal({
          Descriptor: { mediaType: MEDIA.dockerManifest, digest: single.manifestDigest, size: single.size },
          Platforms: [{ architecture: "amd64", os: "linux" }],
        });
      }
    });

    it("answers 404 with the registry's message for a missing tag or repository, 400 for a bad name", async function () {
      const tag = await get(d.socket, `/v1.51/distribution/${reg.host}/dist/single:nope/json`);
      expect(tag.status, tag.body).to.equal(404);
      expect(JSON.parse(tag.body).message).to.match(/manifest unknown/);
      const repo = await get(d.socket, `/v1.51/distribution/${reg.host}/dist/none/json`);
      expect(repo.status, repo.body).to.equal(404);
      expect(JSON.parse(repo.body).message).to.match(/unknown/);
      const bad = await get(d.socket, `/v1.51/distribution/${reg.host}/Dist/UPPER/json`);
      expect(bad.status, bad.body).to.equal(400);
    });

    it("answers 401 when the registry demands a login, 200 with X-Registry-Auth", async function () {
      const path = `/v1.51/distribution/${tokenReg.host}/dist/private:1/json`;
      const anonymous = await get(d.socket, path);
      expect(anonymous.status, anonymous.body).to.equal(401);
      const authed = await get(d.socket, path, { username: USER, password: PASSWORD, serveraddress: tokenReg.host });
      expect(authed.status, authed.body).to.equal(200);
      expect(JSON.parse(authed.body).Platforms).to.deep.equal([{ architecture: "amd64", os: "linux" }]);
    });

    it("serves docker-py's images.get_registry_data", async function () {
      const r = await py(
        "d = c.images.get_registry_data(sys.argv[2])\nprint(json.dumps([d.id, d.has_platform('linux/arm64/v8'), d.has_platform('windows/amd64')]))",
        `${reg.host}/dist/multi:latest`,
      );
      expect(r.code, r.stderr).to.equal(0);
      expect(JSON.parse(r.stdout)).to.deep.equal([index.digest, true, false]);
    });
  });

  describe("GET /images/search", function () {
    it("names a registry without search (Debian's, v2 only): docker search and raw HTTP", async function () {
      const r = await cli(["search", `${reg.host}/dist`]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.include(`cannot search registry ${reg.host}: it offers no search`);
      const raw = await get(d.socket, `/v1.51/images/search?term=${encodeURIComponent(`${reg.host}/dist`)}`);
      expect(raw.status, raw.body).to.equal(500);
      expect(JSON.parse(raw.body).message).to.include(`cannot search registry ${reg.host}`);
    });

    it("names Docker Hub's index when it cannot be reached, without hanging", async function () {
      const raw = await get(d.socket, "/v1.51/images/search?term=busybox");
      expect(raw.status, raw.body).to.equal(500);
      expect(JSON.parse(raw.body).message).to.match(/^cannot search registry index\.docker\.io: /);
    });

    it("returns a v1 registry's results with docker search's filters and limit", async function () {
      const all = await cli(["search", "--format", "{{.Name}} {{.StarCount}} {{.IsOfficial}}", `${v1Host}/anything`]);
      expect(all.code, all.stderr).to.equal(0);
      // the CLI shows an official image as [OK], the others with nothing
      expect(all.stdout.trim().split("\n").map((l) => l.trimEnd())).to.deep.equal(["library/alpha 50 [OK]", "team/beta 5", "team/gamma 0"]);
      const official = await cli(["search", "--filter", "is-official=true", "--format", "{{.Name}}", `${v1Host}/anything`]);
      expect(official.stdout.trim()).to.equal("library/alpha");
      const starred = await cli(["search", "--filter", "stars=3", "--format", "{{.Name}}", `${v1Host}/anything`]);
      expect(starred.stdout.trim().split("\n")).to.deep.equal(["library/alpha", "team/beta"]);
      const limited = await cli(["search", "--limit", "1", "--format", "{{.Name}}", `${v1Host}/anything`]);
      expect(limited.stdout.trim()).to.equal("library/alpha");
      expect(v1Queries.at(-1)).to.equal("?q=anything&n=1");
    });

    it("answers the raw API as Docker: is_automated false, deprecated is-automated filter, bad input 400", async function () {
      const term = encodeURIComponent(`${v1Host}/x`);
      const r = await get(d.socket, `/v1.51/images/search?term=${term}&limit=2`);
      expect(r.status, r.body).to.equal(200);
      expect(JSON.parse(r.body)).to.deep.equal([
        { name: "library/alpha", description: "official, many stars", star_count: 50, is_official: true, is_automated: false },
        { name: "team/beta", description: "some stars", star_count: 5, is_official: false, is_automated: false },
      ]);
      const automated = await get(d.socket, `/v1.51/images/search?term=${term}&filters=${encodeURIComponent('{"is-automated":["true"]}')}`);
      expect(JSON.parse(automated.body)).to.deep.equal([]);
      for (const q of ["limit=0", "limit=101", `filters=${encodeURIComponent('{"stars":["many"]}')}`, `filters=${encodeURIComponent('{"name":["x"]}')}`]) {
        const bad = await get(d.socket, `/v1.51/images/search?term=${term}&${q}`);
        expect(bad.status, `${q}: ${bad.body}`).to.equal(400);
      }
      // Docker's words (checked against dockerd)
      const zero = await get(d.socket, `/v1.51/images/search?term=${term}&limit=0`);
      expect(JSON.parse(zero.body).message).to.equal("Limit 0 is outside the range of [1, 100]");
    });

    it("serves docker-py's images.search", async function () {
      const r = await py("print(json.dumps([x['name'] for x in c.images.search(sys.argv[2], limit=3)]))", `${v1Host}/x`);
      expect(r.code, r.stderr).to.equal(0);
      expect(JSON.parse(r.stdout)).to.deep.equal(["library/alpha", "team/beta", "team/gamma"]);
    });
  });
});
