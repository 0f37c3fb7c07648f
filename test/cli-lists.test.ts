/**
 * The listing, inspection and housekeeping commands of `engine` against the Docker CLI: the same
 * daemon (with its bridge, in a network namespace of its own), the same state, and each command
 * run by both; stdout, stderr and the exit status must be equal byte for byte. What may differ,
 * and why, is said where it is let through.
 *
 * Relative times ("3 seconds ago") are the only values that move between two runs: each
 * comparison runs the Docker CLI, then engine, then the Docker CLI again, and engine's output
 * must equal one of the two (its second falls within one of theirs), so the format is compared
 * exactly, relative times included. On a loaded machine one run can take seconds and the
 * daemon's clock ("Up 4 seconds") and the client's ("6 seconds ago") tick between them in any
 * combination; after three tries, only the counts of relative times (and so the width of
 * their columns) are let differ.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { engine } from "./helpers/engine-cli.js";
import { makeTempDir, runCommand, type RunResult } from "./helpers/engined.js";
import { startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";

describe("engine CLI lists (ps, images, inspect, network, system, version, info)", function () {
  this.timeout(120_000);
  let n: NetDaemon;
  let host: string;

  /** A usage error names the program; that word is the only difference let through (stderr). */
  const normal = (r: RunResult) => ({ code: r.code, stdout: r.stdout, stderr: r.stderr.replace(/\bdocker\b/g, "engine") });

  /** engine's result for `args`, after checking it equals the Docker CLI's (see the top). */
  const same = (...args: string[]) => sameAt(undefined, ...args);
  /** `same` with engine speaking API `version` (the Docker CLI here speaks 1.41, some answers differ by version). */
  const sameAt = async (version: string | undefined, ...args: string[]): Promise<RunResult> => {
    let last: { e: RunResult; d: RunResult } | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      const d1 = await docker(host, args);
      const e = await engine(host, args, version ? { env: { ENGINE_API_VERSION: version } } : {});
      const d2 = await docker(host, args);
      // a second sample is for output that moves with the clock ("2 seconds ago"), never for a daemon that shed a request
      for (const r of [d1, e, d2]) expect(r.stderr, `${args.join(" ")}: the daemon shed a request`).to.not.match(/Service Unavailable|\b503\b/);
      const ne = JSON.stringify(normal(e));
      if (ne === JSON.stringify(normal(d1)) || ne === JSON.stringify(normal(d2))) return e;
      last = { e, d: d2 };
    }
    const counts = (r: RunResult) => ({ ...normal(r), stdout: r.stdout.replace(/\b\d+ (second|minute|hour)s?\b/g, "<n> $1s").replace(/ {2,}/g, "  ") });
    expect(counts(last!.e), `engine ${args.join(" ")}`).to.deep.equal(counts(last!.d));
    return last!.e;
  };

  before(async function () {
    n = await startNetDaemon();
    host = n.host;
    await n.cli("tag", "busybox", "busybox:v2");
    await n.cli("create", "--name", "labelled", "--label", "tier=web", "--label", "a=b", "busybox", "echo", "a command longer than twenty characters");
    // ports of a container that never ran are not listed (it has no bindings yet)
    await n.cli("create", "--name", "ported", "-p", "8080:80", "busybox");
    await docker(host, ["run", "--name", "exited", "busybox", "sh", "-c", "exit 3"]);
    await n.cli("run", "-d", "--name", "runner", "-p", "127.0.0.1:9000-9001:9000-9001", "-p", "8081:81/udp", "-p", "127.0.0.1:7000:70", "busybox", "sleep", "300");
    await n.cli("network", "create", "--label", "team=x", "--subnet", "10.77.0.0/24", "usernet");
  });
  after(async function () {
    await n?.stop(); // its containers, images, networks and namespace go with it
  });

  it("ps: the table, -a, -q, -n, -l, -s, --no-trunc, filters (ports merged into ranges)", async function () {
    const all = await same("ps", "-a");
    expect(all.stdout.split("\n")[0]).to.match(/^CONTAINER ID {3}IMAGE {5}COMMAND +CREATED +STATUS +PORTS +NAMES$/);
    // the command cut to 20 columns, its last an ellipsis, then quoted (the daemon puts an argument with spaces in single quotes)
    expect(all.stdout).to.include(`"echo 'a command lon…"`);
    const running = await same("ps");
    expect(running.stdout).to.include("127.0.0.1:7000->70/tcp");
    expect(running.stdout).to.include("127.0.0.1:9000-9001->9000-9001/tcp, 127.0.0.1:7000->70/tcp, 0.0.0.0:8081->81/udp");
    for (const args of [["-a", "--no-trunc"], ["-aq"], ["-q"], ["-a", "-s"], ["-n", "2"], ["-l"], ["-a", "--filter", "label=tier=web"], ["-a", "-f", "status=exited", "-f", "status=created"], ["-a", "-f", "name=run"]]) {
      await same("ps", ...args);
    }
  });

  it("ps: --format with json, raw, table templates, .Label, functions, if/range; -q with --format warns", async function () {
    for (const format of [
      "{{json .}}",
      "json",
      "raw",
      "table {{.ID}}\t{{.Label \"tier\"}}\t{{json .Labels}}\t{{upper .Names}}\t{{.Ports}}",
      "{{.Names}}|{{.Command}}|{{.State}}|{{.CreatedAt}}|{{.Networks}}|{{.Mounts}}|{{.LocalVolumes}}",
      '{{if eq .State "running"}}up{{else if eq .State "exited"}}down{{else}}new{{end}} {{printf "%-8s|" .Names}} {{len .Labels}} {{range $k, $v := split .Labels ","}}[{{$k}}:{{$v}}]{{end}} {{lower .Image}}',
      "table {{.Names}}\\t{{.Size}}",
    ]) {
      await same("ps", "-a", "--format", format);
    }
    const warned = await same("ps", "-a", "-q", "--format", "{{.Names}}");
    expect(warned.stderr).to.equal("WARNING: Ignoring custom format, because both --format and --quiet are set.\n");
  });

  it("ps: errors of templates and filters, with the Docker CLI's messages and statuses", async function () {
    expect((await same("ps", "--format", "{{.Foo}}")).code).to.equal(1);
    expect((await same("ps", "--format", "{{.ID")).code).to.equal(1);
    expect((await same("ps", "--format", "{{json.}}")).code).to.equal(1);
    const bad = await same("ps", "-f", "nokey");
    expect(bad.code).to.equal(125);
    // a daemon message with a trailing space (Docker's own words): printed trimmed, as the Docker client trims it
    const predefined = await same("network", "create", "host");
    expect(predefined.stderr).to.equal("Error response from daemon: operation is not permitted on predefined host network\n");
  });

  it("images: the table, -a, -q, --digests, --no-trunc, a repository argument, filters, templates", async function () {
    const table = await same("images");
    expect(table.stdout).to.match(/^REPOSITORY {3}TAG {7}IMAGE ID {7}CREATED +SIZE\nbusybox {6}latest/);
    for (const args of [["-a"], ["-q"], ["--digests"], ["--no-trunc"], ["busybox"], ["-f", "dangling=true"], ["-f", "reference=busybox"], ["--format", "raw"], ["-q", "--format", "{{.Tag}}"], ["--format", "x {{.Foo}}"]]) {
      await same("images", ...args);
    }
    // an image's containers are counted from API 1.51 (N/A before, as the Docker CLI here shows at 1.41)
    for (const args of [["--format", "{{json .}}"], ["--format", "table {{.Repository}}:{{.Tag}}\t{{.Size}}\t{{.VirtualSize}}\t{{.Containers}}"]]) {
      await sameAt("1.41", "images", ...args);
    }
    const counted = await engine(host, ["images", "--format", "{{.Containers}}", "busybox:latest"]);
    expect(counted.stdout).to.match(/^\d+\n$/);
  });

  it("tag and rmi: a new name, its removal with Docker's lines, and the errors for missing images", async function () {
    expect((await engine(host, ["tag", "busybox", "busybox:v3"])).code).to.equal(0);
    expect((await n.cli("images", "--format", "{{.Tag}}", "busybox")).split("\n")).to.include("v3");
    await n.cli("tag", "busybox", "busybox:v4");
    const e = await engine(host, ["rmi", "busybox:v3"]);
    const d = await docker(host, ["rmi", "busybox:v4"]);
    expect(e.stdout).to.equal("Untagged: busybox:v3\n");
    expect(e.stdout.replace("v3", "v4")).to.equal(d.stdout);
    expect(e.code).to.equal(0);
    // an image that is not there: the daemon's message, after trying the others; status 1
    await n.cli("tag", "busybox", "busybox:v5");
    const mixed = await engine(host, ["rmi", "nosuch", "busybox:v5"]);
    expect(mixed).to.deep.equal({ code: 1, stdout: "Untagged: busybox:v5\n", stderr: "Error response from daemon: No such image: nosuch:latest\n" });
    for (const args of [["rmi", "nosuch"], ["rmi", "-f", "nosuch"], ["tag", "nosuch", "x"], ["tag", "busybox", "Bad"], ["tag", "busybox", "a@sha256:0123456789012345678901234567890123456789012345678901234567890123"]]) {
      await same(...args);
    }
  });

  it("inspect: containers, images and networks found in Docker's order, templates, and missing objects", async function () {
    const both = await same("inspect", "labelled", "exited");
    expect(both.stdout.startsWith('[\n    {\n        "Id": "')).to.equal(true);
    for (const args of [
      ["busybox"],
      ["usernet"],
      ["none"],
      ["nosuch"],
      ["labelled", "nosuch"],
      ["--type", "image", "nosuch"],
      ["--type", "network", "usernet"],
      ["--type", "foo", "x"],
      ["-s", "labelled"],
      ["-f", "json", "labelled"],
      ["-f", "{{.Name}} {{.State.Status}} {{.Config.Labels}} {{json .Config.Cmd}} {{.State.ExitCode}}", "labelled", "exited", "busybox"],
      ["-f", "{{range .Config.Env}}{{.}},{{end}} {{index .Config.Labels \"tier\"}} {{with .State}}{{.Status}}{{end}} {{.HostConfig.Binds}} {{.State.Health}}", "labelled"],
      ["-f", "{{.Foo}}", "labelled"],
      ["-f", "{{.Foo", "labelled"],
    ]) {
      await same("inspect", ...args);
    }
    const missing = await engine(host, ["inspect", "nosuch"]);
    expect(missing).to.deep.equal({ code: 1, stdout: "[]\n", stderr: "Error: No such object: nosuch\n" });
  });

  it("network ls, inspect, create and rm", async function () {
    for (const args of [["ls"], ["ls", "-q"], ["ls", "--no-trunc"], ["ls", "-f", "driver=bridge"], ["ls", "--format", "{{json .}}"], ["ls", "--format", "raw"], ["ls", "--format", "table {{.Name}}\t{{.IPv6}}\t{{.Internal}}\t{{.Labels}}\t{{.Label \"team\"}}\t{{.CreatedAt}}"], ["inspect", "usernet"], ["inspect", "-f", "{{.Name}} {{json .IPAM}} {{.Labels}}", "usernet", "nosuch"], ["rm", "nosuch", "host"], ["create", "-d", "null", "second-null"], ["create", "--subnet", "10.79.0.0/24", "--gateway", "10.80.0.1", "x"], ["create", "--gateway", "10.80.0.1", "x"]]) {
      await same("network", ...args);
    }
    const created = await engine(host, ["network", "create", "--subnet", "10.78.0.0/24", "--gateway", "10.78.0.254", "--ip-range", "10.78.0.128/25", "--label", "k=v", "--internal", "made-by-engine"]);
    expect(created.code).to.equal(0);
    const [doc] = JSON.parse(await n.cli("network", "inspect", "made-by-engine"));
    expect(doc.Id).to.equal(created.stdout.trim());
    expect(doc.IPAM.Config).to.deep.equal([{ Subnet: "10.78.0.0/24", IPRange: "10.78.0.128/25", Gateway: "10.78.0.254" }]);
    expect(doc).to.deep.include({ Internal: true, Labels: { k: "v" } });
    const removed = await engine(host, ["network", "rm", "made-by-engine", "nosuch"]);
    expect(removed).to.deep.equal({ code: 1, stdout: "made-by-engine\n", stderr: "Error response from daemon: network nosuch not found\nexit status 1\n" });
  });

  it("system df, in its table, verbose and template forms", async function () {
    for (const args of [[], ["-v"], ["--format", "{{json .}}"], ["--format", "raw"], ["--format", "table {{.Type}}\t{{.Size}}"], ["-v", "--format", "{{json .}}"], ["-v", "--format", "{{range .Images}}{{.Repository}} {{.UniqueSize}}{{end}}"]]) {
      await same("system", "df", ...args);
    }
  });

  it("info and version: Docker's layout; only the client's own lines and the root directory's label differ", async function () {
    const e = await engine(host, ["info"]);
    const d = await docker(host, ["info"]);
    expect(e.code).to.equal(0);
    // Client: the version is the engine client's; the daemon is not Docker, so its root is the "Engine Root Dir"
    const client = (text: string) => text.replace(/^( Version: +).*$/m, "$1<client>");
    expect(client(e.stdout).replace(" Engine Root Dir:", " Docker Root Dir:")).to.equal(client(d.stdout));
    expect(e.stdout).to.match(/^Client:\n Version: {4}\d+\.\d+\.\d+.*\n Context: {4}default\n Debug Mode: false\n\nServer:\n Containers: 4\n {2}Running: 1\n/);
    expect(e.stderr).to.equal(d.stderr);
    await same("info", "--format", "{{.ServerVersion}} {{.Driver}} {{.Containers}} {{json .Plugins}}");
    await same("info", "--format", "{{.Foo}}");

    const ev = await engine(host, ["version"]);
    const dv = await docker(host, ["version"]);
    const server = (text: string) => text.slice(text.indexOf("\nServer:"));
    expect(server(ev.stdout)).to.equal(server(dv.stdout));
    // the client section has Docker's lines, with the runtime the client runs on for Go's
    expect(ev.stdout).to.match(/^Client:\n Version: {11}\S+\n API version: {7}1\.\d+\n Node\.js version: {3}v\d+\.\d+\.\d+\n Git commit: {8}\S+\n Built: {13}.+\n OS\/Arch: {11}linux\/\w+\n Context: {11}default\n\nServer: /);
    await same("version", "--format", "{{.Server.Version}} {{.Server.APIVersion}} {{.Server.Os}}");
    // a template that fails while running: what came before it, then Go's error, status 1
    await same("version", "--format", "x{{.Server.Nope}}");
    await same("info", "--format", "x{{.Nope}}");
    // no daemon: a template on the client's part alone needs none; else what the template wrote and the connection error
    const none = "unix:///nonexistent-engine-test.sock";
    const daemonWord = (r: RunResult) => ({ ...normal(r), stderr: r.stderr.replace(/[Dd]ocker daemon/g, "engine daemon") });
    for (const args of [
      ["info", "--format", "{{.ClientInfo.Context}}"],
      ["info", "--format", "hello"],
      ["info", "--format", "x{{.ServerVersion}}"],
      ["version", "--format", "x{{.Server.Version}}"],
      ["version", "--format", "{{.Client.Nope}}"],
    ]) {
      expect(daemonWord(await engine(none, args)), args.join(" ")).to.deep.equal(daemonWord(await docker(none, args)));
    }
  });

  it("system prune: asks as Docker does, leaves everything on no, and lists what it removed on -f", async function () {
    const env = { DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined, DOCKER_CONFIG: makeTempDir() };
    for (const flags of [[], ["-a", "--volumes"], ["--filter", "until=1h", "--filter", "label=a=b"]]) {
      const d = await runCommand("docker", ["-H", host, "system", "prune", ...flags], { input: "n\n", env });
      const e = await engine(host, ["system", "prune", ...flags], { input: "n\n" });
      expect(normal(e)).to.deep.equal(normal(d));
      expect(e.stdout).to.match(/Are you sure you want to continue\? \[y\/N\] $/);
    }
    expect((await n.cli("ps", "-aq")).trim().split("\n")).to.have.length(4);

    const stopped = (await n.cli("ps", "-aq", "--no-trunc", "-f", "status=exited", "-f", "status=created")).trim().split("\n");
    const pruned = await engine(host, ["system", "prune", "-f"]);
    expect(pruned.code).to.equal(0);
    const [, containers] = /^Deleted Containers:\n((?:[0-9a-f]{64}\n)+)\n/.exec(pruned.stdout) ?? [];
    expect(containers?.trim().split("\n").sort()).to.deep.equal([...stopped].sort());
    expect(pruned.stdout).to.include("Deleted Networks:\nusernet\n\n");
    expect(pruned.stdout).to.match(/\nTotal reclaimed space: \d+(\.\d+)?[kMG]?B\n$/);
    expect((await n.cli("ps", "-a", "--format", "{{.Names}}")).trim()).to.equal("runner");
  });
});
