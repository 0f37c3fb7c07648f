/**
 * The one driver registry: every driver of every kind (storage, runtime, network, log, volume)
 * is found here by kind and name, made once through its kind's factory hook, and kept.
 *
 *   registry.driver(kind, name, { context, chosenBy }):
 *     1. a client's path is refused before anything is loaded (resolve-plugin.ts);
 *     2. the plugin is loaded (plugin-loader.ts: built-in folder, installed package, the
 *        operator's path) and applied, with what it requires. Its daemon-wide options (the caller's `options`: storage's `--storage-opt`) are read
 *        through its manifest's declarations first (plugin-options.ts);
 *     3. the factory hook (`hooks.create<Kind>Driver.for(name)`) is called with the kind's
 *        context, which the caller makes with the typed options; a plugin loaded from a path
 *        answers under its manifest's name. A log, volume or network driver is kept with its
 *        manifest's option declarations applied after its own checks (`withDeclaredOptions`);
 *     4. the driver is kept under (kind, name): a second ask gets the same driver, and asks made
 *        while the first is under way wait for it. A failure is not kept, so the next ask tries
 *        again (a package installed meanwhile, a server that came back).
 * Failures come from the error catalogue: the loader's (ENGINE_ERR_PLUGIN_*), or
 * ENGINE_ERR_PLUGIN_MADE_NO_DRIVER for a plugin that tapped no factory hook of that name.
 * Callers turn them into their kind's answer where Docker has one (a volume plugin not found is a
 * 404, a network driver not found too).
 */
