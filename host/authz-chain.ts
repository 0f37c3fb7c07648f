/**
 * The authorization chain: the plugins named by `--authorization-plugin`, asked in the
 * operator's order, the first denial winning. Each authorization plugin taps private
 * authorization hooks (its other taps go to the daemon's hooks), so that a reload can replace
 * the whole list in one swap, and swap it back if the reload fails.
 *
 * A name is looked for as a module first (built-in `plugins/authz-<name>`, then an installed
 * package), then as a managed plugin (`docker plugin`, host/managed-plugins/: it must be
 * enabled and implement `docker.authz/1.0`), then as a server in another process (a socket or
 * spec file, see `host/remote-plugins/discover.ts`); a path is a module, or a spec file when it ends in `.spec` or
 * `.json`. A name found nowhere stops the start, or fails the reload (the chain in force
 * stays); a plugin found but not answering is put in the chain all the same, and refuses
 * every request until it answers: a typo must not leave the daemon unprotected.
 *
 * Each request is judged, request and response, by the chain in force when it arrived.
 */
import { resolve } from "node:path";
import { AsyncSeriesBailHook } from "tapable";
import type { AuthzDenial, AuthzRequest, AuthzResponse } from "../core/contracts/authz.js";
import { errors } from "../core/errors.js";
import { createHooks, type EngineHooks } from "../core/hooks.js";
import { DEFAULT_PLUGIN_DIRS, discoverPlugin, endpointFromSpecFile, isSpecFilePath, type PluginDirs, type PluginEndpoint } from "./remote-plugins/discover.js";
import { remoteAuthzPlugin } from "./authz-remote/remote-plugin.js";
import { importPlugin } from "./plugins/load-plugin.js";
import { loadPlugins, type AppliedPlugin, type LoaderDeps, type PluginSelection } from "./plugins/plugin-loader.js";
import { findPluginModule, isPathReference } from "./plugins/resolve-plugin.js";

/** What the chain needs of the managed plugins: an enabled authorization plugin's endpoint, and word of a disable. */
export interface ManagedAuthzSource {
  has(name: string): boolean;
  /** The full id of the plugin `name` names. */
  idOf(name: string): string;
  endpoint(name: string, capability: string): PluginEndpoint;
  onDisable(listener: (plugin: { Id: string; Name: string }) => void): void;
}

interface Link {
  id: string;
  request: AsyncSeriesBailHook<[AuthzRequest], AuthzDenial | undefined>;
  response: AsyncSeriesBailHook<[AuthzResponse], AuthzDenial | undefined>;
}

export class AuthzChain {
  private links: Link[] = [];
  private tapped = false;
  private managed?: ManagedAuthzSource;
  /** The chain each request in flight was judged by, for its response check. */
  private readonly judgedBy = new WeakMap<AuthzRequest, Link[]>();

  constructor(
    private readonly hooks: EngineHooks,
    private readonly loader: Omit<LoaderDeps, "hooks" | "hooksFor">,
    private readonly dirs: PluginDirs = DEFAULT_PLUGIN_DIRS,
  ) {}

  /**
   * Managed plugins become names the chain finds. One disabled (or removed) while in the chain
   * leaves it, as Docker's daemon drops it from its authorization middleware.
   */
  useManagedPlugins(source: ManagedAuthzSource): void {
    this.managed = source;
    source.onDisable((plugin) => {
      for (const l of this.links) if (this.managedIds.get(l.id) === plugin.Id) this.dropped.add(l);
      this.links = this.links.filter((l) => !this.dropped.has(l));
    });
  }

  /** The managed plugin (its id) behind a link of the chain. */
  private readonly managedIds = new Map<string, string>();
  /**
   * Links whose managed plugin was disabled: not asked about the answers of requests they judged
   * (the disable's own among them), as Docker's middleware reads its chain again after the handler.
   */
  private readonly dropped = new WeakSet<Link>();

  /** The ids of the plugins in force, in order. */
  ids(): string[] {
    return this.links.map((l) => l.id);
  }

  /**
   * Loads the named plugins and makes them the chain; throws (changing nothing) when one
   * fails. Resolves with the function that puts the previous chain back.
   */
  async replace(names: readonly string[]): Promise<{ plugins: AppliedPlugin[]; undo: () => void }> {
    const selections: PluginSelection[] = [];
    // a name given twice is one plugin, asked once (Docker's newPlugins keeps the first)
    for (const name of new Set(names)) selections.push(await this.select(name));
    const privateHooks = new Map<string, EngineHooks>();
    const plugins = await loadPlugins(selections, {
      ...this.loader,
      hooks: this.hooks,
      hooksFor: (plugin) => {
        if (plugin.manifest.kind !== "authz") return this.hooks;
        const own = createHooks();
        const view = Object.freeze({ ...this.hooks, authorizeRequest: own.authorizeRequest, authorizeResponse: own.authorizeResponse });
        privateHooks.set(plugin.manifest.id, view);
        return view;
      },
    });
    const links = plugins
      .filter((p) => privateHooks.has(p.id))
      .map((p) => ({ id: p.id, request: privateHooks.get(p.id)!.authorizeRequest, response: privateHooks.get(p.id)!.authorizeResponse }));
    const previous = this.links;
    this.links = links;
    if (links.length > 0) this.tapOnce();
    return { plugins, undo: () => void (this.links = previous) };
  }

  /** What the operator's id names: a module, or a server reached over HTTP. */
  private async select(name: string): Promise<PluginSelection> {
    if (isPathReference(name) && isSpecFilePath(name)) return remote(name, endpointFromSpecFile(resolve(name)));
    const module = findPluginModule("authz", name, this.loader.resolve);
    if ("file" in module) return { kind: "authz", name, provided: await importPlugin(module) };
    if (isPathReference(name)) throw errors.pluginNotFound("authz plugin", name, module.tried);
    if (this.managed?.has(name)) {
      const endpoint = this.managed.endpoint(name, "authz");
      this.managedIds.set(`authz.${name}`, this.managed.idOf(name));
      return remote(name, endpoint);
    }
    const server = discoverPlugin(name, this.dirs);
    if ("endpoint" in server) return remote(name, server.endpoint);
    throw errors.pluginNotFound("authz plugin", name, [...module.tried, ...server.tried]);
  }

  /** The daemon's authorization hooks stay untapped (free) until a plugin is configured. */
  private tapOnce(): void {
    if (this.tapped) return;
    this.tapped = true;
    this.hooks.authorizeRequest.tapPromise("authz-chain", async (req) => {
      const links = this.links;
      this.judgedBy.set(req, links);
      for (const link of links) {
        const denial = link.request.isUsed() ? await link.request.promise(req) : undefined;
        if (denial) return denial;
      }
      return undefined;
    });
    this.hooks.authorizeResponse.tapPromise("authz-chain", async (res) => {
      for (const link of this.judgedBy.get(res.request) ?? this.links) {
        if (this.dropped.has(link)) continue;
        const denial = link.response.isUsed() ? await link.response.promise(res) : undefined;
        if (denial) return denial;
      }
      return undefined;
    });
  }
}

function remote(name: string, endpoint: PluginEndpoint): PluginSelection {
  return { kind: "authz", name, provided: { plugin: remoteAuthzPlugin(endpoint), location: { file: endpoint.address, source: endpoint.source } } };
}
