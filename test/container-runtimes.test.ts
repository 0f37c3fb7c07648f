/**
 * Which runtime runs a container, through engined and the Docker CLI: `--runtime` names a
 * runtime registered in daemon.json (and a reload registers new ones), unknown names and shims
 * are refused at create, `--init` puts tini in front of the command; a runtime slow to answer a
 * kill does not make a forced removal fail.
 */
import "./helpers/root-hooks.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, sighup, startEngined, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { RUNC, slowKillRuntime } from "./helpers/busybox-bundle.js";

describe("container runtimes (--runtime, runtimes, reload, --init)", function () {
  this.timeout(60_000);
  let d: TestDaemon;
  let host: string;
  let file: string;
  let dir: string;
  const run = (...args: string[]) => docker(host, args);

  before(async function () {
    if (process.getuid?.() !== 0 || !RUNC) this.skip();
    dir = makeTempDir();
    file = join(dir, "daemon.json");
    const slowKill = join(dir, "slow-kill-runc");
    writeFileSync(slowKill, slowKillRuntime(RUNC!, 2), { mode: 0o755 });
    writeFileSync(file, JSON.stringify({ runtimes: { wrapped: { path: RUNC, runtimeArgs: ["--log-format", "json"] }, "slow-kill": { path: slowKill } } }));
    d = await startEngined({ args: ["--config-file", file] });
    host = `unix://${d.socket}`;
    const imported = await run("import", "--change", 'CMD ["sh"]', writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox");
    expect(imported.code, imported.stderr).to.equal(0);
  });
  after(async () => {
    await d?.stop();
  });

  it("runs a container with a runtime registered in daemon.json, its runtimeArgs given", async () => {
    const r = await run("run", "--rm", "--runtime", "wrapped", "busybox", "echo", "wrapped");
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal("wrapped\n");
  });

  it("force-removes a running container whose runtime answers its kill late: the exit is announced and forgotten before the kill returns", async () => {
    const started = await run("run", "-d", "--runtime", "slow-kill", "--network", "none", "busybox", "sleep", "100");
    expect(started.code, started.stderr).to.equal(0);
    const id = started.stdout.trim();
    const began = Date.now();
    const removed = await run("rm", "-f", id);
    expect(removed.code, removed.stderr).to.equal(0);
    expect(Date.now() - began, "answered once the kill returned, not after the supervisor's 10 s wait").to.be.below(9000);
    const inspect = await run("inspect", id);
    expect(inspect.stderr).to.include("No such object");
  });

  it("refuses an unknown runtime and a shim at create, and registers new ones on reload", async () => {
    const unknown = await run("create", "--runtime", "later", "busybox", "true");
    expect(unknown.code).to.not.equal(0);
    expect(unknown.stderr).to.include("unknown or invalid runtime name: later");
    const shim = await run("create", "--runtime", "io.containerd.kata.v2", "busybox", "true");
    expect(shim.stderr).to.include("shims are not supported");
    writeFileSync(file, JSON.stringify({ runtimes: { later: { path: RUNC } }, "default-runtime": "later" }));
    expect(await sighup(d)).to.include("reloaded");
    const after = await run("run", "--rm", "--runtime", "later", "busybox", "echo", "later");
    expect(after.stdout, after.stderr).to.equal("later\n");
    // The default runtime changed too: a container that names none runs on it.
    const byDefault = await run("run", "--rm", "busybox", "echo", "default");
    expect(byDefault.stdout, byDefault.stderr).to.equal("default\n");
  });

  it("runs tini as pid 1 with --init, the command as its child", async () => {
    const r = await run("run", "--rm", "--init", "busybox", "sh", "-c", "cat /proc/1/cmdline | tr '\\0' ' '; echo; echo $$");
    expect(r.code, r.stderr).to.equal(0);
    const [pid1, shellPid] = r.stdout.trim().split("\n");
    expect(pid1.trim()).to.match(/^\/sbin\/docker-init -- sh -c /);
    expect(Number(shellPid)).to.be.greaterThan(1);
  });
});
