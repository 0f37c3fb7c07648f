/**
 * The supervisor process with real conmon and runc: containers run, wait, log, stop and go;
 * and a supervisor killed with SIGKILL while a container runs is started again by the next
 * engined and finds the container, its exit code and every line of its output.
 */
import "./helpers/root-hooks.js";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { ensureSupervisor, type SupervisorHandle } from "../host/supervisor/launch.js";
import { SupervisorClientError } from "../host/supervisor/client.js";
import { Supervisor, type ExitEvent } from "../host/supervisor/supervisor.js";
import { makeTempDir } from "./helpers/engined.js";
import { BUSYBOX, exitBeforeRuntime, hasCommand, makeBundle, makeBusyboxRootfs, removeCgroups, RUNC, runcDefaultSpec, slowKillRuntime } from "./helpers/busybox-bundle.js";

describe("supervisor", function () {
  this.timeout(30_000);
  let dir: string;
  let execRoot: string;
  let rootfs: string;
  let spec: Record<string, any>;
  const started: number[] = [];
  const ids: string[] = [];
  let sup: SupervisorHandle;

  const kill = (pid: number) => {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone already
    }
  };

  before(async function () {
    if (process.getuid?.() !== 0 || !RUNC || !BUSYBOX || !hasCommand("conmon")) this.skip();
    dir = makeTempDir("engine-supervisor-");
    execRoot = `${dir}/exec`;
    rootfs = makeBusyboxRootfs(dir);
    spec = runcDefaultSpec(dir);
    sup = await ensureSupervisor({ execRoot, namespace: "test" });
    expect(sup.pid).to.be.a("number");
    expect(readFileSync(join(execRoot, "supervisor", "supervisor.pid"), "utf8").trim()).to.equal(String(sup.pid));
    started.push(sup.pid);
  });

  after(async () => {
    for (const id of ids) {
      await sup?.client.remove(id, true).catch(() => undefined);
      removeCgroups(id);
    }
    await sup?.client.close();
    for (const pid of started) kill(pid);
  });

  const logContext = (id: string) => ({
    containerId: id,
    containerName: `/${id}`,
    imageName: "busybox",
    imageId: "sha256:0",
    labels: {},
    env: [],
    logDir: join(dir, "logs", id),
    options: {},
  });
  const run = async (args: string[]) => {
    const id = `sup-${randomBytes(5).toString("hex")}`;
    ids.push(id);
    await sup.client.run({
      id,
      bundle: makeBundle(dir, id, rootfs, spec, args),
      runtime: { path: RUNC! },
      log: { driver: "json-file", context: logContext(id) },
    });
    return id;
  };
  /** The json-file lines of a container, once the drain has written `count` of them (bounded wait). */
  const jsonLines = async (id: string, count: number) => {
    const file = join(dir, "logs", id, `${id}-json.log`);
    const until = Date.now() + 10_000;
    let lines: { log: string; stream: string; time: string }[] = [];
    while (Date.now() < until) {
      lines = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
      if (lines.length >= count) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    return lines;
  };

  it("is found again, not started twice, by a second engined", async () => {
    const again = await ensureSupervisor({ execRoot, namespace: "test" });
    expect(again.pid).to.equal(sup.pid);
    expect((await again.client.ping()).namespace).to.equal("test");
    await again.client.close();
    // Another namespace is another daemon's: refused, not shared.
    const other = await ensureSupervisor({ execRoot, namespace: "other" }).catch((e: Error) => e);
    expect((other as Error).message).to.include('serves namespace "test", not "other"');
  });

  it("announces each exit on the event stream once the output is in the log driver", async () => {
    const abort = new AbortController();
    const seen: { id: string; exitCode: number; lines: number }[] = [];
    const stream = sup.client.events((e) => {
      const file = join(dir, "logs", e.id, `${e.id}-json.log`);
      seen.push({ id: e.id, exitCode: e.exitCode, lines: existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0 });
    }, abort.signal);
    await new Promise((r) => setTimeout(r, 100));
    const id = await run(["sh", "-c", "seq 1 500; exit 4"]);
    const until = Date.now() + 10_000;
    while (!seen.some((e) => e.id === id) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    abort.abort();
    await stream;
    expect(seen.filter((e) => e.id === id)).to.deep.equal([{ id, exitCode: 4, lines: 500 }]);
  });

  it("runs a container, waits for its exit code and returns its output", async () => {
    const id = await run(["sh", "-c", "echo hi; echo oops >&2; exit 3"]);
    expect(await sup.client.wait(id)).to.equal(3);
    const logs = await sup.client.logs(id);
    expect(logs.map((l) => `${l.stream}:${l.line}`)).to.deep.equal(["stdout:hi", "stderr:oops"]);
    expect((await sup.client.get(id)).status).to.equal("exited");
    // Drained into the json-file driver, in Docker's format, times kept from conmon's spool.
    const json = await jsonLines(id, 2);
    expect(json.map((l) => Object.keys(l))).to.deep.equal([["log", "stream", "time"], ["log", "stream", "time"]]);
    expect(json.map((l) => `${l.stream}:${l.log}`)).to.deep.equal(["stdout:hi\n", "stderr:oops\n"]);
    expect(json[0].time).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/);
    expect(json[0].time.slice(0, 19)).to.equal(logs[0].time.slice(0, 19));
  });

  it("runs the conmon it is started with (`--conmon`: the daemon's ENGINE_CONMON), for containers and execs", async () => {
    // a conmon that notes each run, then is the real one
    const marks = join(dir, "conmon-runs");
    const wrapper = join(dir, "conmon-wrapper");
    writeFileSync(wrapper, `#!/bin/sh\necho run >> ${marks}\nexec conmon "$@"\n`, { mode: 0o755 });
    const own = await ensureSupervisor({ execRoot: join(dir, "exec-conmon"), namespace: "test", conmon: wrapper });
    started.push(own.pid);
    const id = `sup-${randomBytes(5).toString("hex")}`;
    try {
      await own.client.run({ id, bundle: makeBundle(dir, id, rootfs, spec, ["sleep", "30"]), runtime: { path: RUNC! } });
      expect(readFileSync(marks, "utf8")).to.equal("run\n");
      await own.client.exec(id, { execId: "e1", process: { args: ["true"], env: ["PATH=/bin"], cwd: "/" } });
      expect(readFileSync(marks, "utf8")).to.equal("run\nrun\n");
    } finally {
      await own.client.remove(id, true).catch(() => undefined);
      removeCgroups(id);
      await own.client.close();
      kill(own.pid);
    }
  });

  it("stops, kills and removes, with the statuses engined maps to HTTP", async () => {
    const id = await run(["sleep", "100"]);
    expect((await sup.client.get(id)).status).to.equal("running");
    const conflict = await sup.client.remove(id).catch((e: SupervisorClientError) => e);
    expect(conflict).to.be.instanceOf(SupervisorClientError);
    expect((conflict as SupervisorClientError).status).to.equal(409);
    expect(await sup.client.stop(id, 1)).to.equal(137);
    await sup.client.remove(id);
    const gone = await sup.client.get(id).catch((e: SupervisorClientError) => e);
    expect((gone as SupervisorClientError).status).to.equal(404);
    const bad = await sup.client.run({ id: "../x", bundle: "/x", runtime: { path: RUNC! } }).catch((e: SupervisorClientError) => e);
    expect((bad as SupervisorClientError).status).to.equal(400);
    // A log driver that is nowhere, or a bad log option, is refused before anything runs.
    const noDriver = `sup-${randomBytes(5).toString("hex")}`;
    const refused = await sup.client
      .run({ id: noDriver, bundle: makeBundle(dir, noDriver, rootfs, spec, ["true"]), runtime: { path: RUNC! }, log: { driver: "no-such-driver", context: logContext(noDriver) } })
      .catch((e: SupervisorClientError) => e);
    expect((refused as SupervisorClientError).status).to.equal(400);
    expect((refused as Error).message).to.include('log plugin "no-such-driver" not found');
    const badOpt = await sup.client
      .run({ id: noDriver, bundle: makeBundle(dir, noDriver, rootfs, spec, ["true"]), runtime: { path: RUNC! }, log: { driver: "json-file", context: { ...logContext(noDriver), options: { "max-size": "lots" } } } })
      .catch((e: SupervisorClientError) => e);
    expect((badOpt as SupervisorClientError).status).to.equal(400);
    expect(((await sup.client.get(noDriver).catch((e: SupervisorClientError) => e)) as SupervisorClientError).status).to.equal(404);
  });

  for (const command of ["update", "kill"] as const) {
    it(`answers ${command === "update" ? "an update" : "a kill"} with 409 when the container's process ended before the supervisor heard of its exit`, async () => {
      const runtime = join(dir, `exit-before-${command}-runc`);
      writeFileSync(runtime, exitBeforeRuntime(RUNC!, command), { mode: 0o755 });
      const id = `sup-${randomBytes(5).toString("hex")}`;
      ids.push(id);
      await sup.client.run({ id, bundle: makeBundle(dir, id, rootfs, spec, ["sleep", "100"]), runtime: { path: runtime }, log: { driver: "json-file", context: logContext(id) } });
      const refused = await (command === "update" ? sup.client.update(id, { pids: { limit: 100 } }) : sup.client.kill(id, "TERM")).catch((e: SupervisorClientError) => e);
      expect(refused).to.be.instanceOf(SupervisorClientError);
      // (engined takes it as a stopped container: an update's limits kept for the next start,
      // a kill's "is not running")
      expect((refused as SupervisorClientError).status, (refused as Error).message).to.equal(409);
      expect((refused as Error).message).to.match(/not running|stopped/);
      expect(await sup.client.wait(id)).to.equal(137);
    });
  }

  it("says a run the OOM killer ended was OOM-killed from its cgroup's count when conmon's oom file is not there; a kill -9 is not", async function () {
    if (!existsSync("/sys/fs/cgroup/memory/memory.oom_control")) this.skip(); // (the v1 memory controller)
    const limited = structuredClone(spec);
    limited.linux.resources = { ...(limited.linux.resources ?? {}), memory: { limit: 8 << 20, swap: 8 << 20 } };
    const runLimited = async (args: string[]) => {
      const id = `sup-${randomBytes(5).toString("hex")}`;
      ids.push(id);
      await sup.client.run({ id, bundle: makeBundle(dir, id, rootfs, limited, args), runtime: { path: RUNC! }, log: { driver: "json-file", context: logContext(id) } });
      return id;
    };
    // (bounded: one dd with a buffer of 32 MiB, in a cgroup of 8 MiB without swap)
    const oomed = await runLimited(["dd", "if=/dev/zero", "of=/dev/null", "bs=32M", "count=1"]);
    expect(await sup.client.wait(oomed)).to.equal(137);
    // conmon may miss the kernel's event as the exit ends its loop: without its file, the cgroup's count tells
    rmSync(join(execRoot, "supervisor", "test", oomed, "conmon", "oom"), { force: true });
    expect((await sup.client.get(oomed)).oomKilled).to.equal(true);
    // (a kill from outside: PID 1 of its namespace does not take a SIGKILL of its own)
    const killed = await runLimited(["sleep", "60"]);
    await sup.client.stop(killed, 0, "KILL");
    expect(await sup.client.wait(killed)).to.equal(137);
    expect((await sup.client.get(killed)).oomKilled).to.equal(undefined);
  });

  it("answers a stop with the exit code when the container's removal comes between its kill and its look at the exit file", async () => {
    // runc, each `kill` answered a while after it was sent (a loaded machine's slow runtime)
    const slowKill = join(dir, "slow-kill-runc");
    writeFileSync(slowKill, slowKillRuntime(RUNC!, 1), { mode: 0o755 });
    const id = `sup-${randomBytes(5).toString("hex")}`;
    ids.push(id);
    await sup.client.run({ id, bundle: makeBundle(dir, id, rootfs, spec, ["sleep", "100"]), runtime: { path: slowKill }, log: { driver: "json-file", context: logContext(id) } });
    // engined's force removal: a stop with SIGKILL and no grace; and, once the exit is there,
    // its removal of the exited container (the exit's announcement makes engined forget it)
    const began = Date.now();
    const stopping = sup.client.stop(id, 0, "KILL").then((code) => ({ code }), (err: Error) => ({ error: err.message }));
    const exitFile = join(execRoot, "supervisor", "test", "exits", id);
    for (const until = Date.now() + 10_000; !existsSync(exitFile) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10));
    expect(existsSync(exitFile), "the container exited").to.equal(true);
    await sup.client.remove(id, true);
    expect(await stopping).to.deep.equal({ code: 137 });
    expect(Date.now() - began, "answered once its kill returned, not after a wait for a file gone").to.be.below(8000);
    expect(((await sup.client.get(id).catch((e: SupervisorClientError) => e)) as SupervisorClientError).status).to.equal(404);
  });

  it("announces an exit that came before its run was answered (a command that ends at once), without a watcher or a poll to find it", async () => {
    // In this process, never resumed: no watcher on the exit files and no poll, so only the run
    // itself can see the exit. The runtime's `start` returns once conmon has written the exit
    // file: the exit comes before the supervisor has the container's state, which a watcher
    // would have seen too early to announce.
    const local = new Supervisor(join(dir, "local"), "early");
    const exits = join(dir, "local", "early", "exits");
    const runtime = join(dir, "start-waits-for-exit.sh");
    writeFileSync(runtime, [
      "#!/bin/sh",
      `${RUNC} "$@" || exit $?`,
      'for a in "$@"; do id=$a; done',
      `case " $* " in *" start "*) i=0; while [ $i -lt 100 ] && [ ! -e "${exits}/$id" ]; do sleep 0.05; i=$((i+1)); done ;; esac`,
      "",
    ].join("\n"), { mode: 0o755 });
    const id = `sup-${randomBytes(5).toString("hex")}`;
    const events: ExitEvent[] = [];
    local.subscribe((e) => events.push(e));
    try {
      const state = await local.run({ id, bundle: makeBundle(dir, id, rootfs, spec, ["true"]), runtime: { path: runtime } });
      expect(existsSync(join(exits, id)), "the exit file, written before the run's answer").to.equal(true);
      const until = Date.now() + 5_000;
      while (events.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(events).to.deep.equal([{ type: "exit", id, exitCode: 0, pid: state.pid }]);
    } finally {
      await local.remove(id, true).catch(() => undefined);
      removeCgroups(id);
      await local.close();
    }
  });

  it("keeps every line and the exit code of a container across a SIGKILL of the supervisor", async () => {
    const id = await run(["sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do echo line $i; sleep 0.1; done"]);
    await new Promise((r) => setTimeout(r, 250));
    kill(sup.pid);
    await sup.client.close();
    // The container goes on without any supervisor; the next engined starts a new one.
    await new Promise((r) => setTimeout(r, 300));
    sup = await ensureSupervisor({ execRoot, namespace: "test" });
    expect(sup.pid).to.not.equal(started[0]);
    started.push(sup.pid);
    expect(await sup.client.wait(id)).to.equal(0);
    const lines = (await sup.client.logs(id)).map((l) => l.line);
    expect(lines).to.deep.equal(Array.from({ length: 10 }, (_, i) => `line ${i + 1}`));
    // The new supervisor took up the drain where the killed one left it: each line once.
    const json = await jsonLines(id, 10);
    await new Promise((r) => setTimeout(r, 300));
    expect((await jsonLines(id, 10)).map((l) => l.log)).to.deep.equal(Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`));
    expect(json).to.have.length(10);
    expect((await sup.client.list()).map((c) => c.id)).to.include(id);
  });
});
