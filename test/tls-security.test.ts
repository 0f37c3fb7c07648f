/**
 * TLS listeners at OpenSSL's security level 2 for every client, TLS 1.0 and 1.1 ones included:
 * under --tlsverify a client certificate with a 1024-bit RSA key or an MD5 or SHA-1 signature
 * is refused, over TLS 1.3, 1.2, 1.1 and 1.0 alike, and a 2048-bit SHA-256 one is served. The
 * clients themselves run at level 0, so that any refusal seen is the daemon's. The Docker CLI
 * still works over tcp + tlsverify, hijacked attach and exec streams included; a weak
 * certificate of the daemon's own is a start error naming the files. Last, white-box: how the
 * first bytes of real clients are routed to the modern or the legacy context.
 */
import "./helpers/root-hooks.js";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createServer, type AddressInfo } from "node:net";
import { connect, type ConnectionOptions, type SecureVersion } from "node:tls";
import { expect } from "chai";
import { routeClientHello } from "../host/listeners/client-hello.js";
import { makeCerts, makeClientCert, makeExtraCa, makeServerCert, type CertSet } from "./helpers/certs.js";
import { docker } from "./helpers/docker-cli.js";
import { daemonArgs, makeTempDir, runEngined, startEngined, type TestDaemon } from "./helpers/engined.js";
import { tcpTarget } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

interface Answer {
  /** The HTTP answer, empty when the daemon refused the connection. */
  response: string;
  protocol: string | null;
}

