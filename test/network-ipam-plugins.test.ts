/**
 * IPAM drivers served by other processes: the example plugin
 * (host/remote-plugins/examples/pool-ipam), found by its socket in /run/engine/plugins, with the
 * Docker CLI against a real engined, as a user of Docker's daemon uses one
 * (`docker network create --ipam-driver <plugin>`). The daemon runs in a network namespace the
 * test made and sees a plugin folder of its own (a mount namespace). The calls and their bodies,
 * in their order, are the ones dockerd 20.10 made to the same plugin for the same commands
 * (pool ids aside, which are the plugin's), and so are the addresses and the errors' words (but
 * for the prefix Docker 28 puts before a start's networking failure).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { cleanUpPlugins, recordedCalls, SOCKET_DIR, startPoolIpam, uniqueName } from "./helpers/authz-plugin.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { makeNetns, type Netns } from "./helpers/net-daemon.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

interface Call {
  method: string;
  body: Record<string, any>;
}

describe("IPAM plugins of other processes (the example pool-ipam plugin)", function () {
  this.timeout(120_000);
  const name = uniqueName("ipam");
  let work: string;
  let ns: Netns;
  let d: TestDaemon;
  let host: string;
  const record = () => join(work, "calls.jsonl");
  const calls = () => recordedCalls(record()) as unknown as Call[];
  /** The calls made since `from` (a count), without the pool ids. */
  const since = (from: number) => calls().slice(from).map((c) => ({ method: c.method.replace(/^IpamDriver\./, ""), body: withoutPoolId(c.body) }));
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const cli = (...args: string[]) => docker(host, args);
  const gateway = { RequestAddressType: "com.docker.network.gateway" };

  before(async function () {
    work = makeTempDir("engine-ipam-plugins-");
    ns = makeNetns();
    const sockets = join(work, "plugins");
    mkdirSync(sockets);
    mkdirSync(SOCKET_DIR, { recursive: true });
    // (pools of 16 addresses: a full one is quick to make)
    await startPoolIpam({ socket: join(sockets, `${name}.sock`), record: record(), args: ["--size", "28"] });
    d = await startEngined({
      wrap: ["nsenter", `--net=${ns.file}`, "--", "unshare", "--mount", "--propagation", "private", "--", "sh", "-c", `mount --bind "$0" ${SOCKET_DIR} && exec "$@"`, sockets],
    });
    host = `unix://${d.socket}`;
    ok(await cli("import", "--change", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"), "docker import");
  });

  after(async function () {
    if (d) {
      await cli("rm", "-f", "ia", "full1", "full2", "fa");
      for (const n of ["in1", "in2", "in6", "fx"]) await cli("network", "rm", n);
      await d.stop();
    }
    await cleanUpPlugins();
    ns?.remove();
  });

  it("makes a network of the plugin's pool and gateway, in the plugin's address space, with the IPAM options", async () => {
    ok(await cli("network", "create", "--ipam-driver", name, "--ipam-opt", "color=red", "in1"), "network create");
    expect(since(0)).to.deep.equal([
      { method: "Plugin.Activate", body: {} },
      { method: "GetCapabilities", body: {} },
      { method: "GetDefaultAddressSpaces", body: {} },
      { method: "RequestPool", body: { AddressSpace: "pool-ipam-local", Pool: "", SubPool: "", Options: { color: "red" }, V6: false } },
      { method: "RequestAddress", body: { Address: "", Options: gateway } },
    ]);
    const ipam = JSON.parse(ok(await cli("network", "inspect", "-f", "{{json .IPAM}}", "in1"), "inspect"));
    expect(ipam).to.deep.equal({ Driver: name, Options: { color: "red" }, Config: [{ Subnet: "10.160.0.0/28", Gateway: "10.160.0.1" }] });
  });

  it("gives a container the plugin's address at its start and gives it back at its stop", async () => {
    const before = calls().length;
    ok(await cli("run", "-d", "--name", "ia", "--network", "in1", "busybox", "sleep", "300"), "run");
    expect(ok(await cli("exec", "ia", "ip", "-o", "-4", "addr", "show", "eth0"), "ip addr")).to.match(/eth0\s+inet 10\.160\.0\.2\/28 /);
    expect(ok(await cli("exec", "ia", "ip", "route"), "ip route")).to.include("default via 10.160.0.1 dev eth0");
    const seen = ok(await cli("inspect", "-f", "{{with .NetworkSettings.Networks.in1}}{{.IPAddress}}/{{.IPPrefixLen}} {{.Gateway}} {{.MacAddress}}{{end}}", "ia"), "inspect");
    expect(seen).to.equal("10.160.0.2/28 10.160.0.1 02:42:0a:a0:00:02\n");
    ok(await cli("stop", "-t", "0", "ia"), "stop");
    ok(await cli("start", "ia"), "start");
    expect(since(before)).to.deep.equal([
      { method: "RequestAddress", body: { Address: "", Options: null } },
      { method: "ReleaseAddress", body: { Address: "10.160.0.2" } },
      { method: "RequestAddress", body: { Address: "", Options: null } },
    ]);
    // (the plugin hands out the next address after the last, as dockerd's run of it showed)
    expect(ok(await cli("exec", "ia", "ip", "-o", "-4", "addr", "show", "eth0"), "ip addr")).to.match(/inet 10\.160\.0\.3\/28 /);
  });

  it("asks for the subnet, range, gateway and auxiliary addresses a create names, and for a connect's fixed address; a disconnect gives it back", async () => {
    const before = calls().length;
    ok(await cli("network", "create", "--ipam-driver", name, "--subnet", "10.170.0.0/24", "--ip-range", "10.170.0.128/25", "--gateway", "10.170.0.254", "--aux-address", "r=10.170.0.200", "in2"), "network create");
    const ipam = JSON.parse(ok(await cli("network", "inspect", "-f", "{{json .IPAM.Config}}", "in2"), "inspect"));
    expect(ipam).to.deep.equal([{ Subnet: "10.170.0.0/24", IPRange: "10.170.0.128/25", Gateway: "10.170.0.254", AuxiliaryAddresses: { r: "10.170.0.200" } }]);
    ok(await cli("network", "connect", "--ip", "10.170.0.140", "in2", "ia"), "connect");
    expect(ok(await cli("exec", "ia", "ip", "-o", "-4", "addr", "show", "eth1"), "ip addr")).to.match(/eth1\s+inet 10\.170\.0\.140\/24 /);
    ok(await cli("network", "disconnect", "in2", "ia"), "disconnect");
    expect(since(before)).to.deep.equal([
      { method: "RequestPool", body: { AddressSpace: "pool-ipam-local", Pool: "10.170.0.0/24", SubPool: "10.170.0.128/25", Options: {}, V6: false } },
      { method: "RequestAddress", body: { Address: "10.170.0.254", Options: gateway } },
      { method: "RequestAddress", body: { Address: "10.170.0.200", Options: null } },
      { method: "RequestAddress", body: { Address: "10.170.0.140", Options: null } },
      { method: "ReleaseAddress", body: { Address: "10.170.0.140" } },
    ]);
  });

  it("gives back each pool with its gateway and auxiliary addresses at the network's removal", async () => {
    ok(await cli("rm", "-f", "ia"), "rm");
    const before = calls().length;
    ok(await cli("network", "rm", "in1", "in2"), "network rm");
    const poolIds = calls().slice(before).map((c) => c.body.PoolID);
    expect(since(before)).to.deep.equal([
      { method: "ReleaseAddress", body: { Address: "10.160.0.1" } },
      { method: "ReleasePool", body: {} },
      { method: "ReleaseAddress", body: { Address: "10.170.0.254" } },
      { method: "ReleaseAddress", body: { Address: "10.170.0.200" } },
      { method: "ReleasePool", body: {} },
    ]);
    expect(poolIds).to.deep.equal(["pool-ipam-local/10.160.0.0/28", "pool-ipam-local/10.160.0.0/28", ...Array(3).fill("pool-ipam-local/10.170.0.0/24/10.170.0.128/25")]);
  });

  it("asks for an IPv6 pool of the plugin's choice too for a network with IPv6", async () => {
    const before = calls().length;
    ok(await cli("network", "create", "--ipv6", "--ipam-driver", name, "in6"), "network create");
    expect(since(before).map((c) => [c.method, c.body.V6 ?? c.body.Address])).to.deep.equal([
      ["RequestPool", false],
      ["RequestAddress", ""],
      ["RequestPool", true],
      ["RequestAddress", ""],
    ]);
    const seen = ok(await cli("run", "--rm", "--network", "in6", "busybox", "ip", "-o", "addr", "show", "eth0"), "run");
    expect(seen).to.match(/inet 10\.160\.0\.2\/28 /).and.match(/inet6 fd60:1::2\/64 scope global/);
    const config = JSON.parse(ok(await cli("network", "inspect", "-f", "{{json .IPAM.Config}}", "in6"), "inspect"));
    // (dockerd 20.10 shows the IPv6 gateway with the plugin's prefix length; Docker 28 the address alone)
    expect(config).to.deep.equal([
      { Subnet: "10.160.0.0/28", Gateway: "10.160.0.1" },
      { Subnet: "fd60:1::/64", Gateway: "fd60:1::1" },
    ]);
    ok(await cli("network", "rm", "in6"), "network rm");
  });

  it("fails in the plugin's words, gives back what it took, and refuses a driver no plugin serves", async () => {
    const before = calls().length;
    const gatewayRefused = await cli("network", "create", "--ipam-driver", name, "--subnet", "10.180.0.0/24", "--gateway", "10.180.0.0", "bad");
    expect(gatewayRefused.code).to.equal(1);
    expect(gatewayRefused.stderr).to.include("failed to allocate gateway (10.180.0.0): remote: pool-ipam: address 10.180.0.0 is not in pool 10.180.0.0/24");
    expect(since(before).map((c) => c.method)).to.deep.equal(["RequestPool", "RequestAddress", "ReleasePool"]);
    expect((await cli("network", "ls", "-q", "-f", "name=^bad$")).stdout).to.equal("");

    ok(await cli("network", "create", "--ipam-driver", name, "--subnet", "10.190.0.0/24", "fx"), "network create");
    ok(await cli("run", "-d", "--name", "fa", "--network", "fx", "--ip", "10.190.0.9", "busybox", "sleep", "300"), "run");
    const taken = await cli("run", "--rm", "--network", "fx", "--ip", "10.190.0.9", "busybox", "true");
    expect(taken.code).to.equal(125);
    expect(taken.stderr).to.include("remote: pool-ipam: address 10.190.0.9 is already in use");

    // a pool of 16: 13 containers after its gateway, the 14th finds it full
    ok(await cli("network", "create", "--ipam-driver", name, "--subnet", "10.200.0.0/28", "full"), "network create");
    for (let i = 0; i < 13; i++) ok(await cli("create", "--name", `full${i}`, "--network", "full", "busybox", "sleep", "300"), "create");
    for (let i = 0; i < 13; i++) ok(await cli("start", `full${i}`), `start ${i}`);
    const full = await cli("run", "--rm", "--network", "full", "busybox", "true");
    expect(full.code).to.equal(125);
    expect(full.stderr).to.include("remote: pool-ipam: no available addresses on pool 10.200.0.0/28");
    ok(await cli("rm", "-f", ...Array.from({ length: 13 }, (_, i) => `full${i}`)), "rm");
    ok(await cli("network", "rm", "full"), "network rm");

    const none = await cli("network", "create", "--ipam-driver", uniqueName("none"), "x1");
    expect(none.code).to.equal(1);
    expect(none.stderr).to.match(/plugin "none\w+" not found/);
  });
});

function withoutPoolId(body: Record<string, any>): Record<string, any> {
  const { PoolID: _, ...rest } = body;
  return rest;
}
