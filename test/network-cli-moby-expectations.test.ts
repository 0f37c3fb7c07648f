/**
 * What moby's integration-cli network tests (docker_cli_network_unix_test.go, the netmode and
 * port tests, Docker 28) expect of a daemon, where engined did otherwise. Each daemon runs in a
 * network namespace of the test's (test/helpers/net-daemon.ts), which takes every interface and
 * rule with it at the end.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";

describe("what moby's integration-cli network tests expect of a daemon", function () {
  this.timeout(180_000);
  let n: NetDaemon;
  before(async () => {
    n = await startNetDaemon();
  });
  after(async () => n?.stop());

  /** A docker command's exit code and its output (stdout and stderr). */
  const run = async (...args: string[]) => {
    const r = await docker(n.host, args);
    return { code: r.code, out: r.stdout + r.stderr };
  };

  describe("a rename (TestDockerInspectNetworkWithContainerName)", function () {
    after(async () => {
      await run("rm", "-f", "renamed", "peer");
      await run("network", "rm", "mx-rename");
    });

    it("shows the new name in network inspect, and the network's name server answers it and no longer the old one", async () => {
      await n.cli("network", "create", "mx-rename");
      const id = (await n.cli("run", "-d", "--name", "before", "--net", "mx-rename", "busybox", "top")).trim();
      await n.cli("run", "-d", "--name", "peer", "--net", "mx-rename", "busybox", "top");
      await n.cli("rename", "before", "renamed");
      const containers = JSON.parse(await n.cli("network", "inspect", "-f", "{{json .Containers}}", "mx-rename")) as Record<string, { Name: string }>;
      expect(containers[id].Name).to.equal("renamed");
      const names = JSON.parse(await n.cli("inspect", "-f", "{{json .NetworkSettings.Networks}}", "renamed")) as Record<string, { DNSNames: string[] }>;
      expect(names["mx-rename"].DNSNames).to.deep.equal(["renamed", id.slice(0, 12)]);
      expect((await run("exec", "peer", "ping", "-c", "1", "-W", "2", "renamed")).code).to.equal(0);
      const old = await run("exec", "peer", "ping", "-c", "1", "-W", "2", "before");
      expect(old.code).to.not.equal(0);
      expect(old.out).to.contain("bad address 'before'");
    });
  });

  describe("--net=container without a container (TestNetHostname)", function () {
    it("is refused at create in Docker's words, not looked up as a network", async () => {
      const r = await run("run", "--net=container", "busybox", "ps");
      expect(r.code).to.equal(125);
      expect(r.out).to.contain("Error response from daemon: Invalid network mode: invalid container format container:<name|id>");
    });
  });
});
