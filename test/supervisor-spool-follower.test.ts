/**
 * A follower of conmon's spool never loses lines (host/supervisor/spool-followers.ts): attach
 * with log driver `none` follows the spool, whose drain retires and removes its files at
 * conmon's own speed. Here engined is stopped (SIGSTOP) for a few seconds while the attached
 * container prints 20 MB: the supervisor keeps the files engined's follower has not read (and
 * stops conmon rather than let them grow past the spool's bound), so `docker run` still prints
 * every line once, in order, and the spool stays under its bound meanwhile. Against the
 * supervisor alone: a follower whose event loop is blocked finds every file, conmon waits for
 * it, and a follower that goes away or falls silent no longer holds the container.
 */
import "./helpers/root-hooks.js";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect } from "chai";
import { followK8sLog } from "../host/containers/k8s-log-follow.js";
import { http } from "../core/node-http.js";
import { FOLLOWER_SILENT_MS, SpoolFollowers } from "../host/supervisor/spool-followers.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { checkJsonFiles, numberedChecker, printNumbered, sizeOf, type NumberedCheck } from "./helpers/numbered-lines.js";
import { eventually } from "./helpers/stalled-client.js";
import { SupervisorBed } from "./helpers/supervisor-bed.js";

const MiB = 1024 * 1024;
const BOUND = 16 * MiB;

/** Every `output.log*` file under `dir` (the spools of the daemon's containers): its name and size. */
function spoolFiles(dir: string, depth = 6): [string, number][] {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const files: [string, number][] = [];
  for (const e of entries) {
    if (e.isDirectory() && depth > 0) files.push(...spoolFiles(join(dir, e.name), depth - 1));
    else if (e.isFile() && e.name.startsWith("output.log")) files.push([e.name, sizeOf(join(dir, e.name))]);
  }
  return files;
}

/** The largest spool seen by `sample`, and its files then (said when the bound is not kept). */
class SpoolPeak {
  bytes = 0;
  files = "";
  constructor(private readonly dir: () => string) {}
  sample(): number {
    const files = spoolFiles(this.dir());
    const bytes = files.reduce((sum, [, size]) => sum + size, 0);
    if (bytes > this.bytes) {
      this.bytes = bytes;
      this.files = files.map(([name, size]) => `${name.replace("output.log", "") || "live"} ${(size / MiB).toFixed(1)}`).join(", ");
    }
    return bytes;
  }
  toString(): string {
    return `${(this.bytes / MiB).toFixed(1)} MiB (${this.files})`;
  }
}

interface AttachedRun {
  code: number | null;
  check: NumberedCheck;
  stderr: string;
  spool: SpoolPeak;
}

/**
 * `docker run` attached, its stdout checked line by line as it comes; `onFirstOutput` is called
 * once, at the first bytes. The spool under the daemon's exec root is sampled every 20 ms.
 */
function runAttached(d: TestDaemon, args: string[], onFirstOutput: () => Promise<void>, timeoutMs: number): Promise<AttachedRun> {
  const config = mkdtempSync(join(tmpdir(), "engine-docker-config-"));
  const check = numberedChecker();
  let piece = "";
  let stderr = "";
  const spool = new SpoolPeak(() => join(d.dir, "exec"));
  let first: Promise<void> | undefined;
  const sampler = setInterval(() => spool.sample(), 20);
  const child = spawn("docker", ["-H", `unix://${d.socket}`, ...args], {
    env: { ...process.env, DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined, DOCKER_CONFIG: config },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  child.stdout.on("data", (chunk: Buffer) => {
    first ??= onFirstOutput();
    const lines = (piece + chunk.toString("utf8")).split("\n");
    piece = lines.pop()!;
    for (const l of lines) check.add(l, false);
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      clearInterval(sampler);
      rmSync(config, { recursive: true, force: true });
      if (piece) check.result.errors.push(`unfinished: ${piece.slice(0, 20)}`);
      void (first ?? Promise.resolve()).then(() => resolve({ code, check: check.result, stderr, spool }));
    });
  });
}

/** Stops engined (its event loop and its follower with it) for `ms`, then continues it. */
async function stopFor(d: TestDaemon, ms: number): Promise<void> {
  const pid = d.proc.pid!;
  process.kill(pid, "SIGSTOP");
  try {
    await new Promise((r) => setTimeout(r, ms));
  } finally {
    process.kill(pid, "SIGCONT");
  }
}

