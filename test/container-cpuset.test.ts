/** cpuset lists as Docker's daemon reads them (core/containers/cpuset.ts); the daemon's answers are in cli-run-flags. */
import { expect } from "chai";
import { cpusetRefusal, parseCpusetList } from "../core/containers/cpuset.js";

describe("cpuset lists (core/containers/cpuset.ts)", () => {
  it("reads numbers and ranges, and refuses what Docker refuses", () => {
    expect([...parseCpusetList("0-2,5,1")!].sort()).to.deep.equal([0, 1, 2, 5]);
    for (const bad of ["3-1", "0,abc", "0-", "1,,2", " 0", "", "-1", "0-1-2"]) expect(parseCpusetList(bad), bad).to.equal(undefined);
  });

  it("words the two refusals as dockerd does, and lets the empty value and the host's own cpus pass", () => {
    expect(cpusetRefusal("cpus", "", "0-1")).to.equal(undefined);
    expect(cpusetRefusal("cpus", "0-1,1", "0-1")).to.equal(undefined);
    expect(cpusetRefusal("cpus", "0,abc", "0-1")).to.equal("Invalid value 0,abc for cpuset cpus: invalid format: 0,abc");
    expect(cpusetRefusal("cpus", "0-2", "0-1")).to.equal("Requested CPUs are not available - requested 0-2, available: 0-1");
    expect(cpusetRefusal("mems", "1", "0")).to.equal("Requested memory nodes are not available - requested 1, available: 0");
    expect(cpusetRefusal("cpus", "0-4000000000", "0-1")).to.match(/^Requested CPUs are not available/);
    // a host without a cpuset controller: only the form is checked
    expect(cpusetRefusal("cpus", "7", undefined)).to.equal(undefined);
  });
});
