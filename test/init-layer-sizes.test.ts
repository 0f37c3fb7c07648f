/**
 * What a container's writable layer counts of the init layer's symlinks (initLinkBytes): the
 * bytes of `/etc/mtab`'s target where the link is there unchanged, nothing for a changed one,
 * and nothing, not an error, for a folder that is gone (a `system df` or `ps -s` that lists a
 * container while it is removed: the API fuzz run met it as a 500).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { initLinkBytes } from "../host/containers/init-layer.js";
import { makeTempDir } from "./helpers/engined.js";

describe("init layer: the bytes its links add to a writable layer", () => {
  it("counts /etc/mtab's target where the link is unchanged, not a changed one, and 0 for a folder that is gone", () => {
    const diff = join(makeTempDir("engine-init-sizes-"), "diff");
    mkdirSync(join(diff, "etc"), { recursive: true });
    expect(initLinkBytes(diff)).to.equal(0);
    symlinkSync("/proc/mounts", join(diff, "etc/mtab"));
    expect(initLinkBytes(diff)).to.equal("/proc/mounts".length);
    rmSync(join(diff, "etc/mtab"));
    symlinkSync("/elsewhere", join(diff, "etc/mtab"));
    expect(initLinkBytes(diff)).to.equal(0);
    rmSync(diff, { recursive: true });
    expect(initLinkBytes(diff)).to.equal(0);
  });
});
