/**
 * The `local` log driver: Docker's on-disk records (checked against bytes Docker 20.10 wrote),
 * its option rules, its files and modes, the shared reading conformance, and, through a real
 * engined, `docker logs` with the Docker CLI and dockerode after rotation and compression, with
 * --tail across files, --since/--until, --timestamps and --follow while the container writes.
 */
import "./helpers/root-hooks.js";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { expect } from "chai";
import Docker from "dockerode";
import type { LoggerContext, LogMessage } from "../core/contracts/log.js";
import plugin from "../plugins/log-local/index.js";
import { createLocalLogDriver, createLocalLogger, createLocalReader, decodeEntry, parseLocalOptions, splitRecords } from "../plugins/log-local/local.js";
import { formatRFC3339Nano, parseRFC3339Nano } from "../core/rfc3339-nano.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const ID = "0123456789abcdef".repeat(4);

/** What dockerd 20.10 wrote for `sh -c 'echo hello; echo; printf partial'` with --log-driver local. */
const DOCKER_FILE = Buffer.from(
  "000000190a067374646f757410e9e0fca3e3b8e9f5181a0568656c6c6f00000019000000120a067374646f75741082a8a1a4e3b8e9f51800000012" +
    "000000630a067374646f757410b1bac6c7e3b8e9f5181a077061727469616c20012a441240363431623439656631393738316135356535653566" +
    "39626132336338303339336633636338396130393031313061343638613462356630643861393366356530180100000063",
  "hex",
);

function context(options: Record<string, string> = {}): LoggerContext {
  return {
    containerId: ID,
    containerName: "/web",
    imageName: "busybox",
    imageId: "sha256:" + "fedcba9876543210".repeat(4),
    labels: {},
    env: [],
    logDir: join(makeTempDir("engine-local-"), "containers", ID),
    options,
  };
}

async function collect(it: AsyncIterable<LogMessage>): Promise<LogMessage[]> {
  const out: LogMessage[] = [];
  for await (const m of it) out.push(m);
  return out;
}

