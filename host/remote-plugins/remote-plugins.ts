/**
 * The plugins of other processes the daemon has spoken to, by name: one client (its kept-alive
 * connections) and one activation per plugin, shared by every kind that uses them (volume
 * drivers, network drivers), so that a plugin serving both is activated once.
 *
 * A managed plugin (`docker plugin`, host/managed-plugins) of that name comes first, as Docker's
 * plugin store looks at its own before the legacy folders: it must be enabled and declare the
 * capability asked for (`volumedriver`, `networkdriver`), else the look-up fails in Docker's
 * words; the paths it answers are in its root filesystem (`scopePath`).
 *
 * A name is looked up as host/remote-plugins/discover.ts says, each time it is asked for (a
 * plugin started since is found; one moved to another address gets a new client). A name a
 * client gives is only looked up when it is a file name (PLUGIN_NAME).
 */
import { join } from "node:path";
import { PluginActivation } from "./activation.js";
import { PluginClient } from "./client.js";
import { DEFAULT_PLUGIN_DIRS, discoverPlugin, listPluginNames, PLUGIN_NAME, type PluginDirs, type PluginEndpoint } from "./discover.js";

export interface RemotePlugin {
  name: string;
  address: string;
  client: PluginClient;
  activation: PluginActivation;
  /** A path the plugin answers as a host path (a managed plugin's are in its root filesystem). */
  scopePath: (path: string) => string;
}

/** The managed plugins, as the look-up needs them (host/managed-plugins/plugin-service.ts). */
export interface ManagedPluginSource {
  has(name: string): boolean;
  acquire(name: string): void;
  release(name: string): void;
  /** Throws for a plugin disabled or without the capability. */
  endpoint(name: string, capability: string): PluginEndpoint;
  basePath(name: string): string;
}

/** Each capability a managed plugin declares and the interface a legacy one lists for it. */
const INTERFACE_OF: Record<string, string> = { volumedriver: "VolumeDriver", networkdriver: "NetworkDriver", ipamdriver: "IpamDriver" };

export class RemotePlugins {
  private readonly known = new Map<string, RemotePlugin>();
  private managed: ManagedPluginSource | undefined;

  constructor(private readonly dirs: PluginDirs = DEFAULT_PLUGIN_DIRS) {}

  useManaged(source: ManagedPluginSource): void {
    this.managed = source;
  }

  /**
   * The plugin of that name with `capability`; undefined when there is none (no managed plugin,
   * no socket or spec file). Throws for a managed plugin that is disabled or lacks the capability.
   */
  plugin(name: string, capability: string): RemotePlugin | undefined {
    if (this.managed?.has(name)) return this.managedPlugin(name, capability, this.managed);
    if (!PLUGIN_NAME.test(name)) return undefined;
    const found = discoverPlugin(name, this.dirs);
    if (!("endpoint" in found)) return undefined;
    const known = this.known.get(name);
    if (known && known.address === found.endpoint.address) return known;
    const client = new PluginClient(found.endpoint);
    const plugin = { name, address: found.endpoint.address, client, activation: new PluginActivation(client), scopePath: (p: string) => p };
    this.known.set(name, plugin);
    return plugin;
  }

  private managedPlugin(name: string, capability: string, managed: ManagedPluginSource): RemotePlugin {
    const endpoint = managed.endpoint(name, capability);
    // (by capability too: its activation holds the interface of the kind that asked)
    const key = `managed ${capability} ${name}`;
    const known = this.known.get(key);
    if (known && known.address === endpoint.address) return known;
    const client = new PluginClient(endpoint);
    const base = managed.basePath(name);
    const iface = INTERFACE_OF[capability];
    const plugin = { name, address: endpoint.address, client, activation: new PluginActivation(client, iface ? [iface] : []), scopePath: (p: string) => (p ? join(base, p) : p) };
    this.known.set(key, plugin);
    return plugin;
  }

  /**
   * One more (+1) or one fewer (-1) user of the plugin `name` (a volume recorded with it as its
   * driver): a managed plugin in use is not disabled or removed without force, as Docker counts
   * it; a legacy plugin counts nothing.
   */
  use(name: string, delta: 1 | -1): void {
    if (!this.managed?.has(name)) return;
    if (delta > 0) this.managed.acquire(name);
    else this.managed.release(name);
  }

  /** The names there is a socket, spec file or folder for in the plugin folders (`plugin` says which are plugins). */
  names(): string[] {
    return listPluginNames(this.dirs);
  }
}
