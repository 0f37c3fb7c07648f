/**
 * A user-defined bridge network across a daemon restart: the restarted daemon finds the
 * network's bridge already there (it made it before the restart), and removing the network
 * still deletes it, as Docker's (which keeps who made each bridge) does. docker-compose met this: a project brought up, the daemon restarted, `down` left `br-<id>`.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { makeTempDir } from "./helpers/engined.js";
import { makeNetns, startNetDaemon, type NetDaemon, type Netns } from "./helpers/net-daemon.js";

describe("bridge network across a daemon restart", function () {
  this.timeout(120_000);
  let ns: Netns;
  let roots: string;
  let nd: NetDaemon | undefined;
  const links = () => ns.run("ip", "-o", "link", "show").split("\n").filter(Boolean).map((line) => line.split(": ")[1].split("@")[0]);

  before(async function () {
    if (process.getuid?.() !== 0) this.skip();
    ns = makeNetns();
    roots = makeTempDir("engine-net-restart-");
  });
  after(async () => {
    await nd?.stop();
    ns?.remove();
  });

  it("deletes the bridge it named br-<id> when the network is removed after a restart", async function () {
    nd = await startNetDaemon([], { netns: ns, roots });
    const id = (await nd.cli("network", "create", "restarted")).trim();
    const bridge = `br-${id.slice(0, 12)}`;
    expect(links()).to.include(bridge);
    await nd.stop();
    nd = await startNetDaemon([], { netns: ns, roots });
    expect(links()).to.include(bridge);
    await nd.cli("network", "rm", "restarted");
    expect(links()).to.not.include(bridge);
    expect(links().sort()).to.deep.equal(["engine0", "lo"]);
  });
});
