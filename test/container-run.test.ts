/**
 * Running containers with the real Docker CLI against a real engined (supervisor, conmon, runc):
 * run (attached, detached, --rm), exit codes, stop/kill/wait/start/restart, logs (follow, tail,
 * timestamps, since), the request's env/workdir/user, resource limits, rm and prune. Outputs
 * and exit codes are compared with what Docker gives.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("container run (Docker CLI)", function () {
  this.timeout(60_000);

  let d: TestDaemon;
  let host: string;
  const run = (...args: string[]): Promise<RunResult> => docker(host, args);
  const cli = async (...args: string[]) => {
    const r = await run(...args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const inspect = async (ref: string) => JSON.parse(await cli("inspect", ref))[0];
  /** Polls until `check` holds (or fails the test after `ms`). */
  const eventually = async (what: string, check: () => Promise<boolean>, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
      await sleep(100);
    }
  };
  const allIds = async () => (await cli("ps", "-aq", "--no-trunc")).split("\n").filter(Boolean);

  before(async function () {
    const dir = makeTempDir();
    d = await startEngined();
    host = `unix://${d.socket}`;
    await cli("import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox");
  });
  afterEach(async function () {
    // Every test leaves nothing behind: what it created is removed, running or not.
    if (!d) return;
    const ids = await allIds().catch(() => []);
    if (ids.length) await run("rm", "-f", ...ids);
  });
  after(async function () {
    await d?.stop();
  });

  it("docker run --rm busybox echo hi prints hi, exits 0, and the container is gone", async function () {
    const r = await run("run", "--rm", "--name", "rm-echo", "busybox", "echo", "hi");
    expect(r.stderr).to.equal("");
    expect(r.stdout).to.equal("hi\n");
    expect(r.code).to.equal(0);
    await eventually("the --rm container to go", async () => (await allIds()).length === 0);
    expect((await cli("ps", "-a", "--format", "{{.Names}}")).trim()).to.equal("");
    const gone = await run("inspect", "rm-echo");
    expect(gone.code).to.equal(1);
    expect(gone.stderr).to.include("No such object: rm-echo");
  });

  it("docker run exits with the container's code; inspect shows exited, the code and FinishedAt", async function () {
    const before = Date.now();
    const r = await run("run", "--name", "exit3", "busybox", "sh", "-c", "exit 3");
    expect(r.code, r.stderr).to.equal(3);
    expect(r.stdout).to.equal("");
    const info = await inspect("exit3");
    expect(info.State.Status).to.equal("exited");
    expect(info.State.Running).to.equal(false);
    expect(info.State.ExitCode).to.equal(3);
    expect(info.State.Pid).to.equal(0);
    expect(info.State.Error).to.equal("");
    expect(Date.parse(info.State.StartedAt)).to.be.at.least(before - 1000);
    expect(Date.parse(info.State.FinishedAt)).to.be.at.least(Date.parse(info.State.StartedAt));
    expect(info.State.FinishedAt).to.not.equal("0001-01-01T00:00:00Z");
    const ps = await cli("ps", "-a", "--format", "{{.Names}} {{.Status}}");
    expect(ps.trim()).to.match(/^exit3 Exited \(3\) (Less than a second|\d+ seconds?) ago$/);
  });

  it("keeps stdout and stderr apart, attached and in docker logs", async function () {
    const r = await run("run", "--name", "split", "busybox", "sh", "-c", "echo out; echo err >&2");
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal("out\n");
    expect(r.stderr).to.equal("err\n");
    const logs = await run("logs", "split");
    expect(logs.code).to.equal(0);
    expect(logs.stdout).to.equal("out\n");
    expect(logs.stderr).to.equal("err\n");
  });

  it("a command that does not exist: exit 127, a message naming it, ExitCode 127", async function () {
    const r = await run("run", "--name", "nope", "busybox", "nope");
    expect(r.code).to.equal(127);
    expect(r.stdout).to.equal("");
    // Docker 28's words: containerd's around the runtime's own message
    expect(r.stderr).to.match(
      /^docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: .*exec: "nope": executable file not found in \$PATH: unknown\n/,
    );
    const info = await inspect("nope");
    expect(info.State.ExitCode).to.equal(127);
    expect(info.State.Running).to.equal(false);
    expect(info.State.Error).to.include("nope");
    // With --rm the container that could not start is removed, and the CLI does not hang waiting for that.
    const removed = await run("run", "--rm", "--name", "nope-rm", "busybox", "nope");
    expect(removed.code).to.equal(127);
    expect((await run("inspect", "nope-rm")).stderr).to.include("No such object: nope-rm");
  });

  it("run -d, ps, stop -t 1 (137), start twice, kill, wait, kill/rm refusals, rm -f", async function () {
    const id = (await cli("run", "-d", "--name", "sleeper", "busybox", "sleep", "60")).trim();
    expect(id).to.match(/^[a-f0-9]{64}$/);
    const ps = await cli("ps", "--no-trunc", "--format", "{{.ID}} {{.Names}} {{.Command}} {{.Status}}");
    expect(ps.trim()).to.match(new RegExp(`^${id} sleeper "sleep 60" Up (Less than a second|\\d+ seconds?)$`));
    let info = await inspect("sleeper");
    expect(info.State.Status).to.equal("running");
    expect(info.State.Running).to.equal(true);
    expect(info.State.Pid).to.be.a("number").and.greaterThan(0);

    // sleep as PID 1 has no TERM handler: the kernel ignores TERM, the KILL after 1 s ends it.
    const t0 = Date.now();
    expect((await cli("stop", "-t", "1", "sleeper")).trim()).to.equal("sleeper");
    const took = Date.now() - t0;
    expect(took).to.be.at.least(900);
    expect(took).to.be.below(8000);
    info = await inspect("sleeper");
    expect(info.State.Status).to.equal("exited");
    expect(info.State.ExitCode).to.equal(137);
    expect((await cli("ps", "-q")).trim()).to.equal("");

    // Stopping a stopped container is fine too (304 under the CLI).
    expect((await cli("stop", "sleeper")).trim()).to.equal("sleeper");

    // Start again; a second start of a running one is fine (304).
    expect((await cli("start", "sleeper")).trim()).to.equal("sleeper");
    expect((await cli("start", "sleeper")).trim()).to.equal("sleeper");
    expect((await inspect("sleeper")).State.Running).to.equal(true);

    // rm of a running one is refused with Docker's message.
    const rm = await run("rm", "sleeper");
    expect(rm.code).to.equal(1);
    expect(rm.stderr).to.include("container is running: stop the container before removing or force remove");

    expect((await cli("kill", "sleeper")).trim()).to.equal("sleeper");
    expect((await cli("wait", "sleeper")).trim()).to.equal("137");
    info = await inspect("sleeper");
    expect(info.State.Status).to.equal("exited");
    expect(info.State.ExitCode).to.equal(137);

    const kill = await run("kill", "sleeper");
    expect(kill.code).to.equal(1);
    expect(kill.stderr).to.include("is not running");

    // rm -f of a running one.
    await cli("start", "sleeper");
    expect((await cli("rm", "-f", "sleeper")).trim()).to.equal("sleeper");
    expect(await allIds()).to.deep.equal([]);
  });

  it("docker kill answers once the container has stopped: kill then rm at once never gets 409 (20 times), as dockerd", async function () {
    this.timeout(180_000);
    for (let i = 0; i < 20; i++) {
      const name = `kill-rm-${i}`;
      await cli("run", "-d", "--network", "none", "--name", name, "busybox", "sleep", "60");
      // half without a signal (the CLI sends none: the daemon's default, KILL), half naming it
      await cli("kill", ...(i % 2 ? ["-s", "KILL"] : []), name);
      const rm = await run("rm", name);
      expect(rm.code, `docker rm ${name} right after docker kill: ${rm.stderr}`).to.equal(0);
    }
    expect(await allIds()).to.deep.equal([]);
  });

  it("docker kill -s sends the signal; a container that traps it exits with its own code", async function () {
    await cli("run", "-d", "--name", "trapper", "busybox", "sh", "-c", "trap 'exit 42' USR1; while true; do sleep 0.1; done");
    await sleep(300);
    await cli("kill", "-s", "USR1", "trapper");
    expect((await cli("wait", "trapper")).trim()).to.equal("42");
  });

  it("docker logs -f follows every line in order and ends when the container exits", async function () {
    await cli("run", "-d", "--name", "counter", "busybox", "sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do echo line $i; sleep 0.2; done");
    const t0 = Date.now();
    const r = await run("logs", "-f", "counter");
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join(""));
    // It ran while the container did (about 2 s), and ended with it, not at the 30 s time limit.
    expect(Date.now() - t0).to.be.below(10_000);
    expect((await inspect("counter")).State.Running).to.equal(false);
  });

  it("docker logs --tail, --timestamps and --since", async function () {
    await cli("run", "--name", "stamps", "busybox", "sh", "-c", "echo one; echo two; echo three; sleep 1.5; echo four");
    expect(await cli("logs", "--tail", "2", "stamps")).to.equal("three\nfour\n");
    expect(await cli("logs", "--tail", "0", "stamps")).to.equal("");
    expect(await cli("logs", "--tail", "all", "stamps")).to.equal("one\ntwo\nthree\nfour\n");

    const stamped = (await cli("logs", "--timestamps", "stamps")).split("\n").filter(Boolean);
    expect(stamped).to.have.length(4);
    const times: number[] = [];
    stamped.forEach((line, i) => {
      // RFC3339Nano (the width of the fraction is checked in the next test).
      const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.(\d{1,9})Z (\w+)$/.exec(line);
      expect(m, `timestamped line ${JSON.stringify(line)}`).to.not.equal(null);
      expect(m![3]).to.equal(["one", "two", "three", "four"][i]);
      times.push(Date.parse(`${m![1]}Z`) + Number(m![2].padEnd(9, "0").slice(0, 3)));
    });
    expect(times[3] - times[2]).to.be.at.least(1000);

    // --since a time between "three" and "four": only "four".
    const between = new Date(times[2] + 700).toISOString();
    expect(await cli("logs", "--since", between, "stamps")).to.equal("four\n");
    // --since a time before everything: all of it; after everything: nothing.
    expect(await cli("logs", "--since", new Date(times[0] - 5000).toISOString(), "stamps")).to.equal("one\ntwo\nthree\nfour\n");
    expect(await cli("logs", "--since", new Date(times[3] + 5000).toISOString(), "stamps")).to.equal("");
    // --until before "four": the first three.
    expect(await cli("logs", "--until", between, "stamps")).to.equal("one\ntwo\nthree\n");
  });

  it("docker logs --timestamps writes Docker's fixed nine-digit fraction (RFC3339NanoFixed)", async function () {
    // Docker formats with jsonmessage.RFC3339NanoFixed ("2006-01-02T15:04:05.000000000Z07:00"):
    // trailing zeros are kept. With 60 lines a trimmed fraction (1 in 10 per line) shows almost surely.
    await cli("run", "--name", "many", "busybox", "sh", "-c", "i=0; while [ $i -lt 60 ]; do echo l$i; sleep 0.01; i=$((i+1)); done");
    const lines = (await cli("logs", "-t", "many")).split("\n").filter(Boolean);
    expect(lines).to.have.length(60);
    expect(new Set(lines.map((l) => l.split(" ")[0])).size, "distinct times").to.be.greaterThan(30);
    const bad = lines.filter((l) => !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z l\d+$/.test(l));
    expect(bad, "lines without a nine-digit fraction").to.deep.equal([]);
  });

  it("stop of a container that handles TERM is quick and keeps its code; --stop-signal; logs -f of an exited one ends at once", async function () {
    await cli("run", "-d", "--name", "graceful", "busybox", "sh", "-c", "trap 'echo bye; exit 0' TERM; echo ready; while true; do sleep 0.1; done");
    await eventually("the trap to be set", async () => (await cli("logs", "graceful")).includes("ready"));
    let t0 = Date.now();
    await cli("stop", "-t", "10", "graceful");
    expect(Date.now() - t0).to.be.below(5000);
    let info = await inspect("graceful");
    expect(info.State.ExitCode).to.equal(0);
    expect(await cli("logs", "graceful")).to.equal("ready\nbye\n");
    t0 = Date.now();
    expect(await cli("logs", "-f", "graceful")).to.equal("ready\nbye\n");
    expect(Date.now() - t0).to.be.below(3000);

    await cli("run", "-d", "--name", "usr1", "--stop-signal", "USR1", "busybox", "sh", "-c", "trap 'exit 11' USR1; echo ready; while true; do sleep 0.1; done");
    await eventually("the trap to be set", async () => (await cli("logs", "usr1")).includes("ready"));
    await cli("stop", "usr1");
    info = await inspect("usr1");
    expect(info.Config.StopSignal).to.equal("USR1");
    expect(info.State.ExitCode).to.equal(11);
  });

  it("docker wait on several containers prints each code in order", async function () {
    await cli("run", "-d", "--name", "w1", "busybox", "sh", "-c", "sleep 0.5; exit 1");
    await cli("run", "-d", "--name", "w2", "busybox", "sh", "-c", "exit 2");
    expect(await cli("wait", "w1", "w2")).to.equal("1\n2\n");
  });

  it("docker wait on a running container prints its code when it exits", async function () {
    await cli("run", "-d", "--name", "waiter", "busybox", "sh", "-c", "sleep 1; exit 7");
    const t0 = Date.now();
    const r = await run("wait", "waiter");
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal("7\n");
    expect(Date.now() - t0).to.be.at.least(300);
    expect((await inspect("waiter")).State.ExitCode).to.equal(7);
  });

  it("docker run -d --rm: the container is removed after it exits", async function () {
    const id = (await cli("run", "-d", "--rm", "--name", "rm-detached", "busybox", "sh", "-c", "sleep 0.5")).trim();
    expect(id).to.match(/^[a-f0-9]{64}$/);
    expect((await inspect(id)).HostConfig.AutoRemove).to.equal(true);
    await eventually("the -d --rm container to be removed", async () => (await run("inspect", id)).code !== 0);
    expect(await allIds()).to.deep.equal([]);
  });

  it("env, workdir and user from the request", async function () {
    const r = await run("run", "--rm", "-e", "X=1", "-w", "/tmp", "-u", "1000:1000", "busybox", "sh", "-c", "echo $X $(pwd) $(id -u):$(id -g)");
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal("1 /tmp 1000:1000\n");
  });

  it("the environment has the image's and the request's variables, and HOSTNAME", async function () {
    const id = (await cli("create", "-e", "Y=two words", "busybox", "sh", "-c", 'echo "$Y|$PATH|$HOSTNAME|$HOME"')).trim();
    const r = await run("start", "-a", id);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(`two words|/bin|${id.slice(0, 12)}|/root\n`);
  });

  it("the hostname defaults to the 12-character id prefix; --hostname sets it", async function () {
    const id = (await cli("run", "-d", "--name", "hn", "busybox", "hostname")).trim();
    expect((await cli("wait", "hn")).trim()).to.equal("0");
    expect(await cli("logs", "hn")).to.equal(`${id.slice(0, 12)}\n`);
    expect((await inspect("hn")).Config.Hostname).to.equal(id.slice(0, 12));
    const r = await run("run", "--rm", "--hostname", "box1", "busybox", "hostname");
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal("box1\n");
  });

  it("--memory 64m is the container's cgroup memory limit", async function () {
    const r = await run(
      "run", "--rm", "--memory", "64m", "busybox", "sh", "-c",
      "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes",
    );
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(`${64 * 1024 * 1024}\n`);
  });

  it("--pids-limit 20 is the container's cgroup pids limit", async function () {
    const r = await run(
      "run", "--rm", "--pids-limit", "20", "busybox", "sh", "-c",
      "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max",
    );
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal("20\n");
  });

  it("docker container prune -f removes the stopped containers and keeps the running ones", async function () {
    const a = (await cli("create", "busybox", "true")).trim();
    await cli("run", "--name", "done1", "busybox", "true");
    const b = (await inspect("done1")).Id as string;
    const running = (await cli("run", "-d", "busybox", "sleep", "60")).trim();
    const r = await run("container", "prune", "-f");
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^Deleted Containers:\n/);
    const deleted = r.stdout.split("\n").filter((l) => /^[a-f0-9]{64}$/.test(l));
    expect(deleted.sort()).to.deep.equal([a, b].sort());
    expect(r.stdout).to.match(/Total reclaimed space: \S+/);
    expect(await allIds()).to.deep.equal([running]);
  });

  it("docker restart restarts a running container and starts a stopped one", async function () {
    await cli("run", "-d", "--name", "rs", "busybox", "sleep", "60");
    const first = await inspect("rs");
    await sleep(50);
    const t0 = Date.now();
    expect((await cli("restart", "-t", "1", "rs")).trim()).to.equal("rs");
    expect(Date.now() - t0).to.be.at.least(900);
    const second = await inspect("rs");
    expect(second.State.Running).to.equal(true);
    expect(second.State.Pid).to.not.equal(first.State.Pid);
    expect(Date.parse(second.State.StartedAt)).to.be.greaterThan(Date.parse(first.State.StartedAt));

    await cli("kill", "rs");
    await cli("wait", "rs");
    expect((await cli("restart", "rs")).trim()).to.equal("rs");
    expect((await inspect("rs")).State.Running).to.equal(true);
  });

  it("docker restart of a container that prints fast leaves it running every time", async function () {
    // The supervisor announces an exit once the run's output is drained; a restart records the
    // exit itself and starts the next run, which that late news of the old run must not end.
    await cli("run", "-d", "--name", "rsf", "busybox", "sh", "-c", "trap 'exit 3' TERM; while :; do echo 0123456789012345678901234567890123456789; done");
    for (let i = 0; i < 8; i++) {
      const before = (await inspect("rsf")).State.Pid;
      await cli("restart", "-t", "5", "rsf");
      await sleep(300);
      const after = (await inspect("rsf")).State;
      expect(after.Running, `restart ${i + 1}`).to.equal(true);
      expect(after.Pid, `restart ${i + 1}`).to.not.equal(before);
    }
  });

  it("docker start -a attaches to a created container and exits with its code", async function () {
    await cli("create", "--name", "sa", "busybox", "sh", "-c", "echo started; exit 4");
    const r = await run("start", "-a", "sa");
    expect(r.stdout).to.equal("started\n");
    expect(r.code).to.equal(4);
  });

  it("errors for a missing container: start, stop, kill, wait, logs", async function () {
    for (const args of [["start"], ["stop"], ["kill"], ["wait"], ["logs"], ["restart"]]) {
      const r = await run(...args, "missing-one");
      expect(r.code, `docker ${args[0]}`).to.not.equal(0);
      expect(r.stderr, `docker ${args[0]}`).to.include("No such container: missing-one");
    }
  });
});
