/**
 * Daemon life with running containers: `--live-restore` keeps them running across a kill -9 of
 * engined (the next engined reconnects: logs go on, wait answers, stop works); without it,
 * stopping engined stops its containers and its own supervisor.
 */
import "./helpers/root-hooks.js";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, ROOT, startEngined, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { processAlive } from "../host/process-alive.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("live restore and daemon shutdown", function () {
  this.timeout(90_000);
  let dir: string;
  let socket: string;
  let host: string;
  const daemons: TestDaemon[] = [];
  const cli = async (...args: string[]) => {
    const r = await docker(host, args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const start = async (extra: string[]) => {
    const d = await startEngined({
      hosts: [`unix://${socket}`],
      args: ["--data-root", join(dir, "data"), "--exec-root", join(dir, "exec"), "--pidfile", join(dir, "engine.pid"), ...extra],
    });
    daemons.push(d);
    return d;
  };
  const supervisorPid = () => Number(readFileSync(join(dir, "exec", "supervisor", "supervisor.pid"), "utf8").trim());

  before(function () {
    if (process.getuid?.() !== 0) this.skip();
  });
  beforeEach(async () => {
    dir = makeTempDir("engine-live-");
    socket = join(dir, "engine.sock");
    host = `unix://${socket}`;
  });
  afterEach(async () => {
    for (const d of daemons.splice(0)) await d.stop();
  });

  it("keeps every line and the exit code of a container across a kill -9 of engined", async () => {
    const d1 = await start(["--live-restore"]);
    await cli("import", "--change", 'CMD ["sh"]', writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox");
    const script = "i=0; while [ $i -lt 10 ]; do i=$((i+1)); echo line $i; sleep 0.4; done; exit 7";
    await cli("run", "-d", "--name", "ticker", "busybox", "sh", "-c", script);
    await cli("run", "-d", "--name", "sleeper", "busybox", "sleep", "60");
    await sleep(1200);
    d1.proc.kill("SIGKILL");
    await new Promise((r) => d1.proc.once("exit", r));
    // Nobody listens now; the container goes on printing.
    await sleep(1200);
    const pid = supervisorPid();
    expect(processAlive(pid)).to.equal(true);

    await start(["--live-restore"]);
    expect(supervisorPid()).to.equal(pid); // the same supervisor, found again
    // -a: on a slow machine the ticker may have ended before this engined was up.
    const ps = await cli("ps", "-a", "--format", "{{.Names}}");
    expect(ps.split("\n").filter(Boolean).sort()).to.deep.equal(["sleeper", "ticker"]);
    // logs -f follows to the end: each line once, in order, none lost while engined was gone.
    const logs = await cli("logs", "-f", "ticker");
    expect(logs).to.equal(Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join(""));
    expect((await cli("wait", "ticker")).trim()).to.equal("7");
    const [info] = JSON.parse(await cli("inspect", "ticker"));
    expect(info.State.Status).to.equal("exited");
    expect(info.State.ExitCode).to.equal(7);
    // A container from before the kill is stopped by the new engined.
    await cli("stop", "-t", "1", "sleeper");
    expect(JSON.parse(await cli("inspect", "sleeper"))[0].State.ExitCode).to.equal(137);
    await cli("rm", "ticker", "sleeper");
  });

  it("starts its supervisor again after a kill -9 of it, and loses no line or exit code", async () => {
    await start([]);
    await cli("import", "--change", 'CMD ["sh"]', writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox");
    const script = "i=0; while [ $i -lt 8 ]; do i=$((i+1)); echo line $i; sleep 0.3; done; exit 5";
    await cli("run", "-d", "--name", "ticker", "busybox", "sh", "-c", script);
    await sleep(700);
    const first = supervisorPid();
    process.kill(first, "SIGKILL");
    // engined sees the event stream break and starts a new supervisor, which takes up the drain.
    let second = first;
    for (let i = 0; i < 100 && (second === first || !processAlive(second)); i++) {
      await sleep(100);
      try {
        second = supervisorPid();
      } catch {
        // between the two
      }
    }
    expect(second).to.not.equal(first);
    expect((await cli("wait", "ticker")).trim()).to.equal("5");
    expect(await cli("logs", "ticker")).to.equal(Array.from({ length: 8 }, (_, i) => `line ${i + 1}\n`).join(""));
    await cli("rm", "ticker");
  });

  it("uses a supervisor started by hand (--supervisor), refuses another namespace, and leaves it running", async () => {
    const supRoot = join(dir, "sup");
    const supSocket = join(supRoot, "sup.sock");
    const sup = spawn(process.execPath, [join(ROOT, "dist/host/supervisor/main.js"), "--socket", supSocket, "--root", supRoot, "--namespace", "byhand"], { stdio: "ignore" });
    try {
      for (let i = 0; i < 100 && !existsSync(supSocket); i++) await sleep(50);
      const wrong = await start(["--supervisor", `unix://${supSocket}`]);
      await cli("import", "--change", 'CMD ["sh"]', writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox");
      const refused = await docker(host, ["run", "--rm", "busybox", "true"]);
      expect(refused.stderr).to.include('serves namespace "byhand", not "engine"');
      await wrong.stop();
      daemons.splice(daemons.indexOf(wrong), 1);
      const d = await start(["--supervisor", supSocket, "--supervisor-namespace", "byhand"]);
      expect(await cli("run", "--rm", "busybox", "echo", "by hand")).to.equal("by hand\n");
      await d.stop();
      daemons.splice(daemons.indexOf(d), 1);
      expect(sup.exitCode).to.equal(null); // engined never stops a supervisor it did not start
    } finally {
      sup.kill("SIGTERM");
    }
  });

  it("without --live-restore, stopping engined stops its containers and its supervisor", async () => {
    const d1 = await start([]);
    await cli("import", "--change", 'CMD ["sh"]', writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox");
    const id = (await cli("run", "-d", "--stop-timeout", "1", "busybox", "sleep", "60")).trim();
    const pid = supervisorPid();
    const started = Date.now();
    daemons.splice(daemons.indexOf(d1), 1);
    // d1.stop() would remove the daemon's folder; stop it by its pid and keep the data for the next start.
    d1.proc.kill("SIGTERM");
    await new Promise((r) => d1.proc.once("exit", r));
    expect(Date.now() - started).to.be.below(10_000);
    for (let i = 0; i < 50 && processAlive(pid); i++) await sleep(100);
    expect(processAlive(pid)).to.equal(false);
    expect(existsSync(join(dir, "exec", "containers", id, "rootfs"))).to.equal(false);
    await start([]);
    const [info] = JSON.parse(await cli("inspect", id));
    expect(info.State.Status).to.equal("exited");
    expect(info.State.ExitCode).to.equal(137);
    await cli("rm", id);
  });
});