import { readdirSync } from "node:fs";
import { parsePluginId, type EnginePlugin } from "../../core/contracts/plugin.js";
import type { LogDriver, LogDriverContext } from "../../core/contracts/log.js";
import type { NetworkContext, NetworkDriver } from "../../core/contracts/network.js";
import type { RuntimeContext, RuntimeDriver } from "../../core/contracts/runtime.js";
import type { StorageContext, StorageDriver } from "../../core/contracts/storage.js";
import type { VolumeDriver, VolumeDriverContext } from "../../core/contracts/volume.js";
import { errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import type { PluginOptionValues } from "../../core/options/plugin-options.js";
import { loadPlugins, type AppliedPlugin, type LoaderDeps } from "./plugin-loader.js";
import { withDeclaredOptions } from "./plugin-options.js";
import { isPathReference, type ChosenBy } from "./resolve-plugin.js";

/** Each kind's driver and the context its factory hook is called with. */
export interface DriverKinds {
  storage: { driver: StorageDriver; context: StorageContext };
  runtime: { driver: RuntimeDriver; context: RuntimeContext };
  network: { driver: NetworkDriver; context: NetworkContext };
  log: { driver: LogDriver; context: LogDriverContext };
  volume: { driver: VolumeDriver; context: VolumeDriverContext };
}
export type DriverKind = keyof DriverKinds;

/** A factory hook of one kind, as the registry calls it. */
type Factory<K extends DriverKind> = (name: string) => { promise(ctx: DriverKinds[K]["context"]): Promise<DriverKinds[K]["driver"] | undefined> } | undefined;

/** Where each kind's factory is, and the hook's name for messages. */
const FACTORIES: { [K in DriverKind]: { hook: string; of: (hooks: EngineHooks) => Factory<K> } } = {
  storage: { hook: "createStorageDriver", of: (h) => (n) => h.createStorageDriver.get(n) },
  runtime: { hook: "createRuntime", of: (h) => (n) => h.createRuntime.get(n) },
  network: { hook: "createNetworkDriver", of: (h) => (n) => h.createNetworkDriver.get(n) },
  log: { hook: "createLogDriver", of: (h) => (n) => h.createLogDriver.get(n) },
  volume: { hook: "createVolumeDriver", of: (h) => (n) => h.createVolumeDriver.get(n) },
};

export interface DriverRequest<K extends DriverKind> {
  /**
   * What the factory hook is given, for the name it answers under, with the plugin's daemon-wide
   * options as its declarations read them; asked only when the driver is made.
   */
  context: (name: string, options: PluginOptionValues) => DriverKinds[K]["context"];
  /**
   * The plugin's daemon-wide options as given, for the name it answers under; called once the
   * plugin is loaded and before it is applied (a throw stops the making).
   */
  options?: (plugin: EnginePlugin, name: string) => Record<string, string>;
  /** Who named the driver; a client's choice is by name only. Default: the operator. */
  chosenBy?: ChosenBy;
  /** A candidate that may be skipped when it is not for this host (storage auto-detection). */
  optional?: boolean;
  /** What the registry keeps: the driver as made, or as the caller wraps it once. */
  wrap?: (driver: DriverKinds[K]["driver"], plugin: AppliedPlugin | undefined) => DriverKinds[K]["driver"] | Promise<DriverKinds[K]["driver"]>;
}

/** What the parts that open drivers are given: the loader's deps and the registry. */
export type PluginHost = LoaderDeps & { hooks: EngineHooks; drivers: DriverRegistry };

export class DriverRegistry {
  private readonly made = new Map<string, Promise<unknown>>();

  constructor(private readonly loader: LoaderDeps & { hooks: EngineHooks }) {}

  /** The loader's deps with this registry: what `open*` functions take. */
  host(): PluginHost {
    return { ...this.loader, drivers: this };
  }

  /** The driver of `kind` named `name` (see the header). */
  driver<K extends DriverKind>(kind: K, name: string, req: DriverRequest<K>): Promise<DriverKinds[K]["driver"]> {
    const key = `${kind}\0${name}`;
    let made = this.made.get(key) as Promise<DriverKinds[K]["driver"]> | undefined;
    if (made) return made;
    // refused before anything is kept or loaded (the loader refuses it too)
    if (req.chosenBy === "client" && isPathReference(name)) return Promise.reject(errors.pluginPathFromClient(kind, name));
    made = this.make(kind, name, req);
    this.made.set(key, made);
    made.catch(() => this.made.delete(key));
    return made;
  }

  /** The drivers made so far, of one kind (for shutdown). */
  async madeOf<K extends DriverKind>(kind: K): Promise<DriverKinds[K]["driver"][]> {
    const prefix = `${kind}\0`;
    const settled = await Promise.allSettled([...this.made].filter(([key]) => key.startsWith(prefix)).map(([, d]) => d));
    return settled.flatMap((s) => (s.status === "fulfilled" ? [s.value as DriverKinds[K]["driver"]] : []));
  }

  /**
   * The names of one kind's drivers this daemon has without a path: its built-in plugins
   * (`plugins/<kind>-<name>`) and any made since (an installed package's), sorted.
   */
  names(kind: DriverKind): string[] {
    let builtin: string[] = [];
    try {
      builtin = readdirSync(this.loader.resolve.builtinDir).filter((d) => d.startsWith(`${kind}-`)).map((d) => d.slice(kind.length + 1));
    } catch {
      // no built-in plugins folder (a trimmed install)
    }
    const made = [...this.made.keys()].filter((k) => k.startsWith(`${kind}\0`)).map((k) => k.slice(kind.length + 1));
    return [...new Set([...builtin, ...made.filter((n) => !isPathReference(n))])].sort();
  }

  private async make<K extends DriverKind>(kind: K, name: string, req: DriverRequest<K>): Promise<DriverKinds[K]["driver"]> {
    // a plugin loaded from a path taps its factory under its manifest's name
    const answersAs = (plugin: EnginePlugin) => (isPathReference(name) ? parsePluginId(plugin.manifest.id).name : name);
    const given = req.options;
    const optionsFor = given && ((p: EnginePlugin) => (p.manifest.kind === kind ? given(p, answersAs(p)) : {}));
    const applied = await loadPlugins([{ kind, name, chosenBy: req.chosenBy, optional: req.optional }], { ...this.loader, ...(optionsFor ? { optionsFor } : {}) });
    const plugin = applied.find((p) => p.plugin.manifest.kind === kind);
    const key = plugin ? answersAs(plugin.plugin) : name;
    const factory = FACTORIES[kind];
    const made = await (factory.of(this.loader.hooks) as Factory<K>)(key)?.promise(req.context(key, plugin?.options ?? {}));
    if (!made) throw errors.pluginMadeNoDriver(kind, name, factory.hook);
    const driver = plugin && (kind === "log" || kind === "volume" || kind === "network")
      ? withDeclaredOptions(kind, key, plugin.plugin.manifest, made as LogDriver | VolumeDriver | NetworkDriver) as DriverKinds[K]["driver"]
      : made;
    return req.wrap ? await req.wrap(driver, plugin) : driver;
  }
}
