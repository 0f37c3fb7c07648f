/**
 * Each option of the default bridge (issue 7, items 1, 2, 3 and 5) with the real Docker CLI
 * against `bin/engined`, every daemon in a network namespace the test made, reading the real
 * state: `ip -j addr`/`ip route`/`ip link`, `iptables-save`, `sysctl`, `ss`, the files inside a
 * container and curl answers through published ports. Options that do not interfere share a
 * daemon, to keep the file fast. Coverage that test/network-bridge.test.ts has already (the
 * default bridge, `-p 127.0.0.1:18080:80`, `--network none/host`, tagged chains,
 * `--iptables=false`, `--icc=false`) is not repeated here.
 *
 * Traffic goes only to addresses made in these namespaces (containers, bridges, a veth pair
 * the test adds). The kernel here has no `dummy` link type, so "an interface with an address"
 * is one end of a veth pair whose both ends stay in the daemon's namespace.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { readdirSync, readFileSync } from "node:fs";
import { BlockList } from "node:net";
import { join } from "node:path";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { netnsRunner } from "../core/net/commands.js";
import { Firewall } from "../plugins/network-bridge/firewall.js";
import { plugVeth } from "../plugins/network-bridge/links.js";
import { docker } from "./helpers/docker-cli.js";
import { ENGINED, daemonArgs, makeTempDir, runCommand } from "./helpers/engined.js";
import { eventually, makeNetns, startNetDaemon, type NetDaemon, type Netns } from "./helpers/net-daemon.js";

interface AddrInfo {
  family: string;
  local: string;
  prefixlen: number;
  scope?: string;
}
interface Link {
  ifname: string;
  mtu: number;
  master?: string;
  addr_info?: AddrInfo[];
}

/** `ip -j addr show dev NAME` in the namespace: the link, or undefined when there is none. */
function link(ns: Netns, name: string): Link | undefined {
  if (ns.status("ip", "link", "show", "dev", name) !== 0) return undefined;
  return (JSON.parse(ns.run("ip", "-j", "addr", "show", "dev", name)) as Link[])[0];
}

/** The global addresses of a link of one family, CIDR form. */
function addresses(l: Link | undefined, family: "inet" | "inet6"): string[] {
  return (l?.addr_info ?? []).filter((a) => a.family === family && a.scope !== "link").map((a) => `${a.local}/${a.prefixlen}`);
}

/** Whether `address` is inside `cidr` (node's own parser: independent of the daemon's). */
function inside(cidr: string, address: string): boolean {
  const [base, prefix] = cidr.split("/");
  const family = base.includes(":") ? "ipv6" : "ipv4";
  const list = new BlockList();
  list.addSubnet(base, Number(prefix), family);
  return list.check(address, family);
}

/** The links plugged into a bridge (the host ends of the containers' veth pairs). */
function ports(ns: Netns, bridge: string): Link[] {
  return JSON.parse(ns.run("ip", "-j", "link", "show", "master", bridge)) as Link[];
}

/** An interface with an address in the daemon's namespace: one end of a veth pair, both ends up. */
function addVethAddress(ns: Netns, name: string, cidr: string): void {
  ns.run("ip", "link", "add", name, "type", "veth", "peer", "name", `${name}p`);
  ns.run("ip", "addr", "add", cidr, "dev", name);
  ns.run("ip", "link", "set", name, "up");
  ns.run("ip", "link", "set", `${name}p`, "up");
}

/** An operator's bridge, made by the test before the daemon starts. */
function addBridge(ns: Netns, name: string, cidr: string): void {
  ns.run("ip", "link", "add", name, "type", "bridge");
  ns.run("ip", "addr", "add", cidr, "dev", name);
  ns.run("ip", "link", "set", name, "up");
}

/** curl from the daemon's namespace: the body, or null when nothing answered in 2 seconds. */
function curl(ns: Netns, url: string): string | null {
  try {
    return ns.run("curl", "-sf", "-m", "2", url);
  } catch {
    return null;
  }
}

/** Whether anything listens on TCP `port` in the namespace (a proxy, in-process or docker-proxy). */
function listening(ns: Netns, port: number): boolean {
  return ns.run("ss", "-Hltn", `sport = :${port}`).trim() !== "";
}

/** A detached httpd serving the container's /etc (so /hostname answers with its short id). */
async function web(n: NetDaemon, name: string, ...publish: string[]): Promise<{ id: string; ip: string }> {
  const id = (await n.cli("run", "-d", "--name", name, ...publish, "busybox", "httpd", "-f", "-p", "80", "-h", "/etc")).trim();
  const ip = JSON.parse(await n.cli("inspect", id))[0].NetworkSettings.IPAddress as string;
  return { id, ip };
}

