/**
 * Metrics (`--metrics-addr`, experimental) against a real engined: the whole scrape parsed by a
 * Prometheus text-format parser (prom2javascript) into families of their declared types, checked
 * by Prometheus's own `promtool check metrics` (its parser and linter), and
 * the series moving with real work done through the real Docker CLI: runs of busybox (one that
 * starts, one whose command is missing, one left running), a pull from a real local registry,
 * plain API calls. Then the refusals: no --experimental (start and --validate), a port in use,
 * and the listener gone once the daemon stops.
 */
import "./helpers/root-hooks.js";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { join } from "node:path";
import { expect } from "chai";
import { getMetricsFromIterator, type PromData, type PromHistogramData, type PromMetrics } from "prom2javascript";
import {docker } from "./helpers/docker-cli.js";
import { daemonArgs, makeTempDir, runEngined, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { freePort, startRegistry } from "./helpers/registry.js";
import { busyboxRootfs, makeTar, writeFixture } from "./fixtures/images.js";
import { pushImage } from "./fixtures/registry-push.js";

/** The families this engine declares, with their types (prom-client's default ones sampled). */
const FAMILIES: Record<string, string> = {
  engine_build_info: "gauge",
  engine_api_requests_total: "counter",
  engine_api_request_duration_seconds: "histogram",
  engine_containers: "gauge",
  engine_container_starts_total: "counter",
  engine_container_start_failures_total: "counter",
  engine_image_pulls_total: "counter",
  engine_image_pull_bytes_total: "counter",
  engine_supervisor_up: "gauge",
  engine_plugins_loaded: "gauge",
  engine_process_resident_memory_bytes: "gauge",
  engine_process_cpu_seconds_total: "counter",
  engine_nodejs_eventloop_lag_seconds: "gauge",
  engine_nodejs_heap_size_used_bytes: "gauge",
};

interface Scrape {
  text: string;
  families: PromMetrics;
}

async function scrape(port: number): Promise<Scrape> {
  const res = await httpRequest({ host: "127.0.0.1", port }, "GET", "/metrics");
  expect(res.status, res.body).to.equal(200);
  expect(res.headers["content-type"]).to.equal("text/plain; version=0.0.4; charset=utf-8");
  // The parser throws on a line it cannot read and on a histogram whose +Inf bucket is not its count.
  const families = await getMetricsFromIterator(res.body.split("\n")[Symbol.iterator]());
  // And Prometheus's own parser and linter (promtool, Debian's prometheus) take it as it is.
  const promtool = spawnSync("promtool", ["check", "metrics"], { input: res.body, encoding: "utf8", timeout: 30_000 });
  expect([promtool.status, promtool.stdout + promtool.stderr], "promtool check metrics").to.deep.equal([0, ""]);
  return { text: res.body, families };
}

const sameLabels = (a: Record<string, string>, b: Record<string, string>) =>
  Object.keys(b).every((k) => a[k] === b[k]);

/** A counter's or gauge's sample with these labels (0 when the series does not exist yet). */
function value(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  const family = s.families[name];
  expect(family, `family ${name}`).to.not.equal(undefined);
  const hit = (family.data as PromData[]).find((d) => sameLabels(d.labels, labels));
  return hit?.value ?? 0;
}

function histogram(s: Scrape, name: string, labels: Record<string, string>): PromHistogramData | undefined {
  return (s.families[name].data as PromHistogramData[]).find((d) => sameLabels(d.labels, labels));
}

describe("metrics (--metrics-addr)", function () {
  this.timeout(120_000);

  let d: TestDaemon;
  let host: string;
  let port: number;
  const cli = async (...args: string[]) => {
    const r = await docker(host, args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const ids = async (...flags: string[]) => (await cli("ps", "-q", "--no-trunc", ...flags)).split("\n").filter(Boolean);

  before(async function () {
    port = await freePort();
    d = await startEngined({ args: ["--experimental", "--metrics-addr", `127.0.0.1:${port}`] });
    host = `unix://${d.socket}`;
    const dir = makeTempDir();
    await cli("import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox");
  });
  afterEach(async function () {
    const all = await ids("-a").catch(() => []);
    if (all.length) await docker(host, ["rm", "-f", ...all]);
  });
  after(async function () {
    await d?.stop();
  });

  it("serves the text format on a listener of its own: every family is engine_ and of its declared type", async function () {
    const s = await scrape(port);
    for (const [name, type] of Object.entries(FAMILIES)) {
      expect(s.families[name], `family ${name}`).to.not.equal(undefined);
      expect(s.families[name].type, name).to.equal(type);
      expect(s.text).to.include(`# TYPE ${name} ${type}\n`);
      expect(s.families[name].help, `HELP of ${name}`).to.be.a("string").and.not.equal("");
    }
    for (const name of Object.keys(s.families)) expect(name).to.match(/^engine_/);
    expect(value(s, "engine_build_info", { api_version: "1.51" })).to.equal(1);
    expect(value(s, "engine_plugins_loaded", { kind: "storage" })).to.equal(1);
    expect(value(s, "engine_plugins_loaded", { kind: "runtime" })).to.equal(1);
    expect(value(s, "engine_plugins_loaded", { kind: "log" })).to.be.at.least(1);
    expect(value(s, "engine_plugins_loaded", { kind: "authz" })).to.equal(0);
    expect(value(s, "engine_process_resident_memory_bytes")).to.be.above(10 * 1024 * 1024);
    expect(value(s, "engine_nodejs_heap_size_used_bytes")).to.be.above(0);
    expect(value(s, "engine_nodejs_eventloop_lag_seconds")).to.be.at.least(0);

    // Only GET/HEAD /metrics; and the API's listener does not serve it.
    expect((await httpRequest({ host: "127.0.0.1", port }, "GET", "/")).status).to.equal(404);
    expect((await httpRequest({ host: "127.0.0.1", port }, "POST", "/metrics")).status).to.equal(405);
    const head = await httpRequest({ host: "127.0.0.1", port }, "HEAD", "/metrics");
    expect(head.status).to.equal(200);
    expect(head.body).to.equal("");
    expect((await httpRequest({ socketPath: d.socket }, "GET", "/metrics")).status).to.equal(404);
  });

  it("counts API requests by route pattern and status code, with a latency histogram", async function () {
    const route = { method: "GET", route: "/containers/:id/json" };
    const before = await scrape(port);
    for (const id of ["metrics-no-such-1", "metrics-no-such-2"]) {
      expect((await httpRequest({ socketPath: d.socket }, "GET", `/v1.51/containers/${id}/json`)).status).to.equal(404);
    }
    expect((await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/_ping")).status).to.equal(200);
    expect((await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/no/such/path")).status).to.equal(404);
    const after = await scrape(port);

    expect(value(after, "engine_api_requests_total", { ...route, code: "404" }) - value(before, "engine_api_requests_total", { ...route, code: "404" })).to.equal(2);
    expect(value(after, "engine_api_requests_total", { method: "GET", route: "/_ping", code: "200" })).to.be.above(value(before, "engine_api_requests_total", { method: "GET", route: "/_ping", code: "200" }));
    expect(value(after, "engine_api_requests_total", { method: "GET", route: "unmatched", code: "404" })).to.be.above(0);
    // The ids are not labels: one series per route pattern.
    expect(after.text).to.not.include("metrics-no-such");
    expect(after.text).to.not.include("/no/such/path");
    const h1 = histogram(after, "engine_api_request_duration_seconds", route)!;
    const h0 = histogram(before, "engine_api_request_duration_seconds", route);
    // one observation per answer
    const answered = sumOver(after, route.route, () => true) - sumOver(before, route.route, () => true);
    expect(answered).to.be.at.least(2);
    expect(h1.count - (h0?.count ?? 0)).to.equal(answered);
    expect(h1.sum! - (h0?.sum ?? 0)).to.be.above(0);
    expect(h1.buckets["+Inf"]).to.equal(h1.count);
  });

  it("container starts, start failures, the container gauges and the supervisor move with docker run", async function () {
    const before = await scrape(port);
    await cli("run", "--rm", "busybox", "true");
    const missing = await docker(host, ["run", "--name", "metrics-missing", "busybox", "no-such-command"]);
    expect(missing.code, missing.stderr).to.equal(127);
    await cli("run", "-d", "--name", "metrics-sleeper", "busybox", "sleep", "60");
    const during = await scrape(port);

    expect(value(during, "engine_container_starts_total") - value(before, "engine_container_starts_total")).to.equal(2);
    expect(value(during, "engine_container_start_failures_total") - value(before, "engine_container_start_failures_total")).to.equal(1);
    // The gauges say what the daemon holds: the containers docker ps lists, by state.
    const states = ["created", "running", "paused", "restarting", "removing", "exited", "dead"];
    const total = states.reduce((n, state) => n + value(during, "engine_containers", { state }), 0);
    expect(total).to.equal((await ids("-a")).length);
    expect(value(during, "engine_containers", { state: "running" })).to.equal((await ids()).length);
    expect(value(during, "engine_containers", { state: "running" })).to.equal(value(before, "engine_containers", { state: "running" }) + 1);
    expect(value(during, "engine_containers", { state: "created" })).to.equal(value(before, "engine_containers", { state: "created" }) + 1);
    expect(value(during, "engine_supervisor_up")).to.equal(1);
    // The API saw the starts: two answered 204, one refused; the attached run's stream was upgraded.
    const starts = (s: typeof during, code: string) => value(s, "engine_api_requests_total", { method: "POST", route: "/containers/:id/start", code });
    expect(starts(during, "204") - starts(before, "204")).to.equal(2);
    const refusedBefore = sumOver(before, "/containers/:id/start", (c) => c >= 400);
    expect(sumOver(during, "/containers/:id/start", (c) => c >= 400) - refusedBefore).to.equal(1);
    expect(sumOver(during, "/containers/:id/attach", (c) => c === 101)).to.be.above(sumOver(before, "/containers/:id/attach", (c) => c === 101));

    await cli("stop", "-t", "1", "metrics-sleeper");
    const after = await scrape(port);
    expect(value(after, "engine_containers", { state: "running" })).to.equal(value(before, "engine_containers", { state: "running" }));
    expect(value(after, "engine_containers", { state: "exited" })).to.equal(value(during, "engine_containers", { state: "exited" }) + 1);
  });

  it("image pulls and pulled bytes move with a pull from a local registry", async function () {
    const reg = await startRegistry();
    try {
      const ref = `${reg.host}/metrics/busybox:1`;
      // busybox's layer is here already (imported); the second one is new and comes over the wire
      const extra = await makeTar([{ name: "metrics/", type: "directory" }, { name: "metrics/pulled", data: randomBytes(300_000) }]);
      const pushed = await pushImage(reg, "metrics/busybox", "1", [await busyboxRootfs(), extra]);
      const before = await scrape(port);
      const pulled = await cli("pull", ref);
      expect(pulled).to.include("Already exists");
      const after = await scrape(port);
      expect(value(after, "engine_image_pulls_total") - value(before, "engine_image_pulls_total")).to.equal(1);
      // Every byte of the new layer came from the registry once (no retry on loopback), no more.
      expect(value(after, "engine_image_pull_bytes_total") - value(before, "engine_image_pull_bytes_total")).to.equal(pushed.layerBlobs[1].length);
      await cli("rmi", ref);
    } finally {
      await reg.stop();
    }
  });

  /** The requests to `route` whose status code passes `which`, summed over codes and methods. */
  function sumOver(s: Scrape, route: string, which: (code: number) => boolean): number {
    return (s.families.engine_api_requests_total.data as PromData[])
      .filter((x) => x.labels.route === route && which(Number(x.labels.code)))
      .reduce((n, x) => n + x.value, 0);
  }
});

describe("metrics: refusals and shutdown", function () {
  this.timeout(60_000);

  it("without --experimental the start is refused with the reason, and --validate says the same", async function () {
    const dir = makeTempDir();
    const port = await freePort();
    const res = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "engine.sock")}`, "--metrics-addr", `127.0.0.1:${port}`]);
    expect(res.code, res.stderr).to.equal(1);
    expect(res.stderr).to.include("invalid daemon configuration: metrics-addr is only supported when experimental is enabled");
    expect(existsSync(join(dir, "engine.pid"))).to.equal(false);
    expect(await accepts(port)).to.equal(false);

    const file = join(dir, "daemon.json");
    writeFileSync(file, JSON.stringify({ "metrics-addr": `127.0.0.1:${port}` }));
    const validate = await runEngined(["--validate", "--config-file", file]);
    expect(validate.code).to.equal(1);
    expect(validate.stderr).to.include("metrics-addr is only supported when experimental is enabled");
    writeFileSync(file, JSON.stringify({ "metrics-addr": `127.0.0.1:${port}`, experimental: true }));
    const ok = await runEngined(["--validate", "--config-file", file]);
    expect(ok.code, ok.stderr).to.equal(0);
    expect(ok.stdout).to.equal("configuration OK\n");
  });

  it("a port in use stops the start with a clear error, and leaves nothing behind", async function () {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const port = (holder.address() as { port: number }).port;
    try {
      const dir = makeTempDir();
      const res = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "engine.sock")}`, "--experimental", "--metrics-addr", `127.0.0.1:${port}`]);
      expect(res.code, res.stderr).to.equal(1);
      expect(res.stderr).to.include(`failed to start daemon: cannot serve metrics on 127.0.0.1:${port} (--metrics-addr): the address is already in use by another process`);
      expect(res.stderr).to.include("ENGINE_ERR_METRICS_LISTEN_FAILED");
      expect(existsSync(join(dir, "engine.pid")), "pid file left behind").to.equal(false);
      expect(existsSync(join(dir, "engine.sock")), "socket left behind").to.equal(false);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });

  it("before any container the supervisor is down (it starts on first use); the listener closes with the daemon", async function () {
    const port = await freePort();
    const d = await startEngined({ args: ["--experimental", "--metrics-addr", `127.0.0.1:${port}`] });
    try {
      expect(d.output()).to.include(`metrics API listen on 127.0.0.1:${port}`);
      expect(value(await scrape(port), "engine_supervisor_up")).to.equal(0);
    } finally {
      expect(await d.stop()).to.equal(0);
    }
    expect(await accepts(port)).to.equal(false);
  });
});

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.setTimeout(5000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
