/**
 * How the `engine` client reaches the daemon: ssh:// through a real OpenSSH server the test
 * starts on loopback (its own host key, authorized key, known_hosts and SSH agent), tcp:// with
 * mutual TLS, HTTP proxies from the environment (a small CONNECT proxy here records what went
 * through it), ENGINE_HOST, ENGINE_API_VERSION, and the messages for hosts it cannot use.
 * Everything runs against a real engined; sshd, the agent and the proxies are stopped by pid.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { createServer, connect, type AddressInfo, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { makeCerts, type CertSet } from "./helpers/certs.js";
import { docker } from "./helpers/docker-cli.js";
import { ENGINE, engine } from "./helpers/engine-cli.js";
import { makeTempDir, runCommand, startEngined, type TestDaemon } from "./helpers/engined.js";

const HAVE_SSHD = existsSync("/usr/sbin/sshd");
/** A name nothing resolves: only a proxy that routes it can reach the daemon by it. */
const PROXIED_NAME = "engine-daemon.test";
/** No proxy variable of the machine's leaks into a run unless a test sets it. */
const NO_PROXY_ENV = { HTTP_PROXY: undefined, http_proxy: undefined, HTTPS_PROXY: undefined, https_proxy: undefined, NO_PROXY: undefined, no_proxy: undefined };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function tcpPort(d: TestDaemon): number {
  const tcp = d.addresses().find((a) => a.startsWith("tcp://"));
  expect(tcp, d.output()).to.be.a("string");
  return Number(/:(\d+)$/.exec(tcp!)![1]);
}

/** Resolves once `proc` wrote `pattern` (stdout or stderr); rejects when it exits first or after 10 s. */
function waitFor(proc: ChildProcess, output: () => string, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`timed out waiting for ${pattern}:\n${output()}`)), 10_000);
    const check = () => pattern.test(output()) && done();
    const exit = () => done(new Error(`exited before ${pattern}:\n${output()}`));
    const done = (err?: Error) => {
      clearTimeout(timer);
      proc.stdout?.off("data", check);
      proc.stderr?.off("data", check);
      proc.off("exit", exit);
      if (err) reject(err);
      else resolve();
    };
    proc.stdout?.on("data", check);
    proc.stderr?.on("data", check);
    proc.once("exit", exit);
    check();
  });
}

