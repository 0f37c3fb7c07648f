/**
 * Volume drivers served by other processes, found by name in the plugin folders
 * (host/remote-plugins/discover.ts: `/run/engine/plugins/<name>.sock`, spec files in
 * `/etc/engine/plugins` and `/usr/lib/engine/plugins`). A driver is made once per name and
 * kept, as Docker keeps a legacy plugin once activated; a plugin that could not be activated
 * is asked again at the next use.
 *
 * The name is a client's: only a file name (PLUGIN_NAME) is looked up, so a request cannot
 * point the daemon at a socket or a spec file outside those folders.
 */
import type { Logger } from "pino";
import { PluginActivation } from "../remote-plugins/activation.js";
import { PluginClient } from "../remote-plugins/client.js";
import { DEFAULT_PLUGIN_DIRS, discoverPlugin, listPluginNames, PLUGIN_NAME, type PluginDirs } from "../remote-plugins/discover.js";
import { RemoteVolumeDriver } from "./remote-volume-driver.js";

interface Connection {
  address: string;
  client: PluginClient;
  activation: PluginActivation;
}

export class RemoteVolumeDrivers {
  private readonly drivers = new Map<string, Promise<RemoteVolumeDriver>>();
  private readonly connections = new Map<string, Connection>();

  constructor(
    private readonly dirs: PluginDirs = DEFAULT_PLUGIN_DIRS,
    private readonly log?: Logger,
  ) {}

  /**
   * The driver of that name; undefined when no plugin of that name is installed. Rejects when
   * one is, but cannot be used (not running, or not a volume driver), saying why.
   */
  find(name: string): Promise<RemoteVolumeDriver> | undefined {
    const made = this.drivers.get(name);
    if (made) return made;
    const connection = this.connect(name);
    if (!connection) return undefined;
    const opening = RemoteVolumeDriver.open(name, connection.client, connection.activation, connection.address);
    this.drivers.set(name, opening);
    opening.catch(() => this.drivers.delete(name));
    return opening;
  }

  /**
   * Every installed plugin that serves volumes, as Docker's daemon asks them all for a list:
   * those that cannot be activated are left out (and logged), those that serve something
   * else are not volume drivers.
   */
  async all(): Promise<RemoteVolumeDriver[]> {
    const found = await Promise.all(
      listPluginNames(this.dirs).map(async (name) => {
        try {
          return await this.find(name);
        } catch (err) {
          if (!/does not implement/.test((err as Error).message)) this.log?.warn({ plugin: name, err: (err as Error).message }, "volume plugin left out of the list");
          return undefined;
        }
      }),
    );
    return found.filter((d): d is RemoteVolumeDriver => d !== undefined);
  }

  private connect(name: string): Connection | undefined {
    if (!PLUGIN_NAME.test(name)) return undefined;
    const found = discoverPlugin(name, this.dirs);
    if (!("endpoint" in found)) return undefined;
    const known = this.connections.get(name);
    // the same address keeps its client (and its kept-alive connections); a moved plugin gets a new one
    if (known && known.address === found.endpoint.address) return known;
    const client = new PluginClient(found.endpoint);
    const connection = { address: found.endpoint.address, client, activation: new PluginActivation(client) };
    this.connections.set(name, connection);
    return connection;
  }
}
