/**
 * Opens the network side of the daemon: the `network` plugins a network uses (the built-in
 * `bridge` first), their drivers made once through `createNetworkDriver`, or served by plugins
 * of other processes (host/remote-plugins, remote-network-driver.ts), the IPAM plugins of other
 * processes (remote-ipam.ts), the network store,
 * the sandboxes, the networks (network-manager.ts) and containers' use of them
 * (container-networks.ts).
 */
import { join } from "node:path";
import type { Logger } from "pino";
import type { ContainerStore } from "../../core/containers/container-store.js";
import type { DaemonConfig } from "../../core/options/table.js";
import type { PluginHost } from "../plugins/driver-registry.js";
import { ContainerNetworks, type ContainerNetworksDeps } from "./container-networks.js";
import { NetworkManager } from "./network-manager.js";
import { NetworkStore } from "./network-store.js";
import { Sandboxes } from "./sandbox.js";
import type { UsernsRemap } from "../userns/remap.js";
import type { NetworkDriver } from "../../core/contracts/network.js";
import { errors } from "../../core/errors.js";
import { RemoteDrivers } from "../remote-plugins/remote-drivers.js";
import type { RemotePlugins } from "../remote-plugins/remote-plugins.js";
import { RemoteNetworkDriver } from "./remote-network-driver.js";
import { PluginNameServer } from "./plugin-name-server.js";
import { RemoteIpam } from "./remote-ipam.js";

export async function openNetwork(
  loader: PluginHost,
  deps: { containers: ContainerStore; config: () => DaemonConfig; log: Logger; remotePlugins: RemotePlugins; remap?: UsernsRemap; linkedHosts?: ContainerNetworksDeps["linkedHosts"]; linkPeers?: ContainerNetworksDeps["linkPeers"] },
): Promise<{ networks: NetworkManager; containers: ContainerNetworks }> {
  // (a hash, made when a driver is first made: node:crypto is not loaded by a start without one)
  let tag: string | undefined;
  // (one name server for every plugin's networks: a container on two of them has one 127.0.0.11)
  const names = new PluginNameServer((err) => deps.log.debug({ err }, "embedded name server of a plugin's network"));
  const warn = (obj: object, msg: string) => deps.log.warn(obj, msg);
  const remote = new RemoteDrivers(deps.remotePlugins, "networkdriver", (plugin) => RemoteNetworkDriver.open(plugin, names, warn), deps.log);
  // a network's driver is always a client's choice (POST /networks/create, or stored from one):
  // a plugin of the daemon's, else a plugin of another process (a 500 saying why when it is
  // installed but cannot be used)
  const driver = (name: string): Promise<NetworkDriver> =>
    loader.drivers
      .driver("network", name, {
        chosenBy: "client",
        context: () => ({ config: deps.config, tag: (tag ??= NetworkManager.tagOf(loader.execRoot)), execRoot: loader.execRoot, log: deps.log }),
      })
      .catch((err: unknown) => remote.instead(name, err, (why) => errors.networkPluginUnusable(name, why)) ?? Promise.reject(err));
  // an IPAM driver other than the daemon's own is always a plugin of another process (a 404 for a name none serves)
  const ipams = new RemoteDrivers(deps.remotePlugins, "ipamdriver", RemoteIpam.open, deps.log);
  const ipam = (name: string): Promise<RemoteIpam> =>
    ipams.find(name)?.catch((why: Error) => {
      throw errors.networkIpamPluginUnusable(name, why.message);
    }) ?? Promise.reject(errors.networkDriverNotFound(name));
  const networks = new NetworkManager({ store: new NetworkStore(join(loader.dataRoot, "network")), containers: deps.containers, config: deps.config, log: deps.log, driver, hooks: loader.hooks, ipam });
  const containers = new ContainerNetworks({ networks, sandboxes: new Sandboxes(loader.execRoot), containers: deps.containers, hooks: loader.hooks, config: deps.config, log: deps.log, remap: deps.remap, linkedHosts: deps.linkedHosts, linkPeers: deps.linkPeers });
  const running = deps.containers.list().filter((c) => c.State.Running);
  await networks.start(running.flatMap((c) => c.Endpoints ?? []));
  await containers.start();
  // `/info` lists the network plugins of other processes once used, as Docker's registers them at activation
  loader.hooks.processInfo.tap("network plugins", (info) => ({ ...info, Plugins: { ...info.Plugins, Network: [...new Set([...info.Plugins.Network, ...remote.made()])].sort() } }));
  loader.hooks.shutdown.tapPromise("network drivers", async () => {
    for (const d of await loader.drivers.madeOf("network")) await d.shutdown();
    await names.shutdown();
  });
  return { networks, containers };
}
