/**
 * The cgroup folder an OCI spec's cgroupsPath names (host/containers/cgroup-files.ts), on this
 * host's own cgroup mounts: runc's cgroupfs paths as they are, systemd's slice:prefix:name as
 * the scope under its slices' folders (no systemd runs here: the path is what is checked), and
 * nothing for a relative path.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { existsSync } from "node:fs";
import { cgroupDirOfSpecPath } from "../host/containers/cgroup-files.js";

describe("cgroup folders of OCI cgroupsPath values", () => {
  it("reads cgroupfs paths, systemd's slice:prefix:name, and refuses relative ones", function () {
    const v1 = existsSync("/sys/fs/cgroup/memory/memory.oom_control");
    const base = v1 ? "/sys/fs/cgroup/memory" : "/sys/fs/cgroup";
    const version = v1 ? 1 : 2;
    expect(cgroupDirOfSpecPath("/engine/abc", "memory")).to.deep.equal({ version, dir: `${base}/engine/abc` });
    expect(cgroupDirOfSpecPath("system.slice:engine:abc", "memory")).to.deep.equal({ version, dir: `${base}/system.slice/engine-abc.scope` });
    expect(cgroupDirOfSpecPath("kubepods-burstable-pod1.slice:cri:abc", "memory")).to.deep.equal({
      version,
      dir: `${base}/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/cri-abc.scope`,
    });
    expect(cgroupDirOfSpecPath("-.slice::abc", "memory")).to.deep.equal({ version, dir: `${base}/abc.scope` });
    expect(cgroupDirOfSpecPath("engine/abc", "memory")).to.equal(undefined);
  });
});
