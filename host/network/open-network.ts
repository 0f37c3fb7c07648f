/**
 * Opens the network side of the daemon: the `network` plugins a network uses (the built-in
 * `bridge` first), their drivers made once through `createNetworkDriver`, the network store,
 * the sandboxes, the networks (network-manager.ts) and containers' use of them
 * (container-networks.ts).
 */
import { join } from "node:path";
import type { Logger } from "pino";
import type { NetworkDriver } from "../../core/contracts/network.js";
import type { ContainerStore } from "../../core/containers/container-store.js";
import type { EngineHooks } from "../../core/hooks.js";
import type { DaemonConfig } from "../../core/options/table.js";
import { loadPlugins, type LoaderDeps } from "../plugins/plugin-loader.js";
import { ContainerNetworks } from "./container-networks.js";
import { NetworkManager } from "./network-manager.js";
import { NetworkStore } from "./network-store.js";
import { Sandboxes } from "./sandbox.js";
import type { UsernsRemap } from "../userns/remap.js";

export async function openNetwork(
  loader: LoaderDeps & { hooks: EngineHooks },
  deps: { containers: ContainerStore; config: () => DaemonConfig; log: Logger; remap?: UsernsRemap },
): Promise<{ networks: NetworkManager; containers: ContainerNetworks }> {
  const drivers = new Map<string, Promise<NetworkDriver>>();
  const tag = NetworkManager.tagOf(loader.execRoot);
  const driver = (name: string): Promise<NetworkDriver> => {
    let d = drivers.get(name);
    if (!d) {
      d = (async () => {
        // a network's driver is always a client's choice (POST /networks/create, or stored from one)
        await loadPlugins([{ kind: "network", name, chosenBy: "client" }], loader);
        const made = await loader.hooks.createNetworkDriver.get(name)?.promise({ config: deps.config, tag, execRoot: loader.execRoot, log: deps.log });
        if (!made) throw new Error(`network plugin ${name} was loaded but made no driver (it tapped no createNetworkDriver hook)`);
        return made;
      })();
      d.catch(() => drivers.delete(name));
      drivers.set(name, d);
    }
    return d;
  };
  const networks = new NetworkManager({ store: new NetworkStore(join(loader.dataRoot, "network")), containers: deps.containers, config: deps.config, log: deps.log, driver, hooks: loader.hooks });
  const containers = new ContainerNetworks({ networks, sandboxes: new Sandboxes(loader.execRoot), containers: deps.containers, hooks: loader.hooks, config: deps.config, log: deps.log, remap: deps.remap });
  const running = deps.containers.list().filter((c) => c.State.Running);
  await networks.start(running.flatMap((c) => c.Endpoints ?? []));
  await containers.start();
  loader.hooks.shutdown.tapPromise("network drivers", async () => {
    for (const d of drivers.values()) await (await d).shutdown();
  });
  return { networks, containers };
}
