/**
 * Every kill point of volume create and network create: engined is killed with SIGKILL at each
 * step the operation passes, in turn (core/kill-points.ts), started again on the same roots, and
 * checked (helpers/kill-checks.ts): the volume is listed and has its folder, or has neither; the
 * network is listed and has its bridge and rules, or has neither; nothing else is left. The
 * daemon runs in a network namespace of its own, where its bridges and rules are made.
 */
import "./helpers/root-hooks.js";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { makeTempDir, ROOT } from "./helpers/engined.js";
import { everyStep, KillBed, reportTrials } from "./helpers/kill-bed.js";
import { settledProblems } from "./helpers/kill-checks.js";
import { makeNetns, type Netns } from "./helpers/net-daemon.js";

describe("kill points: volumes and networks", function () {
  this.timeout(600_000);
  let ns: Netns;
  let bed: KillBed;

  before(async function () {
    if (process.getuid?.() !== 0) this.skip();
    ns = makeNetns();
    bed = new KillBed({ netns: ns });
    await bed.start();
  });

  after(async () => {
    await bed?.stop();
    ns?.remove();
    if (bed) reportTrials("volumes and networks", bed);
  });

  /** Removes what a trial may have made (a 404 when it did not). */
  const remove = (path: string) => async () => {
    const r = await bed.api("DELETE", path);
    if (r.status !== 204 && r.status !== 404) throw new Error(`DELETE ${path}: ${r.status} ${r.body}`);
  };

  /** The object is there whole (inspect answers) or not at all (404); the common checks say the rest. */
  const listedOrAbsent = (path: string) => async (_: unknown, why: string) => {
    const r = await bed.api("GET", path);
    if (r.status !== 404) expect(r.status, `${why}: ${r.body}`).to.equal(200);
  };

  it("volume create", async () => {
    const steps = await everyStep(bed, {
      name: "volume create",
      prepare: async () => undefined,
      op: () => bed.ok("POST", "/volumes/create", { Name: "killed", Labels: { made: "here" } }),
      after: listedOrAbsent("/volumes/killed"),
      cleanup: remove("/volumes/killed"),
      problems: () => settledProblems(bed, ns),
    });
    expect(steps).to.include.members(["volume.driver-made", "volume.saved"]);
  });

  it("network create", async () => {
    const steps = await everyStep(bed, {
      name: "network create",
      prepare: async () => undefined,
      op: () => bed.ok("POST", "/networks/create", { Name: "killed" }),
      after: listedOrAbsent("/networks/killed"),
      cleanup: remove("/networks/killed"),
      problems: () => settledProblems(bed, ns),
    });
    expect(steps).to.include.members(["network.saved", "bridge.link-made", "bridge.rules-added", "network.made"]);
  });
});

describe("kill points: the mechanism", () => {
  const script = (body: string) =>
    `import { configureKillPoints, killPoint, armKillPoints } from ${JSON.stringify(join(ROOT, "dist/core/kill-points.js"))};\n` +
    `configureKillPoints("ENGINE_DAEMON", process.env, { armed: false });\n${body}\nprocess.stdout.write("lived");`;
  const run = (body: string, env: NodeJS.ProcessEnv) => spawnSync(process.execPath, ["--input-type=module", "-e", script(body)], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 20_000 });

  it("dies the n-th time the step is reached, once armed; traces every step; costs nothing unset", () => {
    const dir = makeTempDir("engine-kill-unit-");
    const trace = join(dir, "trace");
    const steps = 'killPoint("a"); armKillPoints(); killPoint("a"); killPoint("b"); killPoint("a"); killPoint("a");';
    const killed = run(steps, { ENGINE_DAEMON_KILL_POINT: "a:2", ENGINE_DAEMON_KILL_TRACE: trace });
    expect([killed.signal, killed.stdout]).to.deep.equal(["SIGKILL", ""]);
    // the step before arming is neither counted nor traced
    expect(readFileSync(trace, "utf8")).to.equal("a\nb\na\n");
    expect(run(steps, {}).stdout).to.equal("lived");
    expect(run(steps, { ENGINE_DAEMON_KILL_POINT: "a:4" }).stdout).to.equal("lived");
  });

  it("reads @FILE at every step, and counts again when its content changes", () => {
    const dir = makeTempDir("engine-kill-unit-");
    const file = join(dir, "point");
    writeFileSync(file, "");
    const body = `armKillPoints(); const { writeFileSync } = await import("node:fs");
      killPoint("x"); writeFileSync(${JSON.stringify(file)}, "x:2"); killPoint("x"); process.stdout.write("1"); killPoint("x");`;
    const r = run(body, { ENGINE_DAEMON_KILL_POINT: `@${file}` });
    expect([r.signal, r.stdout]).to.deep.equal(["SIGKILL", "1"]);
  });
});
