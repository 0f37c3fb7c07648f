/**
 * What moby's integration/network tests (Docker 28, API 1.51) expect of a daemon's networking,
 * where engined did otherwise: an endpoint's own interface name, the default network turned off
 * with `-b none`, IPv6 forwarding and its FORWARD policy at the first IPv6 network, a network's
 * SNAT source, isolated gateways and point-to-point networks, `--icc=false` opened by legacy
 * links, a running container's default route moved by a connect's GwPriority, and the IP
 * families of `--default-network-opt`. Each daemon runs in a network namespace of the test's
 * (test/helpers/net-daemon.ts), which takes every interface and rule with it at the end.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolveOptions } from "../core/options/resolve.js";
import { BridgeDriver } from "../plugins/network-bridge/bridge-driver.js";
import { netnsRunner, type CommandRunner } from "../core/net/commands.js";
import { networkSpec } from "./network-conformance-kit.js";
import { docker } from "./helpers/docker-cli.js";
import { httpRequest } from "./helpers/http.js";
import { eventually, makeNetns, startNetDaemon, type NetDaemon, type Netns } from "./helpers/net-daemon.js";

const IFNAME = "com.docker.network.endpoint.ifname";

/** The API of a daemon, version 1.51. */
/** Requests at API 1.51, or at the version a path begins with (`/v1.46/...`). */
function apiOf(n: NetDaemon) {
  return async (method: string, path: string, body?: unknown) => {
    const r = await httpRequest({ socketPath: n.d.socket }, method, /^\/v\d/.test(path) ? path : `/v1.51${path}`, body);
    return { status: r.status, body: r.body, json: () => JSON.parse(r.body) as Record<string, unknown>, message: () => (JSON.parse(r.body) as { message: string }).message };
  };
}

/** Every container of the daemon removed. */
async function removeContainers(n: NetDaemon): Promise<void> {
  const ids = (await n.cli("ps", "-aq")).split("\n").filter(Boolean);
  if (ids.length) await n.cli("rm", "-f", ...ids);
}

/** The interface names in a running container's namespace (without lo). */
function interfacesOf(n: NetDaemon, pid: number): string[] {
  const links = JSON.parse(n.ns.run("nsenter", `--net=/proc/${pid}/ns/net`, "ip", "-j", "link", "show")) as { ifname: string }[];
  return links.map((l) => l.ifname).filter((name) => name !== "lo").sort();
}

