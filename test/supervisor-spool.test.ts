/**
 * conmon's spool stays small however much a container prints (host/supervisor/spool.ts): what
 * the drain handed to the log driver leaves the spool (rotation by rename and conmon's reopen),
 * and conmon waits while the drain is behind. Real conmon and runc; the spool's size is sampled
 * while a container prints 200 MB, and the json-file log holds every line once, in order, or,
 * with max-size and max-file, exactly what its rotation keeps. The spool followed the way attach
 * follows it, and `docker logs` / `docker run` through engined, see every line across the
 * spool's rotations.
 */
import "./helpers/root-hooks.js";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { followK8sLog } from "../host/containers/k8s-log-follow.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { checkJsonFiles, lastEntryBytes, LINE_BYTES, numberedChecker, printNumbered, rssKiB, sizeOf } from "./helpers/numbered-lines.js";
import { SupervisorBed } from "./helpers/supervisor-bed.js";

const MiB = 1024 * 1024;
const BOUND = 16 * MiB;

/** Samples the spool's size (all of its files) and the supervisor's memory every 50 ms. */
function sampleSpool(bed: SupervisorBed, id: string) {
  const dir = bed.containerDir(id);
  let maxSpool = 0;
  let maxRss = 0;
  let samples = 0;
  const series: string[] = [];
  const started = Date.now();
  const timer = setInterval(() => {
    const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith("output.log")) : [];
    const spool = files.reduce((sum, f) => sum + sizeOf(join(dir, f)), 0);
    const rss = rssKiB(bed.sup.pid);
    maxSpool = Math.max(maxSpool, spool);
    maxRss = Math.max(maxRss, rss);
    if (samples++ % 40 === 0) series.push(`${((Date.now() - started) / 1000).toFixed(0)}s:${(spool / MiB).toFixed(1)}M`);
  }, 50);
  return {
    stop() {
      clearInterval(timer);
      return { maxSpool, maxRssMiB: Math.round(maxRss / 1024), samples, series, seconds: (Date.now() - started) / 1000 };
    },
  };
}

describe("supervisor spool: bounded while a container prints", function () {
  this.timeout(600_000);
  const bed = new SupervisorBed("spool");

  before(async function () {
    if (!SupervisorBed.usable()) this.skip();
    await bed.start();
  });
  after(async () => {
    await bed.close();
  });

  it("keeps the spool under 16 MiB while 200 MB go by, and the json-file log has every line once, in order", async () => {
    const lines = 2_000_000;
    const rssBefore = rssKiB(bed.sup.pid);
    const { id } = await bed.run(printNumbered(lines, { exitCode: 7 }));
    const sampler = sampleSpool(bed, id);
    const exitCode = await bed.sup.client.wait(id);
    const seen = sampler.stop();
    // A figure to read in the test's output, not an assertion.
    console.log(`      200 MB: ${seen.seconds.toFixed(1)} s, spool at most ${(seen.maxSpool / MiB).toFixed(1)} MiB over ${seen.samples} samples (${seen.series.join(" ")}), supervisor RSS ${Math.round(rssBefore / 1024)} -> at most ${seen.maxRssMiB} MiB`);
    expect(exitCode).to.equal(7);
    expect(seen.maxSpool).to.be.below(BOUND);
    const check = await checkJsonFiles([bed.jsonLog(id)]);
    expect(check.errors).to.deep.equal([]);
    expect([check.first, check.last, check.lines]).to.deep.equal([1, lines, lines]);
    await bed.remove(id);
  });

  it("with max-size and max-file keeps exactly what the rotation keeps; the spool followed as attach follows it has every line", async () => {
    const lines = 300_000;
    const maxSize = 5_000_000;
    // A second of quiet first: the follower below starts before the output does.
    const { id, logPath } = await bed.run(printNumbered(lines, { waitFirst: 1 }), { "max-size": "5m", "max-file": "3" });
    // registered as engined's attach registers (spool-followers.ts): on a loaded machine an
    // unregistered reader can fall behind the spool's retired files, which then go
    const report = await bed.sup.client.follow(id);
    const sampler = sampleSpool(bed, id);
    const exit = bed.sup.client.wait(id);
    const follower = numberedChecker();
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 300_000);
    try {
      for await (const l of followK8sLog(logPath, exit, abort.signal, 250, 0, (ino) => report.report(ino))) follower.add(l.line.toString(), l.partial);
    } finally {
      clearTimeout(timer);
      report.close();
    }
    expect(await exit).to.equal(0);
    const seen = sampler.stop();
    expect(seen.maxSpool).to.be.below(BOUND);
    expect(follower.result.errors).to.deep.equal([]);
    expect([follower.result.first, follower.result.last, follower.result.lines]).to.deep.equal([1, lines, lines]);

    // Docker's rotation: three files; each rotated one was cut at the first write that found it
    // at max-size or past it (so it passes max-size by less than its last entry).
    const file = bed.jsonLog(id);
    expect(readdirSync(join(bed.dir, "logs", id)).sort()).to.deep.equal([`${id}-json.log`, `${id}-json.log.1`, `${id}-json.log.2`]);
    for (const rotated of [`${file}.2`, `${file}.1`]) {
      expect(sizeOf(rotated)).to.be.at.least(maxSize);
      expect(sizeOf(rotated) - lastEntryBytes(rotated)).to.be.below(maxSize);
    }
    expect(sizeOf(file)).to.be.below(maxSize + 2 * LINE_BYTES);
    // What is kept is the end of the output, each line once, in order.
    const kept = await checkJsonFiles([`${file}.2`, `${file}.1`, file]);
    expect(kept.errors).to.deep.equal([]);
    expect(kept.last).to.equal(lines);
    expect(kept.lines).to.equal(lines - kept.first! + 1);
    await bed.remove(id);
  });
});

