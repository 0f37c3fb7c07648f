/**
 * The network conformance suite's restart tests (core/contracts/network.ts: `shutdown` keeps
 * interfaces and rules; `restore` takes back what running containers hold and drops what no
 * longer belongs to anything). A second driver made on the same context and host namespace
 * stands for the restarted daemon. Called by network-conformance.ts.
 */
import { expect } from "chai";
import type { NetworkWorld } from "./network-conformance.js";
import { addressOf, answers, endpointSpec, fetchFrom, linkIn, linkNames, networkSpec, reaches, rulesMentioning } from "./network-conformance-kit.js";

export function networkConformanceRestart(w: NetworkWorld): void {
  it("keeps interfaces, traffic and rules through shutdown; the next driver restores them, goes on, and deletes what the first made", async function () {
    const publishes = w.abilities.publishes !== false;
    const before = linkNames(w.host);
    const first = await w.driver();
    const net = networkSpec(w.name, 11);
    await first.createNetwork(net);
    const [a, b] = [w.sandbox(), w.sandbox()];
    const ports = publishes ? [{ proto: "tcp" as const, containerPort: 80, hostIp: "", hostPort: 18082 }] : [];
    const ea = endpointSpec(net, 2, { ports });
    const eb = endpointSpec(net, 3);
    ea.published = (await first.join(net, ea, a.file)).published;
    eb.published = (await first.join(net, eb, b.file)).published;
    const gateway = net.subnets[0].gateway;
    if (publishes) {
      w.serve(a, "before restart");
      await answers(w.host, `http://${gateway}:18082/who`, "before restart");
    }
    const made = linkNames(w.host);
    await first.shutdown();
    // the containers keep running while the daemon is down
    expect(linkNames(w.host), "the host's interfaces after shutdown").to.deep.equal(made);
    expect(await reaches(a, addressOf(eb.ipv4)), "a to b after shutdown").to.equal(true);

    const next = await w.driver();
    await next.restore([net], [ea, eb]);
    expect(linkNames(w.host), "the host's interfaces after restore").to.deep.equal(made);
    expect(await reaches(b, addressOf(ea.ipv4)), "b to a after restore").to.equal(true);
    if (publishes) await answers(w.host, `http://${gateway}:18082/who`, "before restart");
    // a new container joins the restored network
    const c = w.sandbox();
    const ec = endpointSpec(net, 4);
    await next.join(net, ec, c.file);
    expect(await reaches(c, addressOf(ea.ipv4)), "c to a").to.equal(true);
    // and the restored driver releases what the first one made
    for (const [ep, ns] of [[ea, a], [eb, b], [ec, c]] as const) await next.leave(net, ep, ns.file);
    if (publishes) expect(fetchFrom(w.host, `http://${gateway}:18082/who`), "the port after leave").to.equal(null);
    await next.deleteNetwork(net);
    expect(linkNames(w.host), "the host's interfaces after delete").to.deep.equal(before);
    expect(rulesMentioning(w.host, "10.213.11."), "rules of the deleted network").to.deep.equal([]);
  });

  it("restore drops the published ports of a container that is no longer running", async function () {
    if (w.abilities.publishes === false) this.skip();
    const first = await w.driver();
    const net = networkSpec(w.name, 12);
    await first.createNetwork(net);
    const [a, b] = [w.sandbox(), w.sandbox()];
    const ea = endpointSpec(net, 2, { ports: [{ proto: "tcp", containerPort: 80, hostIp: "", hostPort: 18083 }] });
    const eb = endpointSpec(net, 3, { ports: [{ proto: "tcp", containerPort: 80, hostIp: "", hostPort: 18084 }] });
    ea.published = (await first.join(net, ea, a.file)).published;
    eb.published = (await first.join(net, eb, b.file)).published;
    await first.shutdown();
    a.remove(); // a's container exited while the daemon was down: its sandbox is gone
    const next = await w.driver();
    await next.restore([net], [eb]);
    expect(rulesMentioning(w.host, "18083"), "rules of the gone container's port").to.deep.equal([]);
    expect(rulesMentioning(w.host, "18084"), "rules of the running container's port").to.not.deep.equal([]);
    expect(linkIn(b, "eth0")).to.not.equal(undefined);
    // its port can be published again
    const c = w.sandbox();
    const ec = endpointSpec(net, 4, { ports: [{ proto: "tcp", containerPort: 80, hostIp: "", hostPort: 18083 }] });
    expect((await next.join(net, ec, c.file)).published[0].hostPort).to.equal(18083);
  });
}
