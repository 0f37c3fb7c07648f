/**
 * Health checks end to end, with the Docker CLI against a real engined: `docker run --health-*`
 * (CMD-SHELL through the container's shell), an image's HEALTHCHECK inherited or turned off with
 * --no-healthcheck, State.Health (Status, FailingStreak, the Log with exit codes and output), the
 * `health_status` events, `docker ps`'s "(healthy)" and its `health` filter, a probe past its
 * timeout killed and counted as a failure with Docker's message, checks that stop with the
 * container, Docker's refusals at create, and a status that survives a daemon restart with
 * --live-restore.
 */
import "./helpers/root-hooks.js";
import { join } from "node:path";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Health {
  Status: string;
  FailingStreak: number;
  Log: { Start: string; End: string; ExitCode: number; Output: string }[];
}

describe("health checks (Docker CLI)", function () {
  this.timeout(120_000);
  let dir: string;
  let socket: string;
  let host: string;
  let d: TestDaemon | undefined;
  const cli = async (...args: string[]) => {
    const r = await docker(host, args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const start = async () => {
    d = await startEngined({
      hosts: [`unix://${socket}`],
      args: ["--data-root", join(dir, "data"), "--exec-root", join(dir, "exec"), "--pidfile", join(dir, "engine.pid"), "--live-restore"],
    });
  };
  const health = async (name: string): Promise<Health | null> => JSON.parse(await cli("inspect", "-f", "{{json .State.Health}}", name));
  /** Polls (bounded) until the container's health status is `status`. */
  const until = async (name: string, status: string, ms = 30_000): Promise<Health> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const h = await health(name);
      if (h?.Status === status) return h;
      if (Date.now() > deadline) throw new Error(`${name} never became ${status}: ${JSON.stringify(h)}`);
      await sleep(300);
    }
  };

  before(async () => {
    dir = makeTempDir("engine-health-");
    socket = join(dir, "engine.sock");
    host = `unix://${socket}`;
    await start();
    const rootfs = writeFixture(dir, "rootfs.tar", await busyboxRootfs());
    await cli("import", "--change", 'CMD ["sh"]', rootfs, "busybox");
    await cli("import", "--change", 'CMD ["sleep", "300"]', "--change", "HEALTHCHECK --interval=1s --retries=1 CMD true", rootfs, "checked");
  });
  afterEach(async () => {
    const ids = (await docker(host, ["ps", "-aq"])).stdout.split("\n").filter(Boolean);
    if (ids.length) await docker(host, ["rm", "-f", ...ids]);
  });
  after(async () => d?.stop());

  it("goes from starting to healthy, with a health_status event, (healthy) in docker ps and the health filter", async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    await cli("run", "-d", "--name", "web", "--health-cmd", "test -f /tmp/ready", "--health-interval", "500ms", "--health-retries", "3",
      "busybox", "sh", "-c", "sleep 2; touch /tmp/ready; sleep 300");
    const first = await health("web");
    expect(first?.Status).to.equal("starting");
    expect(await cli("ps", "--format", "{{.Status}}", "--filter", "name=web")).to.match(/^Up .* \(health: starting\)\n$/);
    const healthy = await until("web", "healthy");
    expect(healthy.FailingStreak).to.equal(0);
    const last = healthy.Log[healthy.Log.length - 1];
    expect(last.ExitCode).to.equal(0);
    expect(Date.parse(last.End)).to.be.at.least(Date.parse(last.Start));
    expect(healthy.Log.length).to.be.at.most(5);
    expect(await cli("ps", "--format", "{{.Status}}", "--filter", "name=web")).to.match(/^Up .* \(healthy\)\n$/);
    expect(await cli("ps", "--format", "{{.Names}}", "--filter", "health=healthy")).to.equal("web\n");
    expect(await cli("ps", "--format", "{{.Names}}", "--filter", "health=unhealthy")).to.equal("");
    const events = await cli("events", "--since", String(since), "--until", String(Math.ceil(Date.now() / 1000)), "--filter", "container=web", "--format", "{{.Action}}");
    expect(events.split("\n")).to.include("health_status: healthy");
    const inspected = JSON.parse(await cli("inspect", "web"))[0];
    expect(inspected.Config.Healthcheck).to.deep.equal({ Test: ["CMD-SHELL", "test -f /tmp/ready"], Interval: 500e6, Retries: 3 });
  });

  it("probes at the start interval while starting within the start period, however long the interval", async () => {
    await cli("run", "-d", "--name", "quick", "--health-cmd", "true", "--health-interval", "60s", "--health-start-period", "30s",
      "--health-start-interval", "300ms", "busybox", "sleep", "300");
    // the first probe after 300 ms, not after the start period or the interval
    const healthy = await until("quick", "healthy", 10_000);
    expect(healthy.Log).to.have.length(1);
    // healthy now: the interval again (60 s), so no second probe for a while
    await sleep(1000);
    expect((await health("quick"))?.Log).to.have.length(1);
  });

  it("turns unhealthy after Retries failures in a row, keeping the probes' exit codes and output", async () => {
    await cli("run", "-d", "--name", "sick", "--health-cmd", "echo not yet; exit 3", "--health-interval", "300ms", "--health-retries", "2", "busybox", "sleep", "300");
    const sick = await until("sick", "unhealthy");
    expect(sick.FailingStreak).to.be.at.least(2);
    expect(sick.Log[sick.Log.length - 1]).to.include({ ExitCode: 3, Output: "not yet\n" });
    expect(await cli("ps", "--format", "{{.Status}}", "--filter", "name=sick")).to.match(/^Up .* \(unhealthy\)\n$/);
  });

  it("kills a probe past its timeout and counts it as a failure, with Docker's message", async () => {
    await cli("run", "-d", "--name", "slow", "--health-cmd", "sleep 30", "--health-timeout", "500ms", "--health-interval", "300ms", "--health-retries", "1",
      "busybox", "sleep", "300");
    const slow = await until("slow", "unhealthy");
    expect(slow.Log[0]).to.include({ ExitCode: -1, Output: "Health check exceeded timeout (500ms)" });
    // each probe past its timeout was killed: after several, they have not piled up (one may be under way now)
    await sleep(2500);
    const ps = await cli("exec", "slow", "ps", "-o", "args");
    expect(ps.split("\n").filter((l) => l.trim() === "sleep 30").length).to.be.at.most(1);
    expect(slow.Log.length).to.be.at.least(1);
  });

  it("inherits the image's HEALTHCHECK, and --no-healthcheck turns it off (health filter none)", async () => {
    await cli("run", "-d", "--name", "inherits", "checked");
    await until("inherits", "healthy");
    await cli("run", "-d", "--name", "unchecked", "--no-healthcheck", "checked");
    await sleep(1500);
    expect(await health("unchecked")).to.equal(null);
    expect(JSON.parse(await cli("inspect", "-f", "{{json .Config.Healthcheck}}", "unchecked"))).to.deep.equal({ Test: ["NONE"], Interval: 1e9, Retries: 1 });
    expect(await cli("ps", "--format", "{{.Names}}", "--filter", "health=none")).to.equal("unchecked\n");
    const bad = await docker(host, ["ps", "--filter", "health=ill"]);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.include("Unrecognised filter value for health: ill");
  });

  it("stops probing when the container stops, keeping its last health", async () => {
    await cli("run", "-d", "--name", "stops", "--health-cmd", "true", "--health-interval", "300ms", "busybox", "sleep", "300");
    await until("stops", "healthy");
    await cli("stop", "-t", "0", "stops");
    const atStop = await health("stops");
    await sleep(1200);
    const later = await health("stops");
    expect(later).to.deep.equal(atStop);
  });

  it("refuses durations under 1ms and negative retries at create, as Docker does", async () => {
    const create = (hc: Record<string, unknown>) =>
      httpRequest({ socketPath: socket }, "POST", "/v1.51/containers/create", { Image: "busybox", Cmd: ["true"], Healthcheck: { Test: ["CMD", "true"], ...hc } });
    const interval = await create({ Interval: 1000 });
    expect(interval.status).to.equal(400);
    expect(JSON.parse(interval.body).message).to.equal("Interval in Healthcheck cannot be less than 1ms");
    const retries = await create({ Retries: -1 });
    expect(retries.status).to.equal(400);
    expect(JSON.parse(retries.body).message).to.equal("Retries in Healthcheck cannot be negative");
  });

  it("takes null durations and retries as unset, as Docker's decoding does (the Python SDK sends them, so docker-compose)", async () => {
    const hc = { Test: ["CMD", "true"], Interval: 1e9, Timeout: null, StartPeriod: null, StartInterval: null, Retries: null };
    const created = await httpRequest({ socketPath: socket }, "POST", "/v1.51/containers/create?name=nulls", { Image: "busybox", Cmd: ["sleep", "300"], Healthcheck: hc });
    expect(created.status, created.body).to.equal(201);
    expect(JSON.parse(await cli("inspect", "-f", "{{json .Config.Healthcheck}}", "nulls"))).to.deep.equal({ Test: ["CMD", "true"], Interval: 1e9 });
    await cli("start", "nulls");
    expect((await until("nulls", "healthy")).FailingStreak).to.equal(0);
  });

  it("keeps a container's status across a daemon restart with --live-restore, and goes on probing", async () => {
    await cli("run", "-d", "--name", "lasting", "--health-cmd", "true", "--health-interval", "300ms", "busybox", "sleep", "300");
    await until("lasting", "healthy");
    await d!.stop();
    await start();
    const after = await health("lasting");
    expect(after?.Status).to.equal("healthy");
    const before = after!.Log[after!.Log.length - 1].Start;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const now = await health("lasting");
      if (now && now.Log[now.Log.length - 1].Start !== before) break;
      if (Date.now() > deadline) throw new Error("no probe after the daemon restart");
      await sleep(300);
    }
  });
});
