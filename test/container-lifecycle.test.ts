/**
 * The smaller parts of a container's life through the real Docker CLI (and the API where the
 * CLI hides the shape): restart policies with their back-off and across a daemon restart,
 * pause/unpause (the process really stops), rename, update (the cgroup really changes), top
 * and stats. Each daemon runs in a network namespace of its own, with its bridge, so that
 * stats have a network to count.
 */
import "./helpers/root-hooks.js";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { eventually, makeNetns, startNetDaemon, type NetDaemon, type Netns } from "./helpers/net-daemon.js";
import { cgroupOfPid } from "../host/containers/cgroup-files.js";
import { nextDelay, policyRestarts } from "../core/containers/restart-policy.js";
import { parsePs } from "../host/containers/container-top.js";
import { applyUpdate, checkUpdate, resourcesUpdate } from "../host/containers/resource-update.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TICKER = "i=0; while true; do i=$((i+1)); echo $i; sleep 0.1; done";

describe("container lifecycle: restart policies, pause, rename, update, top, stats", function () {
  this.timeout(120_000);
  let ns: Netns;
  let roots: string;
  let nd: NetDaemon;
  const cli = (...args: string[]) => nd.cli(...args);
  const fails = async (args: string[], message: RegExp) => {
    const r = await docker(nd.host, args);
    expect(r.code, `docker ${args.join(" ")} should fail`).to.not.equal(0);
    expect(r.stderr).to.match(message);
  };
  const api = (method: string, path: string, body?: unknown) => httpRequest({ socketPath: nd.d.socket }, method, path, body);
  const inspect = async (ref: string) => JSON.parse(await cli("inspect", ref))[0];
  const start = async () => {
    nd = await startNetDaemon(["--shutdown-timeout", "2"], { netns: ns, roots });
  };

  before(async function () {
    if (process.getuid?.() !== 0) this.skip();
    ns = makeNetns();
    roots = makeTempDir("engine-lifecycle-");
    await start();
  });
  after(async () => {
    await nd?.stop();
    ns?.remove();
  });
  afterEach(async () => {
    const ids = (await cli("ps", "-aq")).split("\n").filter(Boolean);
    if (ids.length) await docker(nd.host, ["rm", "-f", ...ids]);
  });

  describe("restart policies", () => {
    it("refuses what Docker refuses at create", async () => {
      const create = (HostConfig: unknown) => api("POST", "/containers/create", { Image: "busybox", Cmd: ["true"], HostConfig });
      let r = await create({ RestartPolicy: { Name: "always", MaximumRetryCount: 2 } });
      expect(r.status).to.equal(400);
      expect(JSON.parse(r.body).message).to.equal("invalid restart policy: maximum retry count can only be used with 'on-failure'");
      r = await create({ RestartPolicy: { Name: "on-failure", MaximumRetryCount: -1 } });
      expect([r.status, JSON.parse(r.body).message]).to.deep.equal([400, "invalid restart policy: maximum retry count cannot be negative"]);
      r = await create({ RestartPolicy: { Name: "sometimes" } });
      expect(r.status).to.equal(400);
      expect(JSON.parse(r.body).message).to.match(/^invalid restart policy: unknown policy 'sometimes'/);
      r = await create({ AutoRemove: true, RestartPolicy: { Name: "always" } });
      expect([r.status, JSON.parse(r.body).message]).to.deep.equal([400, "can't create 'AutoRemove' container with restart policy"]);
      expect((await cli("ps", "-aq")).trim()).to.equal("");
    });

    it("--restart=always brings the container back after its process is killed from the host, with die then start", async () => {
      const since = Math.floor(Date.now() / 1000) - 1;
      const id = (await cli("run", "-d", "--restart=always", "--name", "phoenix", "busybox", "sleep", "300")).trim();
      const first = await inspect(id);
      expect(first.HostConfig.RestartPolicy).to.deep.equal({ Name: "always", MaximumRetryCount: 0 });
      process.kill(first.State.Pid, "SIGKILL");
      let now = first;
      await eventually("the container runs again", async () => {
        now = await inspect(id);
        return now.State.Running && !now.State.Restarting && now.State.Pid !== first.State.Pid;
      });
      expect(now.RestartCount).to.equal(1);
      expect(now.State.ExitCode).to.equal(0);
      expect(now.State.Status).to.equal("running");
      const until = Math.ceil(Date.now() / 1000) + 1;
      const events = await cli("events", "--since", String(since), "--until", String(until), "--filter", `container=${id}`, "--format", "{{.Action}}");
      expect(events.split("\n").filter((a) => ["start", "die"].includes(a))).to.deep.equal(["start", "die", "start"]);
    });

    it("on-failure:2 restarts a failing container twice, then leaves it exited with RestartCount 2", async () => {
      await cli("run", "-d", "--restart", "on-failure:2", "--name", "flaky", "busybox", "sh", "-c", "echo run; exit 3");
      await eventually("the retries are done", async () => {
        const s = await inspect("flaky");
        return s.State.Status === "exited" && s.RestartCount === 2;
      });
      await sleep(1500); // past the back-off a third restart would have had
      const s = await inspect("flaky");
      expect([s.State.Status, s.RestartCount, s.State.ExitCode]).to.deep.equal(["exited", 2, 3]);
      expect((await cli("logs", "flaky")).split("\n").filter(Boolean)).to.deep.equal(["run", "run", "run"]);
      // A user's start counts from zero again.
      await cli("start", "flaky");
      await eventually("the new retries are done", async () => (await inspect("flaky")).RestartCount === 2 && (await inspect("flaky")).State.Status === "exited");
    });

    it("backs off: restarts of a container that keeps failing come further and further apart", async () => {
      const since = Math.floor(Date.now() / 1000) - 1;
      await cli("run", "-d", "--restart", "always", "--name", "crashy", "busybox", "false");
      // A count of 5 is 5 exits each with a restart scheduled: at least 4 of them made.
      await eventually("five restarts", async () => (await inspect("crashy")).RestartCount >= 5, 30_000);
      await cli("stop", "crashy");
      const stopped = await inspect("crashy");
      expect([stopped.State.Status, stopped.State.Restarting, stopped.State.Running]).to.deep.equal(["exited", false, false]);
      // The wait from each die to the next start: 100 ms, then 200, 400, 800 (at least; a slow
      // machine adds to them, never takes away), as the events' nanosecond times tell.
      const until = String(Math.ceil(Date.now() / 1000) + 1);
      const lines = await cli("events", "--since", String(since), "--until", until, "--filter", "container=crashy", "--format", "{{.Action}} {{.TimeNano}}");
      const events = lines.split("\n").filter(Boolean).map((l) => l.split(" ")).filter(([a]) => a === "start" || a === "die");
      const gaps: number[] = [];
      for (let i = 1; i + 1 < events.length && gaps.length < 4; i += 2) {
        expect([events[i][0], events[i + 1][0]]).to.deep.equal(["die", "start"]);
        gaps.push(Number((BigInt(events[i + 1][1]) - BigInt(events[i][1])) / 1_000_000n));
      }
      expect(gaps).to.have.length(4);
      gaps.forEach((gap, k) => expect(gap, `restart ${k + 1} came ${gap} ms after the exit`).to.be.at.least(100 * 2 ** k - 5));
      await sleep(1000);
      expect((await inspect("crashy")).RestartCount).to.equal(stopped.RestartCount);
    });

    it("a docker stop or kill of an always container keeps it stopped", async () => {
      await cli("run", "-d", "--restart=always", "--name", "stopme", "busybox", "sleep", "300");
      await cli("run", "-d", "--restart=always", "--name", "killme", "busybox", "sleep", "300");
      await cli("stop", "-t", "1", "stopme");
      await cli("kill", "killme");
      await sleep(1000);
      for (const name of ["stopme", "killme"]) {
        const s = await inspect(name);
        expect([name, s.State.Status, s.RestartCount]).to.deep.equal([name, "exited", 0]);
      }
    });

    it("survives a daemon restart: always and unless-stopped come back, unless stopped by hand (always even then)", async () => {
      await cli("run", "-d", "--restart=always", "--name", "a-run", "busybox", "sleep", "300");
      await cli("run", "-d", "--restart=always", "--name", "a-stopped", "busybox", "sleep", "300");
      await cli("run", "-d", "--restart=unless-stopped", "--name", "u-run", "busybox", "sleep", "300");
      await cli("run", "-d", "--restart=unless-stopped", "--name", "u-stopped", "busybox", "sleep", "300");
      await cli("run", "-d", "--restart=on-failure", "--name", "f-run", "busybox", "sleep", "300");
      await cli("run", "-d", "--name", "plain", "busybox", "sleep", "300");
      await cli("stop", "-t", "0", "a-stopped", "u-stopped");
      // Stopped with the daemon (its containers too, as no live restore is asked for), then started on the same roots.
      await nd.d.stop();
      await start();
      const state = async (name: string) => (await inspect(name)).State.Status;
      expect(await state("a-run")).to.equal("running");
      expect(await state("a-stopped")).to.equal("running");
      expect(await state("u-run")).to.equal("running");
      expect(await state("u-stopped")).to.equal("exited");
      expect(await state("f-run")).to.equal("running"); // killed by the shutdown: a failure
      expect(await state("plain")).to.equal("exited");
      // The restarted ones really run.
      const pid = (await inspect("a-run")).State.Pid;
      expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0]).to.equal("sleep");
    });
  });

  describe("pause and unpause", () => {
    it("freezes the process (its output stops) and thaws it, with Docker's states and errors", async () => {
      const id = (await cli("run", "-d", "--name", "ticker", "busybox", "sh", "-c", TICKER)).trim();
      await sleep(500);
      await cli("pause", "ticker");
      let s = await inspect("ticker");
      expect([s.State.Status, s.State.Paused, s.State.Running]).to.deep.equal(["paused", true, true]);
      expect(await cli("ps", "--filter", "name=ticker", "--format", "{{.Status}}")).to.match(/^Up .* \(Paused\)\n$/);
      const freezer = cgroupOfPid(s.State.Pid).dir("freezer");
      if (freezer) expect(readFileSync(join(freezer, "freezer.state"), "utf8").trim()).to.equal("FROZEN");
      const lines = async () => (await cli("logs", "ticker")).split("\n").filter(Boolean).length;
      const before = await lines();
      await sleep(1000);
      expect(await lines()).to.equal(before);
      await fails(["pause", "ticker"], new RegExp(`Container ${id} is already paused`));
      await cli("unpause", "ticker");
      s = await inspect("ticker");
      expect([s.State.Status, s.State.Paused]).to.deep.equal(["running", false]);
      await eventually("the output goes on", async () => (await lines()) > before + 3);
      await fails(["unpause", "ticker"], new RegExp(`Container ${id} is not paused`));
      // A paused container can be stopped.
      await cli("pause", "ticker");
      await cli("stop", "-t", "1", "ticker");
      s = await inspect("ticker");
      expect([s.State.Status, s.State.Paused]).to.deep.equal(["exited", false]);
      await fails(["pause", "ticker"], new RegExp(`Container ${id} is not running`));
    });
  });

  describe("pause and unpause at once", () => {
    it("takes a container's pauses and unpauses one after another: of two at once, one is done and the other refused (409)", async () => {
      await cli("run", "-d", "--name", "twice", "busybox", "sleep", "60");
      for (const [action, refusal] of [["pause", "is already paused"], ["unpause", "is not paused"]]) {
        const answers = await Promise.all([0, 1, 2].map(() => api("POST", `/containers/twice/${action}`)));
        expect(answers.map((a) => a.status).sort(), action).to.deep.equal([204, 409, 409]);
        for (const a of answers.filter((x) => x.status === 409)) expect(JSON.parse(a.body).message).to.include(refusal);
      }
      await cli("rm", "-f", "twice");
    });
  });

  describe("rename", () => {
    it("renames, refuses a name in use and the same name, and says so in an event", async () => {
      const since = Math.floor(Date.now() / 1000) - 1;
      const id = (await cli("create", "--name", "before", "busybox", "true")).trim();
      await cli("create", "--name", "taken", "busybox", "true");
      await cli("rename", "before", "after");
      expect((await inspect(id)).Name).to.equal("/after");
      await fails(["rename", "after", "taken"], /Conflict. The container name "\/taken" is already in use/);
      await fails(["rename", "after", "after"], /Renaming a container with the same name as its current name/);
      await fails(["rename", "after", "bad name!"], /Invalid container name/);
      expect((await api("POST", `/containers/${id}/rename?name=`)).status).to.equal(400);
      const until = Math.ceil(Date.now() / 1000) + 1;
      const events = await cli("events", "--since", String(since), "--until", String(until), "--filter", "event=rename", "--format", "{{.Actor.Attributes.oldName}} {{.Actor.Attributes.name}}");
      expect(events.trim()).to.equal("/before after");
    });
  });

  describe("update", () => {
    it("changes the memory limit of a running container in its cgroup and in its record", async () => {
      await cli("run", "-d", "--name", "limited", "--memory", "64m", "busybox", "sleep", "300");
      const limit = async () => {
        const cg = cgroupOfPid((await inspect("limited")).State.Pid);
        return readFileSync(cg.version === 2 ? join(cg.dir("")!, "memory.max") : join(cg.dir("memory")!, "memory.limit_in_bytes"), "utf8").trim();
      };
      expect(await limit()).to.equal(String(64 * 1024 * 1024));
      await cli("update", "--memory", "48m", "--restart", "on-failure:3", "limited");
      expect(await limit()).to.equal(String(48 * 1024 * 1024));
      const s = await inspect("limited");
      expect(s.HostConfig.Memory).to.equal(48 * 1024 * 1024);
      expect(s.HostConfig.RestartPolicy).to.deep.equal({ Name: "on-failure", MaximumRetryCount: 3 });
      const r = await api("POST", "/containers/limited/update", { CpuShares: 512 });
      // Docker's body when there is nothing to warn of
      expect([r.status, JSON.parse(r.body)]).to.deep.equal([200, { Warnings: null }]);
      await fails(["update", "--memory", "1m", "limited"], /Minimum memory limit allowed is 6MB/);
      await fails(["update", "--memory", "200m", "limited"], /Memory limit should be smaller than already set memoryswap limit/);
      // A stopped container keeps the change for its next start.
      await cli("stop", "-t", "0", "limited");
      await cli("update", "--memory", "40m", "--memory-swap", "80m", "limited");
      await cli("start", "limited");
      expect(await limit()).to.equal(String(40 * 1024 * 1024));
    });
  });

  describe("top", () => {
    it("lists the container's processes as ps shows them, and only those", async () => {
      await cli("run", "-d", "--name", "topped", "busybox", "sh", "-c", "sleep 301 & sleep 302; echo done");
      await sleep(300);
      const out = (await cli("top", "topped")).split("\n").filter(Boolean);
      expect(out[0].split(/\s+/)).to.deep.equal(["UID", "PID", "PPID", "C", "STIME", "TTY", "TIME", "CMD"]);
      const cmds = out.slice(1).map((l) => l.split(/\s+/).slice(7).join(" "));
      expect(cmds).to.have.members(["sh -c sleep 301 & sleep 302; echo done", "sleep 301", "sleep 302"]);
      const r = await api("GET", "/containers/topped/top?ps_args=-o%20pid,comm");
      const body = JSON.parse(r.body);
      expect(body.Titles).to.deep.equal(["PID", "COMMAND"]);
      expect(body.Processes.map((p: string[]) => p[1]).sort()).to.deep.equal(["sh", "sleep", "sleep"]);
      const stopped = (await cli("create", "busybox", "true")).trim();
      await fails(["top", stopped], new RegExp(`Container ${stopped} is not running`));
    });
  });

  describe("stats", () => {
    it("docker stats --no-stream shows Docker's columns with the container's numbers", async () => {
      await cli("run", "-d", "--name", "busy", "--memory", "100m", "busybox", "sh", "-c", "sleep 301 & sleep 302 & while true; do :; done");
      const out = (await cli("stats", "--no-stream", "busy")).split("\n").filter(Boolean);
      expect(out[0].split(/\s{2,}/)).to.deep.equal(["CONTAINER ID", "NAME", "CPU %", "MEM USAGE / LIMIT", "MEM %", "NET I/O", "BLOCK I/O", "PIDS"]);
      const row = out[1].split(/\s{2,}/);
      expect(row[1]).to.equal("busy");
      expect(Number(row[2].replace("%", ""))).to.be.greaterThan(10); // a busy loop
      expect(row[3]).to.match(/ \/ 100MiB$/);
      expect(row[5]).to.match(/B \/ .*B$/);
      expect(Number(row[7])).to.equal(3);
    });

    it("answers the API's JSON shape: one-shot without precpu, no-stream with it, a stream a second apart", async () => {
      const id = (await cli("run", "-d", "--name", "watched", "busybox", "sleep", "300")).trim();
      const one = JSON.parse((await api("GET", "/containers/watched/stats?stream=false&one-shot=true")).body);
      expect(one).to.include.keys("read", "preread", "pids_stats", "blkio_stats", "num_procs", "storage_stats", "cpu_stats", "precpu_stats", "memory_stats", "name", "id", "networks");
      expect([one.id, one.name]).to.deep.equal([id, "/watched"]);
      expect(one.preread).to.equal("0001-01-01T00:00:00Z");
      expect(one.precpu_stats.cpu_usage.total_usage).to.equal(0);
      expect(one.cpu_stats.cpu_usage.total_usage).to.be.greaterThan(0);
      expect(one.cpu_stats.system_cpu_usage).to.be.greaterThan(0);
      expect(one.cpu_stats.online_cpus).to.be.greaterThan(0);
      expect(one.memory_stats.usage).to.be.greaterThan(0);
      expect(one.memory_stats.limit).to.be.greaterThan(0);
      if (existsSync("/sys/fs/cgroup/blkio")) {
        // cgroup v1, as Docker's daemon reports it: the eight block I/O lists (empty ones too, which
        // clients iterate), the memory.stat keys containerd's v1 stats have, max_usage and failcnt
        // left out when 0
        for (const list of Object.values(one.blkio_stats)) expect(list).to.be.an("array");
        expect(Object.keys(one.blkio_stats)).to.have.length(8);
        expect(one.memory_stats.stats).to.include.keys("cache", "rss", "total_inactive_file", "hierarchical_memory_limit").and.not.have.any.keys("shmem", "swap", "workingset_refault_anon");
        if (one.memory_stats.failcnt !== undefined) expect(one.memory_stats.failcnt).to.be.greaterThan(0);
      }
      expect(one.pids_stats.current).to.equal(1);
      expect(one.networks.eth0).to.have.keys("rx_bytes", "rx_packets", "rx_errors", "rx_dropped", "tx_bytes", "tx_packets", "tx_errors", "tx_dropped");
      const two = JSON.parse((await api("GET", "/containers/watched/stats?stream=false")).body);
      expect(two.precpu_stats.cpu_usage.total_usage).to.be.greaterThan(0);
      expect(Date.parse(two.read) - Date.parse(two.preread)).to.be.within(900, 2000);
      // The stream: one object a second, each with the one before as its "pre".
      const objects = await streamStats(nd.d.socket, "watched", 2, 5000);
      expect(objects).to.have.length(2);
      expect(objects[1].precpu_stats).to.deep.equal(objects[0].cpu_stats);
      expect(objects[1].preread).to.equal(objects[0].read);
      // A stopped container: its name and id, all else zero.
      await cli("stop", "-t", "0", "watched");
      const none = JSON.parse((await api("GET", "/containers/watched/stats?stream=false")).body);
      expect([none.id, none.read, none.cpu_stats.cpu_usage.total_usage]).to.deep.equal([id, "0001-01-01T00:00:00Z", 0]);
    });
  });
});

