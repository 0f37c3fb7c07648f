/**
 * Programs started with posix_spawn (core/posix-spawn.ts), as the supervisor starts conmon and
 * the runtime: what the child gets (its descriptors, environment, folder, session, default
 * signal dispositions and an empty mask, where Node ignores SIGPIPE), what comes back (output,
 * exit status, signal), the errors (a program not found, a timeout), and that every child is
 * reaped (none left a zombie).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { openSync, closeSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { available, execFileLight, posixSpawn, SpawnError } from "../core/posix-spawn.js";
import { makeTempDir } from "./helpers/engined.js";

/** A process's state letter from /proc (Z: a zombie), or undefined when it is gone. */
function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return undefined;
  }
}

const read = (s: NodeJS.ReadableStream) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    s.on("data", (d: Buffer) => chunks.push(d));
    s.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });

describe("posix-spawn: programs started without forking the process", function () {
  this.timeout(30_000);
  let dir: string;

  before(function () {
    if (!available()) this.skip();
    dir = makeTempDir("engine-posix-spawn-");
  });
  after(() => dir && rmSync(dir, { recursive: true, force: true }));

  it("returns a program's output and answers its failure as execFile does: status, stderr, a program not found", async () => {
    expect(await execFileLight("/bin/sh", ["-c", "echo out; echo err >&2"], 10_000)).to.deep.equal({ stdout: "out\n", stderr: "err\n" });
    // a name is looked up in PATH
    const failed = (await execFileLight("sh", ["-c", "echo why >&2; exit 3"], 10_000).catch((e: unknown) => e)) as Error & { code: number; stderr: string };
    expect(failed.message).to.equal("Command failed (exit status 3): sh -c echo why >&2; exit 3");
    expect([failed.code, failed.stderr]).to.deep.equal([3, "why\n"]);
    const missing = (await execFileLight(join(dir, "no-such-program"), [], 10_000).catch((e: unknown) => e)) as SpawnError;
    expect(missing).to.be.instanceOf(SpawnError);
    expect([missing.code, missing.message]).to.deep.equal(["ENOENT", `spawn ${join(dir, "no-such-program")} ENOENT`]);
  });

  it("ends a program that outlives its time with SIGTERM and says so", async () => {
    const e = (await execFileLight("sleep", ["30"], 200).catch((err: unknown) => err)) as Error & { signal: string };
    expect(e.message).to.equal("Command failed (timed out after 200 ms): sleep 30");
    expect(e.signal).to.equal("SIGTERM");
  });

  it("gives the child its descriptors, environment, folder and a session of its own, with default signal dispositions and none blocked", async () => {
    const outFile = join(dir, "err.txt");
    const fd = openSync(outFile, "w");
    let p;
    try {
      p = posixSpawn(
        "sh",
        ["-c", 'pwd; echo "$ENGINE_TEST_VALUE"; cut -d" " -f6 /proc/self/stat; grep -E "^Sig(Ign|Blk)" /proc/self/status; echo to-the-file >&2; echo on-three >&3'],
        { env: { PATH: process.env.PATH, ENGINE_TEST_VALUE: "given" }, cwd: dir, setsid: true, stdio: ["ignore", "pipe", fd, "pipe"] },
      );
    } finally {
      closeSync(fd);
    }
    const [out, three, exit] = await Promise.all([read(p.pipes.get(1)!), read(p.pipes.get(3)!), p.exited]);
    const [cwd, value, session, ...sigLines] = out.trim().split("\n");
    const sig = (name: string) => BigInt(`0x${sigLines.find((l) => l.startsWith(`${name}:`))!.split(/\s+/)[1]}`);
    expect(exit).to.deep.equal({ code: 0, signal: null });
    expect([cwd, value, three]).to.deep.equal([dir, "given", "on-three\n"]);
    // setsid: the child leads a session of its own (its session id is its pid)
    expect(Number(session)).to.equal(p.pid);
    // nothing ignored but glibc's two internal real-time signals (32, 33), which no program may touch; SIGPIPE (13) not
    expect(sig("SigIgn") & ~0x180000000n).to.equal(0n);
    expect(sig("SigBlk")).to.equal(0n);
    expect(readFileSync(outFile, "utf8")).to.equal("to-the-file\n");
  });

  it("reaps every child, one that a signal ends too, and leaves no zombie", async () => {
    const quick = [1, 2, 3, 4, 5].map(() => posixSpawn("true", [], { env: process.env, stdio: ["ignore", "ignore", "ignore"] }));
    const killed = posixSpawn("sleep", ["30"], { env: process.env, stdio: ["ignore", "ignore", "ignore"] });
    process.kill(killed.pid, "SIGKILL");
    expect(await Promise.all(quick.map((q) => q.exited))).to.deep.equal(quick.map(() => ({ code: 0, signal: null })));
    expect(await killed.exited).to.deep.equal({ code: null, signal: "SIGKILL" });
    for (const q of [...quick, killed]) expect(procState(q.pid), `pid ${q.pid}`).to.equal(undefined);
  });
});