describe("log driver: local", function () {
  describe("format", () => {
    it("reads the records Docker 20.10 wrote: framed protobuf LogEntry, an empty line, a partial piece", async () => {
      const { entries, used, damaged } = splitRecords(DOCKER_FILE);
      expect([used, damaged]).to.deep.equal([DOCKER_FILE.length, false]);
      expect(entries.map((e) => [e.source, e.line.toString(), e.partial])).to.deep.equal([
        ["stdout", "hello", false],
        ["stdout", "", false],
        ["stdout", "partial", true],
      ]);
      expect(entries[0].timeNano).to.equal(1795711147140132969n);
      expect(entries[2].partialMeta).to.deep.include({ last: false, ordinal: 1 });
      expect(entries[2].partialMeta!.id).to.match(/^[0-9a-f]{64}$/);
    });

    it("writes the same bytes as Docker for the same messages (partial id and times aside)", async () => {
      const docker = splitRecords(DOCKER_FILE).entries;
      const ctx = context();
      const w = await createLocalLogger(ctx);
      for (const e of docker) await w.write({ line: e.line, stream: "stdout", time: new Date(0), timeNs: e.timeNano, partial: e.partial });
      await w.close();
      const ours = readdirSync(join(ctx.logDir, "local-logs"));
      expect(ours).to.deep.equal(["container.log"]);
      const { readFileSync } = await import("node:fs");
      const mine = readFileSync(join(ctx.logDir, "local-logs", "container.log"));
      expect(mine.length).to.equal(DOCKER_FILE.length);
      const id = splitRecords(mine).entries[2].partialMeta!.id;
      const dockerId = docker[2].partialMeta!.id;
      expect(mine.toString("hex")).to.equal(DOCKER_FILE.toString("hex").replace(Buffer.from(dockerId).toString("hex"), Buffer.from(id).toString("hex")));
      // Read back as the contract's messages.
      const got = await collect(createLocalReader(ctx).read({ follow: false, stdout: true, stderr: true }));
      expect(got.map((m) => [m.line.toString(), m.partial])).to.deep.equal([["hello", false], ["", false], ["partial", true]]);
    });

    it("marks the piece that ends a split line as Docker does (partial, last) and reads it as a whole line's end", async () => {
      const ctx = context();
      const w = await createLocalLogger(ctx);
      await w.write({ line: Buffer.from("a"), stream: "stdout", time: new Date(1), partial: true });
      await w.write({ line: Buffer.from("b"), stream: "stdout", time: new Date(2), partial: true });
      await w.write({ line: Buffer.from("c"), stream: "stdout", time: new Date(3) });
      await w.close();
      const { readFileSync } = await import("node:fs");
      const entries = splitRecords(readFileSync(join(ctx.logDir, "local-logs", "container.log"))).entries;
      expect(entries.map((e) => [e.partial, e.partialMeta?.ordinal, e.partialMeta?.last])).to.deep.equal([
        [true, 1, false],
        [true, 2, false],
        [true, 3, true],
      ]);
      expect(new Set(entries.map((e) => e.partialMeta!.id)).size).to.equal(1);
      const got = await collect(createLocalReader(ctx).read({ follow: false, stdout: true, stderr: true }));
      expect(got.map((m) => m.partial)).to.deep.equal([true, true, false]);
    });

    it("skips fields it does not know (newer Docker's attrs) and stops at damage", () => {
      const rec = splitRecords(DOCKER_FILE).entries[0];
      expect(rec.line.toString()).to.equal("hello");
      // field 6 (attrs), length-delimited, appended to the first record's message
      const body = Buffer.concat([DOCKER_FILE.subarray(4, 4 + 0x19), Buffer.from([0x32, 0x03, 0x0a, 0x01, 0x6b])]);
      expect(decodeEntry(body).line.toString()).to.equal("hello");
      const bad = Buffer.from(DOCKER_FILE);
      bad.writeUInt32BE(7, 4 + 0x19); // the trailing length disagrees
      expect(splitRecords(bad)).to.deep.include({ used: 0, damaged: true });
    });
  });

  describe("options", () => {
    it("has Docker's defaults: 20 MiB, 5 files, compressed", () => {
      expect(parseLocalOptions({})).to.deep.equal({ maxSize: 20 * 1024 * 1024, maxFile: 5, compress: true });
      expect(parseLocalOptions({ "max-size": "1k", "max-file": "1", compress: "false" })).to.deep.equal({ maxSize: 1000, maxFile: 1, compress: false });
    });

    // Docker 20.10's words, measured with dockerd.
    const atStart: [Record<string, string>, string][] = [
      [{ "max-file": "1" }, "compression cannot be enabled when max file count is 1"],
      [{ "max-file": "0" }, "compression cannot be enabled when max file count is 1"],
      [{ "max-file": "-1" }, "max file count cannot be less than 0"],
      [{ "max-file": "x" }, 'invalid value for max-file: x: strconv.Atoi: parsing "x": invalid syntax'],
      [{ "max-size": "x" }, "invalid value for max-size: x: invalid size: 'x'"],
      [{ "max-size": "-1" }, "invalid value for max-size: -1: invalid size: '-1'"],
      [{ compress: "x" }, 'error reading compress log option: strconv.ParseBool: parsing "x": invalid syntax'],
    ];
    for (const [options, message] of atStart) {
      it(`accepts ${JSON.stringify(options)} at create and refuses it when the logger is made`, async () => {
        expect(() => createLocalLogDriver().validateOptions(options)).not.to.throw();
        let err: unknown;
        await createLocalLogger(context(options)).catch((e: unknown) => (err = e));
        expect((err as Error).message).to.equal(message);
      });
    }

    for (const key of ["foo", "labels", "tag", "env"]) {
      it(`refuses the option ${key} at create, in Docker's words`, () => {
        expect(() => createLocalLogDriver().validateOptions({ [key]: "x" })).to.throw(`unknown log opt '${key}' for log driver local`);
      });
    }

    it("accepts the daemon-wide options Docker's daemon accepts for every driver", () => {
      expect(() => parseLocalOptions({ mode: "non-blocking", "max-buffer-size": "4m", "cache-disabled": "true", "cache-max-file": "2" })).not.to.throw();
      expect(() => createLocalLogDriver().validateOptions({ mode: "sometimes" })).to.throw("logger: logging mode not supported: sometimes");
    });
  });

  describe("files", () => {
    it("keeps <container>/local-logs/container.log 0640 in a 0700 folder, rotates to .N.gz and drops the oldest", async () => {
      const ctx = context({ "max-size": "1k", "max-file": "3" });
      const w = await createLocalLogger(ctx);
      // Times of today, so that each record has the size Docker's have (a 9-byte time varint).
      for (let i = 0; i < 100; i++) await w.write({ line: Buffer.from(`line-${i}-${"x".repeat(24)}`), stream: "stdout", time: new Date(Date.UTC(2026, 0, 2) + i) });
      await w.close();
      const folder = join(ctx.logDir, "local-logs");
      expect(statSync(folder).mode & 0o777).to.equal(0o700);
      expect(readdirSync(folder).sort()).to.deep.equal(["container.log", "container.log.1.gz", "container.log.2.gz"]);
      for (const f of readdirSync(folder)) expect(statSync(join(folder, f)).mode & 0o777, f).to.equal(0o640);
      const { gunzipSync } = await import("node:zlib");
      const { readFileSync } = await import("node:fs");
      // Rotated once it reached max-size (1k is 1000 bytes, as Docker's): 17 records of 60 bytes.
      expect(gunzipSync(readFileSync(join(folder, "container.log.1.gz"))).length).to.equal(1020);
      const got = await collect(createLocalReader(ctx).read({ follow: false, stdout: true, stderr: true }));
      expect(got.at(-1)!.line.toString()).to.equal(`line-99-${"x".repeat(24)}`);
      expect(got.length).to.equal(49); // 17 + 17 + 15, what Docker kept for the same output
    });

    it("is a plugin of kind log with the read capability", () => {
      expect(plugin.manifest).to.include({ id: "log.local", kind: "log" });
      expect(plugin.manifest.capabilities).to.deep.equal(["read"]);
      expect(createLocalLogDriver().name).to.equal("local");
    });
  });
});