describe("supervisor spool: docker run and docker logs through engined", function () {
  this.timeout(300_000);
  let d: TestDaemon;
  let host: string;
  const lines = 200_000; // 20 MB: about twenty rotations of the spool

  before(async function () {
    if (!SupervisorBed.usable()) this.skip();
    d = await startEngined();
    host = `unix://${d.socket}`;
    const r = await docker(host, ["import", "--change", 'CMD ["sh"]', writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs()), "busybox"]);
    expect(r.code, r.stderr).to.equal(0);
  });
  after(async () => {
    await docker(host, ["rm", "-f", "spool-attach", "spool-logs"]).catch(() => undefined);
    await d?.stop();
  });

  const numbered = (text: string) => {
    const check = numberedChecker();
    const all = text.split("\n");
    all.pop();
    for (const l of all) check.add(l, false);
    return check.result;
  };

  it("docker run (attached, log driver none: the spool is followed) prints every line once", async () => {
    const run = await docker(host, ["run", "--name", "spool-attach", "--log-driver", "none", "busybox", ...printNumbered(lines, { exitCode: 4 })], {}, { timeoutMs: 240_000 });
    expect(run.code, run.stderr).to.equal(4);
    const check = numbered(run.stdout);
    expect(check.errors).to.deep.equal([]);
    expect([check.first, check.last, check.lines]).to.deep.equal([1, lines, lines]);
  });

  it("docker logs of a json-file container gives every line once", async () => {
    const run = await docker(host, ["run", "-d", "--name", "spool-logs", "busybox", ...printNumbered(lines)]);
    expect(run.code, run.stderr).to.equal(0);
    expect((await docker(host, ["wait", "spool-logs"], {}, { timeoutMs: 240_000 })).stdout.trim()).to.equal("0");
    const logs = await docker(host, ["logs", "spool-logs"], {}, { timeoutMs: 120_000 });
    expect(logs.code, logs.stderr).to.equal(0);
    const check = numbered(logs.stdout);
    expect(check.errors).to.deep.equal([]);
    expect([check.first, check.last, check.lines]).to.deep.equal([1, lines, lines]);
  });
});