describe("supervisor spool: a follower that falls behind loses nothing", function () {
  this.timeout(300_000);
  let d: TestDaemon;
  const lines = 200_000; // 20 MB: about twenty rotations of the spool

  before(async function () {
    if (!SupervisorBed.usable()) this.skip();
    d = await startEngined();
    const r = await docker(`unix://${d.socket}`, ["import", "--change", 'CMD ["sh"]', writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs()), "busybox"]);
    expect(r.code, r.stderr).to.equal(0);
  });
  after(async () => {
    if (d) await docker(`unix://${d.socket}`, ["rm", "-f", "spool-stalled"]).catch(() => undefined);
    await d?.stop();
  });

  it("docker run (attached, log driver none) with engined stopped for 4 s while 20 MB go by prints every line once; the spool stays bounded", async () => {
    const started = Date.now();
    const run = await runAttached(d, ["run", "--rm", "--name", "spool-stalled", "--log-driver", "none", "busybox", ...printNumbered(lines, { exitCode: 4 })], () => stopFor(d, 4000), 240_000);
    console.log(`      ${((Date.now() - started) / 1000).toFixed(1)} s, spool at most ${run.spool}, ${run.check.lines} lines`);
    expect(run.code, run.stderr).to.equal(4);
    expect(run.check.errors).to.deep.equal([]);
    expect([run.check.first, run.check.last, run.check.lines]).to.deep.equal([1, lines, lines]);
    expect(run.spool.bytes, `the spool at most ${run.spool}`).to.be.below(BOUND);
  });
});

