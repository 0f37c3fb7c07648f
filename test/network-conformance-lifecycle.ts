/**
 * The network conformance suite's lifecycle tests: create and delete a network, join and leave
 * sandboxes with real interfaces, addresses and routes, internal networks, a second network,
 * options refused and applied, published ports. Called by network-conformance.ts.
 */
import { expect } from "chai";
import type { NetworkConformanceAbilities, NetworkWorld } from "./network-conformance.js";
import {
  addressesIn,
  addressOf,
  answers,
  defaultRoutes,
  endpointSpec,
  fetchFrom,
  linkIn,
  linkNames,
  networkSpec,
  reaches,
  rulesMentioning,
} from "./network-conformance-kit.js";

export function networkConformanceLifecycle(w: NetworkWorld): void {
  it("says who it is", async function () {
    expect((await w.driver()).name).to.equal(w.name);
  });

  it("makes a network (twice is the same), joins sandboxes with their interface, addresses, MAC and default route, and they reach each other", async function () {
    const d = await w.driver();
    const before = linkNames(w.host);
    const net = networkSpec(w.name, 1, { ipv6: true });
    await d.createNetwork(net);
    const made = linkNames(w.host);
    await d.createNetwork(net);
    expect(linkNames(w.host), "a second createNetwork").to.deep.equal(made);
    const [a, b] = [w.sandbox(), w.sandbox()];
    const [ea, eb] = [endpointSpec(net, 2), endpointSpec(net, 3)];
    const joined = await d.join(net, ea, a.file);
    expect(joined.published).to.deep.equal([]);
    await d.join(net, eb, b.file);
    const eth0 = linkIn(a, "eth0")!;
    expect(eth0, "eth0 in the sandbox").to.not.equal(undefined);
    expect(eth0.address).to.equal(ea.mac);
    expect(eth0.operstate).to.not.equal("DOWN");
    expect(addressesIn(a, "eth0").sort()).to.deep.equal([ea.ipv4, ea.ipv6].sort());
    expect(defaultRoutes(a).sort()).to.deep.equal([`${ea.gateway4} eth0`, `${ea.gateway6} eth0`].sort());
    expect(await reaches(a, addressOf(eb.ipv4)), "a to b").to.equal(true);
    expect(await reaches(b, addressOf(ea.ipv4)), "b to a").to.equal(true);
    expect(await reaches(a, net.subnets[0].gateway), "a to the gateway").to.equal(true);

    await d.leave(net, ea, a.file);
    await d.leave(net, eb, b.file);
    expect(linkIn(a, "eth0"), "eth0 after leave").to.equal(undefined);
    await d.deleteNetwork(net);
    expect(linkNames(w.host), "the host's interfaces after delete").to.deep.equal(before);
    expect(rulesMentioning(w.host, "10.213.1."), "rules of the deleted network").to.deep.equal([]);
  });

  it("leaves safely twice, without a sandbox, and when the sandbox is already gone", async function () {
    const d = await w.driver();
    const net = networkSpec(w.name, 2);
    await d.createNetwork(net);
    const a = w.sandbox();
    const ea = endpointSpec(net, 2);
    await d.join(net, ea, a.file);
    await d.leave(net, ea, a.file);
    await d.leave(net, ea, a.file);
    await d.leave(net, ea, undefined);
    const b = w.sandbox();
    const eb = endpointSpec(net, 3);
    await d.join(net, eb, b.file);
    b.remove(); // the container's sandbox went first (its process exited, the binding removed)
    await d.leave(net, eb, b.file);
    await d.deleteNetwork(net);
  });

  it("puts a sandbox on a second network as another interface, without a second default route", async function () {
    const d = await w.driver();
    const [n1, n2] = [networkSpec(w.name, 3), networkSpec(w.name, 4)];
    await d.createNetwork(n1);
    await d.createNetwork(n2);
    const [a, peer] = [w.sandbox(), w.sandbox()];
    const e1 = endpointSpec(n1, 2);
    const e2 = endpointSpec(n2, 2, { ifname: "eth1", noDefaultRoute: true });
    await d.join(n1, e1, a.file);
    await d.join(n2, e2, a.file);
    await d.join(n2, endpointSpec(n2, 5), peer.file);
    expect(addressesIn(a, "eth1")).to.deep.equal([e2.ipv4]);
    expect(defaultRoutes(a)).to.deep.equal([`${e1.gateway4} eth0`]);
    expect(await reaches(a, "10.213.4.5"), "a to its peer on the second network").to.equal(true);
    await d.leave(n2, e2, a.file);
    expect(linkIn(a, "eth1")).to.equal(undefined);
    expect(linkIn(a, "eth0"), "the first network's interface stays").to.not.equal(undefined);
  });

  it("gives an internal network's sandboxes no way out: no default route, no other network", async function () {
    const d = await w.driver();
    const [inner, outer] = [networkSpec(w.name, 5, { internal: true }), networkSpec(w.name, 6)];
    await d.createNetwork(inner);
    await d.createNetwork(outer);
    const [a, b, c] = [w.sandbox(), w.sandbox(), w.sandbox()];
    await d.join(inner, endpointSpec(inner, 2), a.file);
    await d.join(inner, endpointSpec(inner, 3), b.file);
    await d.join(outer, endpointSpec(outer, 2), c.file);
    expect(defaultRoutes(a)).to.deep.equal([]);
    expect(await reaches(a, "10.213.5.3"), "a to its peer on the internal network").to.equal(true);
    expect(await reaches(a, "10.213.6.2", 1), "a to a sandbox of another network").to.equal(false);
    expect(await reaches(c, "10.213.5.2", 1), "another network's sandbox to a").to.equal(false);
  });

  optionTests(w, w.abilities);
  if (w.abilities.publishes !== false) publishTests(w);
}

