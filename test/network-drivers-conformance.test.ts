/**
 * The network conformance suite (network-conformance.ts) against every built-in network driver:
 * the bridge driver, its commands run in the suite's host namespace (netnsRunner), with what
 * it says it can do (options refused, an operator's bridge adopted, the MTU option, published
 * ports). A last check keeps the list whole: every network plugin under plugins/ is in it.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { builtInPluginNames } from "./helpers/built-in-plugins.js";
import { BridgeDriver } from "../plugins/network-bridge/bridge-driver.js";
import { netnsRunner } from "../core/net/commands.js";
import { OPT } from "../plugins/network-bridge/options.js";
import { networkConformance } from "./network-conformance.js";

networkConformance("bridge", (ctx, hostNs) => new BridgeDriver({ ...ctx, runner: netnsRunner(hostNs) }), {
  refused: [
    { options: { [OPT.mtu]: "12" }, message: /invalid value for com\.engine\.network\.driver\.mtu: "12"/ },
    { options: { [OPT.icc]: "perhaps" }, message: /invalid value for com\.engine\.network\.bridge\.enable_icc: "perhaps"/ },
    { options: { [OPT.name]: "confdup0" }, others: [{ [OPT.name]: "confdup0" }], message: /bridge name confdup0 is already used by network conf20/ },
    { options: { [OPT.external]: "true" }, message: /com\.engine\.network\.bridge\.external is set by the daemon/ },
  ],
  adopt: (ifname) => ({ [OPT.name]: ifname }),
  mtu: (mtu) => ({ [OPT.mtu]: String(mtu) }),
  publishes: true,
});

describe("network driver conformance: every built-in network driver", function () {
  it("is in this file's list", async function () {
    expect(await builtInPluginNames("network")).to.deep.equal(["bridge"]);
  });
});
