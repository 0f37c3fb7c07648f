/**
 * Rules between options and the host. This machine has cgroup v1 and no systemd; the rules for
 * the other hosts are checked here with their facts (the start-up tests cover this host's).
 */
import { expect } from "chai";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveOptions } from "../core/options/resolve.js";
import { cgroupDriverOf, cgroupParentOf, checkRules, type RuleHost } from "../core/options/rules.js";
import { parseDaemonArgs } from "../host/daemon-args.js";

const v1: RuleHost = { platform: "linux", cgroupVersion: 1, systemd: false };
const v2systemd: RuleHost = { platform: "linux", cgroupVersion: 2, systemd: true };
const v2plain: RuleHost = { platform: "linux", cgroupVersion: 2, systemd: false };
const config = (...args: string[]) => resolveOptions(parseDaemonArgs(args), {}).config;

describe("option rules", () => {
  it("picks cgroupfs on cgroup v1, systemd on cgroup v2 with systemd, and what native.cgroupdriver says", () => {
    expect(cgroupDriverOf(config(), v1)).to.equal("cgroupfs");
    expect(cgroupDriverOf(config(), v2plain)).to.equal("cgroupfs");
    expect(cgroupDriverOf(config(), v2systemd)).to.equal("systemd");
    expect(cgroupDriverOf(config("--exec-opt", "native.cgroupdriver=cgroupfs"), v2systemd)).to.equal("cgroupfs");
  });

  it("defaults the cgroup parent to /engine with cgroupfs and system.slice with systemd", () => {
    expect(cgroupParentOf(config(), v1)).to.equal("/engine");
    expect(cgroupParentOf(config(), v2systemd)).to.equal("system.slice");
    expect(cgroupParentOf(config("--cgroup-parent", "engine-a.slice"), v2systemd)).to.equal("engine-a.slice");
  });

  it("refuses a cgroup parent that is not a slice with the systemd driver", () => {
    expect(() => checkRules(config("--cgroup-parent", "/engine"), v2systemd)).to.throw('must be a slice name such as "engine.slice"');
    expect(() => checkRules(config("--cgroup-parent", "/engine"), v1)).to.not.throw();
  });

  it("refuses cpu-rt-period and cpu-rt-runtime on cgroup v2, and a runtime above the period", () => {
    expect(() => checkRules(config("--cpu-rt-period", "1000000"), v2systemd)).to.throw("not supported with cgroup v2");
    expect(() => checkRules(config("--cpu-rt-period", "1000000", "--cpu-rt-runtime", "950000"), v1)).to.not.throw();
    expect(() => checkRules(config("--cpu-rt-period", "1000", "--cpu-rt-runtime", "2000"), v1)).to.throw("cannot be higher");
  });

  it("accepts isolation only on the win platform", () => {
    expect(() => checkRules(config("--exec-opt", "isolation=process"), v1)).to.throw("for the win platform only");
    expect(() => checkRules(config("--exec-opt", "isolation=process"), { ...v1, platform: "win" })).to.not.throw();
  });

  it("refuses, as Docker 28 at start, a userland proxy path that is relative, missing, a folder or not executable, unless the proxy is off (moby's TestDaemonWithUserlandProxyPath)", () => {
    const dir = mkdtempSync(join(tmpdir(), "engine-proxy-path-"));
    const plain = join(dir, "plain");
    writeFileSync(plain, "", { mode: 0o644 });
    expect(() => checkRules(config("--userland-proxy-path", "docker-proxy"), v1)).to.throw("invalid userland-proxy-path: must be an absolute path: docker-proxy");
    expect(() => checkRules(config("--userland-proxy-path", "/does/not/exist"), v1)).to.throw(
      'invalid userland-proxy-path: exec: "/does/not/exist": stat /does/not/exist: no such file or directory',
    );
    expect(() => checkRules(config("--userland-proxy-path", dir), v1)).to.throw(`invalid userland-proxy-path: exec: "${dir}": is a directory`);
    expect(() => checkRules(config("--userland-proxy-path", plain), v1)).to.throw(`invalid userland-proxy-path: exec: "${plain}": permission denied`);
    expect(() => checkRules(config("--userland-proxy-path", "/does/not/exist", "--userland-proxy=false"), v1)).to.not.throw();
    expect(() => checkRules(config("--userland-proxy-path", "/bin/true"), v1)).to.not.throw();
    rmSync(dir, { recursive: true });
  });

  it("refuses a daemon label given with two values, and takes the same one twice (moby's TestInfoLabels, Docker 28's GetConflictFreeLabels)", () => {
    expect(() => checkRules(config("--label", 'test.label="1"', "--label", 'test.label="2"'), v1)).to.throw('conflict labels for test.label="2" and test.label="1"');
    expect(() => checkRules(config("--label", "test.empty=", "--label", "test.empty="), v1)).to.not.throw();
  });

  it("names every broken rule in one message", () => {
    expect(() => checkRules(config("--metrics-addr", "127.0.0.1:9323", "--cpu-rt-period", "5"), v2plain)).to.throw(
      "invalid daemon configuration: cpu-rt-period and cpu-rt-runtime are not supported with cgroup v2; metrics-addr is only supported when experimental is enabled",
    );
  });
});
