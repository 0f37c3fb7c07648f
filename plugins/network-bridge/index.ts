/**
 * network.bridge: the default network driver (see bridge-driver.ts and README.md).
 */
import type { EnginePlugin } from "../../core/contracts/plugin.js";
import { manifest } from "./manifest.js";

const plugin: EnginePlugin = {
  manifest,
  supported: (host) => (host.platform === "linux" ? true : `the bridge driver needs Linux, this host is ${host.platform}`),
  apply(hooks) {
    hooks.createNetworkDriver.for("bridge").tapPromise(manifest.id, async (ctx) => {
      const { BridgeDriver } = await import("./bridge-driver.js");
      return new BridgeDriver(ctx);
    });
  },
};

export default plugin;
