/**
 * plugins/network-bridge/firewall against real iptables and real traffic, all inside network
 * namespaces made here: a "host" namespace with two bridges, "container" namespaces joined to
 * them by veths, and an "outside" namespace routed through the host. The rules are read back
 * with iptables-save, and the traffic (busybox ping and nc, curl through published ports) goes
 * only to addresses of these namespaces.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CommandRunner, netnsRunner } from "../core/net/commands.js";
import { Firewall, type FirewallConfig, type NetworkRules, type PortRule } from "../plugins/network-bridge/firewall.js";
import { makeTempDir } from "./helpers/engined.js";
import { fromKernelDefaults } from "./helpers/net-daemon.js";

/** A network namespace bound at a file, and the commands run inside it. */
class Netns {
  private constructor(readonly path: string) {}

  static create(dir: string, name: string): Netns {
    const path = join(dir, name);
    writeFileSync(path, "");
    execFileSync("unshare", [`--net=${path}`, "true"]);
    fromKernelDefaults(path);
    const ns = new Netns(path);
    ns.run("ip", ["link", "set", "lo", "up"]);
    return ns;
  }

  run(file: string, args: string[] = []): string {
    return execFileSync("nsenter", [`--net=${this.path}`, "--", file, ...args], { encoding: "utf8", timeout: 15_000 });
  }

  /** Runs and tells whether it exited 0; stdout when it did. */
  attempt(file: string, args: string[]): { ok: boolean; out: string } {
    const r = spawnSync("nsenter", [`--net=${this.path}`, "--", file, ...args], { encoding: "utf8", timeout: 10_000 });
    return { ok: r.status === 0, out: r.stdout ?? "" };
  }

