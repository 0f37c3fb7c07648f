/**
 * conmon + runc for real (root only): a busybox bundle made here, containers whose output and
 * exit codes arrive through conmon's k8s-file log and exit file, and the key property: the
 * container, its output and its exit code survive SIGKILL of the process that started conmon.
 * Every container is deleted, its conmon killed by pid and its cgroups removed afterwards.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { spawn } from "node:child_process";
import { existsSync, renameSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { makeTempDir } from "./helpers/engined.js";
import { BUSYBOX, hasCommand, makeBundle, makeBusyboxRootfs, removeCgroups, RUNC, runcDefaultSpec } from "./helpers/busybox-bundle.js";
import {
  conmonPidfile,
  deleteContainer,
  killContainer,
  readExitCode,
  readK8sLog,
  readPid,
  reopenLog,
  runtime,
  startContainer,
  stopContainer,
  waitExit,
  type RuntimeRef,
  type StartContainerOptions,
} from "../host/supervisor/conmon.js";
import { parseK8sLog } from "../host/supervisor/k8s-file.js";
import { processAlive } from "../host/process-alive.js";


const alive = processAlive;

describe("conmon", function () {
  this.timeout(15_000);
  let base: string;
  let rootfs: string;
  let spec: Record<string, any>;
  let rt: RuntimeRef;
  const made: StartContainerOptions[] = [];

  before(function () {
    if (process.getuid?.() !== 0 || !RUNC || !BUSYBOX || !hasCommand("conmon")) this.skip();
    base = makeTempDir("engine-conmon-");
    rt = { runtimePath: RUNC, runtimeRoot: join(base, "runc") };
    rootfs = makeBusyboxRootfs(base);
    spec = runcDefaultSpec(base);
  });

  /** A bundle of its own for `args` (sharing the read-only rootfs) and the start options. */
  function prepare(args: string[]): StartContainerOptions {
    const id = `conmon-test-${randomBytes(5).toString("hex")}`;
    const dir = join(base, id);
    const bundle = makeBundle(dir, id, rootfs, spec, args, "bundle");
    const opts: StartContainerOptions = {
      ...rt,
      id,
      bundle,
      exitDir: join(dir, "exits"),
      persistDir: join(dir, "persist"),
      logPath: join(dir, "ctr.log"),
    };
    made.push(opts);
    return opts;
  }

  async function cleanUp(opts: StartContainerOptions): Promise<void> {
    await deleteContainer(rt, opts.id).catch(() => {});
    const conmon = readPid(conmonPidfile(opts.persistDir));
    if (alive(conmon)) {
      try {
        process.kill(conmon!, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    removeCgroups(opts.id);
  }

  afterEach(async () => {
    for (const opts of made.splice(0)) await cleanUp(opts);
  });

  it("runs echo hi: a stdout line in the k8s-file log and exit code 0", async () => {
    const opts = prepare(["echo", "hi"]);
    const started = await startContainer(opts);
    expect(started.pid).to.be.greaterThan(0);
    expect(started.conmonPid).to.be.greaterThan(0);
    expect(await waitExit(opts.exitDir, opts.id, AbortSignal.timeout(10_000))).to.equal(0);
    const log = await readK8sLog(opts.logPath);
    expect(log.map((l) => [l.stream, l.partial, l.line.toString()])).to.deep.equal([["stdout", false, "hi"]]);
    expect(log[0].time).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+/);
  });

  it("calls `created` once the runtime created the container, before its process runs (the spool guard looks from the first byte); a failure there deletes it", async () => {
    const opts = prepare(["echo", "hi"]);
    let seen: Record<string, unknown> | undefined;
    await startContainer({
      ...opts,
      created: async (ctlPath) => {
        const state = JSON.parse(await runtime(rt, ["state", opts.id])) as { status: string };
        seen = { status: state.status, ctl: existsSync(ctlPath), conmon: alive(readPid(conmonPidfile(opts.persistDir))), lines: (await readK8sLog(opts.logPath)).length };
      },
    });
    expect(seen).to.deep.equal({ status: "created", ctl: true, conmon: true, lines: 0 });
    expect(await waitExit(opts.exitDir, opts.id, AbortSignal.timeout(10_000))).to.equal(0);

    const refused = prepare(["echo", "hi"]);
    const error = await startContainer({ ...refused, created: () => Promise.reject(new Error("no guard")) }).then(() => undefined, (e: Error) => e);
    expect(error?.message).to.equal("no guard");
    expect(await runtime(rt, ["state", refused.id]).then(() => "there", () => "deleted")).to.equal("deleted");
  });

  it("keeps stdout and stderr apart and reports exit 3", async () => {
    const opts = prepare(["sh", "-c", "echo out; echo err >&2; exit 3"]);
    await startContainer(opts);
    expect(await waitExit(opts.exitDir, opts.id, AbortSignal.timeout(10_000))).to.equal(3);
    const log = await readK8sLog(opts.logPath);
    expect(log.map((l) => `${l.stream}:${l.line}`).sort()).to.deep.equal(["stderr:err", "stdout:out"]);
  });

  it("keeps the container, its output and its exit code when the parent that started conmon is SIGKILLed", async () => {
    const opts = prepare(["sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do echo line $i; sleep 0.1; done"]);
    const moduleUrl = new URL("../host/supervisor/conmon.js", import.meta.url).href;
    const script =
      `const { startContainer } = await import(${JSON.stringify(moduleUrl)});` +
      `const r = await startContainer(JSON.parse(process.argv[1]));` +
      `process.stdout.write(JSON.stringify(r) + "\\n"); setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ["--input-type=module", "-e", script, JSON.stringify(opts)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    parent.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    const started = await new Promise<{ pid: number; conmonPid: number }>((resolve, reject) => {
      parent.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("\n")) resolve(JSON.parse(out.split("\n")[0]));
      });
      parent.once("exit", (code) => reject(new Error(`parent exited ${code}: ${err}`)));
    });
    const gone = new Promise((resolve) => parent.once("exit", resolve));
    parent.kill("SIGKILL");
    await gone;
    expect(readExitCode(opts.exitDir, opts.id), "still running when the parent died").to.equal(undefined);
    expect(alive(started.conmonPid), "conmon outlives its parent").to.equal(true);
    expect(await waitExit(opts.exitDir, opts.id, AbortSignal.timeout(10_000))).to.equal(0);
    const lines = (await readK8sLog(opts.logPath)).map((l) => `${l.stream}:${l.line}`);
    expect(lines).to.deep.equal(Array.from({ length: 10 }, (_, i) => `stdout:line ${i + 1}`));
  });

  it("reports 143 for a container that ends on SIGTERM", async () => {
    // PID 1 of a pid namespace ignores signals it has no handler for, so the shell traps TERM.
    const opts = prepare(["sh", "-c", "trap 'exit 143' TERM; echo ready; while true; do sleep 0.05; done"]);
    await startContainer(opts);
    await waitForLine(opts.logPath, "ready");
    await killContainer(rt, opts.id, "TERM");
    expect(await waitExit(opts.exitDir, opts.id, AbortSignal.timeout(10_000))).to.equal(143);
  });

  it("reports 137 for sleep 100 killed with SIGKILL", async () => {
    const opts = prepare(["sleep", "100"]);
    const started = await startContainer(opts);
    expect(alive(started.pid)).to.equal(true);
    expect(existsSync(started.attachPath), `attach socket at ${started.attachPath}`).to.equal(true);
    expect(existsSync(started.ctlPath), `ctl FIFO at ${started.ctlPath}`).to.equal(true);
    await killContainer(rt, opts.id, "KILL");
    expect(await waitExit(opts.exitDir, opts.id, AbortSignal.timeout(10_000))).to.equal(137);
  });

  it("stops sleep 100 (ignores SIGTERM as PID 1) with SIGKILL after the grace period", async () => {
    const opts = prepare(["sleep", "100"]);
    await startContainer(opts);
    const t0 = Date.now();
    expect(await stopContainer(rt, opts.id, opts.exitDir, { graceMs: 300 })).to.equal(137);
    expect(Date.now() - t0).to.be.lessThan(5_000);
  });

  it("puts the attach socket under attachSocketDir/<id> when one is given", async () => {
    const opts = prepare(["sleep", "100"]);
    opts.attachSocketDir = join(base, "sockets");
    const started = await startContainer(opts);
    expect(started.attachPath).to.equal(join(opts.attachSocketDir, opts.id, "attach"));
    expect(existsSync(started.attachPath), `attach socket at ${started.attachPath}`).to.equal(true);
    await killContainer(rt, opts.id, "KILL");
    expect(await waitExit(opts.exitDir, opts.id, AbortSignal.timeout(10_000))).to.equal(137);
  });

  it("reopens the log on a ctl command after the old one was renamed away, losing no line", async () => {
    const opts = prepare(["sh", "-c", "for i in $(seq 1 30); do echo line $i; sleep 0.05; done"]);
    const started = await startContainer(opts);
    await waitForLine(opts.logPath, "line 1");
    renameSync(opts.logPath, `${opts.logPath}.1`);
    reopenLog(started.ctlPath);
    expect(await waitExit(opts.exitDir, opts.id, AbortSignal.timeout(10_000))).to.equal(0);
    const before = await readK8sLog(`${opts.logPath}.1`);
    const after = await readK8sLog(opts.logPath);
    expect(before.length, "lines in the rotated log").to.be.greaterThan(0);
    expect(after.length, "lines in the new log").to.be.greaterThan(0);
    expect([...before, ...after].map((l) => l.line.toString())).to.deep.equal(Array.from({ length: 30 }, (_, i) => `line ${i + 1}`));
  });

  it("throws with runc's message for a command that does not exist", async () => {
    const opts = prepare(["/nonexistent"]);
    let error: Error | undefined;
    try {
      await startContainer(opts);
    } catch (e) {
      error = e as Error;
    }
    expect(error, "startContainer threw").to.be.instanceOf(Error);
    // containerd's words around runc's, as Docker's clients show them
    expect(error!.message).to.match(/^failed to create shim task: OCI runtime create failed: runc create failed: .*\/nonexistent.*no such file or directory: unknown$/is);
  });

  it("waitExit rejects when its signal aborts", async () => {
    const dir = join(base, "no-exits");
    const t0 = Date.now();
    let error: Error | undefined;
    await waitExit(dir, "nobody", AbortSignal.timeout(150)).catch((e: Error) => (error = e));
    expect(error).to.be.instanceOf(Error);
    expect(Date.now() - t0).to.be.lessThan(2_000);
  });

  it("parses partial and full k8s-file lines as bytes and leaves out an unterminated last line", () => {
    const text =
      "2026-11-22T07:12:14.115718562+00:00 stdout P abc\n" +
      "2026-11-22T07:12:14.115802349+00:00 stdout F def ghi\n" +
      "2026-11-22T07:12:14.115802349+00:00 stderr F \n" +
      "2026-11-22T07:12:14.2 stdout F unfinish";
    // bytes that are no UTF-8 stay as they were written
    const binary = Buffer.from("2026-11-22T07:12:14.3+00:00 stdout F \xff\xfe\x00\x01\r\n", "latin1");
    expect(parseK8sLog(Buffer.concat([binary, Buffer.from(text)]))).to.deep.equal([
      { time: "2026-11-22T07:12:14.3+00:00", stream: "stdout", partial: false, line: Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x0d]) },
      { time: "2026-11-22T07:12:14.115718562+00:00", stream: "stdout", partial: true, line: Buffer.from("abc") },
      { time: "2026-11-22T07:12:14.115802349+00:00", stream: "stdout", partial: false, line: Buffer.from("def ghi") },
      { time: "2026-11-22T07:12:14.115802349+00:00", stream: "stderr", partial: false, line: Buffer.alloc(0) },
    ]);
  });
});

async function waitForLine(logPath: string, line: string, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if ((await readK8sLog(logPath)).some((l) => l.line.toString() === line)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no line ${JSON.stringify(line)} in ${logPath}`);
}