describe("log driver: local, through engined (Docker CLI, dockerode)", function () {
  this.timeout(90_000);
  let d: TestDaemon;
  let host: string;
  let client: Docker;

  before(async function () {
    d = await startEngined();
    host = `unix://${d.socket}`;
    client = new Docker({ socketPath: d.socket });
    const r = await docker(host, ["import", "--change", 'CMD ["sh"]', writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs()), "busybox"]);
    expect(r.code, r.stderr).to.equal(0);
  });
  afterEach(async function () {
    const list = await client.listContainers({ all: true }).catch(() => []);
    await Promise.all(list.map((c) => client.getContainer(c.Id).remove({ force: true }).catch(() => {})));
  });
  after(async function () {
    await d?.stop();
  });

  const LOOP = (n: number, pause = "") => `i=0; while [ $i -lt ${n} ]; do echo line-$i-xxxxxxxxxxxxxxxxxxxxxxxx; ${pause} i=$((i+1)); done; echo bye >&2`;
  const lines = (n: number, from = 0) => Array.from({ length: n }, (_, k) => `line-${from + k}-xxxxxxxxxxxxxxxxxxxxxxxx`);

  it("docker logs reads across rotated, gzipped files: all, --tail, --timestamps", async () => {
    const run = await docker(host, ["run", "--name", "rot", "--log-driver", "local", "--log-opt", "max-size=1k", "--log-opt", "max-file=3", "busybox", "sh", "-c", LOOP(100)]);
    expect(run.code, run.stderr).to.equal(0);
    const id = (await docker(host, ["inspect", "-f", "{{.Id}}", "rot"])).stdout.trim();
    const folder = join(d.dir, "data", "containers", id, "local-logs");
    expect(readdirSync(folder).sort()).to.deep.equal(["container.log", "container.log.1.gz", "container.log.2.gz"]);
    const all = await docker(host, ["logs", "rot"]);
    expect(all.code, all.stderr).to.equal(0);
    const out = all.stdout.trimEnd().split("\n");
    const first = Number(/^line-(\d+)-/.exec(out[0])![1]);
    expect(first).to.be.above(0);
    expect(out).to.deep.equal(lines(100 - first, first));
    expect(all.stderr).to.equal("bye\n");
    const tail = await docker(host, ["logs", "--tail", "30", "rot"]);
    // 29 stdout lines and stderr's "bye": the tail spans the current file and the archive before it
    expect(tail.stdout.trimEnd().split("\n")).to.deep.equal(lines(29, 71));
    const stamped = (await docker(host, ["logs", "--timestamps", "--tail", "3", "rot"])).stdout.trimEnd().split("\n");
    for (const l of stamped) expect(l).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z line-\d+-x+$/);
  });

  it("docker logs --since and --until select by the stored times", async () => {
    // Paced, so that lines have times apart (conmon stamps the lines of one read alike).
    const run = await docker(host, ["run", "--name", "win", "--log-driver", "local", "busybox", "sh", "-c", LOOP(12, "sleep 0.05;")]);
    expect(run.code, run.stderr).to.equal(0);
    const times = (await docker(host, ["logs", "--timestamps", "win"])).stdout.trimEnd().split("\n").map((l) => l.split(" ")[0]);
    expect(times).to.have.length(12);
    const later = (t: string, ms: number) => formatRFC3339Nano(parseRFC3339Nano(t)! + BigInt(ms) * 1_000_000n);
    const window = await docker(host, ["logs", "--since", times[5], "--until", later(times[8], 5), "win"]);
    expect(window.stdout.trimEnd().split("\n")).to.deep.equal(lines(4, 5));
  });

  it("docker logs --follow goes on while the container writes and rotates, and ends with it", async () => {
    const run = await docker(host, ["run", "-d", "--name", "fol", "--log-driver", "local", "--log-opt", "max-size=1k", "busybox", "sh", "-c", LOOP(80, "sleep 0.02;")]);
    expect(run.code, run.stderr).to.equal(0);
    const follow = await docker(host, ["logs", "--follow", "fol"], {}, { timeoutMs: 60_000 });
    expect(follow.code, follow.stderr).to.equal(0);
    expect(follow.stdout.trimEnd().split("\n")).to.deep.equal(lines(80));
  });

  it("dockerode reads logs with tail and demuxed streams; the container's inspect shows the driver", async () => {
    const c = await client.createContainer({ Image: "busybox", Cmd: ["sh", "-c", "echo one; echo two >&2; echo three"], HostConfig: { LogConfig: { Type: "local", Config: {} } } });
    await c.start();
    await c.wait();
    const buf = (await c.logs({ stdout: true, stderr: true, follow: false, tail: 2 })) as unknown as Buffer;
    const out = new PassThrough();
    const err = new PassThrough();
    let so = "";
    let se = "";
    out.on("data", (x: Buffer) => (so += x.toString()));
    err.on("data", (x: Buffer) => (se += x.toString()));
    c.modem.demuxStream(new PassThrough().end(buf), out, err);
    await new Promise((r) => setTimeout(r, 100));
    expect([so, se]).to.deep.equal(["three\n", "two\n"]);
    expect((await c.inspect()).HostConfig.LogConfig).to.deep.equal({ Type: "local", Config: {} });
  });

  it("refuses an unknown option at create (400) and a bad value at start (500, the container stays created with 128)", async () => {
    const create = await docker(host, ["create", "--log-driver", "local", "--log-opt", "labels=a", "busybox", "true"]);
    expect(create.code).to.equal(1); // the CLI's code for a refused create, with dockerd too
    expect(create.stderr).to.contain("Error response from daemon: unknown log opt 'labels' for log driver local");
    const run = await docker(host, ["run", "--name", "bad", "--log-driver", "local", "--log-opt", "max-file=1", "busybox", "true"]);
    expect(run.code).to.equal(125);
    expect(run.stderr).to.contain("Error response from daemon: failed to initialize logging driver: compression cannot be enabled when max file count is 1");
    const state = JSON.parse((await docker(host, ["inspect", "-f", "{{json .State}}", "bad"])).stdout);
    expect(state).to.include({ Status: "created", ExitCode: 128, Error: "failed to initialize logging driver: compression cannot be enabled when max file count is 1" });
    const start = await httpRequest({ socketPath: d.socket }, "POST", `/v1.41/containers/bad/start`);
    expect(start.status).to.equal(500);
    expect(JSON.parse(start.body).message).to.equal("failed to initialize logging driver: compression cannot be enabled when max file count is 1");
  });
});
