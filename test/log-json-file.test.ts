/**
 * The json-file log driver: Docker's line format, attrs, rotation and compression, option
 * checks, and reading back (tail across rotated files, since/until, streams, follow).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { appendFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { expect } from "chai";
import type { LoggerContext, LogMessage, ReadOptions } from "../core/contracts/log.js";
import plugin from "../plugins/log-json-file/index.js";
import {
  createJsonFileLogDriver,
  createJsonFileLogger,
  createJsonFileReader,
  formatRFC3339Nano,
  parseJsonFileOptions,
  type JsonFileWriter,
} from "../plugins/log-json-file/json-file.js";
import { makeTempDir } from "./helpers/engined.js";
import "./helpers/root-hooks.js";

const ID = "0123456789abcdef".repeat(4);

function context(options: Record<string, string> = {}, extra: Partial<LoggerContext> = {}): LoggerContext {
  const dir = makeTempDir("engine-log-");
  return {
    containerId: ID,
    containerName: "/web",
    imageName: "alpine:3.20",
    imageId: "sha256:" + "fedcba9876543210".repeat(4),
    labels: {},
    env: [],
    logDir: join(dir, "containers", ID),
    options,
    ...extra,
  };
}

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 123);

function msg(text: string, i = 0, stream: "stdout" | "stderr" = "stdout") {
  return { line: Buffer.from(text), stream, time: new Date(T0 + i * 1000) };
}

function fileLines(path: string): string[] {
  const data = path.endsWith(".gz") ? gunzipSync(readFileSync(path)).toString() : readFileSync(path, "utf8");
  return data.split("\n").filter((l) => l !== "");
}

function logsOf(path: string): string[] {
  return fileLines(path).map((l) => (JSON.parse(l) as { log: string }).log);
}

async function collect(it: AsyncIterable<LogMessage>): Promise<LogMessage[]> {
  const out: LogMessage[] = [];
  for await (const m of it) out.push(m);
  return out;
}

const texts = (ms: LogMessage[]) => ms.map((m) => m.line.toString());

const ALL: ReadOptions = { follow: false, stdout: true, stderr: true };

/** Resolves when `cond()` is true, polling; fails after `ms`. */
async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Writes `n` numbered lines `line-<i>` (padded to make each entry about 100 bytes). */
async function writeNumbered(w: JsonFileWriter, from: number, n: number): Promise<void> {
  for (let i = from; i < from + n; i++) await w.write(msg(`line-${String(i).padStart(4, "0")} ${"x".repeat(30)}`, i));
}

const numbered = (i: number) => `line-${String(i).padStart(4, "0")} ${"x".repeat(30)}`;

