/**
 * The conformance suite of log drivers that can read back (capability `read`): what `docker
 * logs` needs from any of them, run against each (`logReaderConformance("json-file", ...)`,
 * `logReaderConformance("local", ...)`). Real drivers, real files in a temporary folder.
 */
import { join } from "node:path";
import { expect } from "chai";
import type { LogDriver, LoggerContext, LogMessage, LogWriter, ReadOptions } from "../core/contracts/log.js";
import { makeTempDir } from "./helpers/engined.js";

const ID = "0123456789abcdef".repeat(4);
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 123);
const ALL: ReadOptions = { follow: false, stdout: true, stderr: true };

export interface ConformanceOptions {
  /** Options that make the driver rotate after a few hundred bytes, keeping several files. */
  rotating: Record<string, string>;
  /** The same with rotated files gzipped. */
  compressed: Record<string, string>;
}

function context(options: Record<string, string> = {}): LoggerContext {
  return {
    containerId: ID,
    containerName: "/web",
    imageName: "busybox",
    imageId: "sha256:" + "fedcba9876543210".repeat(4),
    labels: {},
    env: [],
    logDir: join(makeTempDir("engine-logconf-"), "containers", ID),
    options,
  };
}

const msg = (text: string, i = 0, stream: "stdout" | "stderr" = "stdout", partial = false) => ({
  line: Buffer.from(text),
  stream,
  time: new Date(T0 + i * 1000),
  timeNs: BigInt(T0 + i * 1000) * 1_000_000n + 456_789n,
  partial,
});

const numbered = (i: number) => `line-${String(i).padStart(4, "0")} ${"x".repeat(30)}`;

async function collect(it: AsyncIterable<LogMessage>): Promise<LogMessage[]> {
  const out: LogMessage[] = [];
  for await (const m of it) out.push(m);
  return out;
}

const texts = (ms: LogMessage[]) => ms.map((m) => m.line.toString());

async function writeAll(w: LogWriter, n: number, from = 0): Promise<void> {
  for (let i = from; i < from + n; i++) await w.write(msg(numbered(i), i, i % 3 === 0 ? "stderr" : "stdout"));
}

/** Resolves when `cond()` holds, polling; fails after `ms`. */
async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting (${cond.toString()})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export function logReaderConformance(name: string, makeDriver: () => LogDriver, opts: ConformanceOptions): void {
  describe(`log driver conformance: ${name}`, function () {
    this.timeout(20_000);
    const driver = makeDriver();

    it("declares read and reads back lines in order, with streams, nanosecond times and partial pieces", async () => {
      expect(driver.capabilities).to.include("read");
      const ctx = context();
      const w = await driver.createLogger(ctx);
      await w.write(msg("one", 0));
      await w.write(msg("two", 1, "stderr"));
      await w.write(msg("half a ", 2, "stdout", true));
      await w.write(msg("line", 3));
      await w.write(msg("", 4));
      await w.close();
      const got = await collect(driver.createReader!(ctx).read(ALL));
      expect(got.map((m) => [m.line.toString(), m.stream, m.partial])).to.deep.equal([
        ["one", "stdout", false],
        ["two", "stderr", false],
        ["half a ", "stdout", true],
        ["line", "stdout", false],
        ["", "stdout", false],
      ]);
      expect(got[0].timeNs).to.equal(BigInt(T0) * 1_000_000n + 456_789n);
      expect(got[1].time.getTime()).to.equal(T0 + 1000);
      expect(texts(await collect(driver.createReader!(ctx).read({ ...ALL, stdout: false })))).to.deep.equal(["two"]);
    });

    it("appends what a later logger of the container writes (a restart)", async () => {
      const ctx = context();
      const a = await driver.createLogger(ctx);
      await a.write(msg("first"));
      await a.close();
      const b = await driver.createLogger(ctx);
      await b.write(msg("second", 1));
      await b.close();
      expect(texts(await collect(driver.createReader!(ctx).read(ALL)))).to.deep.equal(["first", "second"]);
    });

    it("reads nothing for a container that never logged", async () => {
      expect(await collect(driver.createReader!(context()).read({ ...ALL, tail: 5 }))).to.deep.equal([]);
    });

    for (const [label, options] of [["rotated", opts.rotating], ["rotated and compressed", opts.compressed]] as const) {
      it(`reads all, a tail, since and until across ${label} files`, async () => {
        const ctx = context(options);
        const w = await driver.createLogger(ctx);
        await writeAll(w, 40);
        await w.close();
        const reader = driver.createReader!(ctx);
        const all = texts(await collect(reader.read(ALL)));
        // The oldest are gone with the oldest file; what is kept is whole and in order.
        const first = Number(all[0].slice(5, 9));
        expect(first).to.be.above(0);
        expect(all).to.deep.equal(Array.from({ length: 40 - first }, (_, k) => numbered(first + k)));
        expect(all.length).to.be.above(15);
        expect(texts(await collect(reader.read({ ...ALL, tail: 15 })))).to.deep.equal(all.slice(-15));
        expect(texts(await collect(reader.read({ ...ALL, tail: 0 })))).to.deep.equal([]);
        expect(texts(await collect(reader.read({ ...ALL, tail: 1000 })))).to.deep.equal(all);
        const since = new Date(T0 + 30 * 1000);
        const until = new Date(T0 + 35 * 1000 + 1);
        expect(texts(await collect(reader.read({ ...ALL, since, until })))).to.deep.equal(Array.from({ length: 6 }, (_, k) => numbered(30 + k)));
        // The tail counts stored lines before the stream selection, as Docker's.
        const tailErr = texts(await collect(reader.read({ ...ALL, tail: 6, stdout: false })));
        expect(tailErr).to.deep.equal(all.slice(-6).filter((t) => Number(t.slice(5, 9)) % 3 === 0));
      });
    }

    it("follows what is written later, across rotations, and ends when the producer is done", async () => {
      const ctx = context(opts.compressed);
      const w = await driver.createLogger(ctx);
      await writeAll(w, 3);
      const got: string[] = [];
      const reading = (async () => {
        for await (const m of driver.createReader!(ctx).read({ ...ALL, follow: true, tail: 2, producerDone: w.closed })) got.push(m.line.toString());
      })();
      await until(() => got.length === 2); // the tail is read before anything more is written
      // One line at a time, each read before the next is written: a follow is only promised to
      // keep up with one rotation between two looks.
      for (let i = 3; i < 33; i++) {
        await w.write(msg(numbered(i), i));
        await until(() => got.length === i).catch((e: Error) => { throw new Error(`${e.message} at ${i}: ${JSON.stringify(got)}`); });
      }
      await w.close();
      await reading;
      expect(got).to.deep.equal(Array.from({ length: 32 }, (_, k) => numbered(k + 1)));
    });

    it("ends a follow when the signal aborts", async () => {
      const ctx = context();
      const w = await driver.createLogger(ctx);
      await w.write(msg("only"));
      const ac = new AbortController();
      const got: string[] = [];
      for await (const m of driver.createReader!(ctx).read({ ...ALL, follow: true, signal: ac.signal })) {
        got.push(m.line.toString());
        ac.abort();
      }
      expect(got).to.deep.equal(["only"]);
      await w.close();
    });
  });
}