/**
 * A detached container that prints what `script` shows, then stays running (the engine has no
 * `docker exec`): resolves with that output, read from its log once the marker is there.
 */
async function running(n: NetDaemon, name: string, script: string, ...runArgs: string[]): Promise<string> {
  await n.cli("run", "-d", "--name", name, ...runArgs, "busybox", "sh", "-c", `${script}; echo =done=; exec sleep 60`);
  let out = "";
  await eventually(`the output of ${name}`, async () => (out = await n.cli("logs", name)).includes("=done="));
  return out.slice(0, out.indexOf("=done="));
}

describe("network options: --bip, --fixed-cidr, --default-gateway, --mtu, --ip-masq=false, --dns*, --host-gateway-ip, --ipv6 with --bip6", function () {
  this.timeout(120_000);
  let n: NetDaemon;

  before(async function () {
    n = await startNetDaemon([
      "--bip", "10.123.0.1/24",
      "--fixed-cidr", "10.123.0.128/25",
      "--default-gateway", "10.123.0.254",
      "--mtu", "1400",
      "--ip-masq=false",
      "--dns", "10.125.0.53", "--dns-search", "example.test", "--dns-opt", "ndots:2",
      "--host-gateway-ip", "10.123.0.77",
      "--ipv6", "--bip6", "fd00:13::1/64", "--fixed-cidr-v6", "fd00:13::/80", "--default-gateway-v6", "fd00:13::fe",
      "--ip6tables=false",
    ]);
  });
  after(async function () {
    await n?.stop();
  });

  it("gives engine0 the --bip address and --mtu, and a container an address in --fixed-cidr, the --default-gateway route and the MTU", async function () {
    const bridge = link(n.ns, "engine0")!;
    expect(addresses(bridge, "inet")).to.deep.equal(["10.123.0.1/24"]);
    expect(bridge.mtu).to.equal(1400);

    const out = await running(n, "addr", "ip -o -4 addr show eth0; ip route; cat /sys/class/net/eth0/mtu");
    const m = /inet (10\.123\.0\.\d+)\/24 /.exec(out);
    expect(m, out).to.not.equal(null);
    expect(inside("10.123.0.128/25", m![1]), m![1]).to.equal(true);
    expect(m![1]).to.not.equal("10.123.0.254"); // the gateway's address is kept out of the pool
    expect(out).to.include("default via 10.123.0.254 dev eth0");
    expect(out.trim().split("\n").at(-1)).to.equal("1400");
    // the host end of its veth has the MTU too
    expect(ports(n.ns, "engine0").map((l) => l.mtu)).to.deep.equal([1400]);
    const doc = JSON.parse(await n.cli("inspect", "addr"))[0];
    expect(doc.NetworkSettings.IPAddress).to.equal(m![1]);
    expect(doc.NetworkSettings.IPPrefixLen).to.equal(24);
    await n.cli("rm", "-f", "addr");
  });

  it("gives a container an IPv6 address in --fixed-cidr-v6 inside --bip6, with the --default-gateway-v6 route, and no ip6tables rule with --ip6tables=false", async function () {
    expect(addresses(link(n.ns, "engine0"), "inet6")).to.deep.equal(["fd00:13::1/64"]);
    const out = await n.cli("run", "--rm", "busybox", "sh", "-c", "ip -o -6 addr show eth0 scope global; ip -6 route");
    const m = /inet6 ([0-9a-f:]+)\/64 /.exec(out);
    expect(m, out).to.not.equal(null);
    expect(inside("fd00:13::/80", m![1]), m![1]).to.equal(true);
    expect(out).to.include("default via fd00:13::fe dev eth0");
    expect(n.ns.run("ip6tables-save")).to.not.include("ENGINE");
    expect(n.ns.run("iptables-save")).to.include("ENGINE");
  });

  it("publishes a port without a host address on IPv6 too when the container has IPv6, as Docker does", async function () {
    await web(n, "dual", "-p", "18098:80");
    const doc = JSON.parse(await n.cli("inspect", "dual"))[0];
    expect(doc.NetworkSettings.Ports["80/tcp"]).to.deep.equal([{ HostIp: "0.0.0.0", HostPort: "18098" }, { HostIp: "::", HostPort: "18098" }]);
    expect(n.ns.run("ss", "-Hltn", "sport = :18098")).to.include("[::]:18098");
    await eventually("the IPv6 binding to answer", () => curl(n.ns, "http://[fd00:13::1]:18098/hostname") === doc.Id.slice(0, 12) + "\n");
    await n.cli("rm", "-f", "dual");
    expect(listening(n.ns, 18098)).to.equal(false);
  });

  it("adds no MASQUERADE rule for the subnet with --ip-masq=false", function () {
    const nat = n.ns.run("iptables-save", "-t", "nat");
    expect(nat).to.match(/:ENGINE-POST-[a-z0-9]+ /);
    expect(nat).to.not.include("10.123.0.0/24");
    expect(nat).to.not.include("MASQUERADE");
  });

  it("turns net.ipv4.ip_forward on and, since it was off, sets the FORWARD policy to DROP (--ip-forward, the default)", function () {
    expect(n.ns.run("sysctl", "-n", "net.ipv4.ip_forward").trim()).to.equal("1");
    expect(n.ns.run("iptables-save", "-t", "filter")).to.match(/^:FORWARD DROP /m);
  });

  it("turns IPv6 forwarding on for the IPv6 bridge with --ip6tables=false, leaving the ip6tables FORWARD policy alone", function () {
    expect(n.ns.run("sysctl", "-n", "net.ipv6.conf.all.forwarding").trim()).to.equal("1");
    expect(n.ns.run("ip6tables-save", "-t", "filter")).to.match(/^:FORWARD ACCEPT /m);
  });

  it("writes --dns, --dns-search and --dns-opt into resolv.conf and --host-gateway-ip for host-gateway into /etc/hosts", async function () {
    const out = await n.cli("run", "--rm", "--add-host", "gw:host-gateway", "busybox", "sh", "-c", "cat /etc/resolv.conf; echo ---; cat /etc/hosts");
    const [resolv, hosts] = out.split("---\n");
    const lines = resolv.split("\n").filter((l) => l && !l.startsWith("#"));
    expect(lines).to.deep.equal(["nameserver 10.125.0.53", "search example.test", "options ndots:2"]);
    expect(hosts).to.match(/^10\.123\.0\.77\s+gw$/m);
  });

  it("publishes every EXPOSEd port of an image with -P on a port it chooses, shown by docker port and inspect, answering through the proxy", async function () {
    const dir = makeTempDir();
    await n.cli("import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", "--change", "EXPOSE 80", writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox-web");
    const id = (await n.cli("run", "-d", "-P", "busybox-web", "httpd", "-f", "-p", "80", "-h", "/etc")).trim();
    const doc = JSON.parse(await n.cli("inspect", id))[0];
    expect(Object.keys(doc.Config.ExposedPorts)).to.deep.equal(["80/tcp"]);
    const binding = doc.NetworkSettings.Ports["80/tcp"] as { HostIp: string; HostPort: string }[];
    expect(binding.length).to.be.greaterThan(0);
    const port = Number(binding[0].HostPort);
    expect(port).to.be.within(1024, 65535);
    expect((await n.cli("port", id, "80/tcp")).trim().split("\n")).to.include(`0.0.0.0:${port}`);
    await eventually("the chosen port to answer", () => curl(n.ns, `http://127.0.0.1:${port}/hostname`) !== null);
    expect(curl(n.ns, `http://127.0.0.1:${port}/hostname`)!.trim()).to.equal(id.slice(0, 12));
    expect(listening(n.ns, port)).to.equal(true); // the userland proxy (the default)
    await n.cli("rm", "-f", id);
    expect(listening(n.ns, port)).to.equal(false);
  });
});

describe("network options: --ip-forward-no-drop, --default-address-pool, --userland-proxy=false, the host's resolvers, container:<id>, --ipv6 with --fixed-cidr-v6", function () {
  this.timeout(120_000);
  let n: NetDaemon;
  // An address of the daemon's namespace that is not loopback: its route fills the first pool
  // (a single /24); a second address takes the first /24 of the second pool.
  const OWN = "10.124.0.5";

  before(async function () {
    n = await startNetDaemon(
      [
        "--ip-forward-no-drop",
        "--default-address-pool", "base=10.124.0.0/24,size=24", "--default-address-pool", "base=10.124.8.0/21,size=24",
        "--userland-proxy=false",
        "--ipv6", "--fixed-cidr-v6", "fd00:12::/64",
      ],
      {
        prepare: (ns) => {
          addVethAddress(ns, "own0", `${OWN}/24`);
          ns.run("ip", "addr", "add", "10.124.8.9/24", "dev", "own0");
        },
      },
    );
  });
  after(async function () {
    await n?.stop();
  });

  it("takes engine0's subnet from the pools, skipping a pool and a /24 that routes of the namespace are in, and masquerades it (--ip-masq, the default)", function () {
    expect(addresses(link(n.ns, "engine0"), "inet")).to.deep.equal(["10.124.9.1/24"]);
    expect(n.ns.run("iptables-save", "-t", "nat")).to.match(/-A ENGINE-POST-[a-z0-9]+ -s 10\.124\.9\.0\/24 ! -o engine0 -j MASQUERADE/);
    // without --allow-direct-routing, packets from elsewhere addressed to a container are dropped (the bridge's own address is not)
    const raw = n.ns.run("iptables-save", "-t", "raw");
    expect(raw).to.match(/-A ENGINE-RAW-[a-z0-9]+ -d 10\.124\.9\.1\/32 -j RETURN/);
    expect(raw).to.match(/-A ENGINE-RAW-[a-z0-9]+ -d 10\.124\.9\.0\/24 ! -i engine0 -j DROP/);
  });

  it("turns net.ipv4.ip_forward on and leaves the FORWARD policy ACCEPT with --ip-forward-no-drop", function () {
    expect(n.ns.run("sysctl", "-n", "net.ipv4.ip_forward").trim()).to.equal("1");
    expect(n.ns.run("sysctl", "-n", "net.ipv6.conf.all.forwarding").trim()).to.equal("1");
    expect(n.ns.run("iptables-save", "-t", "filter")).to.match(/^:FORWARD ACCEPT /m);
    expect(n.ns.run("ip6tables-save", "-t", "filter")).to.match(/^:FORWARD ACCEPT /m);
  });

  it("gives a container an IPv6 address in --fixed-cidr-v6 and its route, with ip6tables rules (--ip6tables, the default)", async function () {
    expect(addresses(link(n.ns, "engine0"), "inet6")).to.deep.equal(["fd00:12::1/64"]);
    const out = await n.cli("run", "--rm", "busybox", "sh", "-c", "ip -o -6 addr show eth0 scope global; ip -6 route");
    const m = /inet6 ([0-9a-f:]+)\/64 /.exec(out);
    expect(m, out).to.not.equal(null);
    expect(inside("fd00:12::/64", m![1]), m![1]).to.equal(true);
    expect(out).to.include("default via fd00:12::1 dev eth0");
    const rules = n.ns.run("ip6tables-save");
    expect(rules).to.match(/:ENGINE-FWD-[a-z0-9]+ /);
    expect(rules).to.match(/-s fd00:12::\/64 ! -o engine0 -j MASQUERADE/);
  });

  it("without --dns, writes the host's resolvers into resolv.conf with no loopback one", async function () {
    const resolv = await n.cli("run", "--rm", "busybox", "cat", "/etc/resolv.conf");
    const servers = [...resolv.matchAll(/^nameserver (\S+)$/gm)].map((m) => m[1]);
    expect(servers.length).to.be.greaterThan(0);
    expect(servers.filter((s) => s.startsWith("127.") || s === "::1")).to.deep.equal([]);
    // the host's own non-loopback IPv4 resolvers are kept as they are
    const host = [...readFileSync("/etc/resolv.conf", "utf8").matchAll(/^nameserver (\S+)/gm)].map((m) => m[1]).filter((s) => !s.startsWith("127.") && !s.includes(":"));
    for (const s of host) expect(servers).to.include(s);
  });

  it("publishes with --userland-proxy=false through DNAT only: no listener, answers on the namespace's own address and from another container", async function () {
    const { id } = await web(n, "np", "-p", "18081:80");
    expect(listening(n.ns, 18081)).to.equal(false);
    expect(n.ns.run("iptables-save", "-t", "nat")).to.match(/-A ENGINE-[a-z0-9]+ -p tcp -m tcp --dport 18081 -j DNAT --to-destination 10\.124\.9\.\d+:80/);
    await eventually("the port to answer on the namespace's own address", () => curl(n.ns, `http://${OWN}:18081/hostname`) !== null);
    expect(curl(n.ns, `http://${OWN}:18081/hostname`)!.trim()).to.equal(id.slice(0, 12));
    // Another container reaches it through the host's address (NAT back into the bridge, no
    // proxy to do it). The reply goes straight over the bridge, so it is un-NATed only because
    // bridged traffic passes iptables here (br_netfilter loaded: bridge-nf-call-iptables is 1 in
    // a new namespace); the daemon sets that key itself only for --icc=false, as Docker does.
    const fromPeer = await docker(n.host, ["run", "--rm", "busybox", "timeout", "5", "wget", "-q", "-O", "-", `http://${OWN}:18081/hostname`]);
    expect(fromPeer.code, fromPeer.stderr).to.equal(0);
    expect(fromPeer.stdout.trim()).to.equal(id.slice(0, 12));
    // and from the namespace's loopback: DNAT in OUTPUT, route_localnet on the bridge, 127/8 masqueraded
    expect(n.ns.run("sysctl", "-n", "net.ipv4.conf.engine0.route_localnet").trim()).to.equal("1");
    expect(curl(n.ns, "http://127.0.0.1:18081/hostname")?.trim()).to.equal(id.slice(0, 12));
    await n.cli("rm", "-f", "np");
    expect(curl(n.ns, `http://${OWN}:18081/hostname`)).to.equal(null);
    expect(n.ns.run("iptables-save", "-t", "nat")).to.not.include("--dport 18081");
  });

  it("publishes with --userland-proxy=false so that a container reaches its own port through the namespace's address (hairpin)", async function () {
    const out = await running(n, "self", `httpd -p 80 -h /etc; timeout 5 wget -q -O - http://${OWN}:18083/hostname || echo unanswered`, "-p", "18083:80");
    const id = JSON.parse(await n.cli("inspect", "self"))[0].Id as string;
    expect(out.trim()).to.equal(id.slice(0, 12));
    const [veth] = JSON.parse(n.ns.run("ip", "-j", "-d", "link", "show", "master", "engine0")) as { linkinfo?: { info_slave_data?: { hairpin?: boolean } } }[];
    expect(veth.linkinfo?.info_slave_data?.hairpin).to.equal(true);
    await n.cli("rm", "-f", "self");
  });

  it("--network container:<id> shares the other container's interfaces and address", async function () {
    const { id, ip } = await web(n, "owner");
    const mac = JSON.parse(await n.cli("inspect", id))[0].NetworkSettings.MacAddress as string;
    expect(mac).to.match(/^02:42:/);
    const veths = ports(n.ns, "engine0").length;
    const out = await running(n, "joiner", `ip -o -4 addr show eth0; cat /sys/class/net/eth0/address; wget -q -O - http://127.0.0.1:80/hostname`, "--network", `container:${id}`);
    expect(out).to.include(`inet ${ip}/24`);
    expect(out).to.include(mac);
    expect(out.trim().endsWith(id.slice(0, 12))).to.equal(true); // the owner's httpd, on the shared loopback
    expect(JSON.parse(await n.cli("inspect", "joiner"))[0].HostConfig.NetworkMode).to.equal(`container:${id}`);
    expect(ports(n.ns, "engine0").length).to.be.at.most(veths); // no veth of its own (an earlier container's may be going meanwhile)
    await n.cli("rm", "-f", "joiner", "owner");
  });
});

describe("network options: the pieces of the driver the options need (links.ts, firewall.ts)", function () {
  this.timeout(30_000);

  it("turns IPv6 forwarding on when asked with ip6tables rules off, and sets only the IPv4 FORWARD policy", async function () {
    const ns = makeNetns();
    try {
      const fw = new Firewall({ tag: "0pts00", runner: netnsRunner(ns.file), ipv4: true, ipv6: false });
      expect(await fw.setForwarding({ enable: true, noDrop: false, ipv6: true })).to.deep.equal({ enabled: true, policyDropped: true });
      expect(ns.run("sysctl", "-n", "net.ipv4.ip_forward").trim()).to.equal("1");
      expect(ns.run("sysctl", "-n", "net.ipv6.conf.all.forwarding").trim()).to.equal("1");
      expect(ns.run("iptables-save", "-t", "filter")).to.match(/^:FORWARD DROP /m);
      expect(ns.run("ip6tables-save", "-t", "filter")).to.match(/^:FORWARD ACCEPT /m);
    } finally {
      ns.remove();
    }
  });

  it("puts the bridge's port in hairpin mode when asked (what --userland-proxy=false needs) and adds the IPv6 default route", async function () {
    const host = makeNetns();
    const sandbox = makeNetns();
    try {
      addBridge(host, "hpbr0", "10.129.0.1/24");
      host.run("ip", "addr", "add", "fd00:29::1/64", "dev", "hpbr0");
      const veth = await plugVeth(netnsRunner(host.file), {
        bridge: "hpbr0", mtu: 1500, sandbox: sandbox.file, ifname: "eth0", mac: "02:42:0a:81:00:02",
        addresses: ["10.129.0.2/24", "fd00:29::2/64"], gateway4: "10.129.0.1", gateway6: "fd00:29::1", hairpin: true,
      });
      const [port] = JSON.parse(host.run("ip", "-j", "-d", "link", "show", "dev", veth)) as { master?: string; linkinfo?: { info_slave_data?: { hairpin?: boolean } } }[];
      expect(port.master).to.equal("hpbr0");
      expect(port.linkinfo?.info_slave_data?.hairpin).to.equal(true);
      expect(sandbox.run("ip", "route")).to.include("default via 10.129.0.1 dev eth0");
      expect(sandbox.run("ip", "-6", "route")).to.include("default via fd00:29::1 dev eth0");
      const plain = await plugVeth(netnsRunner(host.file), { bridge: "hpbr0", mtu: 1500, sandbox: sandbox.file, ifname: "eth1", mac: "02:42:0a:81:00:03", addresses: ["10.129.0.3/24"] });
      const [other] = JSON.parse(host.run("ip", "-j", "-d", "link", "show", "dev", plain)) as { linkinfo?: { info_slave_data?: { hairpin?: boolean } } }[];
      expect(other.linkinfo?.info_slave_data?.hairpin).to.equal(false);
    } finally {
      sandbox.remove();
      host.remove();
    }
  });
});

describe("network options: --bridge NAME (the operator's bridge) with --ip-forward=false, and --bridge=none", function () {
  this.timeout(120_000);

  it("attaches containers to the operator's bridge, makes no engine0, and leaves the bridge after it stops", async function () {
    const ns = makeNetns();
    try {
      addBridge(ns, "opbr0", "10.126.0.1/24");
      const n = await startNetDaemon(["--bridge", "opbr0", "--ip-forward=false", "--allow-direct-routing"], { netns: ns });
      try {
        expect(link(ns, "engine0")).to.equal(undefined);
        const out = await running(n, "on-op", "ip -o -4 addr show eth0; ip route; ping -c 1 -W 2 10.126.0.1");
        expect(out).to.match(/inet 10\.126\.0\.\d+\/24 /);
        expect(out).to.include("default via 10.126.0.1 dev eth0");
        expect(out).to.include("1 packets received");
        expect(ports(ns, "opbr0").length).to.equal(1);
        expect(ns.run("iptables-save", "-t", "nat")).to.match(/-s 10\.126\.0\.0\/24 ! -o opbr0 -j MASQUERADE/);
        // --ip-forward=false: forwarding and the FORWARD policy are left as they were
        expect(ns.run("sysctl", "-n", "net.ipv4.ip_forward").trim()).to.equal("0");
        expect(ns.run("iptables-save", "-t", "filter")).to.match(/^:FORWARD ACCEPT /m);
        // --allow-direct-routing: no guard against packets routed straight to a container
        expect(ns.run("iptables-save", "-t", "raw")).to.not.include("-j DROP");
        await n.cli("rm", "-f", "on-op");
        await eventually("the container's veth to leave opbr0", () => ports(ns, "opbr0").length === 0);
      } finally {
        await n.stop();
      }
      // never delete an interface the daemon did not create
      const after = link(ns, "opbr0");
      expect(after, "the operator's bridge after the daemon stopped").to.not.equal(undefined);
      expect(addresses(after, "inet")).to.deep.equal(["10.126.0.1/24"]);
    } finally {
      ns.remove();
    }
  });

  it("refuses --bridge NAME with --bip, as Docker does (the address belongs to the operator's bridge)", async function () {
    const ns = makeNetns();
    const dir = makeTempDir();
    try {
      addBridge(ns, "opbr1", "10.126.1.1/24");
      const r = await runCommand("nsenter", [`--net=${ns.file}`, "--", ENGINED, ...daemonArgs(dir, { bridge: true }), "-H", `unix://${join(dir, "engine.sock")}`, "--bridge", "opbr1", "--bip", "10.126.2.1/24"], { timeoutMs: 20_000 });
      expect(r.code).to.not.equal(0);
      // the catalogue's config rule, with Docker's words
      expect(r.stderr + r.stdout).to.include("invalid daemon configuration: You specified -b & --bip, mutually exclusive options.");
      expect(addresses(link(ns, "opbr1"), "inet")).to.deep.equal(["10.126.1.1/24"]);
    } finally {
      ns.remove();
    }
  });

  it("--bridge=none makes no engine0 and runs containers with no network but loopback", async function () {
    const n = await startNetDaemon(["--bridge=none"]);
    try {
      expect(link(n.ns, "engine0")).to.equal(undefined);
      const out = await n.cli("run", "--rm", "busybox", "ip", "-o", "link");
      expect(out).to.include("lo:").and.not.include("eth0");
      const id = (await n.cli("create", "busybox", "true")).trim();
      const doc = JSON.parse(await n.cli("inspect", id))[0];
      // recorded as the default network, as Docker records it without one (its start then disables networking)
      expect(doc.HostConfig.NetworkMode).to.equal("bridge");
      expect(Object.keys(doc.NetworkSettings.Networks)).to.deep.equal(["bridge"]);
      await n.cli("start", id);
      expect(JSON.parse(await n.cli("inspect", id))[0].Config.NetworkDisabled).to.equal(true);
      // its hostname, hosts and resolv.conf at every start, as dockerd mounts them (a client's NetworkDisabled: the hostname alone)
      const files = (await n.cli("create", "busybox", "sh", "-c", "mount | grep -c /etc/")).trim();
      expect(await n.cli("start", "-a", files)).to.equal("3\n");
      expect(await n.cli("start", "-a", files)).to.equal("3\n");
      expect(n.ns.run("iptables-save")).to.not.include("ENGINE");
    } finally {
      await n.stop();
    }
  });

  it("refuses a --default-gateway outside the bridge's subnet and a --fixed-cidr outside --bip", async function () {
    for (const bad of [["--default-gateway", "10.99.0.1"], ["--fixed-cidr", "10.99.0.0/25"]]) {
      const ns = makeNetns();
      const dir = makeTempDir();
      try {
        const r = await runCommand("nsenter", [`--net=${ns.file}`, "--", ENGINED, ...daemonArgs(dir, { bridge: true }), "-H", `unix://${join(dir, "engine.sock")}`, "--bip", "10.123.5.1/24", ...bad], { timeoutMs: 20_000 });
        expect(r.code, `${bad.join(" ")}: ${r.stderr}`).to.not.equal(0);
        expect(r.stderr + r.stdout).to.include("10.99.0.");
      } finally {
        ns.remove();
      }
    }
  });
});

describe("network options: --live-restore with a published port", function () {
  this.timeout(120_000);

  it("keeps the container's address and port across a daemon restart, and releases everything at docker rm -f", async function () {
    const ns = makeNetns();
    const roots = makeTempDir("engine-netlive-");
    let n: NetDaemon | undefined;
    try {
      n = await startNetDaemon(["--live-restore", "--bip", "10.122.0.1/24"], { netns: ns, roots });
      const { id, ip } = await web(n, "kept", "-p", "18090:80");
      expect(ip).to.match(/^10\.122\.0\.\d+$/);
      await eventually("the port to answer", () => curl(ns, "http://127.0.0.1:18090/hostname") !== null);
      const dnat = () => ns.run("iptables-save", "-t", "nat").split("\n").filter((l) => l.includes("--dport 18090"));
      const rulesBefore = dnat();
      expect(rulesBefore.length).to.be.greaterThan(0);

      expect(addresses(link(ns, "engine0"), "inet")).to.deep.equal(["10.122.0.1/24"]);
      const gateway = "10.122.0.1";
      await n.d.stop(); // SIGTERM; the container stays (live restore)
      n = undefined;
      // While no daemon runs, its in-process proxy is gone but the bridge, the veth and the
      // DNAT rules stay: traffic to an address of the namespace that is not loopback still arrives.
      expect(ports(ns, "engine0").length).to.equal(1);
      expect(listening(ns, 18090)).to.equal(false);
      expect(curl(ns, `http://${gateway}:18090/hostname`)?.trim()).to.equal(id.slice(0, 12));

      n = await startNetDaemon(["--live-restore", "--bip", "10.122.0.1/24"], { netns: ns, roots });
      const doc = JSON.parse(await n.cli("inspect", id))[0];
      expect(doc.State.Running).to.equal(true);
      expect(doc.NetworkSettings.IPAddress).to.equal(ip);
      // [::] too, through the proxy to the container's IPv4 address (Docker 28), taken back as well
      expect(doc.NetworkSettings.Ports["80/tcp"]).to.deep.equal([{ HostIp: "0.0.0.0", HostPort: "18090" }, { HostIp: "::", HostPort: "18090" }]);
      await eventually("the port to answer after the restart", () => curl(ns, "http://127.0.0.1:18090/hostname") !== null);
      expect(curl(ns, "http://127.0.0.1:18090/hostname")!.trim()).to.equal(id.slice(0, 12));
      expect(dnat()).to.deep.equal(rulesBefore); // found again, not added twice
      // a new container gets another address of --bip's subnet, and its default route via the bridge
      const other = await running(n, "other", "ip -o -4 addr show eth0; ip route");
      const m = /inet (10\.122\.0\.\d+)\/24 /.exec(other);
      expect(m, other).to.not.equal(null);
      expect(m![1]).to.not.equal(ip);
      expect(other).to.include("default via 10.122.0.1 dev eth0");

      await n.cli("rm", "-f", "kept");
      expect(curl(ns, "http://127.0.0.1:18090/hostname")).to.equal(null);
      expect(listening(ns, 18090)).to.equal(false);
      expect(dnat()).to.deep.equal([]);
      await eventually("only the other container's veth on engine0", () => ports(ns, "engine0").length === 1);
      expect(readdirSync(join(roots, "exec", "netns")).length).to.equal(1);
    } finally {
      await n?.stop();
      ns.remove();
    }
  });
});

describe("network options: two daemons in one namespace", function () {
  this.timeout(120_000);

  it("each keeps its bridge and its rules under its own tag; stopping one leaves the other's intact and answering", async function () {
    // Forwarding on already (a router, or another daemon first): neither daemon sets the FORWARD policy.
    const a = await startNetDaemon([], { prepare: (ns) => ns.run("sysctl", "-q", "-w", "net.ipv4.ip_forward=1") });
    let b: NetDaemon | undefined;
    try {
      addBridge(a.ns, "opbr2", "10.127.0.1/24");
      b = await startNetDaemon(["--bridge", "opbr2"], { netns: a.ns });
      const wa = await web(a, "on-a", "-p", "18093:80");
      const wb = await web(b, "on-b", "-p", "18094:80");
      expect(wb.ip).to.match(/^10\.127\.0\.\d+$/);
      await eventually("both ports to answer", () => curl(a.ns, "http://127.0.0.1:18093/hostname") !== null && curl(a.ns, "http://127.0.0.1:18094/hostname") !== null);
      expect(curl(a.ns, "http://127.0.0.1:18094/hostname")!.trim()).to.equal(wb.id.slice(0, 12));

      const rules = a.ns.run("iptables-save");
      const tags = [...new Set([...rules.matchAll(/:ENGINE-FWD-([a-z0-9]+) /g)].map((m) => m[1]))];
      expect(tags.length).to.equal(2);
      const tagOf = (port: number) => tags.find((t) => new RegExp(`-A ENGINE-${t} .*--dport ${port} -j DNAT`).test(rules));
      const [tagA, tagB] = [tagOf(18093), tagOf(18094)];
      expect(tagA).to.not.equal(undefined);
      expect(tagB).to.not.equal(undefined).and.not.equal(tagA);
      expect(rules).to.match(new RegExp(`-A ENGINE-POST-${tagA} -s \\S+ ! -o engine0 -j MASQUERADE`));
      expect(rules).to.match(new RegExp(`-A ENGINE-POST-${tagB} -s 10\\.127\\.0\\.0/24 ! -o opbr2 -j MASQUERADE`));
      expect(rules).to.match(/^:FORWARD ACCEPT /m);
      const linesOf = (tag: string) => a.ns.run("iptables-save").split("\n").filter((l) => l.includes(`-${tag}`)).sort();
      const aRules = linesOf(tagA!);
      const aBridge = addresses(link(a.ns, "engine0"), "inet");

      await b.stop();
      b = undefined;
      expect(linesOf(tagA!)).to.deep.equal(aRules);
      expect(addresses(link(a.ns, "engine0"), "inet")).to.deep.equal(aBridge);
      expect(ports(a.ns, "engine0").length).to.equal(1);
      expect(curl(a.ns, "http://127.0.0.1:18093/hostname")!.trim()).to.equal(wa.id.slice(0, 12));
      expect(curl(a.ns, "http://127.0.0.1:18094/hostname")).to.equal(null);
      expect(a.ns.run("iptables-save", "-t", "nat")).to.not.include("--dport 18094");
      expect(link(a.ns, "opbr2"), "B's operator bridge").to.not.equal(undefined);
    } finally {
      await b?.stop();
      await a.stop();
    }
  });
});
