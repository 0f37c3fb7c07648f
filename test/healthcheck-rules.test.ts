/**
 * Docker's health-check rules (core/containers/healthcheck.ts), white-box: the merge of a
 * container's check over its image's, the checks at create, the probe's command, what a result
 * does to State.Health (start period, retries, the log of 5), the schedule, the output cap and
 * Go's duration form in the timeout message. End to end, with the Docker CLI: test/health*.test.ts.
 */
import { expect } from "chai";
import {
  applyHealthResult,
  goDuration,
  healthcheckProblem,
  mergeHealthcheck,
  nextProbeDelay,
  parseGoDuration,
  parseHealthcheckInstruction,
  ProbeOutput,
  probeCommand,
  startingHealth,
  type HealthResult,
} from "../core/containers/healthcheck.js";

const S = 1e9;
const at = (ms: number) => new Date(Date.parse("2026-01-01T00:00:00Z") + ms).toISOString();
const result = (ms: number, exitCode: number): HealthResult => ({ Start: at(ms), End: at(ms + 5), ExitCode: exitCode, Output: `run at ${ms}` });

describe("health check rules", () => {
  it("merges a container's check over its image's field by field, as Docker does at create", () => {
    const image = { Test: ["CMD", "true"], Interval: 5 * S, Timeout: 2 * S, Retries: 4 };
    expect(mergeHealthcheck(undefined, image)).to.deep.equal(image);
    expect(mergeHealthcheck({ Test: ["NONE"] }, image)).to.deep.equal({ Test: ["NONE"], Interval: 5 * S, Timeout: 2 * S, Retries: 4 });
    expect(mergeHealthcheck({ Interval: 1 * S }, image)).to.deep.equal({ Test: ["CMD", "true"], Interval: 1 * S, Timeout: 2 * S, Retries: 4 });
    expect(mergeHealthcheck({ Test: ["CMD-SHELL", "x"] }, undefined)).to.deep.equal({ Test: ["CMD-SHELL", "x"] });
    expect(mergeHealthcheck(undefined, undefined)).to.equal(undefined);
  });

  it("refuses durations under 1ms and negative retries with Docker's messages", () => {
    expect(healthcheckProblem({ Interval: 1000 })).to.equal("Interval in Healthcheck cannot be less than 1ms");
    expect(healthcheckProblem({ Timeout: 5 })).to.equal("Timeout in Healthcheck cannot be less than 1ms");
    expect(healthcheckProblem({ StartPeriod: 1 })).to.equal("StartPeriod in Healthcheck cannot be less than 1ms");
    expect(healthcheckProblem({ StartInterval: 1 })).to.equal("StartInterval in Healthcheck cannot be less than 1ms");
    expect(healthcheckProblem({ Retries: -1 })).to.equal("Retries in Healthcheck cannot be negative");
    expect(healthcheckProblem({ Interval: 0, Timeout: 1e6, Retries: 0 })).to.equal(undefined);
  });

  it("runs CMD as given and CMD-SHELL through the shell; NONE and unknown kinds run nothing", () => {
    expect(probeCommand({ Test: ["CMD", "cat", "/ok"] })).to.deep.equal(["cat", "/ok"]);
    expect(probeCommand({ Test: ["CMD-SHELL", "test -f /ok"] })).to.deep.equal(["/bin/sh", "-c", "test -f /ok"]);
    expect(probeCommand({ Test: ["CMD-SHELL", "x"] }, ["/bin/bash", "-c"])).to.deep.equal(["/bin/bash", "-c", "x"]);
    expect(probeCommand({ Test: ["NONE"] })).to.equal(undefined);
    expect(probeCommand({ Test: ["HTTP", "x"] })).to.equal(undefined);
    expect(probeCommand({ Test: [] })).to.equal(undefined);
  });

  it("turns healthy on a success, unhealthy after Retries failures in a row, and keeps the last 5 results", () => {
    const hc = { Test: ["CMD", "x"], Retries: 2 };
    let state = startingHealth();
    let step = applyHealthResult(state, result(1000, 1), { hc, startedAt: at(0) });
    expect([step.state.Status, step.state.FailingStreak, step.changed]).to.deep.equal(["starting", 1, false]);
    step = applyHealthResult(step.state, result(2000, 0), { hc, startedAt: at(0) });
    expect([step.state.Status, step.state.FailingStreak, step.changed]).to.deep.equal(["healthy", 0, true]);
    state = step.state;
    for (let i = 0; i < 2; i++) {
      step = applyHealthResult(state, result(3000 + i, 7), { hc, startedAt: at(0) });
      state = step.state;
    }
    expect([state.Status, state.FailingStreak, step.changed]).to.deep.equal(["unhealthy", 2, true]);
    for (let i = 0; i < 5; i++) state = applyHealthResult(state, result(9000 + i, 0), { hc, startedAt: at(0) }).state;
    expect(state.Log.map((r) => r.Output)).to.deep.equal([9000, 9001, 9002, 9003, 9004].map((ms) => `run at ${ms}`));
  });

  it("does not count failures inside the start period while starting, and does once it is over", () => {
    const hc = { Test: ["CMD", "x"], Retries: 1, StartPeriod: 10 * S };
    const inside = applyHealthResult(startingHealth(), result(5000, 1), { hc, startedAt: at(0) });
    expect([inside.state.Status, inside.state.FailingStreak]).to.deep.equal(["starting", 0]);
    const after = applyHealthResult(inside.state, result(11_000, 1), { hc, startedAt: at(0) });
    expect([after.state.Status, after.state.FailingStreak]).to.deep.equal(["unhealthy", 1]);
  });

  it("schedules probes: the interval; the start interval while starting in the start period", () => {
    const hc = { Interval: 30 * S, StartPeriod: 60 * S, StartInterval: 2 * S };
    expect(nextProbeDelay(hc, 0, "starting")).to.equal(2000);
    expect(nextProbeDelay(hc, 0, "healthy")).to.equal(30_000);
    expect(nextProbeDelay(hc, 45_000, "starting")).to.equal(2000);
    expect(nextProbeDelay(hc, 59_000, "starting")).to.equal(2000);
    expect(nextProbeDelay(hc, 70_000, "starting")).to.equal(30_000);
    // a start period shorter than the interval: probes at the start interval all the same
    expect(nextProbeDelay({ Interval: 30 * S, StartPeriod: 5 * S, StartInterval: 1 * S }, 0, "starting")).to.equal(1000);
    // without a start interval, Docker's default of 5 s within the start period
    expect(nextProbeDelay({ Interval: 30 * S, StartPeriod: 60 * S }, 10_000, "starting")).to.equal(5000);
    expect(nextProbeDelay({}, 0, "starting")).to.equal(30_000);
  });

  it("caps a probe's output at 4096 bytes with ... and prints durations as Go does", () => {
    const out = new ProbeOutput();
    out.write(Buffer.alloc(4000, "a"));
    out.write(Buffer.alloc(200, "b"));
    expect(out.toString()).to.equal(`${"a".repeat(4000)}${"b".repeat(96)}...`);
    const small = new ProbeOutput();
    small.write(Buffer.from("ok\n"));
    expect(small.toString()).to.equal("ok\n");
    expect([goDuration(30 * S), goDuration(1.5 * S), goDuration(500e6), goDuration(90 * S), goDuration(3600 * S)]).to.deep.equal(["30s", "1.5s", "500ms", "1m30s", "1h0m0s"]);
  });

  it("reads a HEALTHCHECK instruction as Docker's builder does", () => {
    expect(parseHealthcheckInstruction("--interval=1s --retries=2 CMD curl -f http://x/")).to.deep.equal({ Test: ["CMD-SHELL", "curl -f http://x/"], Interval: 1e9, Retries: 2 });
    expect(parseHealthcheckInstruction('--timeout=1m30s --start-period=500ms CMD ["cat", "/ok"]')).to.deep.equal({ Test: ["CMD", "cat", "/ok"], Timeout: 90e9, StartPeriod: 500e6 });
    expect(parseHealthcheckInstruction("NONE")).to.deep.equal({ Test: ["NONE"] });
    expect(() => parseHealthcheckInstruction("NONE x")).to.throw("HEALTHCHECK NONE takes no arguments");
    expect(() => parseHealthcheckInstruction("HTTP x")).to.throw('Unknown type "HTTP" in HEALTHCHECK (try CMD)');
    expect(() => parseHealthcheckInstruction("--retries=-1 CMD true")).to.throw("--retries cannot be negative (-1)");
    expect(() => parseHealthcheckInstruction("--interval=10us CMD true")).to.throw('Interval "interval" cannot be less than 1ms');
    expect(() => parseHealthcheckInstruction("--interval=soon CMD true")).to.throw('time: invalid duration "soon"');
    expect([parseGoDuration("1.5s"), parseGoDuration("2h45m"), parseGoDuration("0"), parseGoDuration("300ms")]).to.deep.equal([1.5e9, 9900e9, 0, 300e6]);
  });
});