function optionTests(w: NetworkWorld, abilities: NetworkConformanceAbilities): void {
  it("refuses values it cannot use, before anything is made, naming them; takes options it does not read", async function () {
    const d = await w.driver();
    if (!d.checkNetwork) this.skip();
    d.checkNetwork(networkSpec(w.name, 7), []);
    // Docker's drivers read only the labels they know: an option meant for another is kept, unused
    expect(() => d.checkNetwork!(networkSpec(w.name, 7, { options: { "engine.conformance.unknown": "1" } }), [])).not.to.throw();
    for (const r of abilities.refused ?? []) {
      const others = (r.others ?? []).map((options, i) => networkSpec(w.name, 20 + i, { options }));
      expect(() => d.checkNetwork!(networkSpec(w.name, 7, { options: r.options }), others), JSON.stringify(r)).to.throw(r.message);
    }
  });

  it("applies the MTU option to the sandboxes' interfaces", async function () {
    if (!abilities.mtu) this.skip();
    const d = await w.driver();
    const net = networkSpec(w.name, 8, { options: abilities.mtu(1400) });
    d.checkNetwork?.(net, []);
    await d.createNetwork(net);
    const a = w.sandbox();
    await d.join(net, endpointSpec(net, 2), a.file);
    expect(linkIn(a, "eth0")!.mtu).to.equal(1400);
  });

  it("uses an interface of the host it was given, and never deletes it", async function () {
    if (!abilities.adopt) this.skip();
    w.host.run("ip", "link", "add", "confown0", "type", "bridge");
    const d = await w.driver();
    const net = networkSpec(w.name, 9, { options: abilities.adopt("confown0") });
    await d.createNetwork(net);
    const a = w.sandbox();
    const ea = endpointSpec(net, 2);
    await d.join(net, ea, a.file);
    expect(await reaches(a, net.subnets[0].gateway), "a to the gateway on the host's interface").to.equal(true);
    await d.leave(net, ea, a.file);
    await d.deleteNetwork(net);
    expect(linkNames(w.host)).to.include("confown0");
  });
}

function publishTests(w: NetworkWorld): void {
  it("publishes ports: chooses a host port asked as 0, keeps one asked for, refuses it twice, releases them at leave", async function () {
    const d = await w.driver();
    const net = networkSpec(w.name, 10);
    await d.createNetwork(net);
    const [a, b] = [w.sandbox(), w.sandbox()];
    w.serve(a, "sandbox a");
    const ea = endpointSpec(net, 2, {
      ports: [
        { proto: "tcp", containerPort: 80, hostIp: "", hostPort: 0 },
        { proto: "tcp", containerPort: 80, hostIp: "", hostPort: 18081 },
      ],
    });
    const joined = await d.join(net, ea, a.file);
    expect(joined.published).to.have.length(2);
    const [any, fixed] = joined.published;
    expect(any).to.include({ proto: "tcp", containerPort: 80, hostIp: "0.0.0.0" });
    expect(any.hostPort).to.be.above(1023);
    expect(fixed).to.deep.equal({ proto: "tcp", containerPort: 80, hostIp: "0.0.0.0", hostPort: 18081 });
    const gateway = net.subnets[0].gateway;
    await answers(w.host, `http://${gateway}:${any.hostPort}/who`, "sandbox a");
    await answers(w.host, `http://${gateway}:18081/who`, "sandbox a");

    const eb = endpointSpec(net, 3, { ports: [{ proto: "tcp", containerPort: 80, hostIp: "", hostPort: 18081 }] });
    let refused: Error | undefined;
    await d.join(net, eb, b.file).catch((e: Error) => (refused = e));
    expect(refused?.message, "the same host port twice").to.match(/18081/);
    expect(linkIn(b, "eth0"), "a refused join leaves nothing in the sandbox").to.equal(undefined);

    await d.leave(net, { ...ea, published: joined.published }, a.file);
    expect(fetchFrom(w.host, `http://${gateway}:18081/who`), "after leave").to.equal(null);
    expect(rulesMentioning(w.host, "18081"), "rules of the port after leave").to.deep.equal([]);
    // the port is free again
    w.serve(b, "sandbox b");
    const again = await d.join(net, eb, b.file);
    expect(again.published).to.deep.equal([{ proto: "tcp", containerPort: 80, hostIp: "0.0.0.0", hostPort: 18081 }]);
    await answers(w.host, `http://${gateway}:18081/who`, "sandbox b");
  });
}
