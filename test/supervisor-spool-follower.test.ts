/**
 * A follower of conmon's spool never loses lines (host/supervisor/spool-followers.ts): attach
 * with log driver `none` follows the spool, whose drain retires and removes its files at
 * conmon's own speed. Here engined is stopped (SIGSTOP) for a few seconds while the attached
 * container prints 20 MB: the supervisor keeps the files engined's follower has not read (and
 * stops conmon rather than let them grow past the spool's bound), so `docker run` still prints
 * every line once, in order, and the spool stays under its bound meanwhile.
 */
import "./helpers/root-hooks.js";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { numberedChecker, printNumbered, sizeOf, type NumberedCheck } from "./helpers/numbered-lines.js";
import { SupervisorBed } from "./helpers/supervisor-bed.js";

const MiB = 1024 * 1024;
const BOUND = 16 * MiB;

/** The total size of every `output.log*` file under `dir` (the spools of the daemon's containers). */
function spoolBytes(dir: string, depth = 6): number {
  let sum = 0;
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    if (e.isDirectory() && depth > 0) sum += spoolBytes(join(dir, e.name), depth - 1);
    else if (e.isFile() && e.name.startsWith("output.log")) sum += sizeOf(join(dir, e.name));
  }
  return sum;
}

interface AttachedRun {
  code: number | null;
  check: NumberedCheck;
  stderr: string;
  maxSpool: number;
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
  let maxSpool = 0;
  let first: Promise<void> | undefined;
  const sampler = setInterval(() => (maxSpool = Math.max(maxSpool, spoolBytes(join(d.dir, "exec")))), 20);
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
      void (first ?? Promise.resolve()).then(() => resolve({ code, check: check.result, stderr, maxSpool }));
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
    console.log(`      ${((Date.now() - started) / 1000).toFixed(1)} s, spool at most ${(run.maxSpool / MiB).toFixed(1)} MiB, ${run.check.lines} lines`);
    expect(run.code, run.stderr).to.equal(4);
    expect(run.check.errors).to.deep.equal([]);
    expect([run.check.first, run.check.last, run.check.lines]).to.deep.equal([1, lines, lines]);
    expect(run.maxSpool).to.be.below(BOUND);
  });
});
