/**
 * The log-driver conformance suite: what every log driver must do (core/contracts/log.ts),
 * tested for real: real drivers, real files in a temporary folder, real servers where a driver
 * sends its messages elsewhere.
 *
 * A driver's test calls `logConformance("<name>", makeDriver, abilities)`. What the driver says
 * it can do decides which tests run: `capabilities` with `read` (reading back, tail, since,
 * until, follow: log-conformance-read.ts, with rotation when `abilities.rotation` names its
 * options), a logger with `mark` (exactly-once resume: log-conformance-resume.ts), and
 * `abilities.received` for a driver that sends elsewhere (what arrived there is checked).
 */
import { expect } from "chai";
import type { LogDriver, LogStream } from "../core/contracts/log.js";
import { collect, loggerContext, msg, until } from "./log-conformance-kit.js";
import { logReadConformance } from "./log-conformance-read.js";
import { logResumeConformance } from "./log-conformance-resume.js";

/** One option set a driver must refuse, and where: `validateOptions` (create) or `createLogger` (start). */
export interface RefusedOptions {
  options: Record<string, string>;
  /** What the error says (it names the option, or is Docker's message for the value). */
  message: RegExp;
  at: "validate" | "start";
}

export interface LogConformanceAbilities {
  /** Options every logger of the suite is made with (where the driver sends: a test server). */
  base?: Record<string, string>;
  /** Option sets the driver refuses; an unknown option is always tried, unless `acceptsAnyOption`. */
  refused?: RefusedOptions[];
  /** The driver keeps nothing and so checks no option (Docker's `none` lets any through). */
  acceptsAnyOption?: boolean;
  /** For a driver that can read: options that make it rotate after a few hundred bytes, keeping several files, plain and gzipped. */
  rotation?: { rotating: Record<string, string>; compressed: Record<string, string> };
  /** For a driver that sends elsewhere: the messages that arrived there so far, oldest first. */
  received?: () => { line: string; stream: LogStream }[];
  /** Per test, default 20 s. */
  timeoutMs?: number;
}

/** The error `fn` throws or rejects with, or undefined. */
async function failure(fn: () => unknown): Promise<Error | undefined> {
  try {
    await fn();
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

const UNKNOWN = "engine-conformance-unknown";

export function logConformance(name: string, makeDriver: () => LogDriver, abilities: LogConformanceAbilities = {}): void {
  const base = abilities.base ?? {};
  const context = (options: Record<string, string> = {}, logDir?: string) => loggerContext({ ...base, ...options }, logDir);

  describe(`log driver conformance: ${name}`, function () {
    this.timeout(abilities.timeoutMs ?? 20_000);
    const driver = makeDriver();
    const canRead = driver.capabilities.includes("read");

    it("says who it is, and has a reader exactly when it declares read", function () {
      expect(driver.name).to.equal(name);
      for (const c of driver.capabilities) expect(["read"]).to.include(c);
      expect(typeof driver.createReader === "function").to.equal(canRead);
    });

    it("accepts no options and its base options; refuses an unknown one and bad values, naming them", async function () {
      expect(() => driver.validateOptions({})).not.to.throw();
      expect(() => driver.validateOptions(base)).not.to.throw();
      if (abilities.acceptsAnyOption) {
        expect(() => driver.validateOptions({ [UNKNOWN]: "1" })).not.to.throw();
        const w = await driver.createLogger(context({ [UNKNOWN]: "1" }));
        await w.close();
      } else {
        expect(() => driver.validateOptions({ ...base, [UNKNOWN]: "1" })).to.throw(new RegExp(UNKNOWN));
        expect((await failure(() => driver.createLogger(context({ [UNKNOWN]: "1" }))))?.message, "createLogger").to.match(new RegExp(UNKNOWN));
      }
      for (const r of abilities.refused ?? []) {
        const options = { ...base, ...r.options };
        if (r.at === "validate") expect(() => driver.validateOptions(options), JSON.stringify(r.options)).to.throw(r.message);
        else expect(() => driver.validateOptions(options), JSON.stringify(r.options)).not.to.throw();
        // the logger checks its options first, whatever validateOptions left to the start
        expect((await failure(() => driver.createLogger(context(r.options))))?.message, `createLogger ${JSON.stringify(r.options)}`).to.match(r.message);
      }
    });

    it("stores messages written without waiting, in the order of the calls", async function () {
      const ctx = context();
      const w = await driver.createLogger(ctx);
      const sent = Array.from({ length: 50 }, (_, i) => msg(`burst ${name} ${i}`, i, i % 2 ? "stderr" : "stdout"));
      await Promise.all(sent.map((m) => w.write(m)));
      await w.close();
      const expected = sent.map((m) => [m.line.toString(), m.stream]);
      if (canRead) {
        const got = await collect(driver.createReader!(ctx).read({ follow: false, stdout: true, stderr: true }));
        expect(got.map((m) => [m.line.toString(), m.stream])).to.deep.equal(expected);
      }
      if (abilities.received) {
        const mine = () => abilities.received!().filter((r) => r.line.startsWith(`burst ${name} `));
        await until(() => mine().length >= sent.length);
        expect(mine().map((r) => [r.line, r.stream])).to.deep.equal(expected);
      }
    });

    it("closes: `closed` settles, a second close is fine, a write after close is an error", async function () {
      const w = await driver.createLogger(context());
      await w.write(msg("before close"));
      let settled = false;
      void w.closed.then(() => (settled = true));
      await w.close();
      await w.closed;
      expect(settled).to.equal(true);
      await w.close();
      const late = await failure(() => w.write(msg("after close", 1)));
      expect(late, "write after close").to.be.instanceOf(Error);
    });

    if (canRead) logReadConformance(driver, context, abilities.rotation);
    logResumeConformance(driver, context, abilities.rotation);
  });
}
