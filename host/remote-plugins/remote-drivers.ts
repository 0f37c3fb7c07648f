/**
 * Drivers of one kind (volume, network) served by plugins of other processes: a driver is made
 * once per name and kept, as Docker keeps a legacy plugin once activated; a plugin that could
 * not be activated, or whose driver could not be made, is asked again at the next use.
 */
import type { Logger } from "pino";
import type { RemotePlugin, RemotePlugins } from "./remote-plugins.js";

export class RemoteDrivers<D> {
  private readonly drivers = new Map<string, Promise<D>>();
  /** The names whose drivers were made (`docker info` lists them, as Docker lists a plugin once activated). */
  private readonly opened = new Set<string>();

  constructor(
    private readonly plugins: RemotePlugins,
    /** Makes the driver of an activated plugin; rejects when the plugin does not serve the kind. */
    private readonly open: (plugin: RemotePlugin) => Promise<D>,
    private readonly log?: Logger,
  ) {}

  /**
   * The driver of that name; undefined when no plugin of that name is installed. Rejects when
   * one is, but cannot be used (not running, or not of this kind), saying why.
   */
  find(name: string): Promise<D> | undefined {
    const made = this.drivers.get(name);
    if (made) return made;
    const plugin = this.plugins.plugin(name);
    if (!plugin) return undefined;
    const opening = this.open(plugin);
    this.drivers.set(name, opening);
    opening.then(
      () => this.opened.add(name),
      () => this.drivers.delete(name),
    );
    return opening;
  }

  made(): string[] {
    return [...this.opened];
  }

  /**
   * Every installed plugin that serves this kind, as Docker's daemon asks them all for its
   * volumes: those that cannot be activated are left out (and logged), those that serve
   * another kind are not drivers of this one.
   */
  async all(): Promise<D[]> {
    const found = await Promise.all(
      this.plugins.names().map(async (name) => {
        try {
          return await this.find(name);
        } catch (err) {
          if (!/does not implement/.test((err as Error).message)) this.log?.warn({ plugin: name, err: (err as Error).message }, "plugin left out: it cannot be used");
          return undefined;
        }
      }),
    );
    return found.filter((d): d is Awaited<D> => d !== undefined) as D[];
  }
}
