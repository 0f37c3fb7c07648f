/**
 * The commands that change containers, volumes and networks, and the management forms, through
 * `engine` and the Docker CLI on one engined (in a network namespace of its own, with its
 * bridge): port, pause/unpause, rename, update, volume create/ls/inspect/rm/prune, network
 * connect/disconnect/prune, container/image inspect and prune, and `engine GROUP`. Where a
 * command sends a body (update, network connect, volume create) the requests of both clients
 * are compared through a logging proxy; where it prints, the outputs.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { join } from "node:path";
import { comparer } from "./helpers/cli-compare.js";
import { docker } from "./helpers/docker-cli.js";
import { engine } from "./helpers/engine-cli.js";
import { makeTempDir } from "./helpers/engined.js";
import { startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";
import { startRequestLog, type LoggedRequest, type RequestLog } from "./helpers/request-log.js";

describe("engine CLI: port, pause, rename, update, volumes, networks, prunes, management commands", function () {
  this.timeout(120_000);
  let n: NetDaemon;
  let host: string;
  let log: RequestLog;
  const { same, sameWith } = comparer(() => host);
  const ok = (...args: string[]) => n.cli(...args);
  const inspect = async (format: string, ref: string) => (await ok("inspect", "--format", format, ref)).trim();

  /** What each client asked the daemon for `args` (through the proxy): both must ask the same. */
  const sameRequests = async (args: string[], normalize: (r: LoggedRequest) => unknown = (r) => r, between?: () => Promise<unknown>): Promise<LoggedRequest[]> => {
    const proxied = `unix://${log.socket}`;
    const e = await engine(proxied, args);
    const ours = log.take();
    await between?.(); // undoes what engine's run did, for the Docker CLI's to start from the same state
    const d = await docker(proxied, args);
    const theirs = log.take();
    expect({ code: e.code, stdout: e.stdout }, `engine ${args.join(" ")}: ${e.stderr}`).to.deep.equal({ code: d.code, stdout: d.stdout });
    expect(ours.map(normalize), args.join(" ")).to.deep.equal(theirs.map(normalize));
    return ours;
  };

  before(async function () {
    n = await startNetDaemon();
    host = n.host;
    await ok("run", "-d", "--name", "web", "-p", "127.0.0.1:8080:80", "-p", "8443:443/udp", "-p", "127.0.0.1:9000-9001:9000-9001", "busybox", "sleep", "600");
    await ok("run", "-d", "--name", "plain", "busybox", "sleep", "600");
    log = await startRequestLog(n.d.socket, join(makeTempDir("engine-cli-manage-"), "proxy.sock"));
  });
  after(async function () {
    await log?.close();
    await n?.stop();
  });

  it("port: every mapping in natural order, one private port, and the errors", async function () {
    const all = await same("port", "web");
    // natural order: 80 before 443; a port published on every address is on [::] too (Docker 28)
    expect(all.stdout).to.equal("80/tcp -> 127.0.0.1:8080\n443/udp -> 0.0.0.0:8443\n443/udp -> [::]:8443\n9000/tcp -> 127.0.0.1:9000\n9001/tcp -> 127.0.0.1:9001\n");
    expect((await same("port", "web", "80")).stdout).to.equal("127.0.0.1:8080\n");
    await same("port", "web", "443/udp");
    await same("port", "web", "9001/tcp");
    expect((await same("port", "plain")).stdout).to.equal("");
    for (const args of [["web", "81"], ["web", "abc"], ["web", "70000"], ["web", "/udp"], ["nosuch"], ["web", "80", "extra"], []]) {
      expect((await same("port", ...args)).code, args.join(" ")).to.not.equal(0);
    }
  });

  it("pause and unpause: each name printed as given, the failures after the rest", async function () {
    expect((await engine(host, ["pause", "plain", "web"])).stdout).to.equal("plain\nweb\n");
    expect(await inspect("{{.State.Paused}}", "plain")).to.equal("true");
    await same("pause", "plain");
    expect((await engine(host, ["unpause", "plain", "nosuch", "web"])).stdout).to.equal("plain\nweb\n");
    expect(await inspect("{{.State.Status}}", "plain")).to.equal("running");
    await same("unpause", "plain");
    await same("pause");
  });

  it("rename: the new name in place, and the Docker CLI's two-line failure", async function () {
    expect(await engine(host, ["rename", "plain", "renamed"])).to.include({ code: 0, stdout: "", stderr: "" });
    expect(await inspect("{{.Name}}", "renamed")).to.equal("/renamed");
    await ok("rename", "renamed", "plain");
    for (const args of [["plain", "plain"], ["nosuch", "x"], ["plain", ""], ["plain", "web"], ["plain"]]) {
      expect((await same("rename", ...args)).code, args.join(" ")).to.not.equal(0);
    }
  });

  it("update: the same request body as the Docker CLI, the limits applied, the errors", async function () {
    for (const flags of [
      ["--cpus", "0.5", "-m", "64m", "--memory-swap", "-1", "--memory-reservation", "32m", "-c", "512", "--pids-limit", "100", "--restart", "on-failure:3"],
      ["--pids-limit", "0", "--cpuset-cpus", "0", "--blkio-weight", "300"],
      ["--restart", "no", "--cpu-period", "100000", "--cpu-quota", "50000"],
    ]) {
      await sameRequests(["update", ...flags, "plain"]);
    }
    expect(await inspect("{{.HostConfig.Memory}} {{.HostConfig.NanoCpus}} {{.HostConfig.PidsLimit}}", "plain")).to.equal("67108864 500000000 100");
    for (const args of [["plain"], ["--cpus", "abc", "plain"], ["-m", "1z", "plain"], ["--blkio-weight", "70000", "plain"], ["--restart", ":3", "plain"], ["--restart", "bad", "plain"], ["-m", "64m", "nosuch", "plain"], ["--cpu-period", "x", "plain"]]) {
      expect((await same("update", ...args)).code, args.join(" ")).to.not.equal(0);
    }
  });

  it("volume create, ls, inspect, rm and prune as the Docker CLI shows them", async function () {
    await sameRequests(["volume", "create", "--label", "b=2", "--label", "a", "-o", "type=tmpfs", "-o", "device=tmpfs", "-o", "o=size=1m", "tmp-vol"], (r) => r);
    expect((await engine(host, ["volume", "create", "--label", "team=x", "named-2"])).stdout).to.equal("named-2\n");
    const unnamed = (await engine(host, ["volume", "create"])).stdout;
    expect(unnamed).to.match(/^[0-9a-f]{64}\n$/);
    for (const args of [[], ["-q"], ["--format", "json"], ["--format", "{{.Name}} {{.Labels}} {{.Label \"team\"}} {{.Links}} {{.Size}}"], ["--format", "table {{.Name}}\t{{.Mountpoint}}\t{{.Scope}}"], ["-f", "label=team"], ["-f", "dangling=true"], ["--cluster"], ["-f", "bogus=1"]]) {
      await same("volume", "ls", ...args);
    }
    await same("volume", "inspect", "named-2");
    await same("volume", "inspect", "--format", "{{.Name}} {{.Driver}} {{.Labels}}", "named-2", "nosuch");
    for (const bad of [["create", "--name", "a", "b"], ["create", "-o", "bogus", "bad-opt"], ["inspect"], ["rm"], ["bogus"]]) {
      expect((await same("volume", ...bad)).code, bad.join(" ")).to.not.equal(0);
    }
    await ok("run", "-d", "--name", "user", "-v", "named-2:/data", "busybox", "sleep", "600");
    await same("volume", "rm", "named-2");
    expect(await engine(host, ["volume", "rm", "tmp-vol", "nosuch"])).to.include({ code: 1, stdout: "tmp-vol\n" });
    await same("volume", "rm", "-f", "nosuch");
    await ok("rm", "-f", "user");
    // prune: anonymous volumes (a container's, left when it went, and one created without a name,
    // which Docker's daemon labels anonymous too) unless -a; the question answered no, then yes
    await ok("run", "--name", "anon", "-v", "/data", "busybox", "true");
    const anonymous = await inspect("{{(index .Mounts 0).Name}}", "anon");
    await ok("rm", "anon");
    await sameWith({ input: "n\n" }, "volume", "prune");
    const pruned = await engine(host, ["volume", "prune"], { input: "y\n" });
    const both = [anonymous, unnamed.trim()].sort();
    const deleted = /\[y\/N\] Deleted Volumes:\n((?:[0-9a-f]{64}\n)+)\nTotal reclaimed space: \S+\n$/.exec(pruned.stdout);
    expect(deleted?.[1].trim().split("\n").sort(), pruned.stdout).to.deep.equal(both);
    const all = await engine(host, ["volume", "prune", "-a", "-f"]);
    expect(all.stdout).to.match(/^Deleted Volumes:\nnamed-2\n\nTotal reclaimed space: \S+\n$/);
    await same("volume", "prune", "-a", "-f", "--filter", "all=1");
  });

  it("network connect, disconnect and prune: the Docker CLI's bodies, the endpoint made, the messages", async function () {
    await ok("network", "create", "--subnet", "10.88.0.0/24", "joined");
    await ok("network", "create", "unused-1");
    await ok("network", "create", "unused-2");
    const noIds = (r: LoggedRequest) => ({ ...r, path: r.path.replace(/[0-9a-f]{64}/g, "<id>") });
    const connect = ["network", "connect", "--ip", "10.88.0.7", "--alias", "a,b", "--alias", "c", "--link", "web:w", "--driver-opt", "x=1", "--gw-priority", "2", "joined", "plain"];
    await sameRequests(connect, noIds, async () => {
      expect(await inspect('{{(index .NetworkSettings.Networks "joined").IPAddress}} {{(index .NetworkSettings.Networks "joined").Aliases}}', "plain")).to.equal("10.88.0.7 [a b c]");
      await ok("network", "disconnect", "joined", "plain");
    });
    await sameRequests(["network", "disconnect", "joined", "plain"], noIds, () => ok("network", "connect", "joined", "plain"));
    expect(await inspect("{{len .NetworkSettings.Networks}}", "plain")).to.equal("1");
    for (const args of [
      ["connect", "nosuch", "plain"],
      ["connect", "joined", "nosuch"],
      ["connect", "--driver-opt", "novalue", "joined", "plain"],
      ["connect", "--link", "a:b:c", "joined", "plain"],
      ["connect", "joined"],
      ["disconnect", "joined", "plain"],
      ["disconnect", "-f", "nosuch", "plain"],
    ]) {
      expect((await same("network", ...args)).code, args.join(" ")).to.not.equal(0);
    }
    await sameWith({ input: "no\n" }, "network", "prune");
    const pruned = await engine(host, ["network", "prune", "-f"]);
    expect(pruned.stdout).to.be.oneOf(["Deleted Networks:\njoined\nunused-1\nunused-2\n\n", "Deleted Networks:\nunused-1\nunused-2\njoined\n\n", "Deleted Networks:\nunused-2\nunused-1\njoined\n\n", "Deleted Networks:\njoined\nunused-2\nunused-1\n\n", "Deleted Networks:\nunused-1\njoined\nunused-2\n\n", "Deleted Networks:\nunused-2\njoined\nunused-1\n\n"]);
    expect((await engine(host, ["network", "ls", "-q", "-f", "name=unused"])).stdout).to.equal("");
  });

  it("container and image prune: the question, what went, the total", async function () {
    await ok("run", "--name", "gone-1", "busybox", "true");
    await ok("tag", "busybox", "spare:1");
    await sameWith({ input: "n\n" }, "container", "prune");
    const containers = await engine(host, ["container", "prune"], { input: "y\n" });
    expect(containers.stdout).to.match(/^WARNING! This will remove all stopped containers\.\nAre you sure you want to continue\? \[y\/N\] Deleted Containers:\n[0-9a-f]{64}\n\nTotal reclaimed space: \S+\n$/);
    await same("container", "prune", "-f");
    await same("container", "prune", "-f", "--filter", "until=bad");
    await sameWith({ input: "\n" }, "image", "prune", "-a");
    await same("image", "prune", "-f");
    await ok("rm", "-f", "web", "plain");
    const images = await engine(host, ["image", "prune", "-a", "-f", "--filter", "label=none"]);
    expect(images).to.include({ code: 0, stdout: "Total reclaimed space: 0B\n" });
  });

  it("container/image inspect and the management groups' help", async function () {
    await ok("run", "-d", "--name", "again", "busybox", "sleep", "600");
    await same("container", "inspect", "--format", "{{.Name}} {{.State.Status}}", "again");
    await same("container", "inspect", "--size", "--format", "{{.SizeRw}}", "again");
    await same("container", "inspect", "busybox");
    await same("image", "inspect", "--format", "{{.RepoTags}}", "busybox");
    // the Docker CLI's typed fields (Go's names) work beside the JSON keys; a key neither has is an error
    await same("container", "inspect", "--format", "{{.ID}} {{.HostConfig.CPUShares}} {{.HostConfig.CPUPeriod}}", "again");
    await same("container", "inspect", "--format", "{{.Id}} {{.HostConfig.CpuShares}}", "again");
    // not both spellings in one template: the typed run fails at one, the raw one at the other
    await same("container", "inspect", "--format", "{{.ID}} {{.Id}}", "again");
    // sets print their members as Go's empty struct
    await ok("create", "--name", "sets", "--expose", "80", "-v", "/vol", "busybox");
    await same("container", "inspect", "--format", "{{.Config.ExposedPorts}} {{.Config.Volumes}} {{json .Config.ExposedPorts}}", "sets");
    await same("image", "inspect", "--format", "{{.ID}}", "busybox");
    await same("container", "inspect", "--format", "{{.Bogus}}", "again");
    await same("image", "inspect", "again");
    // every command in each group, under its name there; an unknown one is refused
    for (const group of ["container", "image", "network", "system", "volume"]) {
      const help = await engine(host, [group, "--help"]);
      expect(help.code).to.equal(0);
      const names = (text: string) => [...text.matchAll(/^ {2}(\S+) +\S/gm)].map((m) => m[1]);
      // the group alone prints the same on stderr, as the Docker CLI does
      expect(await engine(host, [group])).to.include({ code: 0, stdout: "", stderr: help.stdout });
      const theirs = names((await docker(host, [group, "--help"])).stdout);
      // `volume update` is for cluster volumes, which engined does not serve
      expect(names(help.stdout), group).to.deep.equal(theirs.filter((t) => !(group === "volume" && t === "update")));
      expect(await engine(host, [group, "bogus"])).to.include({ code: 1 });
    }
    expect((await engine(host, ["system", "events", "--since", "1s", "--until", "0s"])).code).to.equal(0);
    expect((await engine(host, ["container", "top", "again"])).stdout).to.match(/^UID/);
  });
});
