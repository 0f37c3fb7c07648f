/**
 * The networks API with the real Docker CLI against `bin/engined` in a network namespace of its
 * own: user-defined networks made, listed, inspected and removed (with Docker's errors),
 * containers on them finding each other by name and alias through the network's name server,
 * connect and disconnect of a running container, prune, internal networks, fixed addresses, and
 * `--default-network-opt` for new networks. The daemon runs with `--dns 127.0.0.1`, so a name
 * its server does not know is forwarded to the daemon namespace's own loopback, never out.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import Docker from "dockerode";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { docker } from "./helpers/docker-cli.js";
import { ROOT, runCommand } from "./helpers/engined.js";
import { startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";

interface Link {
  ifname: string;
  mtu: number;
  address: string;
  addr_info: { family: string; local: string; prefixlen: number }[];
}

describe("network API (Docker CLI, daemon in its own network namespace)", function () {
  this.timeout(180_000);
  let n: NetDaemon;
  /** The CLI's stderr of a command that must fail. */
  const fails = async (...args: string[]): Promise<string> => {
    const r = await docker(n.host, args);
    expect(r.code, `docker ${args.join(" ")} should fail`).to.not.equal(0);
    return r.stderr;
  };
  const inspect = async (what: string, ...refs: string[]) => JSON.parse(await n.cli(what, "inspect", ...refs)) as Record<string, any>[];
  const link = (name: string): Link => (JSON.parse(n.ns.run("ip", "-j", "addr", "show", "dev", name)) as Link[])[0];

  before(async function () {
    n = await startNetDaemon(["--dns", "127.0.0.1", "--default-network-opt", "bridge=com.engine.network.driver.mtu=1400", "--ip", "127.0.0.1"]);
  });
  after(async function () {
    await n?.stop(); // its namespace goes, and with it every bridge and rule a failed test left
  });

  it("lists the pre-defined networks as Docker does, and refuses to remove them", async function () {
    const ls = await n.cli("network", "ls", "--format", "{{.Name}} {{.Driver}} {{.Scope}}");
    expect(ls.trim().split("\n").sort()).to.deep.equal(["bridge bridge local", "host host local", "none null local"]);
    expect(await fails("network", "rm", "bridge")).to.include("bridge is a pre-defined network and cannot be removed");
    expect(await fails("network", "rm", "host")).to.include("host is a pre-defined network and cannot be removed");
    expect(await fails("network", "rm", "nosuchnet")).to.include("network nosuchnet not found");
    // they are no user-defined networks: no fixed address there, as on the default one
    expect(await fails("create", "--network", "none", "--ip", "10.1.2.3", "busybox")).to.include("user specified IP address is supported on user defined networks only");
  });

  it("makes a network from the request: subnet, gateway, range, labels, options; its bridge and rules; and removes them", async function () {
    const id = (await n.cli("network", "create", "--subnet", "10.131.0.0/24", "--gateway", "10.131.0.254", "--ip-range", "10.131.0.128/25", "--label", "team=net", "-o", "com.engine.network.bridge.name=brtest0", "shaped")).trim();
    expect(id).to.match(/^[0-9a-f]{64}$/);
    const [doc] = await inspect("network", "shaped");
    expect(doc).to.deep.include({ Name: "shaped", Id: id, Driver: "bridge", Scope: "local", Internal: false, EnableIPv6: false });
    expect(doc.IPAM.Config).to.deep.equal([{ Subnet: "10.131.0.0/24", IPRange: "10.131.0.128/25", Gateway: "10.131.0.254" }]);
    expect(doc.Labels).to.deep.equal({ team: "net" });
    // --default-network-opt fills what the request leaves out
    expect(doc.Options).to.deep.equal({ "com.engine.network.bridge.name": "brtest0", "com.engine.network.driver.mtu": "1400" });
    const br = link("brtest0");
    expect(br.mtu).to.equal(1400);
    expect(br.addr_info.find((a) => a.family === "inet")).to.deep.include({ local: "10.131.0.254", prefixlen: 24 });
    expect(link("engine0").mtu).to.equal(1500); // the default network is not a new network
    expect(n.ns.run("iptables-save", "-t", "nat")).to.match(/-s 10\.131\.0\.0\/24 ! -o brtest0 -j MASQUERADE/);

    const out = await n.cli("run", "--rm", "--network", "shaped", "busybox", "sh", "-c", "ip -o -4 addr show eth0; ip route");
    expect(out).to.match(/inet 10\.131\.0\.(12[89]|1[3-9]\d|2[0-4]\d|25[0-3])\/24/); // from the range
    expect(out).to.include("default via 10.131.0.254 dev eth0");

    await n.cli("network", "rm", "shaped");
    expect(n.ns.status("ip", "link", "show", "brtest0")).to.not.equal(0);
    expect(n.ns.run("iptables-save")).to.not.include("10.131.0.0/24");
  });

  it("reads the bridge options under Docker's names too (compose files send them), a request's over the daemon's defaults", async function () {
    await n.cli("network", "create", "--subnet", "10.146.0.0/24", "-o", "com.docker.network.bridge.name=brdock0", "-o", "com.docker.network.driver.mtu=1300", "-o", "com.docker.network.bridge.enable_icc=false", "docknames");
    try {
      expect(link("brdock0").mtu).to.equal(1300);
      // a MAC of Docker's shape, set when the bridge is made
      expect(link("brdock0").address).to.match(/^02:42(:[0-9a-f]{2}){4}$/);
      const [doc] = await inspect("network", "docknames");
      // shown as given; the daemon's default MTU (its --default-network-opt) is not added beside the request's
      expect(doc.Options).to.deep.equal({ "com.docker.network.bridge.name": "brdock0", "com.docker.network.driver.mtu": "1300", "com.docker.network.bridge.enable_icc": "false" });
      expect(n.ns.run("iptables-save", "-t", "filter")).to.include("-i brdock0 -o brdock0 -j DROP");
      expect(await fails("network", "create", "-o", "com.docker.network.driver.mtu=10", "badmtu")).to.include("com.docker.network.driver.mtu");
    } finally {
      await docker(n.host, ["network", "rm", "docknames"]);
    }
  });

  it("answers Docker's errors: a taken name, an overlapping or malformed subnet, an unknown driver; keeps an option the driver does not know", async function () {
    await n.cli("network", "create", "--subnet", "10.132.0.0/16", "taken");
    expect(await fails("network", "create", "taken")).to.include("network with name taken already exists");
    expect(await fails("network", "create", "--subnet", "10.132.5.0/24", "overlap")).to.include("Pool overlaps with other one on this address space");
    expect(await fails("network", "create", "--subnet", "10.133.5.0/16", "crooked")).to.include("10.133.5.0/16");
    expect(await fails("network", "create", "--subnet", "10.134.0.0/24", "--gateway", "10.135.0.1", "astray")).to.include("10.135.0.1");
    expect(await fails("network", "create", "-d", "nosuchdriver", "nodriver")).to.include('plugin "nosuchdriver" not found');
    // an option the bridge driver does not know is kept and not used: Docker's reads only the ones it knows
    await n.cli("network", "create", "-o", "com.engine.network.bridge.nosuch=1", "unknownopt");
    expect((await inspect("network", "unknownopt"))[0].Options).to.include({ "com.engine.network.bridge.nosuch": "1" });
    await n.cli("network", "rm", "unknownopt");
    expect(await fails("network", "create", "-o", "com.engine.network.bridge.external=true", "badopt")).to.include("default network only");
    const names = (await n.cli("network", "ls", "--format", "{{.Name}}")).split("\n");
    expect(names).to.include("taken");
    for (const refused of ["overlap", "crooked", "astray", "nodriver", "badopt"]) expect(names).to.not.include(refused);
    await n.cli("network", "rm", "taken");
  });

  it("takes the names Docker's daemon takes (spaces, colons, a leading _, any letter) and refuses blank and predefined ones with its messages", async function () {
    const names = ["two words", "_lead.dot", "colon:ed", "é-net", "  padded  "];
    for (const [i, name] of names.entries()) await n.cli("network", "create", "--subnet", `10.160.${i}.0/24`, name);
    const listed = (await n.cli("network", "ls", "--filter", "type=custom", "--format", "{{.Name}}")).split("\n").filter(Boolean);
    expect(listed.sort()).to.deep.equal([...names].sort());
    expect((await inspect("network", "two words"))[0].Name).to.equal("two words");
    expect(await n.cli("run", "--rm", "--network", "two words", "busybox", "sh", "-c", "ip -o -4 addr show eth0")).to.match(/inet 10\.160\.0\.\d+\/24/);
    await n.cli("network", "rm", "two words");
    // the rest by ID: the Docker CLI trims its arguments (so does it against Docker's daemon)
    for (const id of (await n.cli("network", "ls", "-q", "--filter", "type=custom")).split("\n").filter(Boolean)) await n.cli("network", "rm", id);
    // dockerd 20.10 answers these with 500 (newer ones, with 400); the message is the same
    // the CLI trims what it sends and the message it prints (so does it against Docker's daemon)
    expect(await fails("network", "create", " ")).to.equal("Error response from daemon: invalid name:\n");
    for (const Name of ["", " \t "]) {
      const refused = await new Docker({ socketPath: n.d.socket }).createNetwork({ Name }).catch((e: { statusCode: number; json: unknown }) => e);
      expect(refused as unknown, JSON.stringify(Name)).to.deep.include({ statusCode: 400, json: { message: `invalid name: ${Name}` } });
    }
    // a predefined name is refused before the names taken are looked at (403, a trailing space)
    for (const name of ["bridge", "host", "none", "default"]) {
      expect(await fails("network", "create", name)).to.equal(`Error response from daemon: operation is not permitted on predefined ${name} network\n`);
    }
    const hostRefused = await new Docker({ socketPath: n.d.socket }).createNetwork({ Name: "host" }).catch((e: { statusCode: number; json: unknown }) => e);
    expect(hostRefused as unknown).to.deep.include({ statusCode: 403, json: { message: "operation is not permitted on predefined host network " } });
    expect(await n.cli("network", "ls", "--filter", "type=custom", "-q")).to.equal("");
  });

  it("lets containers of a network find each other by name and alias, through a name server on the bridge", async function () {
    await n.cli("network", "create", "--subnet", "10.136.0.0/24", "talk");
    await n.cli("run", "-d", "--name", "server1", "--network", "talk", "--network-alias", "db", "busybox", "sleep", "120");
    const [server] = await inspect("container", "server1");
    const ep = server.NetworkSettings.Networks.talk;
    expect(ep.Aliases).to.deep.equal(["db"]);
    expect(ep.DNSNames).to.deep.equal(["server1", "db", server.Id.slice(0, 12)]);
    const out = await n.cli("run", "--rm", "--network", "talk", "busybox", "sh", "-c", "cat /etc/resolv.conf; ping -c 1 -W 2 server1; ping -c 1 -W 2 db; nslookup -type=a " + server.Id.slice(0, 12));
    // 127.0.0.11, as Docker's containers are given, redirected in the container's namespace to
    // the name server on the bridge; the loopback addresses that route_localnet would let in
    // from another interface are dropped there
    expect(out).to.match(/^nameserver 127\.0\.0\.11$/m);
    const rules = execFileSync("nsenter", [`--net=/proc/${server.State.Pid}/ns/net`, "iptables-save"], { encoding: "utf8" });
    expect(rules).to.include("-A ENGINE-DNS -d 127.0.0.11/32 -p udp -m udp --dport 53 -j DNAT --to-destination 10.136.0.1:53");
    expect(rules).to.include("-A ENGINE-LOOPBACK-IN -d 127.0.0.0/8 ! -i lo -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP");
    expect(out).to.include(`PING server1 (${ep.IPAddress})`).and.include(`PING db (${ep.IPAddress})`);
    expect(out.match(/1 packets received/g)).to.have.length(2);
    expect(out).to.include(`Address: ${ep.IPAddress}`);
    expect(n.ns.run("ss", "-lnu")).to.include("10.136.0.1:53");
    // the network's inspect lists its running container
    const [net] = await inspect("network", "talk");
    expect(net.Containers[server.Id]).to.deep.include({ Name: "server1", IPv4Address: `${ep.IPAddress}/24`, EndpointID: ep.EndpointID });
    expect(await fails("network", "rm", "talk")).to.include("has active endpoints");
    // the default network has no name server, as in Docker
    const plain = await n.cli("run", "--rm", "busybox", "cat", "/etc/resolv.conf");
    expect(plain).to.match(/^nameserver 127\.0\.0\.1$/m);
    await n.cli("rm", "-f", "server1");
    await n.cli("network", "rm", "talk");
    expect(n.ns.run("ss", "-lnu")).to.not.include("10.136.0.1:53");
  });

  it("connects a running container to another network and disconnects it again", async function () {
    await n.cli("network", "create", "--subnet", "10.137.0.0/24", "front");
    await n.cli("network", "create", "--subnet", "10.138.0.0/24", "back");
    await n.cli("run", "-d", "--name", "db2", "--network", "back", "busybox", "sleep", "120");
    await n.cli("run", "-d", "--name", "app2", "--network", "front", "busybox", "sleep", "120");
    const sandbox = (await n.cli("inspect", "-f", "{{.NetworkSettings.SandboxKey}}", "app2")).trim();
    const inApp = (...cmd: string[]) => n.ns.run("nsenter", `--net=${sandbox}`, "--", ...cmd);

    await n.cli("network", "connect", "--alias", "api", "--ip", "10.138.0.50", "back", "app2");
    expect(inApp("ip", "-o", "-4", "addr", "show", "eth1")).to.include("inet 10.138.0.50/24");
    // "back" sorts before "front": it gives the default route now, as Docker's order of endpoints says
    expect(inApp("ip", "route")).to.match(/^default via 10\.138\.0\.1 dev eth1/m);
    const [app] = await inspect("container", "app2");
    expect(Object.keys(app.NetworkSettings.Networks)).to.deep.equal(["front", "back"]);
    expect(app.NetworkSettings.Networks.back).to.deep.include({ IPAddress: "10.138.0.50", Aliases: ["api"], IPAMConfig: { IPv4Address: "10.138.0.50" } });
    // its name server (front's) answers names of back too, and back's containers find it by its alias
    const db = (await inspect("container", "db2"))[0].NetworkSettings.Networks.back.IPAddress as string;
    expect(inApp("busybox", "nslookup", "-type=a", "db2", "10.137.0.1")).to.include(`Address: ${db}`);
    expect(inApp("busybox", "nslookup", "-type=a", "db2", "127.0.0.11")).to.include(`Address: ${db}`);
    // a container of the default network connected to one with a name server is given 127.0.0.11 then
    await n.cli("run", "-d", "--name", "plain2", "busybox", "sleep", "120");
    await n.cli("network", "connect", "back", "plain2");
    expect(await n.cli("exec", "plain2", "cat", "/etc/resolv.conf")).to.match(/^nameserver 127\.0\.0\.11$/m);
    expect(await n.cli("exec", "plain2", "nslookup", "-type=a", "db2")).to.include(`Address: ${db}`);
    await n.cli("rm", "-f", "plain2");
    const fromBack = await n.cli("run", "--rm", "--network", "back", "busybox", "ping", "-c", "1", "-W", "2", "api");
    expect(fromBack).to.include("PING api (10.138.0.50)").and.include("1 packets received");
    expect(await fails("network", "connect", "back", "app2")).to.include("already exists in network back");

    await n.cli("network", "disconnect", "back", "app2");
    expect(inApp("ip", "-o", "link")).to.not.include("eth1");
    expect(inApp("ip", "route")).to.match(/^default via 10\.137\.0\.1 dev eth0/m);
    expect(Object.keys((await inspect("container", "app2"))[0].NetworkSettings.Networks)).to.deep.equal(["front"]);
    expect((await inspect("network", "back"))[0].Containers).to.have.all.keys((await inspect("container", "db2"))[0].Id);
    expect(await fails("network", "disconnect", "back", "app2")).to.include("is not connected to network back");

    // a stopped container's networks are recorded and joined at its start
    await n.cli("create", "--name", "later", "--network", "front", "busybox", "ip", "-o", "-4", "addr");
    await n.cli("network", "connect", "back", "later");
    const addrs = await n.cli("start", "-a", "later");
    expect(addrs).to.match(/eth0\s+inet 10\.137\.0\.\d+\/24/).and.match(/eth1\s+inet 10\.138\.0\.\d+\/24/);
    await n.cli("rm", "-f", "db2", "app2", "later");
    await n.cli("network", "rm", "front", "back");
  });

  it("refuses what Docker refuses: an address or alias on the default network, a network beside host", async function () {
    expect(await fails("run", "--rm", "--ip", "172.17.0.50", "busybox", "true")).to.include("user specified IP address is supported on user defined networks only");
    await n.cli("network", "create", "--subnet", "10.139.0.0/24", "side");
    expect(await fails("run", "--rm", "--network", "side", "--ip", "10.140.0.5", "busybox", "true")).to.include("no configured subnet or ip-range contain the IP address 10.140.0.5");
    await n.cli("run", "-d", "--name", "hosty", "--network", "host", "busybox", "sleep", "60");
    expect(await fails("network", "connect", "side", "hosty")).to.include("cannot be connected to any other network");
    await n.cli("rm", "-f", "hosty");
    await n.cli("network", "rm", "side");
  });

  it("fails at start, not at create, for a network that does not exist (so the CLI does not pull)", async function () {
    const r = await docker(n.host, ["run", "--rm", "--network", "nowhere", "busybox", "true"]);
    expect(r.code).to.equal(125);
    expect(r.stderr).to.include("network nowhere not found").and.not.include("Unable to find image");
    expect(n.d.output()).to.not.include("Pulling");
    // made afterwards, the network is found by name at the next start
    await n.cli("create", "--name", "waiting", "--network", "nowhere", "busybox", "true");
    await n.cli("network", "create", "nowhere");
    await n.cli("start", "-a", "waiting");
    expect((await n.cli("inspect", "-f", "{{.State.ExitCode}}", "waiting")).trim()).to.equal("0");
    await n.cli("rm", "waiting");
    await n.cli("network", "rm", "nowhere");
  });

  it("gives an internal network no way out: no default route, no masquerading", async function () {
    await n.cli("network", "create", "--internal", "--subnet", "10.141.0.0/24", "inside");
    expect((await inspect("network", "inside"))[0].Internal).to.equal(true);
    const routes = await n.cli("run", "--rm", "--network", "inside", "busybox", "ip", "route");
    expect(routes).to.include("10.141.0.0/24 dev eth0");
    expect(routes).to.not.include("default");
    expect(n.ns.run("iptables-save", "-t", "nat")).to.not.include("10.141.0.0/24");
    await n.cli("network", "rm", "inside");
  });

  it("gives the default route through the network of the highest gateway priority, the first of equal ones (API 1.48)", async function () {
    await n.cli("network", "create", "--subnet", "10.142.0.0/24", "gw-a");
    await n.cli("network", "create", "--subnet", "10.143.0.0/24", "gw-b");
    try {
      const route = (extra: string[]) => n.cli("run", "--rm", ...extra, "busybox", "ip", "route", "show", "default");
      expect(await route(["--network", "name=gw-a", "--network", "name=gw-b"])).to.match(/^default via 10\.142\.0\.1 dev eth0/);
      expect(await route(["--network", "name=gw-a", "--network", "name=gw-b,gw-priority=5"])).to.match(/^default via 10\.143\.0\.1 dev eth0/);
      expect(await route(["--network", "name=gw-a,gw-priority=-1", "--network", "name=gw-b"])).to.match(/^default via 10\.143\.0\.1 dev eth0/);
      await n.cli("create", "--name", "gw-c", "--network", "name=gw-a", "--network", "name=gw-b,gw-priority=5", "busybox");
      const [c] = await inspect("container", "gw-c");
      expect([c.NetworkSettings.Networks["gw-a"].GwPriority, c.NetworkSettings.Networks["gw-b"].GwPriority]).to.deep.equal([0, 5]);
      await n.cli("rm", "gw-c");
    } finally {
      await docker(n.host, ["network", "rm", "gw-a", "gw-b"]);
    }
  });

  it("publishes on --ip by default, and on a network's host_binding_ipv4 for its containers", async function () {
    await n.cli("run", "-d", "--name", "bound1", "-p", "18101:80", "busybox", "httpd", "-f", "-p", "80", "-h", "/etc");
    await n.cli("network", "create", "--subnet", "10.145.0.0/24", "-o", "com.engine.network.bridge.host_binding_ipv4=10.145.0.1", "bound");
    await n.cli("run", "-d", "--name", "bound2", "--network", "bound", "-p", "18102:80", "busybox", "httpd", "-f", "-p", "80", "-h", "/etc");
    const portsOf = async (name: string) => JSON.parse(await n.cli("inspect", "-f", "{{json .NetworkSettings.Ports}}", name));
    expect(await portsOf("bound1")).to.deep.equal({ "80/tcp": [{ HostIp: "127.0.0.1", HostPort: "18101" }] });
    expect(await portsOf("bound2")).to.deep.equal({ "80/tcp": [{ HostIp: "10.145.0.1", HostPort: "18102" }] });
    expect(n.ns.run("ss", "-Hltn", "sport = :18101")).to.include("127.0.0.1:18101");
    // a range takes its first free port; UDP gets a UDP proxy and a UDP rule
    await n.cli("run", "-d", "--name", "bound3", "-p", "18101-18103:81", "-p", "18104:53/udp", "busybox", "sleep", "60");
    expect(await portsOf("bound3")).to.deep.equal({ "81/tcp": [{ HostIp: "127.0.0.1", HostPort: "18102" }], "53/udp": [{ HostIp: "127.0.0.1", HostPort: "18104" }] });
    expect(n.ns.run("ss", "-Hlun", "sport = :18104")).to.include("127.0.0.1:18104");
    expect(n.ns.run("iptables-save", "-t", "nat")).to.match(/-d 127\.0\.0\.1\/32 ! -i engine0 -p udp -m udp --dport 18104 -j DNAT --to-destination [\d.]+:53/);
    await n.cli("rm", "-f", "bound3");
    expect(n.ns.run("ss", "-Hltn", "sport = :18102")).to.include("10.145.0.1:18102");
    await n.cli("rm", "-f", "bound1", "bound2");
    await n.cli("network", "rm", "bound");
  });

  it("prunes the networks no container uses, by label and age", async function () {
    await n.cli("network", "create", "--label", "keep=yes", "--subnet", "10.142.0.0/24", "kept");
    await n.cli("network", "create", "--subnet", "10.143.0.0/24", "idle");
    await n.cli("network", "create", "--subnet", "10.144.0.0/24", "busy");
    await n.cli("run", "-d", "--name", "busybody", "--network", "busy", "busybox", "sleep", "60");
    const out = await n.cli("network", "prune", "-f", "--filter", "label!=keep=yes");
    expect(out).to.include("idle").and.not.include("kept").and.not.include("busy");
    const left = (await n.cli("network", "ls", "--filter", "type=custom", "--format", "{{.Name}}")).trim().split("\n").sort();
    expect(left).to.deep.equal(["busy", "kept"]);
    expect((await n.cli("network", "ls", "--filter", "dangling=true", "--filter", "type=custom", "--format", "{{.Name}}")).trim()).to.equal("kept");
    await n.cli("rm", "-f", "busybody");
    await n.cli("network", "prune", "-f");
    expect((await n.cli("network", "ls", "--filter", "type=custom", "-q")).trim()).to.equal("");
  });

  it("works the same through dockerode and the Docker SDK for Python", async function () {
    const api = new Docker({ socketPath: n.d.socket });
    const made = await api.createNetwork({ Name: "nodenet", IPAM: { Config: [{ Subnet: "10.150.0.0/24" }] }, Labels: { by: "dockerode" } });
    const doc = await made.inspect();
    expect(doc).to.deep.include({ Name: "nodenet", Driver: "bridge" });
    expect(doc.IPAM?.Config).to.deep.equal([{ Subnet: "10.150.0.0/24", Gateway: "10.150.0.1" }]);
    expect((await api.listNetworks({ filters: { label: ["by=dockerode"] } })).map((x) => x.Name)).to.deep.equal(["nodenet"]);
    await made.remove();
    expect(await api.getNetwork("nodenet").inspect().then(() => 200, (e: { statusCode: number }) => e.statusCode)).to.equal(404);

    if ((await runCommand("python3", ["-c", "import docker"], { timeoutMs: 20_000 })).code !== 0) this.skip(); // python3-docker not installed
    const r = await runCommand("python3", [join(ROOT, "test/fixtures/python-docker-networks.py"), n.d.socket], { timeoutMs: 60_000 });
    expect(r.code, `${r.stderr}\n${r.stdout}`).to.equal(0);
    expect(JSON.parse(r.stdout.trim().split("\n").pop()!)).to.deep.equal({
      name: "pynet",
      listed: ["pynet"],
      networks: ["pynet", "pyother"],
      other: { ip: "10.152.0.9", aliases: ["pybox"] },
      containers_in_pynet: true,
      after_disconnect: ["pynet"],
      pruned: ["pynet"],
    });
  });
});