async function stopProcess(proc: ChildProcess | undefined): Promise<void> {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once("exit", r));
  proc.kill("SIGTERM");
  const timer = setTimeout(() => proc.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

function keygen(path: string, passphrase = ""): string {
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", passphrase, "-C", "engine-test", "-f", path], { stdio: ["ignore", "ignore", "pipe"] });
  return readFileSync(`${path}.pub`, "utf8");
}

interface Sshd {
  port: number;
  /** The host's public key, "ssh-ed25519 AAAA...". */
  hostKey: string;
  log(): string;
  stop(): Promise<void>;
}

/** A throwaway OpenSSH server on 127.0.0.1: its own host key, one authorized_keys file, streamlocal forwarding on. */
async function startSshd(dir: string, authorizedKeys: string): Promise<Sshd> {
  const hostKeyFile = join(dir, "ssh_host_ed25519_key");
  const hostKey = keygen(hostKeyFile).split(" ").slice(0, 2).join(" ");
  writeFileSync(join(dir, "authorized_keys"), authorizedKeys, { mode: 0o600 });
  const port = await freePort();
  const config = join(dir, "sshd_config");
  writeFileSync(
    config,
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${hostKeyFile}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      // the temporary folder is under the world-writable /tmp, which StrictModes refuses
      "StrictModes no",
      "PubkeyAuthentication yes",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "PermitRootLogin prohibit-password",
      "AllowStreamLocalForwarding yes",
      "StreamLocalBindUnlink yes",
      "X11Forwarding no",
      "PermitTTY no",
      "LogLevel VERBOSE",
      "",
    ].join("\n"),
  );
  const proc = spawn("/usr/sbin/sshd", ["-D", "-e", "-f", config], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  try {
    await waitFor(proc, () => out, /Server listening on 127\.0\.0\.1 port/);
  } catch (err) {
    await stopProcess(proc);
    throw err;
  }
  return { port, hostKey, log: () => out, stop: () => stopProcess(proc) };
}

/** An SSH agent of the test's own (`ssh-agent -D`, so its pid is the child's), holding `key` added with its passphrase. */
async function startAgent(dir: string, key: string, passphrase: string): Promise<{ socket: string; stop(): Promise<void> }> {
  const socket = join(dir, "agent.sock");
  const proc = spawn("ssh-agent", ["-D", "-a", socket], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const stop = () => stopProcess(proc);
  try {
    await waitFor(proc, () => out, /SSH_AUTH_SOCK=/);
    // ssh-add asks for the passphrase through SSH_ASKPASS: a script that prints it
    const askpass = join(dir, "askpass");
    writeFileSync(askpass, `#!/bin/sh\necho '${passphrase}'\n`, { mode: 0o700 });
    const add = spawnSync("ssh-add", [key], {
      env: { ...process.env, SSH_AUTH_SOCK: socket, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: "force", DISPLAY: "none" },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 10_000,
    });
    if (add.status !== 0) throw new Error(`ssh-add failed: ${add.stderr}`);
  } catch (err) {
    await stop();
    throw err;
  }
  return { socket, stop };
}

/** A HOME for the client: .ssh/known_hosts and, if given, .ssh/id_ed25519. */
function clientHome(dir: string, knownHosts: string, key?: string): string {
  mkdirSync(join(dir, ".ssh"), { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, ".ssh/known_hosts"), knownHosts);
  if (key) {
    copyFileSync(key, join(dir, ".ssh/id_ed25519"));
    chmodSync(join(dir, ".ssh/id_ed25519"), 0o600);
  }
  return dir;
}

interface Tunnel {
  /** The CONNECT target, "host:port". */
  target: string;
  /** What the client sent through the tunnel (the first 64 KiB), as latin1. */
  sent: string;
}

interface RecordingProxy {
  url: string;
  tunnels: Tunnel[];
  stop(): Promise<void>;
}

/**
 * An HTTP proxy that only knows CONNECT, dials only 127.0.0.1 (for the "host:port" targets in
 * `routes`, answering 502 to any other) and records each tunnel and the bytes the client sent.
 */
async function startRecordingProxy(routes: Record<string, number>): Promise<RecordingProxy> {
  const sockets = new Set<Socket>();
  const tunnels: Tunnel[] = [];
  const track = (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      client.off("data", onData);
      const m = /^CONNECT (\S+) HTTP\/1\.[01]\r\n/.exec(head.toString("latin1", 0, end + 2));
      const tunnel: Tunnel = { target: m?.[1] ?? "", sent: "" };
      tunnels.push(tunnel);
      const port = m ? routes[m[1]] : undefined;
      if (port === undefined) {
        client.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
        return;
      }
      const upstream = connect(port, "127.0.0.1");
      track(upstream);
      upstream.once("close", () => client.destroy());
      client.once("close", () => upstream.destroy());
      const forward = (d: Buffer) => {
        if (tunnel.sent.length < 65_536) tunnel.sent += d.toString("latin1");
        upstream.write(d);
      };
      upstream.once("connect", () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length > end + 4) forward(head.subarray(end + 4));
        client.on("data", forward);
        client.on("end", () => upstream.end());
        upstream.pipe(client);
      });
    };
    client.on("data", onData);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tunnels,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("engine CLI connections", function () {
  this.timeout(120_000);

  let daemon: TestDaemon;
  let unixHost: string;
  let port: number;

  before(async function () {
    const sockDir = makeTempDir("engine-cli-conn-sock-");
    unixHost = `unix://${join(sockDir, "engine.sock")}`;
    daemon = await startEngined({ hosts: [unixHost, "tcp://127.0.0.1:0"] });
    port = tcpPort(daemon);
  });

  after(async function () {
    await daemon?.stop();
  });

  describe("engine over ssh://", function () {
    let dir: string;
    let sshd: Sshd;
    let clientKey: string;
    let lockedKey: string;
    let knownHosts: string;
    let madePrivsepDir = false;
    let sshHost: string;
    let remoteSocket: string;

    before(async function () {
      if (!HAVE_SSHD) this.skip();
      dir = makeTempDir("engine-cli-ssh-");
      clientKey = join(dir, "client_key");
      lockedKey = join(dir, "locked_key");
      const authorized = keygen(clientKey) + keygen(lockedKey, "open sesame");
      // sshd running as root wants its privilege separation folder
      if (!existsSync("/run/sshd")) {
        mkdirSync("/run/sshd", { mode: 0o755 });
        madePrivsepDir = true;
      }
      sshd = await startSshd(dir, authorized);
      knownHosts = `[127.0.0.1]:${sshd.port} ${sshd.hostKey}\n`;
      remoteSocket = unixHost.slice("unix://".length);
      sshHost = `ssh://root@127.0.0.1:${sshd.port}${remoteSocket}`;
    });

    after(async function () {
      await sshd?.stop();
      if (madePrivsepDir && readdirSync("/run/sshd").length === 0) rmdirSync("/run/sshd");
    });

    const accepted = () => (sshd.log().match(/Accepted publickey for root/g) ?? []).length;

    it("runs version and ps with a key file and a plain known_hosts entry, on one SSH connection", async function () {
      const home = clientHome(join(dir, "home-plain"), knownHosts, clientKey);
      const env = { HOME: home, SSH_AUTH_SOCK: undefined };
      const version = await engine(sshHost, ["version"], { env });
      expect(version.code, version.stderr).to.equal(0);
      expect(version.stdout).to.match(/^Server: /m);
      // the server's part: only the daemon knows its oldest API version
      expect(version.stdout).to.match(/minimum version 1\.24|MinAPIVersion: +1\.24/);

      const before = accepted();
      const ps = await engine(sshHost, ["ps"], { env });
      expect(ps.code, ps.stderr).to.equal(0);
      expect(ps.stdout).to.match(/^CONTAINER ID +IMAGE +COMMAND +CREATED +STATUS +PORTS +NAMES$/m);
      // ps asks /_ping and then /containers/json: two channels, one login
      expect(accepted() - before).to.equal(1);
      expect(sshd.log()).to.not.include("request was denied");
    });

    it("uses a passphrase-protected key through the SSH agent, with a hashed known_hosts entry", async function () {
      const agent = await startAgent(dir, lockedKey, "open sesame");
      try {
        const home = clientHome(join(dir, "home-agent"), knownHosts);
        // the encrypted key as the default key file too: the client skips it, only the agent can use it
        copyFileSync(lockedKey, join(home, ".ssh/id_ed25519"));
        chmodSync(join(home, ".ssh/id_ed25519"), 0o600);
        execFileSync("ssh-keygen", ["-q", "-H", "-f", join(home, ".ssh/known_hosts")], { stdio: "ignore" });
        const hashed = readFileSync(join(home, ".ssh/known_hosts"), "utf8");
        expect(hashed).to.match(/^\|1\|/).and.not.include("127.0.0.1");

        const r = await engine(sshHost, ["version"], { env: { HOME: home, SSH_AUTH_SOCK: agent.socket } });
        expect(r.code, r.stderr).to.equal(0);
        expect(r.stdout).to.match(/^Server: /m);
        const lockedFingerprint = execFileSync("ssh-keygen", ["-l", "-f", `${lockedKey}.pub`], { encoding: "utf8" }).split(" ")[1];
        expect(sshd.log()).to.include(`Accepted publickey for root from 127.0.0.1`).and.include(lockedFingerprint);

        // without the agent that key cannot be used
        const without = await engine(sshHost, ["version"], { env: { HOME: home, SSH_AUTH_SOCK: undefined } });
        expect(without.code).to.equal(1);
        expect(without.stderr).to.include("no key to log in").and.include("SSH_AUTH_SOCK");
      } finally {
        await agent.stop();
      }
    });

    it("refuses an unknown host key and says how to add it", async function () {
      const home = clientHome(join(dir, "home-unknown"), "", clientKey);
      const before = accepted();
      const r = await engine(sshHost, ["version"], { env: { HOME: home, SSH_AUTH_SOCK: undefined } });
      expect(r.code).to.equal(1);
      const fingerprint = execFileSync("ssh-keygen", ["-l", "-f", join(dir, "ssh_host_ed25519_key.pub")], { encoding: "utf8" }).split(" ")[1];
      expect(r.stderr).to.include(`the host key of [127.0.0.1]:${sshd.port} is not known (ssh-ed25519 key ${fingerprint})`);
      expect(r.stderr).to.include(`ssh-keyscan -p ${sshd.port} 127.0.0.1 >> ${join(home, ".ssh/known_hosts")}`);
      expect(r.stdout).to.not.match(/^Server: /m);
      expect(accepted()).to.equal(before);

      // what the message says to do works
      const scan = spawnSync("ssh-keyscan", ["-t", "ed25519", "-p", String(sshd.port), "127.0.0.1"], { encoding: "utf8", timeout: 10_000 });
      writeFileSync(join(home, ".ssh/known_hosts"), scan.stdout);
      const again = await engine(sshHost, ["version"], { env: { HOME: home, SSH_AUTH_SOCK: undefined } });
      expect(again.code, again.stderr).to.equal(0);
    });

    it("refuses a host whose key changed", async function () {
      const other = keygen(join(dir, "other_host_key")).split(" ").slice(0, 2).join(" ");
      const home = clientHome(join(dir, "home-changed"), `[127.0.0.1]:${sshd.port} ${other}\n`, clientKey);
      const r = await engine(sshHost, ["version"], { env: { HOME: home, SSH_AUTH_SOCK: undefined } });
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include(`the host key of [127.0.0.1]:${sshd.port} has changed`);
      expect(r.stderr).to.include(`${join(home, ".ssh/known_hosts")}:1 has another`);
    });

    it("fails with a key the server does not accept", async function () {
      const stranger = join(dir, "stranger_key");
      keygen(stranger);
      const home = clientHome(join(dir, "home-stranger"), knownHosts, stranger);
      const r = await engine(sshHost, ["version"], { env: { HOME: home, SSH_AUTH_SOCK: undefined } });
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include(`error during connect: ssh: permission denied (publickey) for ssh://root@127.0.0.1:${sshd.port}`);
      expect(r.stderr).to.include(join(home, ".ssh/id_ed25519"));
    });

    it("says the daemon is not running when the remote socket is missing", async function () {
      const home = clientHome(join(dir, "home-nosocket"), knownHosts, clientKey);
      const missing = join(dir, "no-such.sock");
      const r = await engine(`ssh://root@127.0.0.1:${sshd.port}${missing}`, ["version"], { env: { HOME: home, SSH_AUTH_SOCK: undefined } });
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include(`Cannot connect to the engine daemon at ssh://root@127.0.0.1:${sshd.port}${missing}. Is the engine daemon running?`);
    });

    it("says so when nothing listens on the SSH port", async function () {
      const home = clientHome(join(dir, "home-noport"), knownHosts, clientKey);
      const closed = await freePort();
      const r = await engine(`ssh://root@127.0.0.1:${closed}`, ["version"], { env: { HOME: home, SSH_AUTH_SOCK: undefined } });
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include(`error during connect: ssh: connect to host 127.0.0.1 port ${closed}: Connection refused`);
    });
  });

  describe("engine over tcp:// with TLS", function () {
    let certs: CertSet;
    let tlsDaemon: TestDaemon;
    let tlsHost: string;

    before(async function () {
      certs = makeCerts(join(makeTempDir("engine-cli-certs-"), "certs"));
      tlsDaemon = await startEngined({
        hosts: ["tcp://127.0.0.1:0"],
        args: ["--tlsverify", "--tlscacert", certs.ca, "--tlscert", certs.serverCert, "--tlskey", certs.serverKey],
      });
      tlsHost = `tcp://127.0.0.1:${tcpPort(tlsDaemon)}`;
    });

    after(async function () {
      await tlsDaemon?.stop();
    });

    const client = (name: string) => join(certs.clientDir, name);

    it("--tlsverify with --tlscacert, --tlscert and --tlskey", async function () {
      const r = await engine(tlsHost, ["--tlsverify", "--tlscacert", client("ca.pem"), "--tlscert", client("cert.pem"), "--tlskey", client("key.pem"), "version"], { env: NO_PROXY_ENV });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/^Server: /m);
    });

    it("ENGINE_TLS_VERIFY=1 with ENGINE_CERT_PATH", async function () {
      const r = await engine(tlsHost, ["ps"], { env: { ...NO_PROXY_ENV, ENGINE_TLS_VERIFY: "1", ENGINE_CERT_PATH: certs.clientDir } });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/^CONTAINER ID /);
    });

    it("a daemon certificate from another CA fails, exit 1", async function () {
      const r = await engine(tlsHost, ["--tlsverify", "--tlscacert", join(certs.dir, "rogue-ca.pem"), "version"], { env: { ...NO_PROXY_ENV, ENGINE_CERT_PATH: certs.clientDir } });
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(new RegExp(`^error during connect: ${tlsHost}: tls: failed to verify certificate: .+$`, "m"));
      expect(r.stderr).to.not.include("    at ");
      expect(r.stdout).to.not.match(/^Server: /m);
    });

    it("a client certificate the daemon's CA did not sign is refused, exit 1", async function () {
      const r = await engine(tlsHost, ["version"], { env: { ...NO_PROXY_ENV, ENGINE_TLS_VERIFY: "1", ENGINE_CERT_PATH: certs.rogueDir, ENGINE_API_VERSION: "1.51" } });
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(new RegExp(`^error during connect: ${tlsHost}: tls: `, "m"));
      expect(r.stderr).to.not.include("    at ");
    });

    describe("through HTTPS_PROXY", function () {
      let httpProxy: RecordingProxy;
      let httpsProxy: RecordingProxy;
      let tlsPort: number;

      before(async function () {
        tlsPort = tcpPort(tlsDaemon);
        const routes = { [`${PROXIED_NAME}:${tlsPort}`]: tlsPort, [`${PROXIED_NAME}:${port}`]: port };
        [httpProxy, httpsProxy] = await Promise.all([startRecordingProxy(routes), startRecordingProxy(routes)]);
      });

      after(async function () {
        await Promise.all([httpProxy?.stop(), httpsProxy?.stop()]);
      });

      it("HTTPS_PROXY, not HTTP_PROXY, carries TLS; HTTP_PROXY carries plain TCP", async function () {
        // the certificate names 127.0.0.1 and localhost, not the proxied name: --tls without verification
        const tls = await engine(`tcp://${PROXIED_NAME}:${tlsPort}`, ["--tls", "--tlscert", client("cert.pem"), "--tlskey", client("key.pem"), "version"], {
          env: { ...NO_PROXY_ENV, HTTP_PROXY: httpProxy.url, HTTPS_PROXY: httpsProxy.url },
        });
        expect(tls.code, tls.stderr).to.equal(0);
        expect(httpsProxy.tunnels.map((t) => t.target)).to.include(`${PROXIED_NAME}:${tlsPort}`);
        expect(httpProxy.tunnels).to.have.length(0);

        const plain = await engine(`tcp://${PROXIED_NAME}:${port}`, ["version"], { env: { ...NO_PROXY_ENV, HTTP_PROXY: httpProxy.url, HTTPS_PROXY: httpsProxy.url } });
        expect(plain.code, plain.stderr).to.equal(0);
        expect(httpProxy.tunnels.map((t) => t.target)).to.deep.equal([`${PROXIED_NAME}:${port}`, `${PROXIED_NAME}:${port}`]);
        expect(httpsProxy.tunnels.map((t) => t.target)).to.not.include(`${PROXIED_NAME}:${port}`);
      });
    });
  });

  describe("engine through an HTTP proxy", function () {
    let proxy: RecordingProxy;

    beforeEach(async function () {
      proxy = await startRecordingProxy({ [`${PROXIED_NAME}:${port}`]: port, [`0.0.0.0:${port}`]: port });
    });

    afterEach(async function () {
      await proxy?.stop();
    });

    it("HTTP_PROXY: CONNECT to the daemon, API version from /_ping", async function () {
      const r = await engine(`tcp://${PROXIED_NAME}:${port}`, ["version"], { env: { ...NO_PROXY_ENV, HTTP_PROXY: proxy.url } });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/^Server: /m);
      expect(proxy.tunnels.map((t) => t.target)).to.deep.equal([`${PROXIED_NAME}:${port}`, `${PROXIED_NAME}:${port}`]);
      expect(proxy.tunnels[0].sent).to.match(/^GET \/_ping HTTP\/1\.1\r\n/);
      expect(proxy.tunnels[1].sent).to.match(/^GET \/v1\.51\/version HTTP\/1\.1\r\n/);
    });

    it("ENGINE_API_VERSION pins the version: no /_ping, requests on /v1.41/", async function () {
      const r = await engine(`tcp://${PROXIED_NAME}:${port}`, ["ps"], { env: { ...NO_PROXY_ENV, HTTP_PROXY: proxy.url, ENGINE_API_VERSION: "1.41" } });
      expect(r.code, r.stderr).to.equal(0);
      const lines = proxy.tunnels.map((t) => t.sent.split("\r\n")[0]);
      expect(lines).to.have.length.greaterThan(0);
      for (const line of lines) expect(line).to.match(/^GET \/v1\.41\//);
    });

    it("lower-case http_proxy, and no_proxy that excludes the host", async function () {
      const through = await engine(`tcp://0.0.0.0:${port}`, ["version"], { env: { ...NO_PROXY_ENV, http_proxy: proxy.url } });
      expect(through.code, through.stderr).to.equal(0);
      expect(proxy.tunnels.map((t) => t.target)).to.include(`0.0.0.0:${port}`);

      proxy.tunnels.length = 0;
      for (const noProxy of [{ no_proxy: "0.0.0.0" }, { NO_PROXY: `example.com, 0.0.0.0:${port}` }, { NO_PROXY: "0.0.0.0/8" }, { NO_PROXY: "*" }]) {
        const direct = await engine(`tcp://0.0.0.0:${port}`, ["version"], { env: { ...NO_PROXY_ENV, http_proxy: proxy.url, ...noProxy } });
        expect(direct.code, `${JSON.stringify(noProxy)}: ${direct.stderr}`).to.equal(0);
      }
      expect(proxy.tunnels).to.have.length(0);
    });

    it("never proxies loopback, as the Docker CLI", async function () {
      const env = { ...NO_PROXY_ENV, HTTP_PROXY: proxy.url };
      const r = await engine(`tcp://127.0.0.1:${port}`, ["version"], { env });
      expect(r.code, r.stderr).to.equal(0);
      const d = await docker(`tcp://127.0.0.1:${port}`, ["version", "--format", "{{.Server.APIVersion}}"], env);
      expect(d.code, d.stderr).to.equal(0);
      expect(proxy.tunnels).to.have.length(0);
    });

    it("a proxy that refuses the tunnel: a clear error, exit 1", async function () {
      const r = await engine(`tcp://${PROXIED_NAME}:1`, ["version"], { env: { ...NO_PROXY_ENV, HTTP_PROXY: proxy.url } });
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include(`error during connect: proxy ${proxy.url} (HTTP_PROXY): it refused the tunnel to ${PROXIED_NAME}:1: HTTP/1.1 502 Bad Gateway`);
    });
  });

  describe("engine hosts", function () {
    /** bin/engine without the helper's -H. */
    const run = (args: string[], env: NodeJS.ProcessEnv) =>
      runCommand(ENGINE, args, { env: { ENGINE_HOST: undefined, ENGINE_TLS_VERIFY: undefined, ENGINE_CERT_PATH: undefined, ENGINE_API_VERSION: undefined, ENGINE_CONFIG: makeTempDir("engine-cli-conf-"), ...env }, timeoutMs: 30_000 });

    it("ENGINE_HOST when there is no -H; -H wins over it", async function () {
      const fromEnv = await run(["version"], { ENGINE_HOST: unixHost });
      expect(fromEnv.code, fromEnv.stderr).to.equal(0);
      expect(fromEnv.stdout).to.match(/^Server: /m);

      const missing = `unix://${join(daemon.dir, "missing.sock")}`;
      const flagWins = await run(["-H", unixHost, "version"], { ENGINE_HOST: missing });
      expect(flagWins.code, flagWins.stderr).to.equal(0);

      const envOnly = await run(["version"], { ENGINE_HOST: missing });
      expect(envOnly.code).to.equal(1);
      expect(envOnly.stderr).to.include(missing);
    });

    it("an unreachable unix socket or TCP port: the Docker CLI's message, exit 1", async function () {
      const closed = await freePort();
      for (const host of [`unix://${join(daemon.dir, "missing.sock")}`, `tcp://127.0.0.1:${closed}`]) {
        const mine = await engine(host, ["ps"], { env: NO_PROXY_ENV });
        const theirs = await docker(host, ["ps"], NO_PROXY_ENV);
        expect(mine.code).to.equal(1);
        expect(theirs.code).to.equal(1);
        expect(mine.stderr).to.equal(`Cannot connect to the engine daemon at ${host}. Is the engine daemon running?\n`);
        expect(mine.stderr).to.equal(theirs.stderr.replace("Docker daemon", "engine daemon").replace("docker daemon", "engine daemon"));
      }
    });

    it("refuses fd:// and unknown schemes with a clear message, exit 1", async function () {
      const fd = await engine("fd://", ["ps"]);
      expect(fd.code).to.equal(1);
      expect(fd.stderr).to.equal("fd:// is for the daemon only; the client connects with unix://, tcp:// or ssh://\n");
      const odd = await engine("udp://127.0.0.1:1", ["ps"]);
      expect(odd.code).to.equal(1);
      expect(odd.stderr).to.include(`unsupported scheme "udp://"`);
    });
  });
});
