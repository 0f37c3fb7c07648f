/**
 * The registry test harness against the real docker-registry: the three set-ups start and take
 * a pushed image; token expiry is what the registry enforces; the faulty proxy injects its
 * faults; the forward proxy tunnels to loopback and refuses anything else without dialling it.
 */
import "./helpers/root-hooks.js";
import { request as httpRequest } from "node:http";
import { connect as tlsConnect } from "node:tls";
import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { expect } from "chai";
import { request } from "undici";
import { startRegistry, type TestRegistry } from "./helpers/registry.js";
import { startFaultyProxy, startForwardProxy } from "./helpers/net-proxies.js";
import { makeTar } from "./fixtures/images.js";
import { MEDIA, pushImage, pushIndex, RegistrySession, sha256, type PushedImage } from "./fixtures/registry-push.js";

const ACCEPT = [MEDIA.dockerManifest, MEDIA.dockerList, MEDIA.ociManifest, MEDIA.ociIndex].join(", ");

async function smallLayers(): Promise<Buffer[]> {
  return [
    await makeTar([{ name: "etc/", type: "directory" }, { name: "etc/hello", data: "hello\n" }]),
    await makeTar([{ name: "data.bin", data: Buffer.alloc(64 * 1024, 7) }]),
  ];
}

/** GET the manifest by tag, authenticating as the registry demands. */
async function manifestDigest(reg: TestRegistry, repo: string, ref: string): Promise<string> {
  const s = new RegistrySession(reg, repo, reg.auth === "none" ? undefined : reg.users[0], "pull");
  const res = await s.fetch("GET", `/v2/${repo}/manifests/${ref}`, { headers: { accept: ACCEPT } });
  expect(res.status, res.body.toString()).to.equal(200);
  expect(res.headers["docker-content-digest"]).to.equal(sha256(res.body));
  return String(res.headers["docker-content-digest"]);
}

/** Opens a CONNECT tunnel through a forward proxy; resolves with the status and socket. */
function connectVia(proxyPort: number, target: string): Promise<{ status: number; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port: proxyPort, method: "CONNECT", path: target, timeout: 5000 });
    req.on("connect", (res, socket) => resolve({ status: res.statusCode ?? 0, socket }));
    req.on("response", (res) => resolve({ status: res.statusCode ?? 0, socket: res.socket }));
    req.on("timeout", () => req.destroy(new Error("CONNECT timed out")));
    req.on("error", reject);
    req.end();
  });
}

/** A plain-HTTP request through a forward proxy (absolute URI); resolves with the status. */
function absoluteGet(proxyPort: number, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port: proxyPort, path: url, headers: { host: new URL(url).host }, timeout: 5000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}

/** GET /v2/ over TLS inside a tunnel; resolves with the status line. */
function getV2OverTunnel(socket: Socket, ca: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const tls = tlsConnect({ socket, ca, servername: "localhost" }, () => {
      tls.write("GET /v2/ HTTP/1.1\r\nHost: registry-1.docker.io\r\nConnection: close\r\n\r\n");
    });
    let text = "";
    tls.on("data", (d: Buffer) => (text += d.toString()));
    tls.on("end", () => resolve(text.split("\r\n")[0]));
    tls.on("error", reject);
    setTimeout(() => tls.destroy(new Error("tunnel GET timed out")), 5000).unref();
  });
}

