/**
 * A running container of the none network mode taken off none and connected to a network, as
 * with Docker's daemon (compared with dockerd 20.10): it gets the network's interface (`eth0`,
 * its address and default route) in the namespace its runtime made, its files name its address
 * and the network's name server, inspect shows the endpoint, and the events are none's
 * disconnect, then the network's connect. The daemon runs in a network namespace of the test's.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";

describe("a none-mode container connected to a network while it runs", function () {
  this.timeout(120_000);
  let n: NetDaemon;
  before(async () => {
    n = await startNetDaemon();
  });
  after(async () => n?.stop());

  it("gets eth0 with the network's address and route, its hosts and resolv.conf, and the endpoint in inspect", async () => {
    const since = Math.floor(Date.now() / 1000);
    await n.cli("network", "create", "--subnet", "10.57.0.0/24", "nc-net");
    const id = (await n.cli("run", "-d", "--name", "nc-none", "--network", "none", "busybox", "sleep", "300")).trim();
    await n.cli("network", "disconnect", "none", "nc-none");
    await n.cli("network", "connect", "nc-net", "nc-none");
    expect(await n.cli("exec", "nc-none", "ip", "-o", "-4", "addr", "show", "eth0")).to.match(/eth0\s+inet 10\.57\.0\.2\/24 /);
    expect(await n.cli("exec", "nc-none", "ip", "route")).to.include("default via 10.57.0.1 dev eth0");
    expect(await n.cli("exec", "nc-none", "cat", "/etc/hosts")).to.include(`10.57.0.2\t${id.slice(0, 12)}\n`);
    expect(await n.cli("exec", "nc-none", "cat", "/etc/resolv.conf")).to.match(/^nameserver 127\.0\.0\.11$/m);
    const endpoint = JSON.parse(await n.cli("inspect", "-f", "{{json .NetworkSettings.Networks}}", "nc-none")) as Record<string, { IPAddress: string; Gateway: string; MacAddress: string }>;
    expect(Object.keys(endpoint)).to.deep.equal(["nc-net"]);
    expect(endpoint["nc-net"]).to.include({ IPAddress: "10.57.0.2", Gateway: "10.57.0.1", MacAddress: "02:42:0a:39:00:02" });
    // taken off the network again: the interface goes, the container keeps running
    await n.cli("network", "disconnect", "nc-net", "nc-none");
    expect(await n.cli("exec", "nc-none", "ip", "-o", "link")).to.not.include("eth0");
    await n.cli("rm", "-f", "nc-none");
    await n.cli("network", "rm", "nc-net");
    const until = String(Math.floor(Date.now() / 1000) + 1);
    const events = await n.cli("events", "--since", String(since), "--until", until, "--filter", "type=network", "--format", "{{.Action}} {{.Actor.Attributes.name}}");
    // (dockerd 20.10 announces none's disconnect twice, the second at the connect)
    expect(events.trim().split("\n")).to.deep.equal(["create nc-net", "connect none", "disconnect none", "connect nc-net", "disconnect nc-net", "destroy nc-net"]);
    // its sandbox went with it
    expect(n.ns.run("ip", "-o", "link").split("\n").filter((l) => /veth/.test(l))).to.deep.equal([]);
  });
});
