/**
 * Drivers of one kind (volume, network) served by plugins of other processes: a driver is made
 * once per name and kept, as Docker keeps a legacy plugin once activated; a plugin that could
 * not be activated, or whose driver could not be made, is asked again at the next use.
 */
import type { Logger } from "pino";
import { EngineError, errors } from "../../core/errors.js";
import { NotImplementedError } from "./activation.js";
import type { RemotePlugin, RemotePlugins } from "./remote-plugins.js";

/** What the driver registry answers for a name no plugin of the daemon's serves. */
const REGISTRY_NONE = [errors.pluginNotFound.code, errors.pluginMadeNoDriver.code];

export class RemoteDrivers<D> {
  private readonly drivers = new Map<string, { plugin: RemotePlugin; driver: Promise<D> }>();
  /** The names whose drivers were made (`docker info` lists them, as Docker lists a plugin once activated). */
  private readonly opened = new Set<string>();

  constructor(
    private readonly plugins: RemotePlugins,
    /** The kind as a managed plugin declares it: `volumedriver`, `networkdriver`. */
    private readonly capability: string,
    /** Makes the driver of an activated plugin; rejects when the plugin does not serve the kind. */
    private readonly open: (plugin: RemotePlugin) => Promise<D>,
    private readonly log?: Logger,
  ) {}

  /**
   * The driver of that name; undefined when no plugin of that name is installed. Rejects when
   * one is, but cannot be used (not running, or not of this kind), saying why.
   */
  find(name: string): Promise<D> | undefined {
    // asked each time: a plugin gone, disabled or moved is seen at once
    let plugin: RemotePlugin | undefined;
    try {
      plugin = this.plugins.plugin(name, this.capability);
    } catch (err) {
      return Promise.reject(err);
    }
    if (!plugin) return undefined;
    const made = this.drivers.get(name);
    if (made && made.plugin === plugin) return made.driver;
    const opening = this.open(plugin);
    this.drivers.set(name, { plugin, driver: opening });
    opening.then(
      () => this.opened.add(name),
      () => this.drivers.delete(name),
    );
    return opening;
  }

  /**
   * After the driver registry failed to make `name` (`err`): the plugin of another process of
   * that name, undefined when there is none either. `err` is thrown again when it is not the
   * registry's "no such plugin" (a path, a plugin that failed to load); one found that cannot be
   * used rejects with `unusable(why)`.
   */
  instead(name: string, err: unknown, unusable: (why: string) => Error): Promise<D> | undefined {
    if (!(err instanceof EngineError && REGISTRY_NONE.includes(err.code))) throw err;
    return this.find(name)?.catch((why: Error) => {
      throw unusable(why.message);
    });
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
          if (!(err instanceof NotImplementedError)) this.log?.warn({ plugin: name, err: (err as Error).message }, "plugin left out: it cannot be used");
          return undefined;
        }
      }),
    );
    return found.filter((d): d is Awaited<D> => d !== undefined) as D[];
  }
}