describe("supervisor spool: followers registered with the supervisor", function () {
  this.timeout(300_000);
  const bed = new SupervisorBed("follow");
  const lines = 200_000;
  /** The process state letter of /proc/<pid>/stat: `T` while stopped. */
  const procState = (pid: number) => readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "")[0];
  /** The retired files' bytes (`output.log.old<N>`): past 4 MiB only while kept for a follower. */
  const retiredBytes = (id: string) => readdirSync(bed.containerDir(id)).filter((f) => f.startsWith("output.log.old")).reduce((sum, f) => sum + sizeOf(join(bed.containerDir(id), f)), 0);
  /**
   * Whether conmon waits for a follower (and not only for the drain, whose lag stops conmon too
   * under load): stopped, with more retired files than the spool keeps for nobody. Let go: the
   * files are given up at once, and conmon goes on once the drain has caught up.
   */
  const heldForFollower = (id: string, pid: number) => procState(pid) === "T" && retiredBytes(id) > 4 * MiB;
  const letGo = (id: string, pid: number) => retiredBytes(id) <= 4 * MiB && procState(pid) !== "T";

  before(async function () {
    if (!SupervisorBed.usable()) this.skip();
    await bed.start();
  });
  after(async () => {
    await bed.close();
  });

  it("a follower whose event loop stops for 5 s finds every file: the oldest is kept, conmon waits, the spool stays bounded", async () => {
    // A second of quiet first: the follower registers and opens the spool before the output comes.
    const { id, logPath } = await bed.run(printNumbered(lines, { waitFirst: 1, exitCode: 3 }));
    const report = await bed.sup.client.follow(id);
    const conmon = (await bed.sup.client.get(id)).conmonPid;
    const exit = bed.sup.client.wait(id);
    const check = numberedChecker();
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), 240_000);
    const spool = new SpoolPeak(() => bed.containerDir(id));
    const sampler = setInterval(() => spool.sample(), 20);
    let afterStall: { state: string; firstKept: boolean; spool: number } | undefined;
    try {
      for await (const l of followK8sLog(logPath, exit, abort.signal, 250, 0, (ino) => report.report(ino))) {
        check.add(l.line.toString(), l.partial);
        if (check.result.lines !== 1000 || afterStall) continue;
        // The whole event loop stands still (a busy engined): no look at the folder, no report.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5000);
        afterStall = { state: procState(conmon), firstKept: existsSync(`${logPath}.old1`), spool: spool.sample() };
      }
    } finally {
      clearTimeout(timer);
      clearInterval(sampler);
      report.close();
    }
    expect(await exit).to.equal(3);
    expect(afterStall, "the follower stalled").to.not.equal(undefined);
    expect(afterStall!.firstKept, "the retired file the follower reads is kept").to.equal(true);
    expect(afterStall!.state, "conmon waits for the follower").to.equal("T");
    console.log(`      spool at most ${spool}, ${(afterStall!.spool / MiB).toFixed(1)} MiB after the stall`);
    expect(spool.bytes, `the spool at most ${spool}`).to.be.below(BOUND);
    expect(check.result.errors).to.deep.equal([]);
    expect([check.result.first, check.result.last, check.result.lines]).to.deep.equal([1, lines, lines]);
    await bed.remove(id);
  });

  it("a follower that goes away holds nothing more; one that stays silent is dropped with a log line", async () => {
    // Gone (its connection closed, as when engined ends or is killed): conmon goes on at once.
    const first = await bed.run(printNumbered(lines, { waitFirst: 1 }));
    const report = await bed.sup.client.follow(first.id);
    const conmon = (await bed.sup.client.get(first.id)).conmonPid;
    expect(await eventually(() => heldForFollower(first.id, conmon), 20_000), "held for the follower that does not read").to.equal(true);
    report.close();
    expect(await eventually(() => letGo(first.id, conmon), 10_000), "let go once it is gone").to.equal(true);
    expect(await bed.sup.client.wait(first.id)).to.equal(0);

    // Silent: registered, then nothing (an engined stopped or stuck).
    const second = await bed.run(printNumbered(lines, { waitFirst: 1 }));
    const silent = http.request({ socketPath: bed.sup.socket, method: "POST", path: `/v1/containers/${second.id}/follow`, agent: false });
    silent.on("error", () => {});
    const answered = new Promise<number | undefined>((resolve) => silent.once("response", (res) => resolve(res.statusCode)));
    silent.flushHeaders();
    try {
      expect(await answered).to.equal(200);
      const conmon2 = (await bed.sup.client.get(second.id)).conmonPid;
      const registeredAt = Date.now();
      expect(await eventually(() => heldForFollower(second.id, conmon2), 20_000), "held for the silent follower").to.equal(true);
      expect(await eventually(() => letGo(second.id, conmon2), FOLLOWER_SILENT_MS + 20_000), "let go once it is dropped").to.equal(true);
      expect(Date.now() - registeredAt).to.be.above(FOLLOWER_SILENT_MS - 1000);
      expect(await bed.sup.client.wait(second.id)).to.equal(0);
      const log = readFileSync(join(dirname(bed.sup.socket), "supervisor.log"), "utf8");
      expect(log).to.match(/a follower of \S+ has not reported for \d+ s: dropped/);
    } finally {
      silent.destroy();
    }
    // Every line reached the log driver all the same.
    for (const { id } of [first, second]) {
      const stored = await checkJsonFiles([bed.jsonLog(id)]);
      expect([stored.first, stored.last, stored.lines, stored.errors]).to.deep.equal([1, lines, lines, []]);
      await bed.remove(id);
    }
  });
});

describe("supervisor spool: which files the followers need", () => {
  it("from the oldest file a follower reads; every file for one that has not said, or reads one no longer there; none without followers", () => {
    const followers = new SpoolFollowers("test");
    let changes = 0;
    followers.onChange = () => changes++;
    const files = [11, 12, 13, 14]; // retired, retired, rotated, live (inodes, oldest first)
    expect(followers.neededFrom(files)).to.equal(4);
    const a = followers.add(undefined, () => {});
    expect(followers.neededFrom(files), "not said yet").to.equal(0);
    a.report(13);
    expect(followers.neededFrom(files)).to.equal(2);
    const b = followers.add(12, () => {});
    expect(followers.neededFrom(files)).to.equal(1);
    b.report(99);
    expect(followers.neededFrom(files), "a file older than all").to.equal(0);
    b.report();
    expect(followers.neededFrom(files), "a beat changes nothing").to.equal(0);
    b.close();
    expect(followers.neededFrom(files)).to.equal(2);
    a.close();
    a.report(11);
    expect(followers.neededFrom(files), "a closed follower keeps nothing").to.equal(4);
    expect([changes, followers.size]).to.deep.equal([6, 0]);
  });
});
