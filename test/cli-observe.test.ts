/**
 * The commands that look at containers and images, through `engine` and the Docker CLI on one
 * engined: events (--since/--until/--filter/--format, and following), stats (the table, json,
 * templates, -a, --no-trunc, the errors, and the live table in a terminal), top, diff,
 * history, export, and search against a registry's v1 search endpoint served here on loopback.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFileSync, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { comparer } from "./helpers/cli-compare.js";
import { docker } from "./helpers/docker-cli.js";
import { ENGINE, engine, engineInPty, inPty } from "./helpers/engine-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const SEARCH_RESULTS = [
  { name: "team/few", description: "a few stars", star_count: 3, is_official: false, is_automated: false },
  { name: "library/many", description: "official, and a description longer than forty-five columns\nwith a newline", star_count: 90, is_official: true, is_automated: false },
  { name: "team/none", description: "", star_count: 0, is_official: false, is_automated: false },
];

describe("engine CLI: events, stats, top, diff, history, export, search", function () {
  this.timeout(90_000);
  let d: TestDaemon;
  let host: string;
  let work: string;
  let v1: Server;
  let v1Host = "";
  let since = "";
  const { same } = comparer(() => host);
  const ok = async (...args: string[]) => {
    const r = await docker(host, args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };

  before(async function () {
    work = makeTempDir("engine-cli-observe-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    since = String(Math.floor(Date.now() / 1000) - 1);
    await ok("import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox");
    await ok("run", "-d", "--name", "busy", "busybox", "sh", "-c", "echo changed > /tmp/new; rm /etc/group; sleep 600");
    await ok("run", "--name", "done", "busybox", "true");
    await ok("commit", "-m", "a message", "busy", "committed");
    v1 = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      if (url.pathname !== "/v1/search") return void res.writeHead(404).end();
      const results = SEARCH_RESULTS.slice(0, Number(url.searchParams.get("n") ?? 25));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ num_results: results.length, query: url.searchParams.get("q"), results }));
    });
    await new Promise<void>((r) => v1.listen(0, "127.0.0.1", () => r()));
    v1Host = `127.0.0.1:${(v1.address() as AddressInfo).port}`;
  });
  after(async function () {
    await new Promise<void>((r) => (v1 ? v1.close(() => r()) : r()));
    if (d) await docker(host, ["rm", "-f", "busy", "done"]);
    await d?.stop();
  });

  it("events between --since and --until: the lines, json, templates, filters and the errors, as docker events", async function () {
    const until = String(Math.floor(Date.now() / 1000) + 1);
    const window = ["--since", since, "--until", until];
    const all = await same("events", ...window);
    expect(all.stdout).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}(Z|[+-]\d\d:\d\d) image import sha256:[0-9a-f]{64} \(name=sha256:/m);
    expect(all.stdout).to.match(/ container create [0-9a-f]{64} \(image=busybox, name=busy\)$/m);
    await same("events", ...window, "--format", "json");
    await same("events", ...window, "--format", "{{.Status}}|{{.ID}}|{{.From}}|{{.Type}}|{{.Action}}|{{.Actor.ID}}|{{.Actor.Attributes}}|{{.Scope}}|{{.Time}}|{{.TimeNano}}");
    await same("events", ...window, "--format", "{{json .Actor}} {{index .Actor.Attributes \"name\"}}");
    // a key the map lacks: Go's "<no value>" by field, "" by index
    await same("events", ...window, "--format", "{{.Actor.Attributes.nosuch}}|{{index .Actor.Attributes \"nosuch\"}}|");
    const died = await same("events", ...window, "-f", "event=die", "-f", "container=done", "--format", "{{.Actor.Attributes.name}} {{.Actor.Attributes.exitCode}}");
    expect(died.stdout).to.equal("done 0\n");
    await same("events", ...window, "-f", "type=image");
    await same("events", "-f", "nokey=1", ...window); // a key Docker's daemon does not check
    for (const bad of [["--format", "{{.Nope}}"], ["--format", "{{.Status"], ["--since", "yesterday"], ["-f", "novalue", ...window], ["extra"], ["--since", "1700000100", "--until", "1700000000"]]) {
      expect((await same("events", ...bad)).code, bad.join(" ")).to.not.equal(0);
    }
  });

  it("events follows: a start shows up as it happens", async function () {
    const child = spawn(ENGINE, ["-H", host, "events", "-f", "event=start", "--format", "{{.Actor.Attributes.name}}"], { env: { ...process.env, ENGINE_CONFIG: makeTempDir("engine-cli-config-") } });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    try {
      await new Promise((r) => setTimeout(r, 1000));
      await ok("start", "done");
      for (let i = 0; i < 100 && !out.includes("done\n"); i++) await new Promise((r) => setTimeout(r, 100));
      expect(out).to.equal("done\n");
    } finally {
      child.kill();
    }
  });

  it("stats --no-stream: the table, -a, json, templates, --no-trunc, and missing containers", async function () {
    // CPU and memory move from one reading to the next: the columns are compared, the values matched
    const table = await engine(host, ["stats", "--no-stream"]);
    expect(table.code, table.stderr).to.equal(0);
    const lines = table.stdout.split("\n");
    expect(lines[0]).to.equal("CONTAINER ID   NAME      CPU %     MEM USAGE / LIMIT   MEM %     NET I/O   BLOCK I/O   PIDS");
    expect(lines[1]).to.match(/^[0-9a-f]{12} {3}busy {6}\d+\.\d\d% +[\d.]+[KMG]?i?B \/ [\d.]+[KMGT]?i?B +\d+\.\d\d% +\S+ \/ \S+ +\S+ \/ \S+ +\d+$/);
    expect(lines).to.have.length(3);
    const stable = "{{.Container}}|{{.Name}}|{{.ID}}|{{.NetIO}}|{{.BlockIO}}|{{.PIDs}}";
    await same("stats", "--no-stream", "--format", stable);
    await same("stats", "--no-stream", "-a", "--format", `table ${stable}`);
    await same("stats", "--no-stream", "--no-trunc", "--format", "{{.ID}}", "busy");
    const json = JSON.parse((await engine(host, ["stats", "--no-stream", "--format", "json", "busy"])).stdout);
    expect(Object.keys(json)).to.deep.equal(["BlockIO", "CPUPerc", "Container", "ID", "MemPerc", "MemUsage", "Name", "NetIO", "PIDs"]);
    expect(json).to.include({ Container: "busy", Name: "busy" });
    expect(json.PIDs).to.match(/^[1-9]\d*$/);
    // a stopped container has no readings: zeros, as the Docker CLI shows them
    await same("stats", "--no-stream", "done");
    await same("stats", "--no-stream", "busy", "nosuch");
    await same("stats", "--no-stream", "--format", "{{.Nope}}", "busy");
  });

  it("stats in a terminal redraws the table in place, as the Docker CLI 28 draws it", async function () {
    const args = ["stats", "--format", "{{.Name}}", "busy"];
    const frame = /\x1b\[Hbusy\r\n\x1b\[Hbusy \x1b\[K\r\n \x1b\[K\r\n\x1b\[J/;
    const ours = await engineInPty(host, args, { keys: [1800, "\x03", 300] });
    expect(ours.output).to.match(frame);
    expect(ours.code).to.equal(130); // Ctrl-C ends it
    // the Docker CLI 28.2 does not end on Ctrl-C while it draws: its terminal is ended after a while
    const theirs = await inPty(["docker", "-H", host, ...args], { timeoutMs: 2500, env: { DOCKER_CONFIG: makeTempDir("engine-docker-config-") } });
    expect(theirs.output).to.match(frame);
  });

  it("stats without names follows the daemon: a container that starts is added to the table", async function () {
    const seen = engineInPty(host, ["stats", "--format", "{{.Name}}"], { keys: [2500, "\x03", 300] });
    await new Promise((r) => setTimeout(r, 1000));
    await ok("run", "-d", "--name", "late", "busybox", "sleep", "30");
    try {
      const r = await seen;
      const frames = r.output.split("\x1b[J");
      expect(frames[0]).to.include("busy").and.not.include("late");
      expect(frames.at(-2)).to.include("busy").and.include("late");
    } finally {
      await ok("rm", "-f", "late");
    }
  });

  it("top, diff, history and export as the Docker CLI prints them", async function () {
    const top = await same("top", "busy");
    expect(top.stdout.split("\n")[0]).to.match(/^UID {17}PID {17}PPID {16}C {19}STIME {15}TTY {17}TIME {16}CMD$/);
    await same("top", "busy", "-o", "pid,comm");
    await same("top", "nosuch");
    await same("top", "done");
    expect((await same("diff", "busy")).stdout).to.equal("C /etc\nD /etc/group\nC /tmp\nA /tmp/new\n");
    await same("diff", "nosuch");
    for (const args of [[], ["--no-trunc"], ["-H=false"], ["-q"], ["--format", "json"], ["--format", "table {{.ID}}\t{{.CreatedBy}}\t{{.Size}}"], ["--format", "{{.Comment}}|{{.CreatedAt}}"]]) {
      await same("history", ...args, "committed");
    }
    await same("history", "nosuch");
    const exported = await engine(host, ["export", "busy"]);
    expect(exported.code).to.equal(0);
    const file = join(work, "busy.tar");
    expect((await engine(host, ["export", "-o", file, "busy"])).code).to.equal(0);
    const names = execFileSync("tar", ["-tf", file]).toString().split("\n");
    expect(names).to.include("tmp/new").and.include("bin/busybox").and.not.include("etc/group");
    for (const target of [work, "/dev/null", "/nonexistent/x.tar"]) await same("export", "-o", target, "busy");
    await same("export", "-o", join(work, "x.tar"), "nosuch");
    // a reader that goes away (`| head`): the Docker CLI dies of SIGPIPE, saying nothing (141)
    const piped = (cli: string) => execFileSync("bash", ["-c", `${cli} -H ${host} export busy | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    expect(piped(ENGINE)).to.equal(piped("docker")).and.equal("141\n");
  });

  it("search: in the registry's order, descriptions cut at 45 columns, [OK] for official ones, --limit, filters, templates", async function () {
    const term = `${v1Host}/anything`;
    const table = await same("search", term);
    expect(table.stdout.split("\n")[0]).to.match(/^NAME +DESCRIPTION +STARS +OFFICIAL$/);
    expect(table.stdout).to.include("[OK]");
    await same("search", "--no-trunc", term);
    await same("search", "--limit", "2", term);
    await same("search", "-f", "is-official=true", term);
    await same("search", "-f", "stars=3", "--format", "{{.Name}}: {{.StarCount}}", term);
    await same("search", "--format", "json", term);
    await same("search", "--format", "table {{.Name}}\t{{.IsOfficial}}", term);
    for (const bad of [["--limit", "500", term], ["-f", "stars=many", term], ["--limit", "x", term], [`${v1Host.replace(/:\d+$/, ":1")}/x`]]) {
      expect((await same("search", ...bad)).code, bad.join(" ")).to.not.equal(0);
    }
  });
});