describe("what moby's integration/network tests expect of a daemon", function () {
  this.timeout(180_000);

  describe("an endpoint's interface name (TestEndpointWithCustomIfname)", function () {
    let n: NetDaemon;
    let api: ReturnType<typeof apiOf>;
    before(async () => {
      n = await startNetDaemon();
      api = apiOf(n);
      await n.cli("network", "create", "--subnet", "10.197.1.0/24", "mx-n1");
      await n.cli("network", "create", "--subnet", "10.197.2.0/24", "mx-n2");
    });
    afterEach(() => removeContainers(n));
    after(async () => n?.stop());

    it("names the interface on the default network after the endpoint's DriverOpts, as Docker 28 does", async () => {
      const create = await api("POST", "/containers/create?name=named", {
        Image: "busybox",
        Cmd: ["sh", "-c", "ip -o link show foobar; ip route; exec sleep 120"],
        NetworkingConfig: { EndpointsConfig: { bridge: { DriverOpts: { [IFNAME]: "foobar" } } } },
      });
      expect(create.status, create.body).to.equal(201);
      expect((await api("POST", "/containers/named/start")).status).to.equal(204);
      let out = "";
      await eventually("the container's output", async () => (out = await n.cli("logs", "named")).includes("default"));
      expect(out).to.include(": foobar@if");
      expect(out).to.match(/^default via \S+ dev foobar/m);
      const doc = JSON.parse(await n.cli("inspect", "named"))[0];
      expect(doc.NetworkSettings.Networks.bridge.DriverOpts).to.deep.equal({ [IFNAME]: "foobar" });
    });

    it("gives the other networks the lowest ethN no endpoint asks for, and names a connected interface as asked", async () => {
      // n1 asks for eth0, which the default route's network (n2, first) would have had
      await n.cli("create", "--name", "multi", "--network", `name=mx-n2`, "--network", `name=mx-n1,driver-opt=${IFNAME}=eth0`, "busybox", "sleep", "120");
      await n.cli("start", "multi");
      const pid = Number((await n.cli("inspect", "-f", "{{.State.Pid}}", "multi")).trim());
      expect(interfacesOf(n, pid)).to.deep.equal(["eth0", "eth1"]);
      const n1 = JSON.parse(n.ns.run("nsenter", `--net=/proc/${pid}/ns/net`, "ip", "-j", "-4", "addr", "show", "dev", "eth0"))[0];
      expect(n1.addr_info[0].local).to.match(/^10\.197\.1\./);
      await n.cli("network", "connect", "--driver-opt", `${IFNAME}=uplink7`, "bridge", "multi");
      expect(interfacesOf(n, pid)).to.deep.equal(["eth0", "eth1", "uplink7"]);
    });

    it("refuses, before any network is joined, two endpoints asking for one name, `lo`, or a name the kernel refuses", async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ "mx-n1": { DriverOpts: { [IFNAME]: "same0" } }, "mx-n2": { DriverOpts: { [IFNAME]: "same0" } } }, /error renaming interface to "same0" .*file exists/],
        [{ "mx-n1": { DriverOpts: { [IFNAME]: "lo" } } }, /error renaming interface to "lo" .*file exists/],
        [{ "mx-n1": { DriverOpts: { [IFNAME]: "a-name-far-too-long" } } }, /error renaming interface to "a-name-far-too-long" .*invalid argument/],
        [{ "mx-n1": { DriverOpts: { [IFNAME]: "with/slash" } } }, /invalid argument/],
      ];
      for (const [i, [endpoints, expected]] of cases.entries()) {
        const create = await api("POST", `/containers/create?name=bad${i}`, { Image: "busybox", Cmd: ["true"], HostConfig: { NetworkMode: "mx-n1" }, NetworkingConfig: { EndpointsConfig: endpoints } });
        expect(create.status, create.body).to.equal(201);
        const start = await api("POST", `/containers/bad${i}/start`);
        expect(start.status, start.body).to.equal(400);
        expect(start.message()).to.match(expected);
        // nothing joined: no port on the network's bridge
        const bridge = "br-" + (JSON.parse(await n.cli("network", "inspect", "mx-n1"))[0].Id as string).slice(0, 12);
        expect(JSON.parse(n.ns.run("ip", "-j", "link", "show", "master", bridge) || "[]")).to.deep.equal([]);
      }
    });

    it("sets an endpoint's per-interface sysctls on its interface, whatever it is named, and refuses what is none (com.docker.network.endpoint.sysctls)", async () => {
      const SYSCTLS = "com.docker.network.endpoint.sysctls";
      const create = await api("POST", "/containers/create?name=tuned", {
        Image: "busybox",
        // (a new namespace's interfaces start with both at 0)
        Cmd: ["sh", "-c", "cat /proc/sys/net/ipv4/conf/foobar/log_martians /proc/sys/net/ipv4/conf/eth1/log_martians /proc/sys/net/ipv4/conf/eth1/forwarding; exec sleep 120"],
        NetworkingConfig: {
          EndpointsConfig: {
            "mx-n1": { DriverOpts: { [IFNAME]: "foobar", [SYSCTLS]: "net.ipv4.conf.IFNAME.log_martians=1" } },
          },
        },
      });
      expect(create.status, create.body).to.equal(201);
      // the Docker CLI lowercases the field: `ifname` names the interface too
      const connect = await api("POST", "/networks/mx-n2/connect", { Container: "tuned", EndpointConfig: { DriverOpts: { [SYSCTLS]: "net.ipv4.conf.ifname.forwarding=1,net.ipv4.conf.ifname.log_martians=1" } } });
      expect(connect.status, connect.body).to.equal(200);
      expect((await api("POST", "/containers/tuned/start")).status).to.equal(204);
      let out = "";
      await eventually("the container's output", async () => (out = await n.cli("logs", "tuned")).split("\n").length > 3);
      expect(out.split("\n").slice(0, 3)).to.deep.equal(["1", "1", "1"]);
      for (const [value, why] of [
        ["net.core.somaxconn=5", "only net.ipv4., net.ipv6. and net.mpls. settings can be set per interface"],
        ["net.ipv4.conf.eth0.forwarding=1", "the interface must be named IFNAME"],
        ["net.ipv4.conf.IFNAME.forwarding", "expected key=value"],
      ]) {
        const bad = await api("POST", "/containers/create", { Image: "busybox", NetworkingConfig: { EndpointsConfig: { "mx-n1": { DriverOpts: { [SYSCTLS]: value } } } } });
        expect([bad.status, bad.message()], value).to.satisfy(([status, message]: [number, string]) => status === 400 && message.includes(why));
      }
      await api("POST", "/containers/create?name=untunable", {
        Image: "busybox",
        NetworkingConfig: { EndpointsConfig: { "mx-n1": { DriverOpts: { [SYSCTLS]: "net.ipv4.conf.IFNAME.no_such_setting=1" } } } },
      });
      const start = await api("POST", "/containers/untunable/start");
      expect(start.status).to.equal(400);
      expect(start.message()).to.include("no_such_setting");
    });

    it("moves a container-wide eth0 sysctl to the main endpoint up to API 1.47, and refuses one from 1.48 (TestSetInterfaceSysctl, handleSysctlBC)", async () => {
      const SYSCTLS = "com.docker.network.endpoint.sysctls";
      const body = (sysctls: Record<string, string>, endpoint: Record<string, unknown> = {}) => ({
        Image: "busybox",
        Cmd: ["sh", "-c", "cat /proc/sys/net/ipv4/conf/eth0/log_martians /proc/sys/net/ipv4/conf/eth0/forwarding; exec sleep 120"],
        HostConfig: { NetworkMode: "mx-n1", Sysctls: sysctls },
        NetworkingConfig: { EndpointsConfig: { "mx-n1": endpoint } },
      });
      const old = await api("POST", "/v1.46/containers/create?name=migrated", body({ "net.ipv4.conf.eth0.log_martians": "1", "net.ipv4.ip_unprivileged_port_start": "80" }, { DriverOpts: { [SYSCTLS]: "net.ipv4.conf.IFNAME.forwarding=1" } }));
      expect(old.status, old.body).to.equal(201);
      expect(JSON.parse(old.body).Warnings).to.deep.equal([
        `Migrated sysctl "net.ipv4.conf.eth0.log_martians" to DriverOpts{"${SYSCTLS}":"net.ipv4.conf.IFNAME.log_martians=1"}.`,
      ]);
      const doc = JSON.parse(await n.cli("inspect", "migrated"))[0];
      expect(doc.HostConfig.Sysctls).to.deep.equal({ "net.ipv4.ip_unprivileged_port_start": "80" });
      expect(doc.NetworkSettings.Networks["mx-n1"].DriverOpts).to.deep.equal({ [SYSCTLS]: "net.ipv4.conf.IFNAME.log_martians=1,net.ipv4.conf.IFNAME.forwarding=1" });
      expect((await api("POST", "/containers/migrated/start")).status).to.equal(204);
      let out = "";
      await eventually("the container's output", async () => (out = await n.cli("logs", "migrated")).split("\n").length > 2);
      expect(out.split("\n").slice(0, 2)).to.deep.equal(["1", "1"]);

      const other = await api("POST", "/v1.46/containers/create", body({ "net.ipv4.conf.eth1.log_martians": "1" }));
      expect([other.status, other.message()]).to.deep.equal([400, `unable to determine network endpoint for sysctl net.ipv4.conf.eth1.log_martians, use driver option '${SYSCTLS}' to set per-interface sysctls`]);
      const elsewhere = await api("POST", "/v1.46/containers/create", { ...body({ "net.ipv4.conf.eth0.log_martians": "1" }), NetworkingConfig: { EndpointsConfig: { "mx-n2": {} } } });
      expect([elsewhere.status, elsewhere.message()]).to.deep.equal([400, "unable to find a network for sysctl net.ipv4.conf.eth0.log_martians: HostConfig.NetworkMode must match the identity of a network in NetworkSettings.Networks"]);
      // (Docker 27.0 refused them from 1.47; Docker 28 moves them at 1.47 too)
      const at147 = await api("POST", "/v1.47/containers/create", body({ "net.ipv4.conf.eth0.log_martians": "1" }));
      expect(at147.status, at147.body).to.equal(201);
      expect(JSON.parse(at147.body).Warnings).to.deep.equal([`Migrated sysctl "net.ipv4.conf.eth0.log_martians" to DriverOpts{"${SYSCTLS}":"net.ipv4.conf.IFNAME.log_martians=1"}.`]);
      for (const version of ["1.48", "1.51"]) {
        const refused = await api("POST", `/v${version}/containers/create`, body({ "net.ipv4.conf.eth0.log_martians": "1" }));
        expect([refused.status, refused.message()], version).to.deep.equal([400, `interface specific sysctl setting "net.ipv4.conf.eth0.log_martians" must be supplied using driver option '${SYSCTLS}'`]);
      }
      // on the host's namespace, no container's own, the sysctl stays the container's (the runtime refuses it at start)
      const onHost = await api("POST", "/v1.51/containers/create?name=onhost", { Image: "busybox", HostConfig: { NetworkMode: "host", Sysctls: { "net.ipv4.conf.eth0.log_martians": "1" } } });
      expect(onHost.status, onHost.body).to.equal(201);
      expect(JSON.parse(await n.cli("inspect", "onhost"))[0].HostConfig.Sysctls).to.deep.equal({ "net.ipv4.conf.eth0.log_martians": "1" });
    });

    it("refuses a connect whose name the running container's sandbox has already", async () => {
      await n.cli("run", "-d", "--name", "busy", "--network", "mx-n1", "busybox", "sleep", "120");
      const r = await api("POST", "/networks/mx-n2/connect", { Container: "busy", EndpointConfig: { DriverOpts: { [IFNAME]: "eth0" } } });
      expect(r.status, r.body).to.equal(400);
      expect(r.message()).to.match(/error renaming interface to "eth0" .*network mx-n1/);
      const doc = JSON.parse(await n.cli("inspect", "busy"))[0];
      expect(Object.keys(doc.NetworkSettings.Networks)).to.deep.equal(["mx-n1"]);
    });
  });

  describe("-b none (TestRunContainerWithBridgeNone)", function () {
    let n: NetDaemon;
    before(async () => {
      n = await startNetDaemon(["-b", "none"]);
    });
    after(async () => n?.stop());

    it("runs a container on the default network, or naming `bridge`, with its loopback alone and NetworkDisabled kept", async () => {
      for (const args of [[], ["--network", "bridge"]]) {
        const name = `nb${args.length}`;
        await n.cli("run", "-d", "--name", name, ...args, "busybox", "sleep", "120");
        const pid = Number((await n.cli("inspect", "-f", "{{.State.Pid}}", name)).trim());
        expect(interfacesOf(n, pid), name).to.deep.equal([]);
        // a namespace of its own, not the daemon's
        expect(n.ns.run("readlink", `/proc/${pid}/ns/net`)).to.not.equal(n.ns.run("readlink", "/proc/self/ns/net"));
      }
      const doc = JSON.parse(await n.cli("inspect", "nb2"))[0];
      expect(doc.Config.NetworkDisabled).to.equal(true);
      expect(doc.HostConfig.NetworkMode).to.equal("bridge");
      await n.cli("restart", "-t", "0", "nb2");
      expect((await n.cli("inspect", "-f", "{{.State.Running}}", "nb2")).trim()).to.equal("true");
    });
  });

  describe("IPv6 forwarding and its FORWARD policy at the first IPv6 network (TestFilterForwardPolicy)", function () {
    const sysctls = (n: NetDaemon) => ["net.ipv4.ip_forward", "net.ipv6.conf.default.forwarding", "net.ipv6.conf.all.forwarding"].map((k) => n.ns.run("sysctl", "-n", k).trim()).join(" ");
    const policy = (n: NetDaemon, tool: string) => /^:FORWARD (\w+) /m.exec(n.ns.run(tool, "-t", "filter"))?.[1];
    const cases: { name: string; forwarding: string; args: string[]; policy: string; after: string }[] = [
      { name: "forwarding off", forwarding: "0", args: [], policy: "DROP", after: "1 1 1" },
      { name: "forwarding already on", forwarding: "1", args: [], policy: "ACCEPT", after: "1 1 1" },
      { name: "--ip-forward-no-drop", forwarding: "0", args: ["--ip-forward-no-drop"], policy: "ACCEPT", after: "1 1 1" },
      { name: "--ip-forward=false", forwarding: "0", args: ["--ip-forward=false"], policy: "ACCEPT", after: "0 0 0" },
    ];
    for (const t of cases) {
      it(`${t.name}: the IPv4 policy at start, the IPv6 sysctls and policy only when an IPv6 network is made`, async () => {
        const f = t.forwarding;
        const n = await startNetDaemon(t.args, { prepare: (ns) => ns.run("sysctl", "-q", "-w", `net.ipv4.ip_forward=${f}`, `net.ipv6.conf.all.forwarding=${f}`, `net.ipv6.conf.default.forwarding=${f}`) });
        try {
          expect(policy(n, "iptables-save")).to.equal(t.policy);
          expect(policy(n, "ip6tables-save")).to.equal("ACCEPT");
          expect(sysctls(n)).to.equal(`${t.after.split(" ")[0]} ${f} ${f}`);
          await n.cli("network", "create", "--ipv6", "mx-ffp");
          expect(policy(n, "iptables-save")).to.equal(t.policy);
          expect(policy(n, "ip6tables-save")).to.equal(t.policy);
          expect(sysctls(n)).to.equal(t.after);
          // the IPv6 network's own rules are there though the daemon has no --ipv6
          const subnet6 = (JSON.parse(await n.cli("network", "inspect", "mx-ffp"))[0].IPAM.Config as { Subnet: string }[]).find((c) => c.Subnet.includes(":"))!.Subnet;
          expect(n.ns.run("ip6tables-save", "-t", "nat")).to.include(`-s ${subnet6} `);
        } finally {
          await n.stop();
        }
      });
    }
  });

  describe("com.docker.network.host_ipv4 (TestHostIPv4BridgeLabel)", function () {
    let n: NetDaemon;
    let outside: Netns;
    let server: ChildProcess | undefined;
    before(async () => {
      n = await startNetDaemon();
      // another namespace the daemon's routes to, by a veth pair: 10.198.0.1 and .7 on the
      // daemon's side, 10.198.0.2 outside, where a server answers with the address it sees
      outside = makeNetns();
      const daemonPid = readFileSync(n.d.pidfile, "utf8").trim();
      outside.run("ip", "link", "add", "mxo1", "type", "veth", "peer", "name", "mxo0", "netns", daemonPid);
      outside.run("ip", "addr", "add", "10.198.0.2/24", "dev", "mxo1");
      outside.run("ip", "link", "set", "mxo1", "up");
      n.ns.run("ip", "addr", "add", "10.198.0.1/24", "dev", "mxo0");
      n.ns.run("ip", "addr", "add", "10.198.0.7/24", "dev", "mxo0");
      n.ns.run("ip", "link", "set", "mxo0", "up");
      const script = `require("node:http").createServer((q, r) => r.end(q.socket.remoteAddress + "\\n")).listen(18111, "10.198.0.2")`;
      server = spawn("nsenter", [`--net=${outside.file}`, "--", process.execPath, "-e", script], { stdio: "ignore" });
      await eventually("the outside server", () => outside.status("sh", "-c", "ss -Hltn 'sport = :18111' | grep -q 18111") === 0);
    });
    after(async () => {
      server?.kill();
      await n?.stop();
      outside?.remove();
    });

    const seenFrom = async (network: string) => (await n.cli("run", "--rm", "--network", network, "busybox", "timeout", "5", "wget", "-q", "-O", "-", "http://10.198.0.2:18111/")).trim();

    it("sends the network's outgoing traffic from that address (SNAT --to-source), and from the outgoing interface's without it", async () => {
      await n.cli("network", "create", "--subnet", "10.197.5.0/24", "-o", "com.docker.network.host_ipv4=10.198.0.7", "-o", "com.docker.network.bridge.name=mxsnat", "mx-snat");
      expect(n.ns.run("iptables-save", "-t", "nat")).to.match(/-A ENGINE-POST-\w+ -s 10\.197\.5\.0\/24 ! -o mxsnat -j SNAT --to-source 10\.198\.0\.7$/m);
      expect(await seenFrom("mx-snat")).to.equal("10.198.0.7");
      await n.cli("network", "create", "--subnet", "10.197.6.0/24", "mx-masq");
      expect(await seenFrom("mx-masq")).to.equal("10.198.0.1");
      await n.cli("network", "rm", "mx-snat", "mx-masq");
      expect(n.ns.run("iptables-save", "-t", "nat")).to.not.include("10.197.5.0/24");
    });

    it("refuses a host_ipv4 that is no IPv4 address, in Docker's words", async () => {
      const r = await docker(n.host, ["network", "create", "-o", "com.docker.network.host_ipv4=fd00::1", "mx-bad"]);
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.include("failed to parse com.docker.network.host_ipv4 value: fd00::1");
      const r2 = await docker(n.host, ["network", "create", "-o", "com.docker.network.host_ipv4=nope", "mx-bad"]);
      expect(r2.stderr).to.include("failed to parse com.docker.network.host_ipv4 value: nope (nil ip)");
    });
  });

  describe("--default-network-opt enable_ipv4 and enable_ipv6 (TestCreateWithIPv6WithoutEnableIPv6Flag, TestDefaultIPvOptOverride)", function () {
    let n: NetDaemon;
    let api: ReturnType<typeof apiOf>;
    before(async () => {
      n = await startNetDaemon(["--default-network-opt", "bridge=com.docker.network.enable_ipv4=false", "--default-network-opt", "bridge=com.docker.network.enable_ipv6=true"]);
      api = apiOf(n);
    });
    after(async () => n?.stop());

    for (const override4 of [false, true]) {
      for (const override6 of [false, true]) {
        it(`takes the defaults a request leaves out, and shows only those (EnableIPv4 given: ${override4}, EnableIPv6 given: ${override6})`, async () => {
          const name = `mx-ipv-${override4}-${override6}`;
          const r = await api("POST", "/networks/create", { Name: name, ...(override4 ? { EnableIPv4: true } : {}), ...(override6 ? { EnableIPv6: true } : {}) });
          expect(r.status, r.body).to.equal(201);
          const doc = (await api("GET", `/networks/${name}`)).json() as { EnableIPv4: boolean; EnableIPv6: boolean; Options: Record<string, string>; IPAM: { Config: { Subnet: string }[] } };
          expect(doc.EnableIPv4).to.equal(override4);
          expect(doc.EnableIPv6).to.equal(true);
          expect(doc.Options["com.docker.network.enable_ipv4"]).to.equal(override4 ? undefined : "false");
          expect(doc.Options["com.docker.network.enable_ipv6"]).to.equal(override6 ? undefined : "true");
          // an IPv6 subnet from the pools, a ULA one, and an IPv4 one only when asked
          const subnets = doc.IPAM.Config.map((c) => c.Subnet);
          expect(subnets.filter((s) => /^fd[0-9a-f]{2}:/.test(s)), subnets.join()).to.have.length(1);
          expect(subnets.filter((s) => !s.includes(":")), subnets.join()).to.have.length(override4 ? 1 : 0);
          expect((await api("DELETE", `/networks/${name}`)).status).to.equal(204);
        });
      }
    }

    it("reads a create's EnableIPv4 from API 1.48 only, as Docker's route reads it: an older client's gets the default", async () => {
      for (const [version, ipv4] of [["1.47", false], ["1.48", true]] as const) {
        const r = await api("POST", `/v${version}/networks/create`, { Name: `mx-ipv4-${version}`, EnableIPv4: true });
        expect(r.status, r.body).to.equal(201);
        expect(((await api("GET", `/networks/mx-ipv4-${version}`)).json() as { EnableIPv4: boolean }).EnableIPv4, version).to.equal(ipv4);
        expect((await api("DELETE", `/networks/mx-ipv4-${version}`)).status).to.equal(204);
      }
    });

    it("refuses an enable_ipv6 option that is no boolean, in Docker's words", async () => {
      const r = await api("POST", "/networks/create", { Name: "mx-ipv-bad", Options: { "com.docker.network.enable_ipv6": "maybe" } });
      expect([r.status, r.message()]).to.deep.equal([400, 'driver-opt "com.docker.network.enable_ipv6" is not a valid bool']);
    });
  });

  describe("isolated gateways, inhibit_ipv4 and point-to-point networks (TestIsolated, TestPointToPoint)", function () {
    let n: NetDaemon;
    before(async () => (n = await startNetDaemon()));
    afterEach(() => removeContainers(n));
    const api = (method: string, path: string, body?: unknown) => apiOf(n)(method, path, body);
    after(async () => n?.stop());

    const addressesOf = async (name: string) => {
      const s = JSON.parse(await n.cli("inspect", name))[0].NetworkSettings.Networks;
      const ep = Object.values(s)[0] as { IPAddress: string; GlobalIPv6Address: string; Gateway: string; IPv6Gateway: string };
      return ep;
    };
    const ping = (from: string, address: string) => n.cli("exec", from, "ping", "-c1", "-W3", address);

    it("gives an isolated internal network's bridge no address at all and reserves no gateway; its containers reach each other", async () => {
      await n.cli("network", "create", "--internal", "--ipv6", "--subnet", "10.197.7.0/24", "--subnet", "fd00:197:7::/64",
        "-o", "com.docker.network.bridge.gateway_mode_ipv4=isolated", "-o", "com.docker.network.bridge.gateway_mode_ipv6=isolated", "-o", "com.docker.network.bridge.name=mxisol", "mx-isol");
      const bridge = JSON.parse(n.ns.run("ip", "-j", "addr", "show", "dev", "mxisol"))[0];
      expect(bridge.addr_info).to.deep.equal([]);
      const doc = (await api("GET", "/networks/mx-isol")).json() as { IPAM: { Config: Record<string, string>[] } };
      expect(doc.IPAM.Config).to.deep.equal([{ Subnet: "10.197.7.0/24" }, { Subnet: "fd00:197:7::/64" }]);
      await n.cli("run", "-d", "--name", "i1", "--network", "mx-isol", "busybox", "sleep", "120");
      await n.cli("run", "-d", "--name", "i2", "--network", "mx-isol", "busybox", "sleep", "120");
      const [a, b] = [await addressesOf("i1"), await addressesOf("i2")];
      // the first addresses are the containers', none kept for a gateway
      expect([a.IPAddress, b.IPAddress]).to.deep.equal(["10.197.7.1", "10.197.7.2"]);
      expect([a.Gateway, a.IPv6Gateway]).to.deep.equal(["", ""]);
      await ping("i2", a.IPAddress);
      await ping("i2", a.GlobalIPv6Address);
      expect(await n.cli("exec", "i1", "ip", "route")).to.not.include("default");
    });

    for (const [mode, opt] of [["inhibit_ipv4", "com.docker.network.bridge.inhibit_ipv4=true"], ["isolated", "com.docker.network.bridge.gateway_mode_ipv4=isolated"]]) {
      it(`gives both addresses of an internal /31 with ${mode} to containers`, async () => {
        await n.cli("network", "create", "--internal", "--subnet", "10.197.8.0/31", "-o", opt, `mx-p2p-${mode}`);
        await n.cli("run", "-d", "--name", "p1", "--network", `mx-p2p-${mode}`, "busybox", "sleep", "120");
        await n.cli("run", "-d", "--name", "p2", "--network", `mx-p2p-${mode}`, "busybox", "sleep", "120");
        expect([(await addressesOf("p1")).IPAddress, (await addressesOf("p2")).IPAddress]).to.deep.equal(["10.197.8.0", "10.197.8.1"]);
        await ping("p2", "10.197.8.0");
        await n.cli("rm", "-f", "p1", "p2");
        await n.cli("network", "rm", `mx-p2p-${mode}`);
      });
    }

    it("keeps the gateway of a network with inhibit_ipv4 that is not internal, off the bridge, as its containers' default route", async () => {
      await n.cli("network", "create", "--subnet", "10.197.9.0/24", "-o", "com.docker.network.bridge.inhibit_ipv4=true", "-o", "com.docker.network.bridge.name=mxinh", "mx-inh");
      const bridge = JSON.parse(n.ns.run("ip", "-j", "addr", "show", "dev", "mxinh"))[0] as { addr_info: { family: string }[] };
      expect(bridge.addr_info.filter((a) => a.family === "inet")).to.deep.equal([]);
      const doc = (await api("GET", "/networks/mx-inh")).json() as { IPAM: { Config: Record<string, string>[] } };
      expect(doc.IPAM.Config).to.deep.equal([{ Subnet: "10.197.9.0/24", Gateway: "10.197.9.1" }]);
      await n.cli("run", "-d", "--name", "h1", "--network", "mx-inh", "busybox", "sleep", "120");
      expect((await addressesOf("h1")).IPAddress).to.equal("10.197.9.2");
      expect(await n.cli("exec", "h1", "ip", "route")).to.match(/^default via 10\.197\.9\.1 dev eth0/m);
    });

    it("refuses the isolated mode on a network that is not internal, and a gateway mode it does not run, in Docker's words", async () => {
      const r = await api("POST", "/networks/create", { Name: "mx-bad", Options: { "com.docker.network.bridge.gateway_mode_ipv4": "isolated" } });
      expect([r.status, r.message()]).to.deep.equal([400, "gateway mode 'isolated' can only be used for an internal network"]);
      const r2 = await api("POST", "/networks/create", { Name: "mx-bad", Options: { "com.docker.network.bridge.gateway_mode_ipv6": "bogus" } });
      expect([r2.status, r2.message()]).to.deep.equal([400, "unknown gateway mode bogus"]);
    });
  });

  describe("legacy links with --icc=false (TestLegacyLink)", function () {
    let n: NetDaemon;
    before(async () => (n = await startNetDaemon(["--icc=false"])));
    after(async () => n?.stop());

    /** wget from a new container with these run arguments: what it wrote to stderr (its exit is not the point). */
    // (under a shell that does not exec it: busybox's timeout execs the command, which as the
    // container's first process would ignore the TERM)
    const fetch = async (host: string, ...runArgs: string[]) => (await docker(n.host, ["run", "--rm", ...runArgs, "busybox", "sh", "-c", `timeout 3 wget -O /dev/null http://${host}/nothing-here; echo exit $?`])).stderr;

    it("lets a linked container reach the exposed ports of its link, by address, name and alias, and no one else", async () => {
      await n.cli("run", "-d", "--name", "svr", "--expose", "80", "busybox", "httpd", "-f", "-h", "/etc");
      const svrAddr = (await n.cli("inspect", "-f", "{{.NetworkSettings.Networks.bridge.IPAddress}}", "svr")).trim();
      expect(await fetch(svrAddr)).to.include("Terminated").and.not.include("404 Not Found");
      expect(await fetch(svrAddr, "--link", "svr")).to.include("404 Not Found");
      expect(await fetch("svr", "--link", "svr")).to.include("404 Not Found");
      expect(await fetch("thealias", "--link", "svr:thealias")).to.include("404 Not Found");
      // the links' rules went with the containers that had them: only the bridge's own remain
      const forward = n.ns.run("iptables-save", "-t", "filter").split("\n").filter((l) => l.includes(`-d ${svrAddr}/32`) || l.includes(`-s ${svrAddr}/32`));
      expect(forward).to.deep.equal([]);
      expect(await fetch(svrAddr)).to.not.include("404 Not Found");
      await n.cli("rm", "-f", "svr");
    });

    it("closes a link removed while both containers run (TestRemoveLegacyLink)", async () => {
      await n.cli("run", "-d", "--name", "svr3", "--expose", "80", "busybox", "httpd", "-f", "-h", "/etc");
      await n.cli("run", "-d", "--name", "client3", "--link", "svr3:thealias", "busybox", "sleep", "120");
      const wget = async (host: string) => (await docker(n.host, ["exec", "client3", "sh", "-c", `timeout 3 wget -O /dev/null http://${host}/nothing-here; echo exit $?`])).stderr;
      expect(await wget("svr3")).to.include("404 Not Found");
      await n.cli("rm", "--link", "client3/thealias");
      expect((await n.cli("inspect", "-f", "{{.State.Running}} ", "svr3", "client3")).trim()).to.equal("true \ntrue");
      // the name is gone (Docker's wget says "bad address"; here the host's resolvers, unreachable
      // from the test's namespace, would only time out)
      expect(await n.cli("exec", "client3", "cat", "/etc/hosts")).to.not.include("svr3");
      const svrAddr = (await n.cli("inspect", "-f", "{{.NetworkSettings.Networks.bridge.IPAddress}}", "svr3")).trim();
      expect(await wget(svrAddr)).to.include("Terminated").and.not.include("404 Not Found");
      await n.cli("rm", "-f", "client3", "svr3");
    });

    it("opens the link again for a running parent when its child starts again", async () => {
      await n.cli("run", "-d", "--name", "svr2", "--expose", "80", "busybox", "httpd", "-f", "-h", "/etc");
      await n.cli("run", "-d", "--name", "client", "--link", "svr2:web", "busybox", "sleep", "120");
      await n.cli("restart", "-t", "0", "svr2");
      const r = await docker(n.host, ["exec", "client", "sh", "-c", "timeout 3 wget -O /dev/null http://web/nothing-here; echo exit $?"]);
      expect(r.stderr).to.include("404 Not Found");
      await n.cli("rm", "-f", "client", "svr2");
      expect(n.ns.run("iptables-save", "-t", "filter")).to.not.match(/--[sd]port 80 -j ACCEPT/);
    });
  });

  describe("a connect's GwPriority moves a running container's default route at once (TestConnectWithPriority)", function () {
    let n: NetDaemon;
    before(async () => {
      n = await startNetDaemon();
      for (const i of [1, 2, 3, 4, 5]) await n.cli("network", "create", "--ipv6", "--subnet", `10.196.${i}0.0/24`, "--gateway", `10.196.${i}0.1`, "--subnet", `fd00:196:${i}0::/64`, "--gateway", `fd00:196:${i}0::1`, `mx-gw${i}`);
    });
    after(async () => n?.stop());

    const defaults = async () => {
      const out = await n.cli("exec", "gw", "sh", "-c", "ip -o -4 route show default; ip -o -6 route show default");
      return out.split("\n").filter(Boolean).map((l) => /^default via (\S+) dev (\S+)/.exec(l)!.slice(1).join(" "));
    };
    const connect = (i: number, priority: number) => apiOf(n)("POST", `/networks/mx-gw${i}/connect`, { Container: "gw", EndpointConfig: { GwPriority: priority } });
    const disconnect = (i: number) => n.cli("network", "disconnect", `mx-gw${i}`, "gw");

    it("follows the highest priority through connects and disconnects, ties to the network whose name sorts first", async () => {
      await n.cli("run", "-d", "--name", "gw", "--network", "mx-gw1", "busybox", "sleep", "300");
      expect(await defaults()).to.deep.equal(["10.196.10.1 eth0", "fd00:196:10::1 eth0"]);
      expect((await connect(5, -100)).status).to.equal(200);
      expect(await defaults()).to.deep.equal(["10.196.10.1 eth0", "fd00:196:10::1 eth0"]);
      expect((await connect(2, 100)).status).to.equal(200);
      expect(await defaults()).to.deep.equal(["10.196.20.1 eth2", "fd00:196:20::1 eth2"]);
      expect((await connect(3, 10)).status).to.equal(200);
      expect((await connect(4, 10)).status).to.equal(200);
      expect(await defaults()).to.deep.equal(["10.196.20.1 eth2", "fd00:196:20::1 eth2"]);
      const nets = JSON.parse(await n.cli("inspect", "gw"))[0].NetworkSettings.Networks as Record<string, { GwPriority: number }>;
      expect(Object.fromEntries(Object.entries(nets).map(([k, v]) => [k, v.GwPriority]))).to.deep.equal({ "mx-gw1": 0, "mx-gw2": 100, "mx-gw3": 10, "mx-gw4": 10, "mx-gw5": -100 });
      await disconnect(2);
      expect(await defaults()).to.deep.equal(["10.196.30.1 eth3", "fd00:196:30::1 eth3"]);
      await disconnect(3);
      expect(await defaults()).to.deep.equal(["10.196.40.1 eth4", "fd00:196:40::1 eth4"]);
      await disconnect(4);
      expect(await defaults()).to.deep.equal(["10.196.10.1 eth0", "fd00:196:10::1 eth0"]);
      await n.cli("rm", "-f", "gw");
    });
  });

  describe("ip6tables rules for IPv6 networks without --ipv6, on a host where ip6tables fails", function () {
    it("makes the network with IPv4 rules alone and says why, instead of failing every network", async () => {
      const ns = makeNetns();
      try {
        const inNs = netnsRunner(ns.file);
        // the daemon's namespace as a kernel without ip6tables shows it
        const runner: CommandRunner = (file, args, opts) => (file.startsWith("ip6tables") ? Promise.reject(new Error(`${file}: can't initialize ip6tables table 'filter'`)) : inNs(file, args, opts));
        const warnings: string[] = [];
        const config = { ...resolveOptions(new Map(), {}).config, "userland-proxy": false };
        const driver = new BridgeDriver({ config: () => config, tag: "mx6f00", runner, log: { warn: (_o, msg) => warnings.push(msg) } });
        const net = networkSpec("bridge", 41, { ipv6: true });
        await driver.createNetwork(net);
        // (the other warning: the name server, in this process's namespace, cannot listen on the test's bridge)
        expect(warnings).to.include("ip6tables is enabled, but cannot set up ip6tables chains: IPv6 networks get no ip6tables rules");
        expect(ns.run("iptables-save", "-t", "nat")).to.include("-s 10.213.41.0/24 ! -o br-");
        await driver.deleteNetwork(net);
        await driver.shutdown();
      } finally {
        ns.remove();
      }
    });
  });
});
