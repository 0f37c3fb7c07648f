/**
 * The bridge network with the real Docker CLI against `bin/engined`, each daemon in a network
 * namespace the test made (its bridge, veths and iptables rules live and die there; the host's
 * namespace is never touched): the default bridge and a container's address, route and files,
 * `-p 127.0.0.1:18080:80` answering from the daemon's loopback, `--network none` and `host`,
 * everything released at removal, and `--icc=false`. Traffic goes only to addresses made here.
 * (curl, not busybox wget: Debian's busybox wget crashes with -T.)
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { docker } from "./helpers/docker-cli.js";
import { eventually, startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";

describe("bridge network (Docker CLI, daemon in its own network namespace)", function () {
  this.timeout(120_000);
  let n: NetDaemon;

  before(async function () {
    n = await startNetDaemon();
  });
  after(async function () {
    await n?.stop();
  });

  it("makes engine0 and gives a container an address on it, a default route and its files", async function () {
    const links = JSON.parse(n.ns.run("ip", "-j", "addr", "show", "dev", "engine0")) as { addr_info: { family: string; local: string; prefixlen: number }[] }[];
    const v4 = links[0].addr_info.find((a) => a.family === "inet")!;
    expect(v4.local).to.match(/^\d+\.\d+\.\d+\.1$/);
    const out = await n.cli("run", "--rm", "--hostname", "box", "--add-host", "gw:host-gateway", "busybox", "sh", "-c", "ip addr show eth0; ip route; cat /etc/hosts /etc/hostname");
    const subnet = v4.local.split(".").slice(0, 2).join(".");
    expect(out).to.match(new RegExp(`inet ${subnet.replace(/\./g, "\\.")}\\.\\d+\\.\\d+/${v4.prefixlen}`));
    expect(out).to.include(`default via ${v4.local} dev eth0`);
    expect(out).to.match(new RegExp(`${v4.local.replace(/\./g, "\\.")}\\s+gw`));
    expect(out).to.match(/\d+\.\d+\.\d+\.\d+\s+box\n/);
    expect(out.trim().endsWith("box")).to.equal(true);
    // reaches the bridge
    expect((await n.cli("run", "--rm", "busybox", "ping", "-c", "1", "-W", "2", v4.local))).to.include("1 packets received");
  });

  it("on a network without IPv6: eth0 has IPv6 off, a broadcast address and no queue; the loopback keeps ::1 and /etc/hosts its IPv6 names, as Docker 28's", async function () {
    const script = "ip addr show eth0; ip -o link show eth0; cat /proc/sys/net/ipv6/conf/eth0/disable_ipv6 /proc/sys/net/ipv6/conf/lo/disable_ipv6; ip -o addr show lo; cat /etc/hosts";
    const out = await n.cli("run", "--rm", "busybox", "sh", "-c", script);
    // IPv6 off before the link came up: no link-local address, no IPv6 multicast groups (moby's
    // setInterfaceIPv6, against NDP cache poisoning from other containers on the bridge)
    expect(out).to.not.include("inet6 fe80");
    expect(out).to.match(/\n1\n0\n/);
    expect(out).to.match(/inet6 ::1\/128 scope host/);
    expect(out).to.match(/inet (\d+\.\d+)\.\d+\.\d+\/16 brd \1\.255\.255 scope global eth0/);
    expect(out).to.not.match(/eth0@\S+ .* qlen/);
    expect(out).to.include("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::\tip6-localnet\nff00::\tip6-mcastprefix\nff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n");
    // IPv6 off in the container's own sysctls: no IPv6 name in /etc/hosts
    const off = await n.cli("run", "--rm", "--sysctl", "net.ipv6.conf.all.disable_ipv6=1", "busybox", "cat", "/etc/hosts");
    expect(off).to.match(/^127\.0\.0\.1\tlocalhost\n\d+\.\d+\.\d+\.\d+\t[0-9a-f]{12}\n$/);
  });

  it("publishes -p 127.0.0.1:18080:80: httpd answers on the daemon's loopback, and inspect and ps show the port", async function () {
    await n.cli("run", "-d", "--name", "web", "-p", "127.0.0.1:18080:80", "busybox", "httpd", "-f", "-p", "80", "-h", "/etc");
    await eventually("httpd to answer through the published port", () => n.ns.status("curl", "-sf", "-m", "2", "-o", "/dev/null", "http://127.0.0.1:18080/hostname") === 0);
    const id = (await n.cli("inspect", "-f", "{{.Id}}", "web")).trim();
    expect(n.ns.run("curl", "-sf", "-m", "2", "http://127.0.0.1:18080/hostname").trim()).to.equal(id.slice(0, 12));
    const doc = JSON.parse(await n.cli("inspect", "web"))[0];
    expect(doc.NetworkSettings.Ports["80/tcp"]).to.deep.equal([{ HostIp: "127.0.0.1", HostPort: "18080" }]);
    expect(doc.NetworkSettings.Networks.bridge.IPAddress).to.equal(doc.NetworkSettings.IPAddress).and.match(/^\d+\.\d+\.\d+\.\d+$/);
    expect(doc.HostConfig.NetworkMode).to.equal("bridge");
    expect((await n.cli("ps", "--format", "{{.Ports}}")).trim()).to.equal("127.0.0.1:18080->80/tcp");
    expect(n.ns.run("iptables-save", "-t", "nat")).to.match(/--dport 18080 -j DNAT --to-destination [\d.]+:80/);

    await n.cli("rm", "-f", "web");
    // everything it held is released: the port, its rules, its veth, its sandbox
    expect(n.ns.status("curl", "-sf", "-m", "2", "-o", "/dev/null", "http://127.0.0.1:18080/hostname")).to.not.equal(0);
    expect(n.ns.run("iptables-save", "-t", "nat")).to.not.include("--dport 18080");
    // the veth pair goes with the sandbox, which the kernel cleans up a moment later
    await eventually("the container's veth to leave engine0", () => n.ns.run("ip", "-o", "link", "show", "master", "engine0").trim() === "");
    expect(readdirSync(join(n.d.dir, "exec", "netns"))).to.deep.equal([]);
  });

  it("refuses a host port another container holds in Docker 28's words, naming the endpoint", async function () {
    await n.cli("run", "-d", "--name", "holder", "-p", "18085:80", "busybox", "sleep", "30");
    try {
      const r = await docker(n.host, ["run", "-d", "--name", "second", "-p", "18085:80", "busybox", "sleep", "30"]);
      expect(r.code).to.equal(125);
      expect(r.stderr).to.match(
        /^docker: Error response from daemon: failed to set up container networking: driver failed programming external connectivity on endpoint second \([0-9a-f]{64}\): Bind for 0\.0\.0\.0:18085 failed: port is already allocated\n/,
      );
    } finally {
      await docker(n.host, ["rm", "-f", "holder", "second"]);
    }
  });

  it("--network none has only loopback; --network host sees the daemon's interfaces", async function () {
    const none = await n.cli("run", "--rm", "--network", "none", "busybox", "ip", "-o", "link");
    expect(none).to.include("lo:").and.not.include("eth0");
    const host = await n.cli("run", "--rm", "--network", "host", "busybox", "ip", "-o", "link");
    expect(host).to.include("engine0");
    const doc = JSON.parse(await n.cli("inspect", (await n.cli("create", "--network", "none", "busybox", "true")).trim()))[0];
    expect(Object.keys(doc.NetworkSettings.Networks)).to.deep.equal(["none"]);
  });

  it("keeps its chains under a tag of its own, and a daemon with --iptables=false adds no rule", async function () {
    const rules = n.ns.run("iptables-save");
    expect(rules).to.match(/:ENGINE-FWD-[a-z0-9]+ /);
    const quiet = await startNetDaemon(["--iptables=false"]);
    try {
      expect(quiet.ns.run("iptables-save")).to.not.include("ENGINE");
      expect(await quiet.cli("run", "--rm", "busybox", "ip", "-o", "addr", "show", "eth0")).to.match(/inet \d+\.\d+\.\d+\.\d+/);
    } finally {
      await quiet.stop();
    }
  });
});

describe("bridge network with --icc=false", function () {
  this.timeout(120_000);
  let n: NetDaemon;

  before(async function () {
    n = await startNetDaemon(["--icc=false"]);
  });
  after(async function () {
    await n?.stop();
  });

  it("blocks traffic between containers on the default bridge and still lets them reach the bridge", async function () {
    await n.cli("run", "-d", "--name", "peer-a", "busybox", "sleep", "60");
    const a = JSON.parse(await n.cli("inspect", "peer-a"))[0].NetworkSettings.IPAddress as string;
    const gateway = JSON.parse(await n.cli("inspect", "peer-a"))[0].NetworkSettings.Gateway as string;
    expect(n.ns.run("iptables-save", "-t", "filter")).to.match(/-i engine0 -o engine0 -j DROP/);
    const toPeer = await docker(n.host, ["run", "--rm", "busybox", "ping", "-c", "1", "-W", "1", a]);
    expect(toPeer.code).to.not.equal(0);
    const toBridge = await docker(n.host, ["run", "--rm", "busybox", "ping", "-c", "1", "-W", "2", gateway]);
    expect(toBridge.code).to.equal(0);
  });
});