/** GET /_ping over TLS with this client folder's certificate, at exactly this version. */
function ping(port: number, clientDir: string, version: SecureVersion): Promise<Answer> {
  return new Promise((resolve) => {
    const socket = connect({
      host: "127.0.0.1", port, servername: "localhost",
      ca: readFileSync(join(clientDir, "ca.pem")),
      cert: readFileSync(join(clientDir, "cert.pem")),
      key: readFileSync(join(clientDir, "key.pem")),
      minVersion: version, maxVersion: version,
      // The client accepts anything; only the daemon may refuse.
      ciphers: "DEFAULT:@SECLEVEL=0",
    });
    let response = "";
    let protocol: string | null = null;
    const done = () => resolve({ response, protocol });
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on("secureConnect", () => {
      protocol = socket.getProtocol();
      socket.write("GET /_ping HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    });
    socket.on("data", (d: Buffer) => (response += d.toString()));
    socket.on("error", done);
    socket.on("close", done);
  });
}

const VERSIONS: [SecureVersion, string][] = [["TLSv1.3", "TLSv1.3"], ["TLSv1.2", "TLSv1.2"], ["TLSv1.1", "TLSv1.1"], ["TLSv1", "TLSv1"]];

describe("TLS security level (--tlsverify)", function () {
  this.timeout(120_000);
  let certs: CertSet;
  let d: TestDaemon;
  let host: string;
  let port: number;
  const clients: Record<"good" | "rsa1024" | "md5" | "sha1", string> = { good: "", rsa1024: "", md5: "", sha1: "" };

  before(async function () {
    certs = makeCerts(join(makeTempDir("engine-tls-sec-"), "certs"));
    clients.good = certs.clientDir;
    clients.rsa1024 = makeClientCert(certs, "rsa1024", { bits: 1024 });
    clients.md5 = makeClientCert(certs, "md5", { digest: "md5" });
    clients.sha1 = makeClientCert(certs, "sha1", { digest: "sha1" });
    d = await startEngined({
      hosts: ["tcp://127.0.0.1:0"],
      args: ["--tlsverify", "--tlscacert", certs.ca, "--tlscert", certs.serverCert, "--tlskey", certs.serverKey],
    });
    host = d.addresses()[0];
    port = tcpTarget(host).port;
  });

  after(async () => d?.stop());

  for (const [version, name] of VERSIONS) {
    it(`${name}: refuses a 1024-bit RSA, an MD5 and a SHA-1 client certificate, serves a 2048-bit SHA-256 one`, async () => {
      const good = await ping(port, clients.good, version);
      expect(good.protocol).to.equal(name);
      expect(good.response).to.match(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nOK$/);
      for (const weak of ["rsa1024", "md5", "sha1"] as const) {
        const answer = await ping(port, clients[weak], version);
        expect(answer.response, `${name} with the ${weak} certificate`).to.equal("");
      }
    });
  }

  it("logs why a TLS 1.0 or 1.1 client was refused (the level-0 path checks chains itself)", async () => {
    const before = d.output().length;
    await ping(port, clients.rsa1024, "TLSv1");
    await ping(port, clients.md5, "TLSv1.1");
    // The log is written asynchronously: wait (at most 10 s) for the second line.
    for (let i = 0; i < 100 && !d.output().slice(before).includes("CN=md5"); i++) await new Promise((r) => setTimeout(r, 100));
    const log = d.output().slice(before);
    expect(log).to.match(/TLS client refused: certificate CN=rsa1024: it has a 1024-bit RSA key; 2048 bits or more are required/);
    expect(log).to.match(/TLS client refused: certificate CN=md5: it is signed with md5WithRSAEncryption/);
  });

  it("openssl s_client -tls1 is served with a good certificate and refused with a 1024-bit one", () => {
    const sClient = (clientDir: string) => {
      try {
        return execFileSync("openssl", ["s_client", "-tls1", "-cipher", "DEFAULT@SECLEVEL=0", "-quiet", "-ign_eof",
          "-connect", `127.0.0.1:${port}`, "-CAfile", join(clientDir, "ca.pem"),
          "-cert", join(clientDir, "cert.pem"), "-key", join(clientDir, "key.pem")],
        { input: "GET /_ping HTTP/1.0\r\n\r\n", encoding: "utf8", stdio: ["pipe", "pipe", "pipe"], timeout: 15_000 });
      } catch (err) {
        return (err as { stdout?: string }).stdout ?? "";
      }
    };
    expect(sClient(clients.good)).to.match(/^HTTP\/1\.[01] 200 OK\r\n[\s\S]*\r\n\r\nOK$/);
    expect(sClient(clients.rsa1024)).to.equal("");
  });

  it("the Docker CLI: refused with a 1024-bit client certificate; served with a good one, hijacked streams included", async () => {
    const weak = await docker(host, ["version"], { DOCKER_TLS_VERIFY: "1", DOCKER_CERT_PATH: clients.rsa1024 });
    expect(weak.code).to.equal(1);
    expect(weak.stderr).to.match(/error during connect|remote error|connection reset|EOF/);
    const env = { DOCKER_TLS_VERIFY: "1", DOCKER_CERT_PATH: clients.good };
    const cli = (args: string[], input?: string) => docker(host, args, env, input === undefined ? {} : { input });
    const version = await cli(["version", "--format", "{{.Server.APIVersion}}"]);
    expect(version.code, version.stderr).to.equal(0);
    expect(version.stdout.trim()).to.equal("1.51");
    const work = makeTempDir("engine-tls-sec-img-");
    const imported = await cli(["import", writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]);
    expect(imported.code, imported.stderr).to.equal(0);
    // attach (stdin, then its end) and exec -i: connections upgraded and taken over, over TLS.
    const run = await cli(["run", "-i", "--rm", "busybox", "sh", "-c", "wc -l; echo done"], "one\ntwo\nthree\n");
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout.trim().split(/\s+/)).to.deep.equal(["3", "done"]);
    const id = (await cli(["run", "-d", "busybox", "sleep", "600"])).stdout.trim();
    try {
      const exec = await cli(["exec", "-i", id, "sh", "-c", "tr a-z A-Z"], "shout\n");
      expect(exec.code, exec.stderr).to.equal(0);
      expect(exec.stdout).to.equal("SHOUT\n");
    } finally {
      await cli(["rm", "-f", id]);
    }
  });
});

describe("TLS security level: the daemon's own certificates", function () {
  this.timeout(60_000);
  let certs: CertSet;

  before(() => {
    certs = makeCerts(join(makeTempDir("engine-tls-own-"), "certs"));
  });

  const start = (cert: string, key: string) =>
    runEngined([...daemonArgs(makeTempDir()), "-H", "tcp://127.0.0.1:0", "--tls", "--tlscert", cert, "--tlskey", key]);

  it("refuses to start with a 1024-bit server key, naming the files and the rule", async () => {
    const weak = makeServerCert(certs, "server-rsa1024", { bits: 1024 });
    const res = await start(weak.cert, weak.key);
    expect(res.code).to.equal(1);
    expect(res.stderr).to.include(`the TLS certificate ${weak.cert} with key ${weak.key} cannot be used: certificate CN=localhost: it has a 1024-bit RSA key; 2048 bits or more are required`);
    expect(res.stderr).to.not.include("    at ");
  });

  it("refuses to start with a SHA-1-signed server certificate, and a key that is not the certificate's", async () => {
    const sha1 = makeServerCert(certs, "server-sha1", { digest: "sha1" });
    const res = await start(sha1.cert, sha1.key);
    expect(res.code).to.equal(1);
    expect(res.stderr).to.include(`the TLS certificate ${sha1.cert} with key ${sha1.key} cannot be used: certificate CN=localhost: it is signed with sha1WithRSAEncryption; MD5 and SHA-1 signatures are refused`);
    const mismatch = await start(certs.serverCert, sha1.key);
    expect(mismatch.code).to.equal(1);
    expect(mismatch.stderr).to.include(`the TLS certificate ${certs.serverCert} with key ${sha1.key} cannot be used: the key does not belong to the certificate`);
    expect(mismatch.stderr).to.not.include("    at ");
  });

  it("warns at start of a CA with a 1024-bit key in --tlscacert, and refuses the clients it signed", async () => {
    const weakCa = makeExtraCa(certs, "weak-ca", 1024);
    const byWeakCa = makeClientCert(certs, "by-weak-ca", {}, "weak-ca");
    const bundle = join(certs.dir, "bundle.pem");
    writeFileSync(bundle, readFileSync(certs.ca, "utf8") + readFileSync(weakCa, "utf8"));
    const d = await startEngined({
      hosts: ["tcp://127.0.0.1:0"],
      args: ["--tlsverify", "--tlscacert", bundle, "--tlscert", certs.serverCert, "--tlskey", certs.serverKey],
    });
    try {
      expect(d.output()).to.include(`TLS CA certificate CN=weak-ca in ${bundle}: it has a 1024-bit RSA key; 2048 bits or more are required; client certificates it signed will be refused`);
      const { port } = tcpTarget(d.addresses()[0]);
      for (const version of ["TLSv1.2", "TLSv1"] as const) {
        expect((await ping(port, certs.clientDir, version)).response, version).to.match(/^HTTP\/1\.1 200 OK/);
        expect((await ping(port, byWeakCa, version)).response, version).to.equal("");
      }
    } finally {
      await d.stop();
    }
  });
});

describe("TLS security level: routing by the ClientHello", () => {
  /** The first bytes a Node TLS client with these options sends. */
  async function helloOf(options: ConnectionOptions): Promise<Buffer> {
    let client: ReturnType<typeof connect> | undefined;
    const server = createServer();
    try {
      const first = new Promise<Buffer>((resolve) => server.once("connection", (s) => s.once("data", (d: Buffer) => { resolve(d); s.destroy(); })));
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      client = connect({ host: "127.0.0.1", port: (server.address() as AddressInfo).port, rejectUnauthorized: false, ...options });
      client.on("error", () => {});
      return await first;
    } finally {
      client?.destroy();
      server.close();
    }
  }

  it("sends TLS 1.2 and 1.3 clients to the modern context and TLS 1.0-1.1-only ones to the legacy one", async () => {
    const modern = await helloOf({});
    expect(routeClientHello(modern)).to.equal("modern");
    expect(routeClientHello(await helloOf({ minVersion: "TLSv1.2", maxVersion: "TLSv1.2" }))).to.equal("modern");
    const tls13 = await helloOf({ minVersion: "TLSv1.3" });
    expect(routeClientHello(tls13)).to.equal("modern");
    const old = { ciphers: "DEFAULT:@SECLEVEL=0" };
    expect(routeClientHello(await helloOf({ ...old, minVersion: "TLSv1", maxVersion: "TLSv1" }))).to.equal("legacy");
    expect(routeClientHello(await helloOf({ ...old, minVersion: "TLSv1", maxVersion: "TLSv1.1" }))).to.equal("legacy");
    // TLS 1.3 offered only in supported_versions (legacy_version says 1.0): modern.
    const rewritten = Buffer.from(tls13);
    rewritten.writeUInt16BE(0x0301, 9);
    expect(routeClientHello(rewritten)).to.equal("modern");
    // A modern client is known from its first 11 bytes; an old one needs its whole first record.
    expect(routeClientHello(modern.subarray(0, 10))).to.equal("wait");
    expect(routeClientHello(modern.subarray(0, 11))).to.equal("modern");
    const tls10 = await helloOf({ ...old, minVersion: "TLSv1", maxVersion: "TLSv1" });
    expect(routeClientHello(tls10.subarray(0, tls10.length - 1))).to.equal("wait");
  });

  it("routes an SSL 2.0-format hello by its version, and bytes that are no ClientHello to the modern context", () => {
    expect(routeClientHello(Buffer.from([0x80, 0x2e, 0x01, 0x03, 0x01]))).to.equal("legacy");
    expect(routeClientHello(Buffer.from([0x80, 0x2e, 0x01, 0x03, 0x03]))).to.equal("modern");
    expect(routeClientHello(Buffer.from("GET /_ping HTTP/1.1\r\n\r\n"))).to.equal("modern");
  });
});
