/**
 * The exactly-once half of the log conformance suite, for drivers whose loggers have `mark`
 * (core/contracts/log.ts, "Exactly once across a crash of the caller"). The suite plays the
 * caller: it saves a mark with its progress now and then and at every checkpoint, stops at
 * some message as a kill would (the logger's files stay as they are), makes the logger again
 * with the saved mark, skips the `storedAfterMark` messages it finds stored, and sends the rest:
 * every message must then be stored once. A driver without `mark` (at least once) skips these.
 * Called by log-conformance.ts; a driver that can read is read back, else the counts are checked.
 */
import { expect } from "chai";
import type { LogDriver, LogMark, LogResume, LogWriter } from "../core/contracts/log.js";
import { collect, msg, numbered, numberOf, texts, type ContextMaker } from "./log-conformance-kit.js";

/** The caller's saved progress: how many messages it has handed over, and the logger's mark there. */
interface Progress {
  sent: number;
  mark: LogMark;
}

/** Makes a logger whose checkpoints save the caller's progress into `saved`. */
async function loggerSaving(driver: LogDriver, ctx: ReturnType<ContextMaker>, saved: { at?: Progress; checkpoints: number }): Promise<LogWriter> {
  const resume: LogResume = {};
  const w = await driver.createLogger(ctx, resume);
  // bound after the logger is made, as the contract allows; a first logger has stored what was sent
  resume.checkpoint = async (stored) => {
    saved.checkpoints++;
    saved.at = { sent: stored, mark: w.mark!() };
  };
  return w;
}

export function logResumeConformance(driver: LogDriver, context: ContextMaker, rotation: { rotating: Record<string, string> } | undefined): void {
  it("exactly once: a logger made again with a mark says how many it stored after it", async function () {
    const ctx = context();
    const first = await driver.createLogger(ctx, {});
    if (!first.mark) {
      await first.close();
      this.skip();
    }
    const atStart = first.mark!();
    for (let i = 0; i < 5; i++) await first.write(msg(numbered(i), i));
    const after5 = first.mark!();
    for (let i = 5; i < 8; i++) await first.write(msg(numbered(i), i));
    await first.close(); // the caller is killed here: its saved progress is 5, with after5
    const resumed = await driver.createLogger(ctx, { mark: after5 });
    expect(resumed.storedAfterMark).to.equal(3);
    // the caller skips those 3 and sends on
    for (let i = 8; i < 10; i++) await resumed.write(msg(numbered(i), i));
    await resumed.close();
    const fromStart = await driver.createLogger(ctx, { mark: atStart });
    expect(fromStart.storedAfterMark).to.equal(10);
    await fromStart.close();
    if (driver.createReader) {
      const got = texts(await collect(driver.createReader(ctx).read({ follow: false, stdout: true, stderr: true })));
      expect(got).to.deep.equal(Array.from({ length: 10 }, (_, k) => numbered(k)));
    }
  });

  if (!rotation) return;
  it("exactly once across rotations: checkpoints fence each rotation, and a stop anywhere loses and doubles nothing", async function () {
    const probe = await driver.createLogger(context(), {});
    const hasMark = !!probe.mark;
    await probe.close();
    if (!hasMark) this.skip();
    const TOTAL = 40;
    let checkpointsSeen = 0;
    for (const stopAt of [2, 7, 11, 16, 23, 29, 34, 40]) {
      const ctx = context(rotation.rotating);
      const saved: { at?: Progress; checkpoints: number } = { checkpoints: 0 };
      const w = await loggerSaving(driver, ctx, saved);
      saved.at = { sent: 0, mark: w.mark!() }; // a first start saves the mark before anything is written
      for (let i = 0; i < stopAt; i++) {
        await w.write(msg(numbered(i), i));
        if (i % 3 === 2) saved.at = { sent: i + 1, mark: w.mark!() }; // the caller saves now and then
      }
      await w.close(); // killed: the files stay as they are
      checkpointsSeen += saved.checkpoints;
      const progress = saved.at!;
      const again = await driver.createLogger(ctx, { mark: progress.mark });
      expect(again.storedAfterMark, `stopped at ${stopAt}, saved at ${progress.sent}`).to.equal(stopAt - progress.sent);
      for (let i = progress.sent + (again.storedAfterMark ?? 0); i < TOTAL; i++) await again.write(msg(numbered(i), i));
      await again.close();
      if (driver.createReader) {
        const got = texts(await collect(driver.createReader(ctx).read({ follow: false, stdout: true, stderr: true })));
        // rotation dropped the oldest: what is kept is every message from the first kept, once
        const from = numberOf(got[0]);
        expect(got, `stopped at ${stopAt}`).to.deep.equal(Array.from({ length: TOTAL - from }, (_, k) => numbered(from + k)));
      }
    }
    expect(checkpointsSeen, "checkpoints around rotations").to.be.above(0);
  });
}
