/**
 * The reading half of the log conformance suite, for drivers that declare `read`: what `docker
 * logs` needs from any of them (lines in order with streams, times and partial pieces; tail,
 * since and until, across rotated and gzipped files when the driver rotates; follow until the
 * producer is done or the signal aborts). Called by log-conformance.ts.
 */
import { expect } from "chai";
import type { LogDriver, ReadOptions } from "../core/contracts/log.js";
import { collect, msg, numbered, numberOf, T0, texts, until, writeNumbered, type ContextMaker } from "./log-conformance-kit.js";

const ALL: ReadOptions = { follow: false, stdout: true, stderr: true };

export function logReadConformance(
  driver: LogDriver,
  context: ContextMaker,
  rotation: { rotating: Record<string, string>; compressed: Record<string, string> } | undefined,
): void {
  const reader = (ctx: ReturnType<ContextMaker>) => driver.createReader!(ctx);

  it("reads back lines in order, with streams, nanosecond times and partial pieces", async () => {
    const ctx = context();
    const w = await driver.createLogger(ctx);
    await w.write(msg("one", 0));
    await w.write(msg("two", 1, "stderr"));
    await w.write(msg("half a ", 2, "stdout", true));
    await w.write(msg("line", 3));
    await w.write(msg("", 4));
    // a message with only a millisecond time reads back with that time
    await w.write({ line: Buffer.from("ms"), stream: "stdout", time: new Date(T0 + 5000) });
    await w.close();
    const got = await collect(reader(ctx).read(ALL));
    expect(got.map((m) => [m.line.toString(), m.stream, m.partial])).to.deep.equal([
      ["one", "stdout", false],
      ["two", "stderr", false],
      ["half a ", "stdout", true],
      ["line", "stdout", false],
      ["", "stdout", false],
      ["ms", "stdout", false],
    ]);
    expect(got[0].timeNs).to.equal(BigInt(T0) * 1_000_000n + 456_789n);
    expect(got[1].time.getTime()).to.equal(T0 + 1000);
    expect(got[5].timeNs).to.equal(BigInt(T0 + 5000) * 1_000_000n);
    expect(texts(await collect(reader(ctx).read({ ...ALL, stdout: false })))).to.deep.equal(["two"]);
    expect(texts(await collect(reader(ctx).read({ ...ALL, stderr: false })))).to.deep.equal(["one", "half a ", "line", "", "ms"]);
  });

  it("appends what a later logger of the container writes (a restart)", async () => {
    const ctx = context();
    const a = await driver.createLogger(ctx);
    await a.write(msg("first"));
    await a.close();
    const b = await driver.createLogger(ctx);
    await b.write(msg("second", 1));
    await b.close();
    expect(texts(await collect(reader(ctx).read(ALL)))).to.deep.equal(["first", "second"]);
  });

  it("reads nothing for a container that never logged", async () => {
    expect(await collect(reader(context()).read({ ...ALL, tail: 5 }))).to.deep.equal([]);
  });

  it("reads a tail, since and until", async () => {
    const ctx = context();
    const w = await driver.createLogger(ctx);
    await writeNumbered(w, 10);
    await w.close();
    const r = reader(ctx);
    const all = Array.from({ length: 10 }, (_, k) => numbered(k));
    expect(texts(await collect(r.read({ ...ALL, tail: 3 })))).to.deep.equal(all.slice(-3));
    expect(texts(await collect(r.read({ ...ALL, tail: 0 })))).to.deep.equal([]);
    expect(texts(await collect(r.read({ ...ALL, since: new Date(T0 + 7000) })))).to.deep.equal(all.slice(7));
    // message 2 is stored at T0 + 2 s and 456789 ns: a millisecond later takes it, T0 + 2 s does not
    expect(texts(await collect(r.read({ ...ALL, until: new Date(T0 + 2001) })))).to.deep.equal(all.slice(0, 3));
    expect(texts(await collect(r.read({ ...ALL, until: new Date(T0 + 2000) })))).to.deep.equal(all.slice(0, 2));
  });

  const rotations = rotation ? ([["rotated", rotation.rotating], ["rotated and compressed", rotation.compressed]] as const) : [];
  for (const [label, options] of rotations) {
    it(`reads all, a tail, since and until across ${label} files`, async () => {
      const ctx = context(options);
      const w = await driver.createLogger(ctx);
      await writeNumbered(w, 40);
      await w.close();
      const r = reader(ctx);
      const all = texts(await collect(r.read(ALL)));
      // The oldest are gone with the oldest file; what is kept is whole and in order.
      const first = numberOf(all[0]);
      expect(first).to.be.above(0);
      expect(all).to.deep.equal(Array.from({ length: 40 - first }, (_, k) => numbered(first + k)));
      expect(all.length).to.be.above(15);
      expect(texts(await collect(r.read({ ...ALL, tail: 15 })))).to.deep.equal(all.slice(-15));
      expect(texts(await collect(r.read({ ...ALL, tail: 0 })))).to.deep.equal([]);
      expect(texts(await collect(r.read({ ...ALL, tail: 1000 })))).to.deep.equal(all);
      const since = new Date(T0 + 30 * 1000);
      const until = new Date(T0 + 35 * 1000 + 1);
      expect(texts(await collect(r.read({ ...ALL, since, until })))).to.deep.equal(Array.from({ length: 6 }, (_, k) => numbered(30 + k)));
      // The tail counts stored lines before the stream selection, as Docker's.
      const tailErr = texts(await collect(r.read({ ...ALL, tail: 6, stdout: false })));
      expect(tailErr).to.deep.equal(all.slice(-6).filter((t) => numberOf(t) % 3 === 0));
    });
  }

  it(`follows what is written later${rotation ? ", across rotations," : ""} and ends when the producer is done`, async () => {
    const ctx = context(rotation?.compressed);
    const w = await driver.createLogger(ctx);
    await writeNumbered(w, 3);
    const got: string[] = [];
    const reading = (async () => {
      for await (const m of reader(ctx).read({ ...ALL, follow: true, tail: 2, producerDone: w.closed })) got.push(m.line.toString());
    })();
    await until(() => got.length === 2); // the tail is read before anything more is written
    // One line at a time, each read before the next is written: a follow is only promised to
    // keep up with one rotation between two looks.
    for (let i = 3; i < 33; i++) {
      await w.write(msg(numbered(i), i));
      await until(() => got.length === i).catch((e: Error) => {
        throw new Error(`${e.message} at ${i}: ${JSON.stringify(got)}`);
      });
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
    for await (const m of reader(ctx).read({ ...ALL, follow: true, signal: ac.signal })) {
      got.push(m.line.toString());
      ac.abort();
    }
    expect(got).to.deep.equal(["only"]);
    await w.close();
  });

  it("ends a follow when the loop breaks out, and the logger goes on", async () => {
    const ctx = context();
    const w = await driver.createLogger(ctx);
    await w.write(msg("a"));
    for await (const m of reader(ctx).read({ ...ALL, follow: true })) {
      expect(m.line.toString()).to.equal("a");
      break;
    }
    await w.write(msg("b", 1));
    await w.close();
    expect(texts(await collect(reader(ctx).read(ALL)))).to.deep.equal(["a", "b"]);
  });
}