  start(file: string, args: string[]): ChildProcess {
    // nsenter execs the command: the child's pid is the server's.
    return spawn("nsenter", [`--net=${this.path}`, "--", file, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  }

  runner(): CommandRunner {
    return netnsRunner(this.path);
  }

  sysctl(key: string): string {
    return this.run("sysctl", ["-n", key]).trim();
  }

  remove(): void {
    spawnSync("umount", [this.path]);
    rmSync(this.path, { force: true });
  }
}

const TAG = "t0a1b2c3";
const OTHER_TAG = "u9f8e7d6";

const BR_A = "fwbra";
const BR_B = "fwbrb";
const GW_A = "10.88.1.1";
const GW_B = "10.88.2.1";
const C1 = "10.88.1.11";
const C2 = "10.88.1.12";
const C3 = "10.88.2.13";
const HOST_OUT = "10.77.0.1";
const OUTSIDE = "10.77.0.2";
const GW6_A = "fd00:88:1::1";
const C1_6 = "fd00:88:1::11";
const C2_6 = "fd00:88:1::12";
const PAGE = "published page of c1\n";

function network(over: Partial<NetworkRules> = {}): NetworkRules {
  return { bridge: BR_A, subnets: ["10.88.1.0/24"], gateways: [GW_A], icc: true, masquerade: false, internal: false, directRouting: true, ...over };
}

function port(over: Partial<PortRule> = {}): PortRule {
  return { bridge: BR_A, proto: "tcp", hostIp: "0.0.0.0", hostPort: 8080, containerIp: C1, containerPort: 80, loopback: false, ...over };
}

/** The rules of a namespace without what changes by itself (the timestamps, the counters). */
function saved(ns: Netns, tool = "iptables-save"): string {
  return ns
    .run(tool)
    .split("\n")
    .filter((l) => !l.startsWith("#"))
    .map((l) => l.replace(/ \[\d+:\d+\]$/, ""))
    .join("\n");
}

function ruleLines(text: string): string[] {
  return text.split("\n").filter((l) => l.startsWith("-A "));
}

/** No rule appears twice. */
function expectNoDuplicates(text: string): void {
  const lines = ruleLines(text);
  expect(lines.length).to.equal(new Set(lines).size, text);
}

function ping(from: Netns, address: string): boolean {
  const six = address.includes(":");
  return from.attempt("busybox", [six ? "ping6" : "ping", "-c1", "-W1", address]).ok;
}

/** The page at `url`, or null when it could not be fetched. */
function fetchPage(from: Netns, url: string): string | null {
  const r = from.attempt("curl", ["-s", "-g", "--connect-timeout", "1", "--max-time", "2", url]);
  return r.ok ? r.out : null;
}

async function waitFor(what: string, check: () => boolean, tries = 50): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("bridge firewall (iptables in test namespaces)", function () {
  this.timeout(60_000);

  let dir: string;
  const namespaces: Netns[] = [];
  const servers: ChildProcess[] = [];
  let host: Netns;
  let c1: Netns;
  let c2: Netns;
  let c3: Netns;
  let outside: Netns;
  let firewalls: Firewall[] = [];

  function firewall(over: Partial<FirewallConfig> = {}): Firewall {
    const fw = new Firewall({ tag: TAG, runner: host.runner(), ipv4: true, ipv6: false, ...over });
    firewalls.push(fw);
    return fw;
  }

  function attach(c: Netns, bridge: string, hostSide: string, address: string, gateway: string, v6?: { address: string; gateway: string }): void {
    host.run("ip", ["link", "add", hostSide, "type", "veth", "peer", "name", "eth0", "netns", c.path]);
    host.run("ip", ["link", "set", hostSide, "master", bridge, "up"]);
    c.run("ip", ["addr", "add", `${address}/24`, "dev", "eth0"]);
    if (v6) c.run("ip", ["-6", "addr", "add", `${v6.address}/64`, "dev", "eth0", "nodad"]);
    c.run("ip", ["link", "set", "eth0", "up"]);
    c.run("ip", ["route", "add", "default", "via", gateway]);
    if (v6) c.run("ip", ["-6", "route", "add", "default", "via", v6.gateway]);
  }

  before(() => {
    dir = makeTempDir("engine-firewall-");
    for (const name of ["host", "c1", "c2", "c3", "outside"]) namespaces.push(Netns.create(dir, name));
    [host, c1, c2, c3, outside] = namespaces;
    for (const [bridge, gateway] of [[BR_A, GW_A], [BR_B, GW_B]]) {
      host.run("ip", ["link", "add", bridge, "type", "bridge"]);
      host.run("ip", ["addr", "add", `${gateway}/24`, "dev", bridge]);
      host.run("ip", ["link", "set", bridge, "up"]);
    }
    host.run("ip", ["-6", "addr", "add", `${GW6_A}/64`, "dev", BR_A, "nodad"]);
    attach(c1, BR_A, "vc1", C1, GW_A, { address: C1_6, gateway: GW6_A });
    attach(c2, BR_A, "vc2", C2, GW_A, { address: C2_6, gateway: GW6_A });
    attach(c3, BR_B, "vc3", C3, GW_B);
    // What the endpoint code does without the userland proxy: a container reaching its own
    // published port is DNATed back out of the bridge port it came in by.
    host.run("ip", ["link", "set", "vc1", "type", "bridge_slave", "hairpin", "on"]);
    // "outside" knows only the way to the containers' subnets, through the host.
    host.run("ip", ["link", "add", "vout", "type", "veth", "peer", "name", "eth0", "netns", outside.path]);
    host.run("ip", ["addr", "add", `${HOST_OUT}/24`, "dev", "vout"]);
    host.run("ip", ["link", "set", "vout", "up"]);
    outside.run("ip", ["addr", "add", `${OUTSIDE}/24`, "dev", "eth0"]);
    outside.run("ip", ["link", "set", "eth0", "up"]);
    outside.run("ip", ["route", "add", "10.88.0.0/16", "via", HOST_OUT]);
    host.run("sysctl", ["-q", "-w", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"]);

    // c1 serves a page on port 80, for the published ports.
    const www = join(dir, "www");
    mkdirSync(www);
    writeFileSync(join(www, "index.html"), PAGE);
    servers.push(c1.start("busybox", ["httpd", "-f", "-p", "80", "-h", www]));
    // "outside" answers each TCP connection with the address it came from, to see masquerading.
    const echo = `require("node:net").createServer((s) => s.end(s.remoteAddress.replace(/^::ffff:/, ""))).listen(9000, () => console.log("ready"));`;
    servers.push(outside.start(process.execPath, ["-e", echo]));
  });

  beforeEach(async () => {
    await waitFor("c1's web server", () => fetchPage(c1, "http://127.0.0.1/") === PAGE);
    await waitFor("outside's echo server", () => outside.attempt("busybox", ["nc", "-w", "1", "127.0.0.1", "9000"]).out === "127.0.0.1");
  });

  afterEach(() => {
    firewalls = [];
    // Back to no rule at all: each test starts from an empty namespace firewall.
    for (const tool of ["iptables", "ip6tables"]) {
      for (const table of ["filter", "nat", "raw"]) {
        host.run(tool, ["-t", table, "-F"]);
        host.run(tool, ["-t", table, "-X"]);
      }
      host.run(tool, ["-P", "FORWARD", "ACCEPT"]);
    }
  });

  after(async () => {
    for (const s of servers) {
      if (s.exitCode !== null || s.signalCode !== null) continue;
      const exited = new Promise((r) => s.once("exit", r));
      s.kill("SIGKILL");
      await exited;
    }
    // Removing a namespace removes its interfaces, and a veth goes with either end.
    for (const ns of namespaces) ns.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  describe("ensureBase", () => {
    it("creates the tagged chains and jumps once, however often it runs, and repairs a missing jump", async () => {
      const fw = firewall();
      await fw.ensureBase();
      const once = saved(host);
      await fw.ensureBase();
      expect(saved(host)).to.equal(once);
      expectNoDuplicates(once);
      for (const chain of [`ENGINE-${TAG}`, `ENGINE-LO-${TAG}`, `ENGINE-POST-${TAG}`, `ENGINE-FWD-${TAG}`, `ENGINE-ISOLATION-1-${TAG}`, `ENGINE-ISOLATION-2-${TAG}`]) {
        expect(once).to.include(`:${chain} -`);
      }
      const rules = ruleLines(once);
      expect(rules).to.include.members([
        `-A PREROUTING -m addrtype --dst-type LOCAL -j ENGINE-${TAG}`,
        `-A OUTPUT ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j ENGINE-${TAG}`,
        `-A OUTPUT -d 127.0.0.0/8 -j ENGINE-LO-${TAG}`,
        `-A POSTROUTING -j ENGINE-POST-${TAG}`,
        `-A FORWARD -j ENGINE-FWD-${TAG}`,
        `-A ENGINE-FWD-${TAG} -j ENGINE-ISOLATION-1-${TAG}`,
      ]);

      // As after a crash half-way: a jump is gone, the rest is there.
      host.run("iptables", ["-t", "nat", "-D", "POSTROUTING", "-j", `ENGINE-POST-${TAG}`]);
      await new Firewall({ tag: TAG, runner: host.runner(), ipv4: true, ipv6: false }).ensureBase();
      expect(saved(host)).to.equal(once);
    });

    it("puts its FORWARD jump first, ahead of a rule already there", async () => {
      host.run("iptables", ["-A", "FORWARD", "-i", "vout", "-j", "ACCEPT"]);
      await firewall().ensureBase();
      expect(ruleLines(saved(host)).filter((l) => l.startsWith("-A FORWARD"))[0]).to.equal(`-A FORWARD -j ENGINE-FWD-${TAG}`);
    });
  });

  describe("networks", () => {
    it("icc=true lets containers reach each other; icc=false blocks them once bridge netfilter is on", async () => {
      host.run("sysctl", ["-q", "-w", "net.bridge.bridge-nf-call-iptables=0"]);
      const fw = firewall();
      await fw.enableBridgeNetfilter();
      expect(host.sysctl("net.bridge.bridge-nf-call-iptables")).to.equal("1");

      await fw.addNetwork(network({ icc: true }));
      expect(ruleLines(saved(host))).to.include(`-A ENGINE-FWD-${TAG} -i ${BR_A} -o ${BR_A} -j ACCEPT`);
      expect(ping(c1, C2)).to.equal(true);

      await fw.addNetwork(network({ icc: false }));
      const rules = saved(host);
      expect(ruleLines(rules)).to.include(`-A ENGINE-FWD-${TAG} -i ${BR_A} -o ${BR_A} -j DROP`);
      expect(ruleLines(rules)).not.to.include(`-A ENGINE-FWD-${TAG} -i ${BR_A} -o ${BR_A} -j ACCEPT`);
      expect(ping(c1, C2)).to.equal(false);
      expect(ping(c2, C1)).to.equal(false);
      // The bridge's own address is the host, not forwarding: still reachable.
      expect(ping(c1, GW_A)).to.equal(true);

      await fw.addNetwork(network({ icc: false }));
      expect(saved(host)).to.equal(rules);
      expectNoDuplicates(rules);
    });

    it("masquerades the subnet's traffic leaving by another interface only when asked", async () => {
      const fw = firewall();
      const masqueradeRule = `-A ENGINE-POST-${TAG} -s 10.88.1.0/24 ! -o ${BR_A} -j MASQUERADE`;
      await fw.addNetwork(network({ masquerade: true }));
      expect(ruleLines(saved(host))).to.include(masqueradeRule);
      expect(c1.attempt("busybox", ["nc", "-w", "2", OUTSIDE, "9000"]).out).to.equal(HOST_OUT);

      await fw.addNetwork(network({ masquerade: false }));
      expect(ruleLines(saved(host))).not.to.include(masqueradeRule);
      expect(c1.attempt("busybox", ["nc", "-w", "2", OUTSIDE, "9000"]).out).to.equal(C1);
    });

    it("without direct routing: a container's own address is unreachable from other interfaces, the gateway is not", async () => {
      const fw = firewall();
      await fw.addNetwork(network({ directRouting: false, masquerade: false }));
      expect(saved(host)).to.not.include(`-A ENGINE-RAW-${TAG} -d`); // replies would come back to the container's own address
      await fw.addNetwork(network({ directRouting: false, masquerade: true }));
      expect(ruleLines(saved(host))).to.include.ordered.members([
        `-A PREROUTING -j ENGINE-RAW-${TAG}`,
        `-A ENGINE-RAW-${TAG} -d ${GW_A}/32 -j RETURN`,
        `-A ENGINE-RAW-${TAG} -d 10.88.1.0/24 ! -i ${BR_A} -j DROP`,
      ]);
      expect(ping(outside, C1)).to.equal(false);
      expect(ping(outside, GW_A)).to.equal(true);
      expect(ping(c3, C1)).to.equal(false); // from another bridge too
      expect(ping(c2, C1)).to.equal(true); // on the bridge itself nothing changes
      expect(ping(c1, OUTSIDE)).to.equal(true); // and the container's own traffic goes out as before

      await fw.addNetwork(network({ directRouting: true, masquerade: true }));
      expect(saved(host)).to.not.include(`-A ENGINE-RAW-${TAG} -d`);
      expect(ping(outside, C1)).to.equal(true);
      await fw.addNetwork(network({ directRouting: false, masquerade: true }));
      await fw.removeNetwork(network());
      expect(saved(host)).to.not.include(`-A ENGINE-RAW-${TAG} -d`);
    });

    it("internal: containers reach each other, nothing goes in or out, nothing is masqueraded", async () => {
      const fw = firewall();
      await fw.addNetwork(network());
      expect(ping(outside, C1)).to.equal(true);
      expect(ping(c1, OUTSIDE)).to.equal(true);

      await fw.addNetwork(network({ internal: true, masquerade: true }));
      const rules = ruleLines(saved(host));
      expect(rules).to.include.members([
        `-A ENGINE-ISOLATION-1-${TAG} -i ${BR_A} ! -o ${BR_A} -j DROP`,
        `-A ENGINE-ISOLATION-1-${TAG} ! -i ${BR_A} -o ${BR_A} -j DROP`,
      ]);
      expect(rules.filter((l) => l.includes("MASQUERADE"))).to.deep.equal([]);
      expect(rules).not.to.include(`-A ENGINE-FWD-${TAG} -i ${BR_A} ! -o ${BR_A} -j ACCEPT`);
      expect(ping(c1, C2)).to.equal(true);
      expect(ping(c1, OUTSIDE)).to.equal(false);
      expect(ping(outside, C1)).to.equal(false);
      expect(c1.attempt("busybox", ["nc", "-w", "1", OUTSIDE, "9000"]).ok).to.equal(false);
    });

    it("isolates two networks of the same daemon, and removeNetwork removes only that network's rules", async () => {
      const fw = firewall();
      await fw.addNetwork(network());
      const onlyA = saved(host);
      await fw.addNetwork(network({ bridge: BR_B, subnets: ["10.88.2.0/24"], masquerade: true }));
      expect(ruleLines(saved(host))).to.include.members([
        `-A ENGINE-ISOLATION-1-${TAG} -i ${BR_B} ! -o ${BR_B} -j ENGINE-ISOLATION-2-${TAG}`,
        `-A ENGINE-ISOLATION-2-${TAG} -o ${BR_A} -j DROP`,
      ]);
      expect(ping(c1, C3)).to.equal(false);
      expect(ping(c3, C1)).to.equal(false);

      // Removed with other options than it was added with: still all of its rules go.
      await fw.removeNetwork(network({ bridge: BR_B, subnets: ["10.88.2.0/24"], icc: false }));
      expect(saved(host)).to.equal(onlyA);
      expect(ping(c1, C3)).to.equal(true);
      await fw.removeNetwork(network({ bridge: BR_B, subnets: ["10.88.2.0/24"] }));
      expect(saved(host)).to.equal(onlyA);
    });
  });

  describe("published ports", () => {
    it("DNATs a TCP port from outside and from the host, with FORWARD's policy DROP; removePort removes it", async () => {
      const fw = firewall();
      await fw.addNetwork(network());
      host.run("iptables", ["-P", "FORWARD", "DROP"]);
      const before = saved(host);

      await fw.addPort(port());
      await fw.addPort(port());
      const rules = saved(host);
      expectNoDuplicates(rules);
      expect(ruleLines(rules)).to.include.members([
        `-A ENGINE-${TAG} ! -i ${BR_A} -p tcp -m tcp --dport 8080 -j DNAT --to-destination ${C1}:80`,
        `-A ENGINE-FWD-${TAG} -d ${C1}/32 ! -i ${BR_A} -o ${BR_A} -p tcp -m tcp --dport 80 -j ACCEPT`,
      ]);
      expect(fetchPage(outside, `http://${HOST_OUT}:8080/`)).to.equal(PAGE);
      expect(fetchPage(host, `http://${HOST_OUT}:8080/`)).to.equal(PAGE);
      // Without loopback, 127.0.0.1 is the userland proxy's: no DNAT.
      expect(fetchPage(host, "http://127.0.0.1:8080/")).to.equal(null);

      await fw.removePort(port());
      expect(saved(host)).to.equal(before);
      expect(fetchPage(outside, `http://${HOST_OUT}:8080/`)).to.equal(null);
      await fw.removePort(port());
      expect(saved(host)).to.equal(before);
    });

    it("a port on a given host address answers there only", async () => {
      const fw = firewall();
      await fw.addNetwork(network());
      await fw.addPort(port({ hostIp: HOST_OUT, hostPort: 8083 }));
      expect(ruleLines(saved(host))).to.include(`-A ENGINE-${TAG} -d ${HOST_OUT}/32 ! -i ${BR_A} -p tcp -m tcp --dport 8083 -j DNAT --to-destination ${C1}:80`);
      expect(fetchPage(outside, `http://${HOST_OUT}:8083/`)).to.equal(PAGE);
      expect(fetchPage(host, `http://${GW_B}:8083/`)).to.equal(null);
    });

    it("loopback=true: 127.0.0.1 and the hairpin from the container itself reach the port", async () => {
      const fw = firewall();
      await fw.addNetwork(network());
      const before = saved(host);
      const p = port({ hostPort: 8081, loopback: true });
      await fw.addPort(p);
      expect(host.sysctl(`net.ipv4.conf.${BR_A}.route_localnet`)).to.equal("1");
      expect(ruleLines(saved(host))).to.include.members([
        `-A ENGINE-LO-${TAG} -p tcp -m tcp --dport 8081 -j DNAT --to-destination ${C1}:80`,
        `-A ENGINE-POST-${TAG} -s 127.0.0.0/8 -d ${C1}/32 -o ${BR_A} -p tcp -m tcp --dport 80 -j MASQUERADE`,
        `-A ENGINE-POST-${TAG} -s ${C1}/32 -d ${C1}/32 -p tcp -m tcp --dport 80 -j MASQUERADE`,
      ]);
      expect(fetchPage(host, "http://127.0.0.1:8081/")).to.equal(PAGE);
      expect(fetchPage(c1, `http://${HOST_OUT}:8081/`)).to.equal(PAGE);
      expect(fetchPage(c2, `http://${HOST_OUT}:8081/`)).to.equal(PAGE);
      expect(fetchPage(outside, `http://${HOST_OUT}:8081/`)).to.equal(PAGE);

      // Removed without saying it was a loopback port: its rules go all the same.
      await fw.removePort({ ...p, loopback: false });
      expect(saved(host)).to.equal(before);
      expect(fetchPage(host, "http://127.0.0.1:8081/")).to.equal(null);
    });

    it("two host ports to one container port: removing one keeps the other working", async () => {
      const fw = firewall();
      await fw.addNetwork(network());
      host.run("iptables", ["-P", "FORWARD", "DROP"]);
      const before = saved(host);
      await fw.addPort(port({ hostPort: 8080 }));
      await fw.addPort(port({ hostPort: 8082 }));
      await fw.removePort(port({ hostPort: 8080 }));
      expect(fetchPage(outside, `http://${HOST_OUT}:8082/`)).to.equal(PAGE);
      expect(fetchPage(outside, `http://${HOST_OUT}:8080/`)).to.equal(null);
      await fw.removePort(port({ hostPort: 8082 }));
      expect(saved(host)).to.equal(before);
    });
  });

  describe("several daemons and --iptables=false", () => {
    it("removeAll of one daemon leaves another daemon's rules intact", async () => {
      const a = firewall();
      const b = firewall({ tag: OTHER_TAG });
      await b.ensureBase();
      await b.addNetwork(network({ bridge: BR_B, subnets: ["10.88.2.0/24"], masquerade: true, icc: false }));
      await b.addPort(port({ bridge: BR_B, containerIp: C3, hostPort: 9090, loopback: true }));
      const onlyB = saved(host);

      await a.ensureBase();
      await a.addNetwork(network({ masquerade: true }));
      await a.addPort(port({ loopback: true }));
      expect(saved(host)).to.include(`ENGINE-FWD-${TAG}`);

      await a.removeAll();
      const after = saved(host);
      expect(after).not.to.include(TAG);
      expect(after).to.equal(onlyB);
      await a.removeAll();
      expect(saved(host)).to.equal(onlyB);

      await b.removeAll();
      expect(saved(host)).not.to.include(OTHER_TAG);
    });

    it("ipv4=false and ipv6=false: no command that changes a rule is run, the rules stay as they were", async () => {
      host.run("iptables", ["-A", "FORWARD", "-i", "vout", "-j", "ACCEPT"]);
      const before = saved(host);
      const before6 = saved(host, "ip6tables-save");
      const commands: string[] = [];
      const base = host.runner();
      const recording: CommandRunner = (file, args, opts) => {
        commands.push([file, ...args].join(" "));
        return base(file, args, opts);
      };
      const fw = firewall({ runner: recording, ipv4: false, ipv6: false });
      await fw.ensureBase();
      await fw.addNetwork(network({ masquerade: true, icc: false, subnets: ["10.88.1.0/24", "fd00:88:1::/64"] }));
      await fw.addPort(port({ loopback: true }));
      await fw.enableBridgeNetfilter();
      // Forwarding is on already: only read.
      expect(await fw.setForwarding({ enable: true, noDrop: false })).to.deep.equal({ enabled: false, policyDropped: false });
      await fw.removePort(port());
      await fw.removeNetwork(network());
      await fw.removeAll();
      expect(saved(host)).to.equal(before);
      expect(saved(host, "ip6tables-save")).to.equal(before6);
      expect(commands.filter((c) => !c.startsWith("sysctl -n "))).to.deep.equal([]);
    });
  });

  describe("IPv6", () => {
    it("makes the same rules with ip6tables for an IPv6 subnet, idempotently, and icc=false blocks ping6", async () => {
      const fw = firewall({ ipv6: true });
      await fw.enableBridgeNetfilter();
      expect(host.sysctl("net.bridge.bridge-nf-call-ip6tables")).to.equal("1");
      const dual = network({ subnets: ["10.88.1.0/24", "fd00:88:1:0:0::/64"], masquerade: true });
      await fw.addNetwork(dual);
      expect(ping(c1, C2_6)).to.equal(true);

      await fw.addNetwork({ ...dual, icc: false });
      await fw.addPort(port({ hostIp: "::", containerIp: C1_6, hostPort: 8086 }));
      await fw.addPort(port({ hostIp: "::", containerIp: C1_6, hostPort: 8086 }));
      const v6 = saved(host, "ip6tables-save");
      expectNoDuplicates(v6);
      expect(ruleLines(v6)).to.include.members([
        `-A OUTPUT ! -d ::1/128 -m addrtype --dst-type LOCAL -j ENGINE-${TAG}`,
        `-A ENGINE-FWD-${TAG} -i ${BR_A} -o ${BR_A} -j DROP`,
        `-A ENGINE-POST-${TAG} -s fd00:88:1::/64 ! -o ${BR_A} -j MASQUERADE`,
        `-A ENGINE-${TAG} ! -i ${BR_A} -p tcp -m tcp --dport 8086 -j DNAT --to-destination [${C1_6}]:80`,
      ]);
      expect(saved(host)).not.to.include("fd00");
      expect(ping(c1, C2_6)).to.equal(false);
      expect(fetchPage(host, `http://[${GW6_A}]:8086/`)).to.equal(PAGE);

      await fw.removeAll();
      expect(saved(host, "ip6tables-save")).not.to.include(TAG);
      expect(saved(host)).not.to.include(TAG);
    });
  });
});

describe("bridge firewall: setForwarding", function () {
  this.timeout(30_000);
  let dir: string;
  let ns: Netns;

  before(() => {
    dir = makeTempDir("engine-forwarding-");
    ns = Netns.create(dir, "host");
  });

  afterEach(() => {
    ns.run("sysctl", ["-q", "-w", "net.ipv4.ip_forward=0", "net.ipv6.conf.all.forwarding=0"]);
    ns.run("iptables", ["-P", "FORWARD", "ACCEPT"]);
    ns.run("ip6tables", ["-P", "FORWARD", "ACCEPT"]);
  });

  after(() => {
    ns.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  function policy(tool: string): string {
    return ns.run(tool, ["-S", "FORWARD"]).split("\n")[0];
  }

  it("turns forwarding on and sets FORWARD's policy to DROP; leaves both alone when it was on", async () => {
    const fw = new Firewall({ tag: TAG, runner: ns.runner(), ipv4: true, ipv6: false });
    expect(ns.sysctl("net.ipv4.ip_forward")).to.equal("0");
    expect(await fw.setForwarding({ enable: true, noDrop: false })).to.deep.equal({ enabled: true, policyDropped: true });
    expect(ns.sysctl("net.ipv4.ip_forward")).to.equal("1");
    expect(policy("iptables")).to.equal("-P FORWARD DROP");
    // IPv6 is off for this daemon.
    expect(ns.sysctl("net.ipv6.conf.all.forwarding")).to.equal("0");
    expect(policy("ip6tables")).to.equal("-P FORWARD ACCEPT");

    ns.run("iptables", ["-P", "FORWARD", "ACCEPT"]);
    expect(await fw.setForwarding({ enable: true, noDrop: false })).to.deep.equal({ enabled: false, policyDropped: false });
    expect(policy("iptables")).to.equal("-P FORWARD ACCEPT");
  });

  it("with noDrop, turns forwarding on and leaves the policy ACCEPT", async () => {
    const fw = new Firewall({ tag: TAG, runner: ns.runner(), ipv4: true, ipv6: true });
    expect(await fw.setForwarding({ enable: true, noDrop: true })).to.deep.equal({ enabled: true, policyDropped: false });
    expect(ns.sysctl("net.ipv4.ip_forward")).to.equal("1");
    expect(ns.sysctl("net.ipv6.conf.all.forwarding")).to.equal("1");
    expect(policy("iptables")).to.equal("-P FORWARD ACCEPT");
    expect(policy("ip6tables")).to.equal("-P FORWARD ACCEPT");
  });

  it("with IPv6, does the same for IPv6; enable=false changes nothing", async () => {
    const fw = new Firewall({ tag: TAG, runner: ns.runner(), ipv4: true, ipv6: true });
    expect(await fw.setForwarding({ enable: false, noDrop: false })).to.deep.equal({ enabled: false, policyDropped: false });
    expect(ns.sysctl("net.ipv4.ip_forward")).to.equal("0");
    expect(await fw.setForwarding({ enable: true, noDrop: false })).to.deep.equal({ enabled: true, policyDropped: true });
    expect(ns.sysctl("net.ipv6.conf.all.forwarding")).to.equal("1");
    expect(policy("ip6tables")).to.equal("-P FORWARD DROP");
    expect(policy("iptables")).to.equal("-P FORWARD DROP");
  });

  it("ipv4=false turns forwarding on but never touches the policy", async () => {
    const fw = new Firewall({ tag: TAG, runner: ns.runner(), ipv4: false, ipv6: false });
    expect(await fw.setForwarding({ enable: true, noDrop: false })).to.deep.equal({ enabled: true, policyDropped: false });
    expect(ns.sysctl("net.ipv4.ip_forward")).to.equal("1");
    expect(policy("iptables")).to.equal("-P FORWARD ACCEPT");
  });
});