/** The first `count` objects of a stats stream. */
async function streamStats(socketPath: string, ref: string, count: number, timeoutMs: number): Promise<Record<string, any>[]> {
  const { request } = await import("node:http");
  return new Promise((resolve, reject) => {
    const objects: Record<string, any>[] = [];
    const req = request({ socketPath, method: "GET", path: `/containers/${ref}/stats` }, (res) => {
      let buf = "";
      res.on("data", (d: Buffer) => {
        buf += d.toString();
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim()) objects.push(JSON.parse(line));
          if (objects.length >= count) {
            req.destroy();
            clearTimeout(timer);
            return resolve(objects);
          }
        }
      });
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve(objects);
    }, timeoutMs);
    req.on("error", (err) => (objects.length >= count ? undefined : reject(err)));
    req.end();
  });
}

describe("container lifecycle rules (restart back-off, policies, update, ps parsing)", () => {
  it("backs off from 100 ms, doubling to at most a minute, and starts over after a run of 10 s", () => {
    const delays: number[] = [];
    let d = 0;
    for (let i = 0; i < 12; i++) delays.push((d = nextDelay(d, 50)));
    expect(delays).to.deep.equal([100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200, 60000, 60000]);
    expect(nextDelay(60000, 10_000)).to.equal(100);
  });

  it("restarts as each policy says", () => {
    const p = (Name: string, MaximumRetryCount = 0) => ({ Name, MaximumRetryCount });
    expect(policyRestarts(p("always"), 0, true, 5)).to.equal(true);
    expect(policyRestarts(p("unless-stopped"), 0, false, 0)).to.equal(true);
    expect(policyRestarts(p("unless-stopped"), 1, true, 0)).to.equal(false);
    expect(policyRestarts(p("on-failure"), 0, false, 0)).to.equal(false);
    expect(policyRestarts(p("on-failure"), 2, false, 99)).to.equal(true);
    expect(policyRestarts(p("on-failure", 2), 2, false, 1)).to.equal(true);
    expect(policyRestarts(p("on-failure", 2), 2, false, 2)).to.equal(false);
    expect(policyRestarts(p("no"), 1, false, 0)).to.equal(false);
    expect(policyRestarts(undefined, 1, false, 0)).to.equal(false);
  });

  it("updates limits with Docker's conflicts, and gives the runtime OCI resources", () => {
    const id = "c0ffee";
    expect(() => applyUpdate(id, { NanoCpus: 1e9 }, { CpuQuota: 50_000 })).to.throw("Cannot update container c0ffee: Conflicting options: CPU Quota cannot be updated as NanoCPUs has already been set");
    expect(() => applyUpdate(id, { AutoRemove: true }, { RestartPolicy: { Name: "always" } })).to.throw(/AutoRemove is enabled/);
    const limits = { memory: true, swap: true, swappiness: true, blkioWeight: true };
    expect(() => checkUpdate({ RestartPolicy: { Name: "always", MaximumRetryCount: 1 } }, limits)).to.throw(/only be used with 'on-failure'/);
    // checked before the update proper, on its own fields: Docker's words without a prefix
    expect(() => checkUpdate({ CpuPeriod: 100 }, limits)).to.throw(/^CPU cfs period can not be less than 1ms/);
    expect(() => checkUpdate({ MemoryReservation: 1 << 20 }, limits)).to.throw(/^Minimum memory reservation allowed is 6MB$/);
    expect(checkUpdate({ MemorySwap: 8 << 20 }, limits)).to.deep.equal([]);
    expect(checkUpdate({ BlkioWeight: 5 }, { ...limits, blkioWeight: false })).to.deep.equal(["Your kernel does not support Block I/O weight or the cgroup is not mounted. Weight discarded."]);
    // a container with no swap limit (or an unlimited one) takes a memory limit only with a swap limit
    expect(() => applyUpdate(id, {}, { Memory: 64 << 20 })).to.throw(/Memory limit should be smaller than already set memoryswap limit/);
    expect(() => applyUpdate(id, { Memory: 64 << 20, MemorySwap: -1 }, { Memory: 80 << 20 })).to.throw(/Memory limit should be smaller/);
    const next = applyUpdate(id, { Memory: 64 << 20, CpuShares: 100 }, { Memory: 32 << 20, NanoCpus: 1.5e9, PidsLimit: 0 });
    expect([next.Memory, next.CpuShares, next.NanoCpus, next.PidsLimit]).to.deep.equal([32 << 20, 100, 1.5e9, 0]);
    expect(resourcesUpdate(next)).to.deep.equal({
      memory: { limit: 32 << 20, swap: 64 << 20 },
      cpu: { shares: 100, period: 100_000, quota: 150_000, cpus: "", mems: "" },
      pids: { limit: -1 },
    });
  });

  it("parses ps as Docker does: the last column keeps its spaces, thread lines go with their process", () => {
    const out = "  PID   LWP CMD\n   10     - sh -c x y\n    -    11 -\n   12    12 other thing\n";
    expect(parsePs(out, new Set([10]))).to.deep.equal({ Titles: ["PID", "LWP", "CMD"], Processes: [["10", "-", "sh -c x y"], ["-", "11", "-"]] });
    expect(() => parsePs("USER CMD\nroot x\n", new Set())).to.throw("Couldn't find PID field in ps output");
  });
});
