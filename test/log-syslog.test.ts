/**
 * The syslog log driver against real servers on loopback (udp, tcp, tcp+tls) and unix sockets
 * (stream and datagram) that the test runs, with a real engined and the Docker CLI: the bytes
 * received are Docker's (formats, facility, tag, framing; checked against dockerd 20.10), a
 * server that cannot be reached fails the start with Docker's words, bad options are refused
 * at create with Docker's messages, and `docker logs` reads the local cache (dual logging).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { hostname } from "node:os";
import { join } from "node:path";
import { createServer as createTlsServer } from "node:tls";
import { DgramSocket } from "node-unix-socket";
import { makeCerts, type CertSet } from "./helpers/certs.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

/** What one server received, in order (datagrams one by one, a stream's bytes joined). */
interface Received {
  chunks: Buffer[];
  text(): string;
}

function received(): Received {
  const chunks: Buffer[] = [];
  return { chunks, text: () => Buffer.concat(chunks).toString("latin1") };
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const HOST = hostname();
const STAMP = "[A-Z][a-z]{2} [ \\d]\\d \\d\\d:\\d\\d:\\d\\d";
const RFC3339 = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(Z|[+-]\\d\\d:\\d\\d)";
const RFC3339_MICRO = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}(Z|[+-]\\d\\d:\\d\\d)";
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("log driver syslog (real servers, engined, Docker CLI)", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let host: string;
  let work: string;
  let certs: CertSet;
  let udp: UdpSocket;
  let tcp: Server;
  let tls: Server;
  let unix: Server;
  let gram: DgramSocket;
  const got = { udp: received(), tcp: received(), tls: received(), unix: received(), gram: received() };
  const ports = { udp: 0, tcp: 0, tls: 0 };
  const paths = { unix: "", gram: "" };

  const dk = (...args: string[]) => docker(host, args);
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}:\n${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const supervisorPid = () => {
    const file = join(d.dir, "exec/supervisor/supervisor.pid");
    return existsSync(file) ? readFileSync(file, "utf8").trim() : "\\d+";
  };

  before(async function () {
    work = makeTempDir("engine-log-syslog-");
    certs = makeCerts(join(work, "certs"));
    udp = createSocket("udp4");
    udp.on("message", (m) => got.udp.chunks.push(m));
    await new Promise<void>((r) => udp.bind(0, "127.0.0.1", r));
    ports.udp = udp.address().port;
    const listen = (server: Server, at: number | string) =>
      new Promise<void>((r) => (typeof at === "number" ? server.listen(at, "127.0.0.1", r) : server.listen(at, r)));
    tcp = createServer((s) => s.on("data", (b) => got.tcp.chunks.push(b)));
    await listen(tcp, 0);
    ports.tcp = (tcp.address() as { port: number }).port;
    tls = createTlsServer({ key: readFileSync(certs.serverKey), cert: readFileSync(certs.serverCert) }, (s) => s.on("data", (b) => got.tls.chunks.push(b)));
    await listen(tls, 0);
    ports.tls = (tls.address() as { port: number }).port;
    paths.unix = join(work, "syslog-stream.sock");
    unix = createServer((s) => s.on("data", (b) => got.unix.chunks.push(b)));
    await listen(unix, paths.unix);
    paths.gram = join(work, "syslog-dgram.sock");
    gram = new DgramSocket();
    gram.bind(paths.gram);
    gram.on("data", (b: Buffer) => got.gram.chunks.push(b));

    d = await startEngined();
    host = `unix://${d.socket}`;
    ok(await dk("import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"), "docker import");
  });

  afterEach(async function () {
    const ids = (await dk("ps", "-aq")).stdout.split("\n").filter(Boolean);
    if (ids.length) await dk("rm", "-f", ...ids);
  });

  after(async function () {
    await d?.stop();
    udp?.close();
    tcp?.close();
    tls?.close();
    unix?.close();
    gram?.close();
  });

  it("udp, rfc5424, tag: one datagram per line, <facility|severity>1 TIME HOST TAG PID TAG - LINE; empty lines not sent", async function () {
    const out = ok(await dk("run", "--name", "s-udp", "--log-driver", "syslog", "--log-opt", `syslog-address=udp://127.0.0.1:${ports.udp}`,
      "--log-opt", "syslog-format=rfc5424", "--log-opt", "tag={{.Name}}/web", "busybox", "sh", "-c", "echo out1; echo err1 >&2; echo; printf nonl"), "run");
    expect(out).to.equal("out1\n\nnonl");
    await until("3 datagrams", () => got.udp.chunks.length >= 3);
    const pid = supervisorPid();
    const lines = got.udp.chunks.map((c) => c.toString("latin1"));
    const re = (pri: number, text: string) => new RegExp(`^<${pri}>1 ${RFC3339} ${esc(HOST)} s-udp/web ${pid} s-udp/web - ${text}\\n$`);
    expect(lines).to.have.length(3);
    expect(lines.find((l) => l.includes("out1"))).to.match(re(30, "out1"));
    expect(lines.find((l) => l.includes("err1"))).to.match(re(27, "err1"));
    expect(lines.find((l) => l.includes("nonl"))).to.match(re(30, "nonl"));
  });

  it("tcp, rfc5424micro, default tag (the short id): newline-terminated, no octet counting", async function () {
    const id = ok(await dk("run", "-d", "--log-driver", "syslog", "--log-opt", `syslog-address=tcp://127.0.0.1:${ports.tcp}`,
      "--log-opt", "syslog-format=rfc5424micro", "busybox", "sh", "-c", "echo one; echo two"), "run").trim();
    ok(await dk("wait", id), "wait");
    await until("two lines", () => got.tcp.text().split("\n").length >= 3);
    const short = id.slice(0, 12);
    const line = (text: string) => `<30>1 ${RFC3339_MICRO} ${esc(HOST)} ${short} ${supervisorPid()} ${short} - ${text}\\n`;
    expect(got.tcp.text()).to.match(new RegExp(`^${line("one")}${line("two")}$`));
  });

  it("tcp+tls with the CA, rfc5424, facility local3: RFC 5425 octet counting (the length counts the newline)", async function () {
    const id = ok(await dk("run", "-d", "--log-driver", "syslog", "--log-opt", `syslog-address=tcp+tls://127.0.0.1:${ports.tls}`,
      "--log-opt", `syslog-tls-ca-cert=${certs.ca}`, "--log-opt", "syslog-format=rfc5424", "--log-opt", "syslog-facility=local3",
      "--log-opt", "tag=tls", "busybox", "echo", "secret"), "run").trim();
    ok(await dk("wait", id), "wait");
    await until("a framed message", () => got.tls.text().endsWith("secret\n"));
    const text = got.tls.text();
    const m = /^(\d+) (.*)$/s.exec(text)!;
    expect(m, text).to.not.equal(null);
    expect(Number(m[1])).to.equal(Buffer.byteLength(m[2]));
    expect(m[2]).to.match(new RegExp(`^<158>1 ${RFC3339} ${esc(HOST)} tls ${supervisorPid()} tls - secret\\n$`));
  });

  it("unixgram, rfc3164: <pri>Mmm dd hh:mm:ss HOST TAG[PID]: LINE", async function () {
    const id = ok(await dk("run", "-d", "--log-driver", "syslog", "--log-opt", `syslog-address=unixgram://${paths.gram}`,
      "--log-opt", "syslog-format=rfc3164", "--log-opt", "tag=gram", "busybox", "sh", "-c", "echo hello >&2"), "run").trim();
    ok(await dk("wait", id), "wait");
    await until("a datagram", () => got.gram.chunks.length >= 1);
    expect(got.gram.chunks.map((c) => c.toString())).to.have.length(1);
    expect(got.gram.text()).to.match(new RegExp(`^<27>${STAMP} ${esc(HOST)} gram\\[${supervisorPid()}\\]: hello\\n$`));
  });

  it("unix stream, no format: the local format (no hostname), facility by number", async function () {
    const id = ok(await dk("run", "-d", "--log-driver", "syslog", "--log-opt", `syslog-address=unix://${paths.unix}`,
      "--log-opt", "syslog-facility=1", "--log-opt", "tag=plain", "busybox", "echo", "local"), "run").trim();
    ok(await dk("wait", id), "wait");
    await until("a message", () => got.unix.text().endsWith("\n"));
    expect(got.unix.text()).to.match(new RegExp(`^<14>${STAMP} plain\\[${supervisorPid()}\\]: local\\n$`));
  });

  it("docker logs reads the local cache (dual logging): streams, partial last line, empty lines, tail; the cache is private to root", async function () {
    const id = ok(await dk("run", "-d", "--name", "cached", "--log-driver", "syslog", "--log-opt", `syslog-address=udp://127.0.0.1:${ports.udp}`,
      "busybox", "sh", "-c", "echo a; echo b >&2; echo; echo c; printf d"), "run").trim();
    ok(await dk("wait", id), "wait");
    const logs = await dk("logs", "cached");
    expect(logs).to.include({ code: 0, stdout: "a\n\nc\nd", stderr: "b\n" });
    // The tail counts stored lines of both streams; the two streams' order is the container's race.
    const last = await dk("logs", "--tail", "1", "cached");
    expect(last.stdout + last.stderr).to.be.oneOf(["d", "b\n"]);
    const cacheDir = join(d.dir, "data/containers", id, "container-cached");
    for (const f of readdirSync(cacheDir)) {
      expect(readFileSync(join(cacheDir, f), "utf8")).to.include('"log":"a\\n"');
      expect(statSync(join(cacheDir, f)).mode & 0o007, "not world-readable").to.equal(0);
    }
    expect(existsSync(join(d.dir, "data/containers", id, `${id}-json.log`)), "no json-file log beside it").to.equal(false);
  });

  it("cache-disabled=true: nothing cached, docker logs answers that the driver cannot read, an attached run shows its output", async function () {
    // attached: the output comes from the supervisor's spool, as Docker's attach reads the pipes
    const attached = ok(await dk("run", "--name", "nocache", "--log-driver", "syslog", "--log-opt", `syslog-address=udp://127.0.0.1:${ports.udp}`,
      "--log-opt", "cache-disabled=true", "busybox", "echo", "x"), "run");
    expect(attached).to.equal("x\n");
    const id = ok(await dk("inspect", "-f", "{{.Id}}", "nocache"), "inspect").trim();
    expect(existsSync(join(d.dir, "data/containers", id, "container-cached")), "no cache").to.equal(false);
    const logs = await dk("logs", "nocache");
    expect(logs.code).to.equal(1);
    expect(logs.stderr).to.include("configured logging driver does not support reading");
  });

  it("a server that cannot be reached fails the start with Docker's words", async function () {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    const refused = await dk("run", "--rm", "--log-driver", "syslog", "--log-opt", `syslog-address=tcp://127.0.0.1:${port}`, "busybox", "true");
    expect(refused.code).to.equal(125);
    expect(refused.stderr).to.include(`Error response from daemon: failed to initialize logging driver: dial tcp 127.0.0.1:${port}: connect: connection refused`);
    const untrusted = await dk("run", "--rm", "--log-driver", "syslog", "--log-opt", `syslog-address=tcp+tls://127.0.0.1:${ports.tls}`, "busybox", "true");
    expect(untrusted.stderr).to.include("failed to initialize logging driver: x509: certificate signed by unknown authority");
    const badCa = await dk("run", "--rm", "--log-driver", "syslog", "--log-opt", `syslog-address=tcp+tls://127.0.0.1:${ports.tls}`, "--log-opt", "syslog-tls-ca-cert=/nope.pem", "busybox", "true");
    expect(badCa.stderr).to.include('failed to initialize logging driver: could not read CA certificate "/nope.pem": open /nope.pem: no such file or directory');
    const badTag = await dk("run", "--rm", "--log-driver", "syslog", "--log-opt", `syslog-address=udp://127.0.0.1:${ports.udp}`, "--log-opt", "tag={{.Nope}}", "busybox", "true");
    expect(badTag.stderr).to.include('failed to initialize logging driver: template: log-tag:1:2: executing "log-tag" at <.Nope>: can\'t evaluate field Nope in type *logger.Info');
    if (!["/dev/log", "/var/run/syslog", "/var/run/log"].some((p) => existsSync(p))) {
      const local = await dk("run", "--rm", "--log-driver", "syslog", "busybox", "true");
      expect(local.stderr).to.include("failed to initialize logging driver: Unix syslog delivery error");
    }
  });

  it("bad options are refused at create with Docker's messages", async function () {
    const cases: [string, string][] = [
      ["bogus=1", "unknown log opt 'bogus' for syslog log driver"],
      ["syslog-tag=x", "unknown log opt 'syslog-tag' for syslog log driver"],
      ["max-size=1m", "unknown log opt 'max-size' for syslog log driver"],
      ["syslog-address=foo", "syslog-address should be in form proto://address, got foo"],
      ["syslog-address=http://x", "syslog-address should be in form proto://address, got http://x"],
      ["syslog-address=unix:///nope.sock", "stat /nope.sock: no such file or directory"],
      ["syslog-address=tcp://[::1", 'parse "tcp://[::1": missing \']\' in host'],
      ["syslog-address=tcp://a:b:c", 'parse "tcp://a:b:c": invalid port ":c" after host'],
      ["syslog-facility=nope", "invalid syslog facility"],
      ["syslog-facility=24", "invalid syslog facility"],
      ["syslog-format=rfc", "Invalid syslog format"],
      ["cache-disabled=maybe", "invalid value for option cache-disabled: maybe"],
    ];
    for (const [opt, message] of cases) {
      const r = await dk("create", "--log-driver", "syslog", "--log-opt", opt, "busybox", "true");
      expect(r.code, opt).to.equal(1);
      expect(r.stderr.trim(), opt).to.equal(`Error response from daemon: ${message}`);
    }
    // Docker takes the cache's sizes without a check; so does engined.
    for (const opt of ["cache-max-size=abc", "cache-max-file=-1", "cache-compress=x"]) {
      ok(await dk("create", "--log-driver", "syslog", "--log-opt", `syslog-address=udp://127.0.0.1:${ports.udp}`, "--log-opt", opt, "busybox", "true"), opt);
    }
  });
});