describe("log driver: json-file", function () {
  this.timeout(10_000);

  describe("format", () => {
    it("writes Docker's line: log with newline, stream, RFC3339Nano UTC time", async () => {
      const ctx = context();
      const w = await createJsonFileLogger(ctx);
      await w.write({ line: Buffer.from("hi"), stream: "stdout", time: new Date(T0), timeNs: BigInt(T0) * 1_000_000n + 456789n });
      await w.write({ line: Buffer.from("oops"), stream: "stderr", time: new Date(T0) });
      await w.write({ line: Buffer.from("even"), stream: "stdout", time: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)) });
      await w.close();
      const path = join(ctx.logDir, `${ID}-json.log`);
      expect(w.path).to.equal(path);
      const raw = readFileSync(path, "utf8");
      expect(raw).to.equal(
        '{"log":"hi\\n","stream":"stdout","time":"2026-01-02T03:04:05.123456789Z"}\n' +
          '{"log":"oops\\n","stream":"stderr","time":"2026-01-02T03:04:05.123Z"}\n' +
          '{"log":"even\\n","stream":"stdout","time":"2026-01-02T03:04:05Z"}\n',
      );
      expect(JSON.parse(raw.split("\n")[0])).to.deep.equal({ log: "hi\n", stream: "stdout", time: "2026-01-02T03:04:05.123456789Z" });
    });

    it("formats times as Go's RFC3339Nano (trailing zeros dropped)", () => {
      const s = BigInt(Date.UTC(2026, 0, 2, 3, 4, 5)) * 1_000_000n;
      expect(formatRFC3339Nano(s + 123456789n)).to.equal("2026-01-02T03:04:05.123456789Z");
      expect(formatRFC3339Nano(s + 100000000n)).to.equal("2026-01-02T03:04:05.1Z");
      expect(formatRFC3339Nano(s + 1n)).to.equal("2026-01-02T03:04:05.000000001Z");
      expect(formatRFC3339Nano(s)).to.equal("2026-01-02T03:04:05Z");
    });

    it("escapes as Go does and keeps every line valid JSON with only log/stream/time(/attrs)", async () => {
      const ctx = context({ labels: "app" }, { labels: { app: "web" } });
      const w = await createJsonFileLogger(ctx);
      const odd = 'quote" back\\ tab\t cr\r <b>&</b> \u2028 bell\u0007 é 日本';
      await w.write({ line: Buffer.from(odd), stream: "stdout", time: new Date(T0) });
      await w.write({ line: Buffer.from(""), stream: "stderr", time: new Date(T0) });
      await w.close();
      const lines = fileLines(w.path);
      expect(lines[0]).to.include("\\u003cb\\u003e\\u0026\\u003c/b\\u003e").and.include("\\u2028").and.include("\\u0007");
      for (const line of lines) {
        const obj = JSON.parse(line) as Record<string, unknown>;
        expect(Object.keys(obj)).to.deep.equal(["log", "stream", "attrs", "time"]);
        expect(obj.time).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/);
      }
      expect(JSON.parse(lines[0]).log).to.equal(odd + "\n");
      expect(JSON.parse(lines[1]).log).to.equal("\n");
      const back = await collect(createJsonFileReader(ctx).read(ALL));
      expect(back[0].line.toString()).to.equal(odd);
    });

    it("writes partial lines without a newline and reads them back as partial", async () => {
      const ctx = context();
      const w = await createJsonFileLogger(ctx);
      await w.write({ line: Buffer.from("part one, "), stream: "stdout", time: new Date(T0), partial: true });
      await w.write({ line: Buffer.from("the end"), stream: "stdout", time: new Date(T0 + 1) });
      await w.close();
      expect(fileLines(w.path).map((l) => JSON.parse(l).log)).to.deep.equal(["part one, ", "the end\n"]);
      const back = await collect(createJsonFileReader(ctx).read(ALL));
      expect(back.map((m) => [m.line.toString(), m.partial])).to.deep.equal([
        ["part one, ", true],
        ["the end", false],
      ]);
    });

    it("stores attrs selected by labels, labels-regex, env, env-regex and tag", async () => {
      const ctx = context(
        { labels: "app,missing", "labels-regex": "^com\\.acme\\.", env: "TZ,NOPE", "env-regex": "^LOG_", tag: "{{.Name}}/{{.ID}}/{{.ImageName}}" },
        {
          labels: { app: "web", tier: "front", "com.acme.team": "ops" },
          env: ["TZ=UTC", "LOG_LEVEL=debug", "PATH=/bin", "EMPTY="],
        },
      );
      const w = await createJsonFileLogger(ctx);
      await w.write(msg("x"));
      await w.close();
      const line = fileLines(w.path)[0];
      const obj = JSON.parse(line);
      expect(obj.attrs).to.deep.equal({
        app: "web",
        "com.acme.team": "ops",
        TZ: "UTC",
        LOG_LEVEL: "debug",
        tag: `web/${ID.slice(0, 12)}/alpine:3.20`,
      });
      // Keys sorted, as Go's encoder writes a map.
      expect(line).to.include('"attrs":{"LOG_LEVEL":"debug","TZ":"UTC","app":"web","com.acme.team":"ops","tag":');
      const back = await collect(createJsonFileReader(ctx).read(ALL));
      expect(back[0].attrs).to.deep.equal(obj.attrs);
    });

    it("has no attrs when the options select nothing", async () => {
      const ctx = context({ labels: "nope" }, { labels: { app: "web" } });
      const w = await createJsonFileLogger(ctx);
      await w.write(msg("x"));
      await w.close();
      expect(Object.keys(JSON.parse(fileLines(w.path)[0]))).to.deep.equal(["log", "stream", "time"]);
    });

    it("appends to what an earlier logger of the container wrote, and refuses writes after close", async () => {
      const ctx = context();
      const a = await createJsonFileLogger(ctx);
      await a.write(msg("first"));
      await a.close();
      await a.close();
      await a.closed;
      let err: unknown;
      try {
        await a.write(msg("late"));
      } catch (e) {
        err = e;
      }
      expect(String(err)).to.match(/closed/);
      const b = await createJsonFileLogger(ctx);
      await b.write(msg("second"));
      await b.close();
      expect(texts(await collect(createJsonFileReader(ctx).read(ALL)))).to.deep.equal(["first", "second"]);
    });
  });

  describe("rotation", () => {
    it("rotates at max-size, keeps max-file files in order and drops the oldest", async () => {
      const ctx = context({ "max-size": "1k", "max-file": "3" });
      const w = await createJsonFileLogger(ctx);
      await writeNumbered(w, 0, 100);
      await w.close();
      const base = `${ID}-json.log`;
      expect(readdirSync(ctx.logDir).sort()).to.deep.equal([base, `${base}.1`, `${base}.2`]);
      const files = [`${base}.2`, `${base}.1`, base].map((f) => join(ctx.logDir, f));
      for (const f of files.slice(0, 2)) {
        const size = readFileSync(f).length;
        expect(size).to.be.at.least(1000).and.below(1000 + 120); // rotated once past max-size (decimal, as Docker's)
      }
      const all = files.flatMap(logsOf).map((l) => l.trimEnd());
      const first = Number(all[0].slice(5, 9));
      expect(first).to.be.above(0); // the oldest lines are gone
      expect(all).to.deep.equal(Array.from({ length: 100 - first }, (_, k) => numbered(first + k)));
    });

    it("with max-file 1 truncates the file in place", async () => {
      const ctx = context({ "max-size": "1k" });
      const w = await createJsonFileLogger(ctx);
      await writeNumbered(w, 0, 30);
      await w.close();
      expect(readdirSync(ctx.logDir)).to.deep.equal([`${ID}-json.log`]);
      const logs = logsOf(w.path).map((l) => l.trimEnd());
      expect(logs.at(-1)).to.equal(numbered(29));
      expect(readFileSync(w.path).length).to.be.below(1024 + 120);
    });

    it("gzips rotated files with compress=true", async () => {
      const ctx = context({ "max-size": "1k", "max-file": "3", compress: "true" });
      const w = await createJsonFileLogger(ctx);
      await writeNumbered(w, 0, 60);
      await w.close();
      const base = `${ID}-json.log`;
      expect(readdirSync(ctx.logDir).sort()).to.deep.equal([base, `${base}.1.gz`, `${base}.2.gz`]);
      const all = [`${base}.2.gz`, `${base}.1.gz`, base].flatMap((f) => logsOf(join(ctx.logDir, f))).map((l) => l.trimEnd());
      const first = Number(all[0].slice(5, 9));
      expect(all).to.deep.equal(Array.from({ length: 60 - first }, (_, k) => numbered(first + k)));
      // And it reads them back, all of it and a tail that spans the archives.
      const reader = createJsonFileReader(ctx);
      expect(texts(await collect(reader.read(ALL)))).to.deep.equal(all);
      expect(texts(await collect(reader.read({ ...ALL, tail: 25 })))).to.deep.equal(all.slice(-25));
    });
  });

  describe("reading", () => {
    async function rotatedLog(): Promise<{ ctx: LoggerContext; all: string[] }> {
      const ctx = context({ "max-size": "1k", "max-file": "4" });
      const w = await createJsonFileLogger(ctx);
      for (let i = 0; i < 40; i++) await w.write(msg(numbered(i), i, i % 3 === 0 ? "stderr" : "stdout"));
      await w.close();
      const base = join(ctx.logDir, `${ID}-json.log`);
      const all = [`${base}.3`, `${base}.2`, `${base}.1`, base].flatMap(logsOf).map((l) => l.trimEnd());
      return { ctx, all };
    }

    it("reads everything in order across rotated files", async () => {
      const { ctx, all } = await rotatedLog();
      expect(all.length).to.be.above(30);
      const back = await collect(createJsonFileReader(ctx).read(ALL));
      expect(texts(back)).to.deep.equal(all);
      expect(back[0].time.getTime()).to.equal(T0 + (40 - all.length) * 1000);
    });

    it("tails the last N lines across rotated files; tail 0 is none", async () => {
      const { ctx, all } = await rotatedLog();
      const reader = createJsonFileReader(ctx);
      for (const n of [1, 5, 12, 25, all.length, all.length + 10]) {
        expect(texts(await collect(reader.read({ ...ALL, tail: n }))), `tail ${n}`).to.deep.equal(all.slice(-n));
      }
      expect(await collect(reader.read({ ...ALL, tail: 0 }))).to.deep.equal([]);
    });

    it("filters by since and until", async () => {
      const { ctx } = await rotatedLog();
      const reader = createJsonFileReader(ctx);
      const got = texts(await collect(reader.read({ ...ALL, since: new Date(T0 + 20_000), until: new Date(T0 + 25_000) })));
      expect(got).to.deep.equal([20, 21, 22, 23, 24, 25].map(numbered));
      // since is inclusive at nanosecond precision: a line at .123456789 is after .123
      const ctx2 = context();
      const w = await createJsonFileLogger(ctx2);
      await w.write({ ...msg("late"), timeNs: BigInt(T0) * 1_000_000n + 1n });
      await w.close();
      expect(await collect(createJsonFileReader(ctx2).read({ ...ALL, since: new Date(T0 + 1) }))).to.have.length(0);
      expect(await collect(createJsonFileReader(ctx2).read({ ...ALL, since: new Date(T0) }))).to.have.length(1);
      expect(await collect(createJsonFileReader(ctx2).read({ ...ALL, until: new Date(T0) }))).to.have.length(0);
    });

    it("selects streams", async () => {
      const { ctx, all } = await rotatedLog();
      const reader = createJsonFileReader(ctx);
      const index = (t: string) => Number(t.slice(5, 9));
      const out = texts(await collect(reader.read({ ...ALL, stderr: false })));
      const err = texts(await collect(reader.read({ ...ALL, stdout: false })));
      expect(out).to.deep.equal(all.filter((t) => index(t) % 3 !== 0));
      expect(err).to.deep.equal(all.filter((t) => index(t) % 3 === 0));
      const errMsgs = await collect(reader.read({ ...ALL, stdout: false }));
      expect(errMsgs.every((m) => m.stream === "stderr")).to.equal(true);
      expect(await collect(reader.read({ ...ALL, stdout: false, stderr: false }))).to.deep.equal([]);
    });

    it("reads nothing for a container that never logged, and skips an unfinished last line", async () => {
      const ctx = context();
      expect(await collect(createJsonFileReader(ctx).read(ALL))).to.deep.equal([]);
      const w = await createJsonFileLogger(ctx);
      await w.write(msg("whole"));
      await w.close();
      await appendFile(w.path, '{"log":"half');
      expect(texts(await collect(createJsonFileReader(ctx).read(ALL)))).to.deep.equal(["whole"]);
    });

    it("skips lines that are not log entries", async () => {
      const ctx = context();
      const w = await createJsonFileLogger(ctx);
      await w.write(msg("a"));
      await appendFile(w.path, 'garbage\n{"log":"x\\n","stream":"stdin","time":"2026-01-02T03:04:05Z"}\n');
      await w.write(msg("b"));
      await w.close();
      expect(texts(await collect(createJsonFileReader(ctx).read(ALL)))).to.deep.equal(["a", "b"]);
    });
  });

  describe("follow", () => {
    const FAST = { pollInterval: 50 };

    it("gets lines written after it started, across rotations, and ends when the writer is closed", async () => {
      const ctx = context({ "max-size": "1k", "max-file": "3", compress: "true" });
      const w = await createJsonFileLogger(ctx);
      await writeNumbered(w, 0, 3);
      const got: string[] = [];
      const reading = (async () => {
        for await (const m of createJsonFileReader(ctx, FAST).read({ ...ALL, follow: true, tail: 2, producerDone: w.closed })) {
          got.push(m.line.toString());
        }
      })();
      await until(() => got.length === 2);
      // Slowly enough for the reader to keep up with each rotation (it follows the current
      // file; a reader that falls more than a whole rotated file behind loses that file).
      for (let i = 3; i < 40; i++) {
        await writeNumbered(w, i, 1);
        if (i % 4 === 0) await until(() => got.length === i);
      }
      expect(existsSync(`${w.path}.2.gz`)).to.equal(true);
      await w.close();
      await reading;
      expect(got).to.deep.equal(Array.from({ length: 39 }, (_, k) => numbered(k + 1)));
    });

    it("waits for a log file that does not exist yet", async () => {
      const ctx = context();
      const done = new AbortController();
      const got: string[] = [];
      const reading = (async () => {
        for await (const m of createJsonFileReader(ctx, FAST).read({ ...ALL, follow: true, signal: done.signal })) got.push(m.line.toString());
      })();
      await new Promise((r) => setTimeout(r, 100));
      const w = await createJsonFileLogger(ctx);
      await w.write(msg("hello"));
      await until(() => got.length === 1);
      done.abort();
      await reading;
      await w.close();
      expect(got).to.deep.equal(["hello"]);
    });

    it("starts over after a truncation (max-file 1)", async () => {
      const ctx = context({ "max-size": "1k" });
      const w = await createJsonFileLogger(ctx);
      const got: string[] = [];
      const reading = (async () => {
        for await (const m of createJsonFileReader(ctx, FAST).read({ ...ALL, follow: true, producerDone: w.closed })) got.push(m.line.toString());
      })();
      for (let i = 0; i < 25; i++) {
        await writeNumbered(w, i, 1);
        await until(() => got.length === i + 1);
      }
      await w.close();
      await reading;
      expect(got).to.deep.equal(Array.from({ length: 25 }, (_, k) => numbered(k)));
    });

    it("ends on abort, even with no producerDone and nothing new written", async () => {
      const ctx = context();
      const w = await createJsonFileLogger(ctx);
      await w.write(msg("one"));
      const ac = new AbortController();
      const got: string[] = [];
      const started = Date.now();
      const reading = (async () => {
        for await (const m of createJsonFileReader(ctx).read({ ...ALL, follow: true, signal: ac.signal })) got.push(m.line.toString());
      })();
      await until(() => got.length === 1);
      setTimeout(() => ac.abort(), 100);
      await reading;
      expect(Date.now() - started).to.be.below(2000);
      expect(got).to.deep.equal(["one"]);
      // An already aborted signal gives nothing at all.
      expect(await collect(createJsonFileReader(ctx).read({ ...ALL, follow: true, signal: ac.signal }))).to.deep.equal([]);
      await w.close();
    });

    it("with tail 0 gets only new lines; a break releases the reader", async () => {
      const ctx = context();
      const w = await createJsonFileLogger(ctx);
      await writeNumbered(w, 0, 5);
      const got: string[] = [];
      const reading = (async () => {
        for await (const m of createJsonFileReader(ctx, FAST).read({ ...ALL, follow: true, tail: 0 })) {
          got.push(m.line.toString());
          if (got.length === 2) break;
        }
      })();
      await new Promise((r) => setTimeout(r, 100));
      await writeNumbered(w, 5, 2);
      await reading;
      await w.close();
      expect(got).to.deep.equal([numbered(5), numbered(6)]);
    });

    it("ends when until has passed", async () => {
      const ctx = context();
      const w = await createJsonFileLogger(ctx);
      await w.write({ ...msg("now"), time: new Date() });
      const got = await collect(createJsonFileReader(ctx, FAST).read({ ...ALL, follow: true, until: new Date(Date.now() + 200) }));
      expect(texts(got)).to.deep.equal(["now"]);
      await w.close();
    });
  });

  describe("options", () => {
    // Docker 20.10's words for each, measured with dockerd (`docker run --log-opt ...`).
    const bad: [Record<string, string>, string][] = [
      [{ "max-size": "ten" }, "invalid size: 'ten'"],
      [{ "max-size": "-1" }, "invalid size: '-1'"],
      [{ "max-size": "0" }, "max-size must be a positive number"],
      [{ "max-size": "1m", "max-file": "0" }, "max-file cannot be less than 1"],
      [{ "max-size": "1m", "max-file": "two" }, 'strconv.Atoi: parsing "two": invalid syntax'],
      [{ "max-size": "1m", compress: "yes" }, 'strconv.ParseBool: parsing "yes": invalid syntax'],
      [{ compress: "true" }, "compress cannot be true when max-file is less than 2 or max-size is not set"],
      [{ "max-size": "1m", compress: "true" }, "compress cannot be true when max-file is less than 2 or max-size is not set"],
      [{ "labels-regex": "(" }, "error parsing regexp: missing closing ): `(`"],
      [{ "env-regex": "[" }, "error parsing regexp: missing closing ]: `[`"],
      [{ tag: "ab{{.Nope}}" }, 'template: log-tag:1:4: executing "log-tag" at <.Nope>: can\'t evaluate field Nope in type *logger.Info'],
      [{ tag: "{{.ID" }, "template: log-tag:1: unclosed action"],
    ];
    for (const [options, message] of bad) {
      it(`accepts ${JSON.stringify(options)} at create, refuses it when the logger is made`, () => {
        expect(() => createJsonFileLogDriver().validateOptions(options)).not.to.throw();
        expect(() => parseJsonFileOptions(options)).to.throw(message);
      });
    }

    const badNames: [Record<string, string>, string][] = [
      [{ "max-sise": "1m" }, "unknown log opt 'max-sise' for json-file log driver"],
      [{ "cache-disabled": "maybe" }, "invalid value for option cache-disabled: maybe"],
      [{ mode: "sometimes" }, "logger: logging mode not supported: sometimes"],
      [{ "max-buffer-size": "1m" }, "logger: max-buffer-size option is only supported with 'mode=non-blocking'"],
      [{ mode: "non-blocking", "max-buffer-size": "x" }, "error parsing option max-buffer-size: invalid size: 'x'"],
    ];
    for (const [options, message] of badNames) {
      it(`refuses ${JSON.stringify(options)} at create`, () => {
        expect(() => createJsonFileLogDriver().validateOptions(options)).to.throw(message);
        expect(() => parseJsonFileOptions(options)).to.throw(message);
      });
    }

    it("accepts Docker's options, max-file without max-size, and the daemon-wide ones", () => {
      expect(
        parseJsonFileOptions({
          "max-size": "10m",
          "max-file": "3",
          compress: "true",
          labels: "a,b",
          "labels-regex": "^x",
          env: "A",
          "env-regex": "^B",
          tag: "{{.ImageName}}|{{.FullID}}",
          mode: "non-blocking",
          "max-buffer-size": "4m",
          "cache-disabled": "false",
          "cache-max-file": "-1",
          "cache-max-size": "huge",
          "cache-compress": "2",
        }),
      ).to.include({ maxSize: 10_000_000, maxFile: 3, compress: true });
      const defaults = parseJsonFileOptions({});
      expect(defaults.maxSize).to.equal(undefined);
      expect(defaults).to.include({ maxFile: 1, compress: false });
      expect(parseJsonFileOptions({ "max-size": "1g", "max-file": "1" }).maxSize).to.equal(1e9);
      expect(parseJsonFileOptions({ "max-size": "1.5k" }).maxSize).to.equal(1500);
      // Docker ignores max-file without max-size: nothing rotates.
      const alone = parseJsonFileOptions({ "max-file": "3" });
      expect([alone.maxFile, alone.maxSize]).to.deep.equal([3, undefined]);
    });

    it("fails createLogger on a bad option, naming it", async () => {
      let err: unknown;
      try {
        await createJsonFileLogger(context({ "max-file": "0" }));
      } catch (e) {
        err = e;
      }
      expect(String(err)).to.match(/max-file/);
    });

    it("is a plugin of kind log with the read capability", async () => {
      expect(plugin.manifest).to.include({ id: "log.json-file", kind: "log" });
      expect(Object.keys(plugin.manifest.options!)).to.include.members(["max-size", "max-file", "compress", "mode", "cache-max-file"]);
      const driver = createJsonFileLogDriver();
      expect(driver.name).to.equal("json-file");
      expect(driver.capabilities).to.deep.equal(["read"]);
      const ctx = context();
      const w = await driver.createLogger(ctx);
      await w.write(msg("via driver"));
      await w.close();
      expect(texts(await collect(driver.createReader!(ctx).read(ALL)))).to.deep.equal(["via driver"]);
      await writeFile(join(ctx.logDir, "unrelated.log.1"), "x\n");
      expect(texts(await collect(driver.createReader!(ctx).read(ALL)))).to.deep.equal(["via driver"]);
    });
  });
});

