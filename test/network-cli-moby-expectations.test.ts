/**
 * What moby's integration-cli tests of networks (docker_cli_network_unix_test.go, the links,
 * netmode and port tests) and of daemon flags (docker_cli_daemon_test.go) expect of a daemon
 * (Docker 28), where engined did otherwise. Each daemon runs in a network namespace of the
 * test's (test/helpers/net-daemon.ts), which takes every interface and rule with it at the end.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { eventually, startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";

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

  describe("a port published on every address, for a container without IPv6 (TestPortList, TestUnpublishedPortsInPsOutput)", function () {
    after(async () => {
      await run("rm", "-f", "mx-v4only", "mx-v6host");
    });

    /** What the container's httpd serves at `url` from the daemon's namespace, or null. */
    const fetch = (url: string) => (n.ns.status("curl", "-sfg", "-m", "2", "-o", "/dev/null", url) === 0 ? n.ns.run("curl", "-sfg", "-m", "2", url).trim() : null);

    it("is published on [::] too, with the same port, through the userland proxy to the container's IPv4 address", async () => {
      const id = (await n.cli("run", "-d", "--name", "mx-v4only", "-p", "18731:80", "-p", "18732-18740:81/udp", "busybox", "httpd", "-f", "-p", "80", "-h", "/etc")).trim();
      expect(await n.cli("port", "mx-v4only")).to.equal("80/tcp -> 0.0.0.0:18731\n80/tcp -> [::]:18731\n81/udp -> 0.0.0.0:18732\n81/udp -> [::]:18732\n");
      expect((await n.cli("ps", "-f", "name=mx-v4only", "--format", "{{.Ports}}")).trim()).to.equal("0.0.0.0:18731->80/tcp, [::]:18731->80/tcp, 0.0.0.0:18732->81/udp, [::]:18732->81/udp");
      await eventually("httpd to answer on [::1]", () => fetch("http://[::1]:18731/hostname") !== null);
      expect(fetch("http://[::1]:18731/hostname")).to.equal(id.slice(0, 12));
      // no NAT joins the two families: the answer came through the proxy
      expect(n.ns.run("ip6tables-save", "-t", "nat")).to.not.contain("18731");
      await n.cli("rm", "-f", "mx-v4only");
      expect(fetch("http://[::1]:18731/hostname")).to.equal(null);
    });

    it("takes an IPv6 host address given for a container without IPv6, through the proxy", async () => {
      const id = (await n.cli("run", "-d", "--name", "mx-v6host", "-p", "[::1]:18741:80", "busybox", "httpd", "-f", "-p", "80", "-h", "/etc")).trim();
      expect(await n.cli("port", "mx-v6host")).to.equal("80/tcp -> [::1]:18741\n");
      await eventually("httpd to answer on [::1]", () => fetch("http://[::1]:18741/hostname") !== null);
      expect(fetch("http://[::1]:18741/hostname")).to.equal(id.slice(0, 12));
    });
  });

  describe("published ports go with the gateway (TestDockerNetworkConnectDisconnectWithPortMapping, TestPortBindingOnSandbox)", function () {
    after(async () => {
      await run("rm", "-f", "mx-gw", "mx-sandbox");
      await run("network", "rm", "aaa", "ccc", "mx-internal", "mx-outside");
    });

    /** The container's default route, and its published ports as `docker port` shows them. */
    const state = async (name: string) => ({
      route: /^default via \S+ dev (\S+)/m.exec(await n.cli("exec", name, "ip", "-4", "route"))?.[1],
      ports: await n.cli("port", name),
    });
    const answers = (port: number) => n.ns.status("curl", "-sf", "-m", "2", "-o", "/dev/null", `http://127.0.0.1:${port}/hostname`) === 0;

    it("moves the route and the ports to a network that sorts before the gateway's, and back at its disconnect; a chosen port may change, an asked one stays", async () => {
      await n.cli("network", "create", "aaa");
      await n.cli("network", "create", "ccc");
      await n.cli("run", "-d", "--name", "mx-gw", "-p", "18790:80", "-p", "70", "busybox", "httpd", "-f", "-p", "80", "-h", "/etc");
      const before = await state("mx-gw");
      expect(before.route).to.equal("eth0");
      await n.cli("network", "connect", "aaa", "mx-gw");
      const onAaa = await state("mx-gw");
      expect(onAaa.route).to.equal("eth1");
      expect(onAaa.ports).to.contain("80/tcp -> 0.0.0.0:18790");
      const aaaAddress = (await n.cli("inspect", "-f", "{{.NetworkSettings.Networks.aaa.IPAddress}}", "mx-gw")).trim();
      expect(n.ns.run("iptables-save", "-t", "nat")).to.contain(`--to-destination ${aaaAddress}:80`);
      await eventually("the asked port to answer on the new gateway", () => answers(18790));
      await n.cli("network", "disconnect", "aaa", "mx-gw");
      const back = await state("mx-gw");
      expect(back.route).to.equal("eth0");
      expect(back.ports).to.contain("80/tcp -> 0.0.0.0:18790");
      await eventually("the asked port to answer on the bridge again", () => answers(18790));
      // a network that sorts after the gateway's takes neither
      await n.cli("network", "connect", "ccc", "mx-gw");
      expect(await state("mx-gw")).to.deep.equal(back);
    });

    it("publishes the ports of a container on an internal network once it joins one that leads out", async () => {
      await n.cli("network", "create", "--internal", "mx-internal");
      await n.cli("network", "create", "mx-outside");
      await n.cli("run", "-d", "--name", "mx-sandbox", "--net", "mx-internal", "-p", "18791:80", "busybox", "httpd", "-f", "-p", "80", "-h", "/etc");
      expect(answers(18791)).to.equal(false);
      await n.cli("network", "connect", "mx-outside", "mx-sandbox");
      await eventually("the port to answer through the network that leads out", () => answers(18791));
    });
  });

  describe("names on user-defined networks (TestUserDefinedNetworkConnectivity, TestUserDefinedNetworkConnectDisconnectLink)", function () {
    after(async () => {
      await run("rm", "-f", "c1.net1", "c2.net1", "first", "second");
      await run("network", "rm", "br.net1", "foo1", "foo2");
    });

    const pings = async (from: string, name: string) => (await run("exec", from, "ping", "-c", "1", "-W", "2", name)).code === 0;

    it("finds a container by its name qualified with its network's, and not with more after it", async () => {
      await n.cli("network", "create", "br.net1");
      await n.cli("run", "-d", "--net=br.net1", "--name=c1.net1", "busybox", "top");
      await n.cli("run", "-d", "--net=br.net1", "--name=c2.net1", "busybox", "top");
      expect(await pings("c2.net1", "c1.net1")).to.equal(true);
      expect(await pings("c2.net1", "c1.net1.br.net1")).to.equal(true);
      expect(await pings("c2.net1", "c1.net1.br.net1.invalid")).to.equal(false);
    });

    it("resolves a link's alias given at a connect on that network, and forgets the one of a network the target left", async () => {
      await n.cli("network", "create", "foo1");
      await n.cli("network", "create", "foo2");
      await n.cli("run", "-d", "--net=foo1", "--name=first", "busybox", "top");
      await n.cli("run", "-d", "--net=foo1", "--name=second", "--link=first:FirstInFoo1", "--link=third:bar", "busybox", "top");
      expect(await pings("second", "FirstInFoo1")).to.equal(true);
      await n.cli("network", "connect", "foo2", "first");
      await n.cli("network", "connect", "--link=first:FirstInFoo2", "foo2", "second");
      expect(await pings("second", "FirstInFoo2")).to.equal(true);
      await n.cli("network", "disconnect", "foo1", "first");
      expect(await pings("second", "FirstInFoo1")).to.equal(false);
      expect(await pings("second", "FirstInFoo2")).to.equal(true);
    });

    it("says a network is full in the words of Docker's endpoint allocation, naming it (TestDaemonBridgeFixedCidr)", async () => {
      const id = (await n.cli("network", "create", "--subnet", "10.199.0.0/30", "mx-full")).trim();
      await n.cli("run", "-d", "--net", "mx-full", "--name", "mx-full1", "busybox", "top");
      const second = await run("run", "-d", "--net", "mx-full", "--name", "mx-full2", "busybox", "top");
      expect(second.out).to.contain(`no available IPv4 addresses on this network's address pools: mx-full (${id})`);
      await n.cli("rm", "-f", "mx-full1", "mx-full2");
      await n.cli("network", "rm", "mx-full");
    });

    it("refuses a fixed address that is not one of its family in Docker's words (TestDockerNetworkValidateIP)", async () => {
      await n.cli("network", "create", "--ipv6", "--subnet=172.28.0.0/16", "--subnet=2001:db8:1234::/64", "mx-validate");
      const refusal = async (...args: string[]) => (await run("create", "--net=mx-validate", ...args, "busybox")).out;
      expect(await refusal("--ip", "mynet_ip", "--ip6", "2001:db8:1234::9999")).to.contain("invalid IPv4 address: mynet_ip");
      expect(await refusal("--ip", "172.28.99.99", "--ip6", "mynet_ip6")).to.contain("invalid IPv6 address: mynet_ip6");
      expect(await refusal("--ip6", "172.28.99.99")).to.contain("invalid IPv6 address: 172.28.99.99");
      expect(await refusal("--ip6", "::ffff:172.28.99.99")).to.contain("invalid IPv6 address: ::ffff:172.28.99.99");
      await n.cli("network", "rm", "mx-validate");
    });
  });

  describe("connects and disconnects refused or taken as Docker 28 takes them", function () {
    after(async () => {
      await run("rm", "-f", "mx-none", "mx-host", "mx-stopped");
      await run("network", "rm", "mx-gone");
    });

    it("refuses to disconnect a container made on the host's network from it, in Docker 28's words (TestDockerNetworkDisconnectFromHost)", async () => {
      await n.cli("run", "-d", "--net=host", "--name", "mx-host", "busybox", "top");
      const r = await docker(n.host, ["network", "disconnect", "host", "mx-host"]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain("Error response from daemon: container cannot be disconnected from host network or connected to host network");
      await n.cli("rm", "-f", "mx-host");
    });

    it("forgets a network removed meanwhile from a stopped container, with or without force (TestDockerNetworkDisconnectContainerNonexistingNetwork)", async () => {
      await n.cli("network", "create", "mx-gone");
      await n.cli("run", "-d", "--net=mx-gone", "--name", "mx-stopped", "busybox", "top");
      await n.cli("stop", "-t", "1", "mx-stopped");
      await n.cli("network", "rm", "mx-gone");
      await n.cli("network", "disconnect", "mx-gone", "mx-stopped");
      expect(JSON.parse(await n.cli("inspect", "-f", "{{json .NetworkSettings.Networks}}", "mx-stopped"))).to.deep.equal({});
      const again = await docker(n.host, ["network", "disconnect", "-f", "mx-gone", "mx-stopped"]);
      expect(again.stderr).to.match(/container [0-9a-f]{64} is not connected to the network mx-gone/);
      await n.cli("rm", "mx-stopped");
    });

    it("checks a connect's settings before what the network conflicts with: an alias on bridge, host or none for a container on none (TestDockerNetworkConnectWithAliasOnDefaultNetworks)", async () => {
      await n.cli("run", "-d", "--net=none", "--name", "mx-none", "busybox", "top");
      for (const network of ["bridge", "host", "none"]) {
        const r = await run("network", "connect", "--alias", `alias${network}`, network, "mx-none");
        expect(r.code, network).to.equal(1);
        expect(r.out, network).to.contain("network-scoped alias is supported only for containers in user defined networks");
      }
    });
  });

  describe("a container on the host's network (TestRunAddHostInHostMode, TestDockerNetworkOverlayPortMapping)", function () {
    after(async () => {
      await run("rm", "-f", "mx-hostports", "mx-noneports");
    });

    it("gets Docker's own hosts file with its --add-host entries, the host's entries left out", async () => {
      const hosts = await n.cli("run", "--rm", "--net=host", "--add-host", "extra:1.2.3.4", "busybox", "cat", "/etc/hosts");
      const lines = hosts.split("\n").filter(Boolean);
      expect(lines[0]).to.equal("127.0.0.1\tlocalhost");
      expect(lines).to.include("1.2.3.4\textra");
      expect(lines.filter((l) => !/^(127\.0\.0\.1|::1|fe00::|ff0[02]::)/.test(l))).to.deep.equal(["1.2.3.4\textra"]);
    });

    it("shows no port, exposed or published, for a container on the host's or no network, which has no endpoint to publish on", async () => {
      await n.cli("run", "-d", "--name", "mx-hostports", "--net=host", "--expose", "90", "-p", "18792:80", "busybox", "top");
      await n.cli("run", "-d", "--name", "mx-noneports", "--net=none", "--expose", "90", "busybox", "top");
      for (const name of ["mx-hostports", "mx-noneports"]) {
        expect(await n.cli("inspect", "-f", "{{json .NetworkSettings.Ports}}", name), name).to.equal("{}\n");
        expect(await n.cli("ps", "-f", `name=${name}`, "--format", "[{{.Ports}}]"), name).to.equal("[]\n");
      }
    });
  });

  describe("--net=container without a container (TestNetHostname)", function () {
    it("is refused at create in Docker's words, not looked up as a network", async () => {
      const r = await run("run", "--net=container", "busybox", "ps");
      expect(r.code).to.equal(125);
      expect(r.out).to.contain("Error response from daemon: Invalid network mode: invalid container format container:<name|id>");
    });
  });

  describe("daemon flags (docker_cli_daemon_test.go)", function () {
    let f: NetDaemon;
    before(async () => {
      f = await startNetDaemon(["--log-opt", "max-size=1k", "--dns", "1.2.3.4", "--dns-search", "example.com", "--dns-opt", "timeout:3", "--add-runtime", "vm=/usr/local/bin/vm-manager"]);
    });
    after(async () => f?.stop());

    it("gives a container on the host's network the daemon's --dns, --dns-search and --dns-opt, and its own over them (TestDaemonDNSFlagsInHostMode)", async () => {
      const daemons = await f.cli("run", "--rm", "--net=host", "busybox", "cat", "/etc/resolv.conf");
      expect(daemons).to.match(/^nameserver 1\.2\.3\.4$/m);
      expect(daemons).to.match(/^search example\.com$/m);
      expect(daemons).to.match(/^options timeout:3$/m);
      const own = await f.cli("run", "--rm", "--net=host", "--dns", "9.9.9.9", "--dns-search", "own.test", "busybox", "cat", "/etc/resolv.conf");
      expect(own.split("\n").filter((l) => /^(nameserver|search|options) /.test(l))).to.deep.equal(["nameserver 9.9.9.9", "search own.test", "options timeout:3"]);
    });

    it("records the daemon's --log-opt in a container of the daemon's log driver, beside its own (TestDaemonWideLogConfig)", async () => {
      await f.cli("create", "--name", "lc-own", "--log-opt", "max-file=5", "busybox");
      await f.cli("create", "--name", "lc-default", "busybox");
      await f.cli("create", "--name", "lc-other", "--log-driver", "local", "busybox");
      const configOf = async (name: string) => JSON.parse(await f.cli("inspect", "-f", "{{json .HostConfig.LogConfig}}", name)) as unknown;
      expect(await configOf("lc-own")).to.deep.equal({ Type: "json-file", Config: { "max-file": "5", "max-size": "1k" } });
      expect(await configOf("lc-default")).to.deep.equal({ Type: "json-file", Config: { "max-size": "1k" } });
      expect(await configOf("lc-other")).to.deep.equal({ Type: "local", Config: {} });
    });

    it("names a runtime's missing binary in the words Docker's shim fails with (TestRunWithRuntimeFromCommandLine)", async () => {
      const r = await docker(f.host, ["run", "--rm", "--runtime=vm", "busybox", "ls"]);
      // (the CLI exits 127 for a start that failed on a file that is not there, as with Docker's words)
      expect(r.code).to.equal(127);
      expect(r.stderr).to.contain("/usr/local/bin/vm-manager: no such file or directory");
    });
  });
});