describe("registry-harness", function () {
  this.timeout(30_000);
  let layers: Buffer[];
  let plain: TestRegistry;
  let secure: TestRegistry;

  before(async () => {
    layers = await smallLayers();
    [plain, secure] = await Promise.all([startRegistry(), startRegistry({ auth: "htpasswd" })]);
  });
  after(async () => {
    await plain?.stop();
    await secure?.stop();
  });

  it("no auth: pushes a Docker image, an OCI zstd image and an index", async () => {
    const img = await pushImage(plain, "lib/small", "v1", layers);
    expect(await manifestDigest(plain, "lib/small", "v1")).to.equal(img.manifestDigest);
    const arm = await pushImage(plain, "lib/small", undefined, layers, { format: "oci", compression: "zstd", platform: { architecture: "arm64", os: "linux", variant: "v8" } });
    const index = await pushIndex(plain, "lib/small", "multi", [
      { image: await pushImage(plain, "lib/small", undefined, layers, { format: "oci" }), platform: { architecture: "amd64", os: "linux" } },
      { image: arm, platform: { architecture: "arm64", os: "linux", variant: "v8" } },
    ], { format: "oci" });
    expect(await manifestDigest(plain, "lib/small", "multi")).to.equal(index.digest);
    // The blob on disk is what blobPath says.
    expect(sha256(readFileSync(plain.blobPath(img.layerDigests[1])))).to.equal(img.layerDigests[1]);
  });

  it("htpasswd over TLS: basic challenge, wrong password refused, push and pull", async () => {
    expect(secure.url).to.match(/^https:/);
    const anon = await request(`${secure.url}/v2/`, { dispatcher: secure.dispatcher });
    await anon.body.dump();
    expect(anon.statusCode).to.equal(401);
    expect(String(anon.headers["www-authenticate"])).to.match(/^Basic realm="test-realm"/);
    const wrong = new RegistrySession(secure, "x", { username: "tester", password: "nope" });
    expect((await wrong.fetch("GET", "/v2/")).status).to.equal(401);
    const img = await pushImage(secure, "team/app", "1.0", layers);
    expect(await manifestDigest(secure, "team/app", "1.0")).to.equal(img.manifestDigest);
  });

  it("token auth: bearer flow through the token server, anonymous pull allowed", async () => {
    const reg = await startRegistry({ auth: "token" });
    try {
      const img = await pushImage(reg, "team/tok", "t1", layers);
      expect(reg.token!.requests.some((r) => r.user === "tester" && r.scope.includes("repository:team/tok:pull,push"))).to.equal(true);
      expect(await manifestDigest(reg, "team/tok", "t1")).to.equal(img.manifestDigest);
      const anon = new RegistrySession(reg, "team/tok", undefined, "pull");
      expect((await anon.fetch("GET", "/v2/team/tok/manifests/t1", { headers: { accept: ACCEPT } })).status).to.equal(200);
      // The Bearer challenge names the realm, the service and the scope.
      const res = await request(`${reg.url}/v2/team/tok/tags/list`);
      await res.body.dump();
      // The OAuth2 form: a password grant gives a refresh token, which then gives a working token.
      const post = (form: Record<string, string>) =>
        request(`${reg.token!.url}/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form).toString() });
      const scope = "repository:team/tok:pull";
      const bad = await post({ grant_type: "password", username: "tester", password: "wrong", service: "test-registry", scope, client_id: "t" });
      expect(((await bad.body.json()) as { errors: { code: string }[] }).errors[0].code).to.equal("UNAUTHORIZED");
      expect(bad.statusCode).to.equal(401);
      const pw = (await (await post({ grant_type: "password", username: "tester", password: "s3cret-pass", service: "test-registry", scope, client_id: "t", access_type: "offline" })).body.json()) as { refresh_token: string };
      expect(pw.refresh_token).to.be.a("string");
      const refreshed = (await (await post({ grant_type: "refresh_token", refresh_token: pw.refresh_token, service: "test-registry", scope, client_id: "t" })).body.json()) as { access_token: string };
      const withRefreshed = await request(`${reg.url}/v2/team/tok/manifests/t1`, { headers: { accept: ACCEPT, authorization: `Bearer ${refreshed.access_token}` } });
      await withRefreshed.body.dump();
      expect(withRefreshed.statusCode).to.equal(200);
      expect(reg.token!.requests.filter((r) => r.method === "POST").map((r) => [r.grant, r.user, r.status])).to.deep.equal([
        ["password", undefined, 401],
        ["password", "tester", 200],
        ["refresh_token", "tester", 200],
      ]);
      const challenge = String(res.headers["www-authenticate"]);
      expect(challenge).to.match(/^Bearer /);
      expect(challenge).to.include(`realm="${reg.token!.url}/token"`).and.include('service="test-registry"').and.include('scope="repository:team/tok:pull"');
    } finally {
      await reg.stop();
    }
  });

  it("token auth: a token of tokenLifetimeSeconds 2 stops working after about 2 s", async () => {
    const reg = await startRegistry({ auth: "token", tokenLifetimeSeconds: 2, advertisedExpiresIn: 3600 });
    try {
      const t0 = Date.now();
      const res = await request(`${reg.token!.url}/token?service=test-registry&scope=repository:a/b:pull`);
      const answer = (await res.body.json()) as { token: string; expires_in: number };
      expect(answer.expires_in).to.equal(3600);
      const status = async () => {
        const r = await request(`${reg.url}/v2/a/b/tags/list`, { headers: { authorization: `Bearer ${answer.token}` } });
        await r.body.dump();
        return r.statusCode;
      };
      expect(await status()).to.equal(404); // accepted: the repository just does not exist
      let refusedAt = 0;
      for (let i = 0; i < 60 && Date.now() - t0 < 7000; i++) {
        if ((await status()) === 401) {
          refusedAt = Date.now() - t0;
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      // Never before its 2 s (exp is rounded up), and soon after (100 ms polls, a loaded machine).
      expect(refusedAt, "token still accepted after 7 s").to.be.greaterThan(0);
      expect(refusedAt).to.be.within(1900, 5000);
    } finally {
      await reg.stop();
    }
  });

  it("faulty proxy: drops after N bytes, corrupts, ignores Range, injects a status", async () => {
    const img: PushedImage = await pushImage(plain, "lib/proxied", "v1", layers);
    const [h, p] = plain.host.split(":");
    const proxy = await startFaultyProxy({ host: h, port: Number(p) });
    try {
      const blob = `/v2/lib/proxied/blobs/${img.layerDigests[1]}`;
      const whole = img.layerBlobs[1];
      proxy.faults = [{ path: /\/blobs\/sha256:/, times: 1, dropAfterBytes: 100 }];
      const first = await request(`${proxy.url}${blob}`);
      expect(first.statusCode).to.equal(200);
      let got = 0;
      const err = await (async () => {
        try {
          for await (const c of first.body) got += (c as Buffer).length;
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(err, "the body must end in an error").to.be.instanceOf(Error);
      expect(got).to.equal(100);
      const second = await request(`${proxy.url}${blob}`);
      expect(sha256(Buffer.from(await second.body.arrayBuffer()))).to.equal(img.layerDigests[1]);

      proxy.faults = [{ path: /\/blobs\//, corrupt: true }];
      const bad = Buffer.from(await (await request(`${proxy.url}${blob}`)).body.arrayBuffer());
      expect(bad.length).to.equal(whole.length);
      expect(sha256(bad)).to.not.equal(img.layerDigests[1]);

      proxy.faults = [{ path: /\/blobs\//, ignoreRange: true }];
      const ranged = await request(`${proxy.url}${blob}`, { headers: { range: "bytes=10-" } });
      expect(ranged.statusCode).to.equal(200);
      expect(Buffer.from(await ranged.body.arrayBuffer()).length).to.equal(whole.length);
      proxy.faults = [];
      const partial = await request(`${proxy.url}${blob}`, { headers: { range: "bytes=10-" } });
      expect(partial.statusCode).to.equal(206);
      expect(Buffer.from(await partial.body.arrayBuffer()).length).to.equal(whole.length - 10);

      proxy.faults = [{ path: /\/manifests\//, status: 503, times: 1 }];
      const failed = await request(`${proxy.url}/v2/lib/proxied/manifests/v1`, { headers: { accept: ACCEPT } });
      await failed.body.dump();
      expect(failed.statusCode).to.equal(503);
      expect(proxy.requests.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 206, 503]);
      expect(proxy.requests[4].range).to.equal("bytes=10-");
    } finally {
      await proxy.stop();
    }
  });

  it("faulty proxy in front of a TLS registry with basic auth: a whole push goes through", async () => {
    const [h, p] = secure.host.split(":");
    const proxy = await startFaultyProxy({ host: h, port: Number(p), tls: secure.certs });
    try {
      const viaProxy = { ...secure, url: proxy.url, host: proxy.host, dispatcher: plain.dispatcher };
      const img = await pushImage(viaProxy, "team/via-proxy", "v1", layers);
      expect(await manifestDigest(secure, "team/via-proxy", "v1")).to.equal(img.manifestDigest);
      expect(proxy.requests.some((r) => r.method === "PUT" && /\/blobs\/uploads\//.test(r.path) && r.status === 201)).to.equal(true);
    } finally {
      await proxy.stop();
    }
  });

  it("forward proxy: CONNECT to loopback and to a routed name; other targets refused", async () => {
    const port = Number(secure.host.split(":")[1]);
    const fp = await startForwardProxy({ routes: { "registry-1.docker.io:443": { host: "127.0.0.1", port } } });
    try {
      const ca = readFileSync(secure.certs!.ca);
      const direct = await connectVia(fp.port, secure.host);
      expect(direct.status).to.equal(200);
      expect(await getV2OverTunnel(direct.socket, ca)).to.equal("HTTP/1.1 401 Unauthorized");
      const routed = await connectVia(fp.port, "registry-1.docker.io:443");
      expect(routed.status).to.equal(200);
      expect(await getV2OverTunnel(routed.socket, ca)).to.equal("HTTP/1.1 401 Unauthorized");
      const refused = await connectVia(fp.port, "example.com:443");
      refused.socket.destroy();
      expect(refused.status).to.equal(502);
      // An absolute-URI plain request to loopback is forwarded; to anything else refused.
      expect(await absoluteGet(fp.port, `http://${plain.host}/v2/`)).to.equal(200);
      expect(await absoluteGet(fp.port, "http://example.com/")).to.equal(502);
      expect(fp.seen).to.deep.equal([
        { method: "CONNECT", target: secure.host },
        { method: "CONNECT", target: "registry-1.docker.io:443" },
        { method: "CONNECT", target: "example.com:443", refused: true },
        { method: "GET", target: plain.host },
        { method: "GET", target: "example.com:80", refused: true },
      ]);
    } finally {
      await fp.stop();
    }
  });
});
