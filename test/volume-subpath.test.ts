/**
 * A volume mounted from a path inside it (`--mount type=volume,...,volume-subpath=P`, API 1.45's
 * `VolumeOptions.Subpath`), with the real Docker CLI against a real engined: a folder and a file
 * of the volume mounted, what the container writes landing in the volume, an empty subpath filled
 * from the image, symbolic links in the subpath followed inside the volume and refused where they
 * lead out (a container owns the volume's content, and a link there must never reach the host's
 * files), a missing subpath refused at
 * start in Docker's words, bad subpaths refused at create, `docker cp` through the subpath, and
 * the staging mounts gone when the container stops.
 */
import "./helpers/root-hooks.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";

describe("volumes mounted from a subpath", function () {
  this.timeout(60_000);

  let d: TestDaemon;
  let host: string;
  const dk = (...args: string[]): Promise<RunResult> => docker(host, args);
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}:\n${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const sub = (subpath: string, dest = "/m") => `type=volume,src=sv,dst=${dest},volume-subpath=${subpath}`;
  /** The staging mounts of this daemon present in the host's mount table. */
  const stagingMounts = () => readFileSync("/proc/self/mountinfo", "utf8").split("\n").filter((l) => l.includes(join(d.dir, "exec", "volume-subpaths")));

  before(async function () {
    d = await startEngined();
    host = `unix://${d.socket}`;
    ok(await dk("import", "--change", 'CMD ["sh"]', writeFixture(makeTempDir("engine-subpath-"), "busybox.tar", await busyboxRootfs()), "busybox"), "import busybox");
    ok(await dk("volume", "create", "sv"), "volume create");
    ok(await dk("run", "--pull", "never", "--rm", "-v", "sv:/v", "busybox", "sh", "-c", "mkdir -p /v/a/b /v/empty && echo hi > /v/a/b/f && echo top > /v/t && ln -s / /v/link && ln -s a /v/alink"), "fill the volume");
  });
  after(async function () {
    await d?.stop();
  });

  it("mounts a folder of the volume; what the container writes there is in the volume", async function () {
    expect(ok(await dk("run", "--pull", "never", "--rm", "--mount", sub("a/b"), "busybox", "sh", "-c", "cat /m/f; echo w > /m/w; ls /m"), "run").split("\n")).to.deep.equal(["hi", "f", "w", ""]);
    expect(ok(await dk("run", "--pull", "never", "--rm", "-v", "sv:/v", "busybox", "cat", "/v/a/b/w"), "read back")).to.equal("w\n");
    expect(ok(await dk("run", "--pull", "never", "--rm", "--mount", sub("./a/../a/b/"), "busybox", "cat", "/m/f"), "run, a lexically clean subpath")).to.equal("hi\n");
  });

  it("mounts a file of the volume; `.` is the whole volume", async function () {
    expect(ok(await dk("run", "--pull", "never", "--rm", "--mount", sub("t", "/t.txt"), "busybox", "cat", "/t.txt"), "file")).to.equal("top\n");
    expect(ok(await dk("run", "--pull", "never", "--rm", "--mount", sub("."), "busybox", "cat", "/m/t"), "dot")).to.equal("top\n");
  });

  it("fills an empty folder of the volume from the image, as a whole volume is filled", async function () {
    ok(await dk("run", "--pull", "never", "--rm", "--mount", sub("empty", "/etc"), "busybox", "true"), "run over /etc");
    expect(ok(await dk("run", "--pull", "never", "--rm", "-v", "sv:/v", "busybox", "ls", "/v/empty"), "ls")).to.include("passwd");
  });

  it("follows the subpath's symbolic links inside the volume, refuses those that lead out and a missing one, at start in Docker's words (TestRunMountVolumeSubdir)", async function () {
    const data = ok(await dk("volume", "inspect", "-f", "{{.Mountpoint}}", "sv"), "inspect").trim();
    expect(ok(await dk("run", "--pull", "never", "--rm", "--mount", sub("alink/b"), "busybox", "cat", "/m/f"), "a link inside")).to.equal("hi\n");
    for (const subpath of ["link", "link/etc"]) {
      const r = await dk("run", "--pull", "never", "--rm", "--mount", sub(subpath), "busybox", "ls", "/m");
      expect(r.code, subpath).to.equal(125);
      expect(r.stderr, subpath).to.include(`path concatenation escapes the base directory, base: ${data}, subpath: ${subpath}`);
    }
    for (const [subpath, why] of [["nope", "no such file or directory"], ["t/x", "not a directory"]]) {
      const r = await dk("run", "--pull", "never", "--rm", "--mount", sub(subpath), "busybox", "ls", "/m");
      // the Docker CLI's own rule: a start failure saying "no such file or directory" is 127
      expect(r.code, subpath).to.equal(why.startsWith("no such file") ? 127 : 125);
      expect(r.stderr, subpath).to.include(`cannot access path ${data}/${subpath}: ${why}`);
    }
    expect(stagingMounts()).to.deep.equal([]);
  });

  it("refuses at create a subpath that leaves the volume, is absolute, names no volume, or comes below API 1.45", async function () {
    for (const subpath of ["../x", "a/../../x", "/etc"]) {
      const r = await dk("create", "--pull", "never", "--mount", sub(subpath), "busybox");
      expect(r.code, subpath).to.equal(1);
      expect(r.stderr, subpath).to.include('invalid mount config for type "volume": subpath must be a relative path within the volume');
    }
    const body = { Image: "busybox", HostConfig: { Mounts: [{ Type: "volume", Source: "sv", Target: "/m", VolumeOptions: { Subpath: "a" } }] } };
    const old = await httpRequest({ socketPath: d.socket }, "POST", "/v1.44/containers/create", body);
    expect([old.status, JSON.parse(old.body).message]).to.deep.equal([400, "VolumeOptions.Subpath needs API v1.45 or newer"]);
    const anonymous = await dk("create", "--pull", "never", "--mount", "type=volume,dst=/m,volume-subpath=a", "busybox");
    expect(anonymous.stderr).to.include('invalid mount config for type "volume": must not set Subpath when using anonymous volumes');
  });

  it("keeps its staging mount while the container runs, and none once it stops; docker cp goes through the subpath", async function () {
    ok(await dk("run", "--pull", "never", "-d", "--name", "runner", "--mount", sub("a/b"), "busybox", "sleep", "60"), "run -d");
    expect(stagingMounts()).to.have.length(1);
    expect(ok(await dk("exec", "runner", "cat", "/m/f"), "exec")).to.equal("hi\n");
    ok(await dk("stop", "-t", "0", "runner"), "stop");
    expect(stagingMounts()).to.deep.equal([]);
    const copied = await dk("cp", "runner:/m/f", "-");
    expect(copied.stdout).to.include("hi\n");
    // the copy's own pin goes once the daemon has sent the whole tar, which may be just after the client read it
    for (let i = 0; i < 50 && stagingMounts().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(stagingMounts()).to.deep.equal([]);
    ok(await dk("rm", "runner"), "rm");
  });
});
