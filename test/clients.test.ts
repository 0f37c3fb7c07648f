/**
 * Real clients against the real daemon: the Docker CLI and dockerode, over a unix socket and
 * over TCP with mutual TLS. No mocks: every answer comes from a running `bin/engined`.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import Docker from "dockerode";
import { readFileSync, realpathSync, rmSync } from "node:fs";
import { request, type IncomingHttpHeaders } from "node:http";
import { join } from "node:path";
import { connect } from "node:tls";
import { makeCerts, type CertSet } from "./helpers/certs.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, ROOT, startEngined, type TestDaemon } from "./helpers/engined.js";

const PKG_VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One plain HTTP request over a unix socket, no client library in between. */
function rawRequest(socketPath: string, method: string, path: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, headers: { Host: "engine" } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/** Whether a string is one of the paths naming the daemon's data root. */
function dataRootCandidates(d: TestDaemon): string[] {
  const plain = join(d.dir, "data");
  const out = [plain];
  try {
    out.push(realpathSync(plain));
  } catch {
    // the folder is gone: only the plain path
  }
  return out;
}

function portOf(d: TestDaemon): number {
  const tcp = d.addresses().find((a) => a.startsWith("tcp://"));
  expect(tcp, `no tcp address in:\n${d.output()}`).to.be.a("string");
  const m = /^tcp:\/\/127\.0\.0\.1:(\d+)/.exec(tcp!);
  expect(m, `unexpected address ${tcp}`).to.not.equal(null);
  const port = Number(m![1]);
  expect(port).to.be.greaterThan(0);
  return port;
}

/** The /info fields every client shows, as this daemon fills them. */
function expectInfoFields(info: Record<string, unknown>, daemon: TestDaemon): void {
  expect(info.ID).to.be.a("string").and.not.equal("");
  expect(info.Name).to.be.a("string").and.not.equal("");
  expect(info.NCPU).to.be.a("number").and.greaterThan(0);
  expect(info.MemTotal).to.be.a("number").and.greaterThan(0);
  expect(info.KernelVersion).to.be.a("string").and.not.equal("");
  expect(info.OperatingSystem).to.be.a("string").and.not.equal("");
  expect(dataRootCandidates(daemon)).to.include(info.DockerRootDir);
  expect(info.LoggingDriver).to.equal("json-file");
  expect(info.CgroupDriver).to.be.a("string").and.not.equal("");
  expect(info).to.have.property("DefaultRuntime");
  expect(info.ServerVersion).to.equal(PKG_VERSION);
}

describe("clients: Docker CLI and dockerode", function () {
  this.timeout(60_000);

  let unixDaemon: TestDaemon;
  let tlsDaemon: TestDaemon;
  let certDir: string;
  let certs: CertSet;
  let unixHost: string;
  let tlsHost: string;
  let port: number;

  before(async function () {
    certDir = makeTempDir("engine-clients-certs-");
    certs = makeCerts(join(certDir, "certs"));
    [unixDaemon, tlsDaemon] = await Promise.all([
      startEngined(),
      startEngined({
        hosts: ["tcp://127.0.0.1:0"],
        args: ["--tlsverify", "--tlscacert", certs.ca, "--tlscert", certs.serverCert, "--tlskey", certs.serverKey],
      }),
    ]);
    unixHost = `unix://${unixDaemon.socket}`;
    port = portOf(tlsDaemon);
    tlsHost = `tcp://127.0.0.1:${port}`;
  });

  after(async function () {
    await Promise.all([unixDaemon?.stop(), tlsDaemon?.stop()]);
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  });

  describe("Docker CLI over a unix socket", function () {
    it("docker version shows the engine, its version and the API range", async function () {
      const r = await docker(unixHost, ["version"]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.include("Server: Engine");
      expect(r.stdout).to.match(new RegExp(`^\\s+Version:\\s+${PKG_VERSION.replace(/\./g, "\\.")}\\s*$`, "m"));
      expect(r.stdout).to.match(/^\s+API version:\s+1\.51 \(minimum version 1\.24\)$/m);
    });

    it("docker info shows server version, root dir, OS and CPUs", async function () {
      const r = await docker(unixHost, ["info"]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.include(`Server Version: ${PKG_VERSION}`);
      const root = /^\s*Docker Root Dir: (.*)$/m.exec(r.stdout);
      expect(root, r.stdout).to.not.equal(null);
      expect(dataRootCandidates(unixDaemon)).to.include(root![1].trim());
      expect(r.stdout).to.match(/^\s*Operating System: \S/m);
      expect(r.stdout).to.match(/^\s*CPUs: [1-9]\d*$/m);
    });

    it("docker info --format '{{json .}}' is JSON with the expected fields", async function () {
      const r = await docker(unixHost, ["info", "--format", "{{json .}}"]);
      expect(r.code, r.stderr).to.equal(0);
      expectInfoFields(JSON.parse(r.stdout) as Record<string, unknown>, unixDaemon);
    });
  });

  describe("Docker CLI over TCP with --tlsverify", function () {
    it("a client certificate signed by the CA is accepted", async function () {
      const r = await docker(tlsHost, ["--tlsverify", "version"], { DOCKER_CERT_PATH: certs.clientDir });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.include("Server: Engine");
      expect(r.stdout).to.match(/^\s+API version:\s+1\.51 \(minimum version 1\.24\)$/m);
    });

    it("TLS without a client certificate is refused", async function () {
      const r = await docker(tlsHost, ["--tls", "--tlscacert", certs.ca, "version"]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.match(/tls: certificate required|bad certificate|handshake/i);
      expect(r.stdout).to.not.include("Server: Engine");
    });

    it("a client certificate from another CA is refused", async function () {
      const r = await docker(tlsHost, ["--tlsverify", "--tlscacert", certs.ca, "version"], { DOCKER_CERT_PATH: certs.rogueDir });
      expect(r.code).to.not.equal(0);
      // Go offers no certificate the server's CA list does not name; either way the server refuses.
      expect(r.stderr).to.match(/tls: certificate required|bad certificate|unknown certificate authority|handshake/i);
      expect(r.stdout).to.not.include("Server: Engine");
    });

    it("plain HTTP to the TLS port fails", async function () {
      const r = await docker(tlsHost, ["version"]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.include("error during connect");
      expect(r.stdout).to.not.include("Server: Engine");
    });

    it("node:tls without a client certificate never gets an HTTP response", async function () {
      const outcome = await new Promise<{ error?: Error; data: string }>((resolve) => {
        let data = "";
        let error: Error | undefined;
        const sock = connect({ host: "127.0.0.1", port, ca: readFileSync(certs.ca), servername: "localhost" }, () => {
          sock.write("GET /_ping HTTP/1.1\r\nHost: engine\r\nConnection: close\r\n\r\n");
        });
        sock.setEncoding("utf8");
        sock.on("data", (d: string) => (data += d));
        sock.on("error", (err) => (error = err));
        sock.on("close", () => resolve({ error, data }));
        sock.setTimeout(10_000, () => sock.destroy(new Error("timed out")));
      });
      expect(outcome.data).to.not.match(/^HTTP\/1\.[01] \d{3}/);
      expect(outcome.data).to.equal("");
      if (outcome.error) expect(outcome.error.message).to.not.equal("timed out");
    });
  });

  describe("dockerode", function () {
    it("version() over the unix socket", async function () {
      const v = await new Docker({ socketPath: unixDaemon.socket }).version();
      expect(v.ApiVersion).to.equal("1.51");
      expect(v.MinAPIVersion).to.equal("1.24");
      expect(v.Os).to.equal("linux");
      expect(v.Version).to.equal(PKG_VERSION);
    });

    it("info() over the unix socket", async function () {
      expectInfoFields((await new Docker({ socketPath: unixDaemon.socket }).info()) as Record<string, unknown>, unixDaemon);
    });

    it("ping() answers OK", async function () {
      const pong: unknown = await new Docker({ socketPath: unixDaemon.socket }).ping();
      const text = Buffer.isBuffer(pong) ? pong.toString("utf8") : String(pong);
      expect(text).to.equal("OK");
    });

    it("over TLS with the client certificate", async function () {
      const client = new Docker({
        host: "127.0.0.1",
        port,
        protocol: "https",
        ca: readFileSync(join(certs.clientDir, "ca.pem")),
        cert: readFileSync(join(certs.clientDir, "cert.pem")),
        key: readFileSync(join(certs.clientDir, "key.pem")),
      });
      const v = await client.version();
      expect(v.ApiVersion).to.equal("1.51");
      expect(v.MinAPIVersion).to.equal("1.24");
      expect(v.Os).to.equal("linux");
      const pong: unknown = await client.ping();
      expect(Buffer.isBuffer(pong) ? pong.toString("utf8") : String(pong)).to.equal("OK");
    });

    it("over TLS without cert and key it is rejected", async function () {
      const client = new Docker({ host: "127.0.0.1", port, protocol: "https", ca: readFileSync(certs.ca) });
      let failed: unknown;
      try {
        await client.version();
      } catch (err) {
        failed = err;
      }
      expect(failed, "version() without a client certificate should reject").to.be.instanceOf(Error);
    });
  });

  describe("API version negotiation", function () {
    for (const version of ["1.41", "1.50"]) {
      it(`DOCKER_API_VERSION=${version} docker version succeeds`, async function () {
        const r = await docker(unixHost, ["version"], { DOCKER_API_VERSION: version });
        expect(r.code, r.stderr).to.equal(0);
        expect(r.stdout).to.match(new RegExp(`^\\s+API version:\\s+${version.replace(".", "\\.")}\\b`, "m"));
        expect(r.stdout).to.include("Server: Engine");
      });
    }

    it("DOCKER_API_VERSION=1.12 docker version is refused as too old", async function () {
      const r = await docker(unixHost, ["version"], { DOCKER_API_VERSION: "1.12" });
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.include("client version 1.12 is too old. Minimum supported API version is 1.24");
    });

    it("raw GET /v1.12/version answers 400 with Docker's wording", async function () {
      const r = await rawRequest(unixDaemon.socket, "GET", "/v1.12/version");
      expect(r.status).to.equal(400);
      expect(r.headers["content-type"]).to.match(/^application\/json/);
      expect(JSON.parse(r.body)).to.deep.equal({
        message: "client version 1.12 is too old. Minimum supported API version is 1.24, please upgrade your client to a newer version",
      });
    });

    it("raw GET /v1.99/version answers 400 too new", async function () {
      const r = await rawRequest(unixDaemon.socket, "GET", "/v1.99/version");
      expect(r.status).to.equal(400);
      expect(JSON.parse(r.body)).to.deep.equal({
        message: "client version 1.99 is too new. Maximum supported API version is 1.51",
      });
    });

    it("dockerode with version v1.41 works", async function () {
      const client = new Docker({ socketPath: unixDaemon.socket, version: "v1.41" });
      const v = await client.version();
      expect(v.ApiVersion).to.equal("1.51");
      expect(v.MinAPIVersion).to.equal("1.24");
      const info = (await client.info()) as Record<string, unknown>;
      expect(info.ServerVersion).to.equal(PKG_VERSION);
    });
  });

  describe("/_ping response headers", function () {
    it("GET /_ping: 200 OK with Docker's headers", async function () {
      const r = await rawRequest(unixDaemon.socket, "GET", "/_ping");
      expect(r.status).to.equal(200);
      expect(r.body).to.equal("OK");
      expect(r.headers["content-type"]).to.equal("text/plain; charset=utf-8");
      expect(r.headers["api-version"]).to.equal("1.51");
      expect(r.headers["ostype"]).to.equal("linux");
      expect(r.headers["server"]).to.be.a("string").and.match(/^Engine\//);
      expect(r.headers["cache-control"]).to.equal("no-cache, no-store, must-revalidate");
      expect(r.headers["pragma"]).to.equal("no-cache");
    });

    it("HEAD /_ping: 200 with no body", async function () {
      const r = await rawRequest(unixDaemon.socket, "HEAD", "/_ping");
      expect(r.status).to.equal(200);
      expect(r.body).to.equal("");
      expect(r.headers["api-version"]).to.equal("1.51");
      expect(r.headers["ostype"]).to.equal("linux");
      expect(r.headers["server"]).to.match(/^Engine\//);
    });
  });
});
