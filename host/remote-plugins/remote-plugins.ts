/**
 * The plugins of other processes the daemon has spoken to, by name: one client (its kept-alive
 * connections) and one activation per plugin, shared by every kind that uses them (volume
 * drivers, network drivers), so that a plugin serving both is activated once.
 *
 * A name is looked up as host/remote-plugins/discover.ts says, each time it is asked for (a
 * plugin started since is found; one moved to another address gets a new client). A name a
 * client gives is only looked up when it is a file name (PLUGIN_NAME).
 */
import { PluginActivation } from "./activation.js";
import { PluginClient } from "./client.js";
import { DEFAULT_PLUGIN_DIRS, discoverPlugin, listPluginNames, PLUGIN_NAME, type PluginDirs } from "./discover.js";

export interface RemotePlugin {
  name: string;
  address: string;
  client: PluginClient;
  activation: PluginActivation;
}

export class RemotePlugins {
  private readonly known = new Map<string, RemotePlugin>();

  constructor(private readonly dirs: PluginDirs = DEFAULT_PLUGIN_DIRS) {}

  /** The plugin of that name; undefined when there is no socket or spec file for it. */
  plugin(name: string): RemotePlugin | undefined {
    if (!PLUGIN_NAME.test(name)) return undefined;
    const found = discoverPlugin(name, this.dirs);
    if (!("endpoint" in found)) return undefined;
    const known = this.known.get(name);
    if (known && known.address === found.endpoint.address) return known;
    const client = new PluginClient(found.endpoint);
    const plugin = { name, address: found.endpoint.address, client, activation: new PluginActivation(client) };
    this.known.set(name, plugin);
    return plugin;
  }

  /** The names of every plugin there is a socket or spec file for. */
  names(): string[] {
    return listPluginNames(this.dirs);
  }
}
