/**
 * Every kill point of volume create and network create: engined is killed with SIGKILL at each
 * step the operation passes, in turn (core/kill-points.ts), started again on the same roots, and
 * checked (helpers/kill-checks.ts): the volume is listed and has its folder, or has neither; the
 * network is listed and has its bridge and rules, or has neither; nothing else is left. The
 * daemon runs in a network namespace of its own, where its bridges and rules are made.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
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

  it("volume create", async () => {
    const steps = await everyStep(bed, {
      name: "volume create",
      prepare: async () => undefined,
      op: () => bed.ok("POST", "/volumes/create", { Name: "killed", Labels: { made: "here" } }),
      after: async (_, why) => {
        const r = await bed.api("GET", "/volumes/killed");
        if (r.status === 404) return;
        expect(r.status, `${why}: ${r.body}`).to.equal(200);
      },
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
      after: async (_, why) => {
        const r = await bed.api("GET", "/networks/killed");
        if (r.status === 404) return;
        expect(r.status, `${why}: ${r.body}`).to.equal(200);
      },
      cleanup: remove("/networks/killed"),
      problems: () => settledProblems(bed, ns),
    });
    expect(steps).to.include.members(["network.saved", "bridge.link-made", "bridge.rules-added", "network.made"]);
  });
});
