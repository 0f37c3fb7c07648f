/**
 * The journald log driver with a real engined and the Docker CLI. No journald runs on these
 * machines: engined runs in a mount namespace of its own where /run/systemd is a folder of the
 * test's, and a fake journal (log-journald-fake.ts) listens on its journal/socket and parses
 * the native protocol as journald does. Fields and values are Docker's (checked against
 * dockerd 20.10 with the same fake); `docker logs` reads the local cache.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { encodeEntry } from "../plugins/log-journald/protocol.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { parseEntry, startFakeJournal, type Entry, type FakeJournal } from "./log-journald-fake.js";

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const one = (e: Entry, name: string) => e.get(name)?.[0];

describe("log driver journald: the fake journal's parser", function () {
  it("reads plain and binary fields, drops names journald refuses, refuses a bad length", function () {
    const dropped: string[] = [];
    const e = parseEntry(encodeEntry([["MESSAGE", "hi"], ["MULTI", "a\nb"], ["lower", "x"], ["_TRUSTED", "y"], ["1ABC", "z"]]), dropped);
    expect(one(e, "MESSAGE")).to.equal("hi");
    expect(one(e, "MULTI")).to.equal("a\nb");
    expect(dropped.map((d) => d.split(":")[0])).to.deep.equal(["lower", "_TRUSTED", "1ABC"]);
    const bad = Buffer.concat([Buffer.from("MULTI\n"), Buffer.from([9, 0, 0, 0, 0, 0, 0, 0]), Buffer.from("a\nb\n")]);
    expect(() => parseEntry(bad)).to.throw(/length 9/);
    expect(() => parseEntry(Buffer.from("MESSAGE=no newline"))).to.throw(/newline/);
  });
});

describe("log driver journald (fake journal in a mount namespace, engined, Docker CLI)", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let host: string;
  let work: string;
  let journal: FakeJournal;
  const dk = (...args: string[]) => docker(host, args);
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}:\n${r.stderr}`).to.equal(0);
    return r.stdout;
  };

  before(async function () {
    work = makeTempDir("engine-log-journald-");
    const systemd = join(work, "systemd");
    mkdirSync(join(systemd, "journal"), { recursive: true });
    journal = startFakeJournal(join(systemd, "journal/socket"));
    // /run/systemd is the test's folder for engined and its supervisor only (a private mount
    // namespace); the host's /run/systemd is untouched.
    d = await startEngined({ wrap: ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", 'mount --bind "$0" /run/systemd && exec "$@"', systemd] });
    host = `unix://${d.socket}`;
    ok(await dk("import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"), "docker import");
  });

  afterEach(async function () {
    const ids = (await dk("ps", "-aq")).stdout.split("\n").filter(Boolean);
    if (ids.length) await dk("rm", "-f", ...ids);
  });

  after(async function () {
    await d?.stop();
    journal?.close();
  });

  it("sends one entry per line with Docker's fields: priority by stream, tag, labels and env as fields, partial lines", async function () {
    const id = ok(await dk("run", "-d", "--name", "jweb", "--log-driver", "journald", "--log-opt", "labels=app.kind", "--log-opt", "env=FOO",
      "--log-opt", "tag={{.Name}}/x", "-l", "app.kind=web", "-e", "FOO=bar\nbaz", "busybox", "sh", "-c", "echo out1; echo err1 >&2; printf nonl"), "run").trim();
    ok(await dk("wait", id), "wait");
    await until("3 entries", () => journal.entries.length >= 3);
    expect(journal.malformed).to.deep.equal([]);
    expect(journal.dropped).to.deep.equal([]);
    const byMessage = new Map(journal.entries.map((e) => [one(e, "MESSAGE"), e]));
    const common = {
      CONTAINER_ID: id.slice(0, 12),
      CONTAINER_ID_FULL: id,
      CONTAINER_NAME: "jweb",
      CONTAINER_TAG: "jweb/x",
      IMAGE_NAME: "busybox",
      SYSLOG_IDENTIFIER: "jweb/x",
      APP_KIND: "web",
      FOO: "bar\nbaz", // a value with a newline, sent in the binary form
    };
    const plain = (e: Entry | undefined) => Object.fromEntries([...(e ?? new Map()).entries()].filter(([k]) => !k.startsWith("CONTAINER_PARTIAL_")).map(([k, v]) => [k, v.join("|")]));
    expect(plain(byMessage.get("out1"))).to.deep.equal({ PRIORITY: "6", MESSAGE: "out1", ...common });
    expect(plain(byMessage.get("err1"))).to.deep.equal({ PRIORITY: "3", MESSAGE: "err1", ...common });
    // Output that ended without a newline is a partial line, marked as Docker marks it.
    const partial = byMessage.get("nonl")!;
    expect(one(partial, "CONTAINER_PARTIAL_MESSAGE")).to.equal("true");
    expect(one(partial, "CONTAINER_PARTIAL_LAST")).to.equal("false");
    expect(one(partial, "CONTAINER_PARTIAL_ORDINAL")).to.equal("1");
    expect(one(partial, "CONTAINER_PARTIAL_ID")).to.match(/^[0-9a-f]{64}$/);
    expect(byMessage.get("out1")!.has("CONTAINER_PARTIAL_MESSAGE")).to.equal(false);
  });

  it("docker logs reads the local cache", async function () {
    const id = ok(await dk("run", "-d", "--name", "jlogs", "--log-driver", "journald", "busybox", "sh", "-c", "echo a; echo b >&2; echo c"), "run").trim();
    ok(await dk("wait", id), "wait");
    expect(await dk("logs", "jlogs")).to.include({ code: 0, stdout: "a\nc\n", stderr: "b\n" });
  });

  it("refuses an unknown option at create with Docker's message", async function () {
    const r = await dk("create", "--log-driver", "journald", "--log-opt", "foo=1", "busybox", "true");
    expect(r.stderr.trim()).to.equal("Error response from daemon: unknown log opt 'foo' for journald log driver");
  });
});

describe("log driver journald without journald", function () {
  this.timeout(60_000);
  it("fails the start as Docker does: journald is not enabled on this host", async function () {
    const work = makeTempDir("engine-log-nojournal-");
    const d = await startEngined({ wrap: ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", 'mount --bind "$0" /run/systemd && exec "$@"', work] });
    try {
      const host = `unix://${d.socket}`;
      expect((await docker(host, ["import", "--change", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"])).code).to.equal(0);
      const r = await docker(host, ["run", "--rm", "--log-driver", "journald", "busybox", "true"]);
      expect(r.code).to.equal(125);
      expect(r.stderr).to.include("Error response from daemon: failed to initialize logging driver: journald is not enabled on this host");
    } finally {
      await d.stop();
    }
  });
});
