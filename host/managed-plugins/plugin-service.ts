/**
 * Docker's managed plugins (`/plugins`, `docker plugin ...`): made from a folder
 * (`docker plugin create`), kept in the store (plugin-store.ts), set, enabled (run as a
 * container by the runner, plugin-runner.ts) and disabled, removed; and used: an enabled
 * plugin is reached at its socket by what names it (`--authorization-plugin name:tag`; volume
 * drivers through `endpoint`).
 *
 * A plugin is named by its name (`p`, `p:tag`, `docker.io/library/p:latest` alike), its id, or
 * a prefix of its id, as Docker's store resolves them. Operations on one plugin run one at a
 * time. Events `plugin create|enable|disable|remove` go to `/events` as Docker's do.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Readable } from "node:stream";
import type { Logger } from "pino";
import { KeyedQueue } from "../../core/async/keyed-queue.js";
import type { RuntimeDriver } from "../../core/contracts/runtime.js";
import { EngineError, errors } from "../../core/errors.js";
import { makeEvent } from "../../core/events/event.js";
import type { EngineHooks } from "../../core/hooks.js";
import { familiarName, formatReference, parseReference, type Reference } from "../../core/images/reference.js";
import type { RuleHost } from "../../core/options/rules.js";
import type { DaemonConfig } from "../../core/options/table.js";
import { ENGINE_VERSION } from "../../core/version.js";
import type { PluginEndpoint } from "../remote-plugins/discover.js";
import type { RegistryService } from "../registry/registry.js";
import { keepBlob, stageContext } from "./plugin-create.js";
import { fetchConfig, fetchPlugin, privilegesOf, pushPlugin, samePrivileges, type PluginPrivilege } from "./plugin-distribution.js";
import { initialSettings, interfaceType, pluginDocument, provides, type Plugin } from "./plugin-object.js";
import { PluginRunner } from "./plugin-runner.js";
import { applySettings } from "./plugin-set.js";
import { PluginStore, type PluginRecord } from "./plugin-store.js";

export interface ManagedPluginsDeps {
  dataRoot: string;
  execRoot: string;
  config: () => DaemonConfig;
  host: RuleHost;
  /** The runtime plugin, once the daemon has opened it (before `restore`). */
  runtime: () => RuntimeDriver;
  hooks: EngineHooks;
  /** For push, pull, upgrade and privileges. */
  registry: RegistryService;
  log: Logger;
}

/** What a transfer needs besides the registry: the client's credentials, its signal, where progress goes. */
export type TransferOptions = Omit<Parameters<typeof pushPlugin>[3], "registry">;

export interface PluginListFilters {
  enabled?: boolean;
  capability?: string[];
}

/** Docker's `docker plugin enable` default, and what a restore at start waits. */
export const DEFAULT_ENABLE_TIMEOUT = 30;
/** Restarts in a row of a plugin whose process keeps ending, before it is left stopped. */
const MAX_RESTARTS = 3;

export class ManagedPlugins {
  private readonly queue = new KeyedQueue();
  private readonly runner: PluginRunner;
  /** Plugins running, since when, or starting (""). */
  private readonly running = new Map<string, string>();
  /** Plugins being stopped on purpose: their exit is no crash. */
  private readonly stopping = new Set<string>();
  private readonly restarts = new Map<string, number>();
  /** Users of each plugin (volumes of a managed driver...): a plugin in use is not disabled or removed without force. */
  private readonly refs = new Map<string, number>();
  private readonly creating = new Set<string>();
  /** Each running plugin's enable timeout, in seconds: the deadline of calls to it, as Docker's client takes it. */
  private readonly timeouts = new Map<string, number>();
  private readonly disabledListeners: ((plugin: Plugin) => void)[] = [];
  private closed = false;

  private constructor(
    private readonly deps: ManagedPluginsDeps,
    private readonly store: PluginStore,
  ) {
    this.runner = new PluginRunner({
      execRoot: deps.execRoot,
      config: deps.config,
      host: deps.host,
      runtime: deps.runtime,
      log: deps.log,
      has: (id) => this.running.has(id),
      // a plugin starting is not listed: the supervisor's catch-up takes a listed one it does not know for lost
      running: () => [...this.running].filter(([, startedAt]) => startedAt !== "").map(([id, startedAt]) => ({ id, startedAt })),
      onExit: (id, code) => this.exited(id, code),
    });
  }

  static async open(deps: ManagedPluginsDeps): Promise<ManagedPlugins> {
    return new ManagedPlugins(deps, await PluginStore.open(join(deps.dataRoot, "plugins")));
  }

  // --- names --------------------------------------------------------------------------------

  /** The plugin `refOrId` names (Docker's resolvePluginID); 404 in Docker's words when none. */
  resolve(refOrId: string): PluginRecord {
    if (/^[a-f0-9]{64}$/.test(refOrId)) {
      const rec = this.store.get(refOrId);
      if (!rec) throw errors.managedPluginNotFound(refOrId);
      return rec;
    }
    let name: string | undefined;
    try {
      const ref = parseReference(refOrId, "latest");
      if (!ref.digest) name = familiarName(formatReference(ref));
    } catch {
      throw errors.managedPluginNotFound(refOrId);
    }
    if (name === undefined) throw errors.managedPluginNotFound(refOrId);
    const byName = this.store.list().find((r) => r.plugin.Name === name);
    if (byName) return byName;
    const byPrefix = this.store.list().filter((r) => r.plugin.Id.startsWith(refOrId));
    if (byPrefix.length > 1) throw errors.managedPluginAmbiguous(refOrId);
    if (byPrefix.length === 0) throw errors.managedPluginNotFound(refOrId);
    return byPrefix[0];
  }

  /** The full id of the plugin `refOrId` names. */
  idOf(refOrId: string): string {
    return this.resolve(refOrId).plugin.Id;
  }

  /** Whether `refOrId` names a managed plugin. */
  has(refOrId: string): boolean {
    try {
      this.resolve(refOrId);
      return true;
    } catch {
      return false;
    }
  }

  // --- reading ------------------------------------------------------------------------------

  list(filters: PluginListFilters = {}): Plugin[] {
    return this.store
      .list()
      .filter((r) => filters.enabled === undefined || r.plugin.Enabled === filters.enabled)
      .filter((r) => !filters.capability?.length || (r.plugin.Config.Interface.Types ?? []).every((t) => filters.capability!.some((f) => matches(f, interfaceType(t).capability))))
      .map((r) => pluginDocument(r.plugin));
  }

  inspect(refOrId: string): Plugin {
    return pluginDocument(this.resolve(refOrId).plugin);
  }

  // --- changes ------------------------------------------------------------------------------

  /** `POST /plugins/create?name=`: a plugin from a tar of its folder. */
  async create(repoName: string, body: Readable): Promise<Plugin> {
    const name = pluginName(repoName);
    if (this.store.list().some((r) => r.plugin.Name === name) || this.creating.has(name)) throw errors.managedPluginExists(name);
    this.creating.add(name);
    const stage = await this.store.stage();
    try {
      const { config, layer } = await stageContext(stage, body);
      if (this.store.list().some((r) => r.plugin.Name === name)) throw errors.managedPluginExists(name);
      config.DockerVersion = ENGINE_VERSION;
      config.rootfs = { diff_ids: [layer], type: "layers" };
      const plugin: Plugin = { Config: reorder(config), Enabled: false, Id: randomBytes(32).toString("hex"), Name: name, PluginReference: name, Settings: initialSettings(config) };
      // the configuration as a push sends it: as made, whatever is set later (Docker's config blob)
      const configBlob = await keepBlob(stage, Buffer.from(`${JSON.stringify(plugin.Config)}\n`));
      await this.store.commit(stage, { plugin, layers: [layer], config: configBlob });
      this.event("create", plugin.Id, name);
      return pluginDocument(plugin);
    } catch (err) {
      await this.store.discard(stage).catch(() => {});
      throw err;
    } finally {
      this.creating.delete(name);
    }
  }

  /** `POST /plugins/{name}/set`. */
  set(refOrId: string, args: readonly string[]): Promise<void> {
    const { plugin } = this.resolve(refOrId);
    return this.queue.run(plugin.Id, async () => {
      const rec = this.current(plugin.Id);
      await this.store.save({ ...rec, plugin: applySettings(rec.plugin, args) });
    });
  }

  /** `POST /plugins/{name}/enable?timeout=`. */
  enable(refOrId: string, timeoutSeconds: number): Promise<void> {
    const { plugin } = this.resolve(refOrId);
    return this.queue.run(plugin.Id, async () => {
      const rec = this.current(plugin.Id);
      if (rec.plugin.Enabled) throw errors.managedPluginEnabled(rec.plugin.Name, "plugin already enabled");
      await this.startPlugin(rec, timeoutSeconds);
      await this.store.save({ ...rec, plugin: { ...rec.plugin, Enabled: true } });
      this.event("enable", rec.plugin.Id, refOrId);
    });
  }

  /** `POST /plugins/{name}/disable?force=`. */
  disable(refOrId: string, force: boolean): Promise<void> {
    const { plugin } = this.resolve(refOrId);
    return this.queue.run(plugin.Id, async () => {
      const rec = this.current(plugin.Id);
      if (!force && (this.refs.get(rec.plugin.Id) ?? 0) > 0) throw errors.managedPluginInUse(rec.plugin.Name);
      if (!rec.plugin.Enabled) throw errors.managedPluginDisabled(rec.plugin.Name, "plugin is already disabled");
      for (const listener of this.disabledListeners) listener(rec.plugin);
      await this.stopPlugin(rec.plugin.Id);
      await this.store.save({ ...rec, plugin: { ...rec.plugin, Enabled: false } });
      this.event("disable", rec.plugin.Id, refOrId);
    });
  }

  /** `DELETE /plugins/{name}?force=`: an enabled plugin, or one in use, only with force. */
  remove(refOrId: string, force: boolean): Promise<void> {
    const { plugin } = this.resolve(refOrId);
    return this.queue.run(plugin.Id, async () => {
      const rec = this.current(plugin.Id);
      if (!force) {
        if ((this.refs.get(rec.plugin.Id) ?? 0) > 0) throw errors.managedPluginInUse(rec.plugin.Name);
        if (rec.plugin.Enabled) throw errors.managedPluginEnabled(rec.plugin.Name);
      }
      if (rec.plugin.Enabled || this.running.has(rec.plugin.Id)) {
        for (const listener of this.disabledListeners) listener(rec.plugin);
        await this.stopPlugin(rec.plugin.Id).catch((err: Error) => this.deps.log.error({ err, plugin: rec.plugin.Name }, "failed to disable the plugin being removed"));
      }
      await this.store.remove(rec.plugin.Id);
      this.refs.delete(rec.plugin.Id);
      this.event("remove", rec.plugin.Id, refOrId);
    });
  }

  // --- registries -----------------------------------------------------------------------------

  /** `POST /plugins/{name}/push`: to the registry and repository its name says, under its tag. */
  push(refOrId: string, opts: TransferOptions): Promise<void> {
    const { plugin } = this.resolve(refOrId);
    return this.queue.run(plugin.Id, async () => {
      const rec = this.current(plugin.Id);
      const ref = parseReference(rec.plugin.Name, "latest");
      await pushPlugin(this.store.dir(rec.plugin.Id), rec, ref, { ...opts, registry: this.deps.registry });
    });
  }

  /** `GET /plugins/privileges?remote=`: what the plugin in the registry asks of the host. */
  async privileges(remote: string, opts: Omit<TransferOptions, "emit">): Promise<PluginPrivilege[] | null> {
    return privilegesOf(await fetchConfig(remoteReference(remote), { ...opts, registry: this.deps.registry }));
  }

  /**
   * `POST /plugins/pull?remote=&name=`: the plugin from the registry, installed disabled under
   * `name` (the remote's name without one), once the privileges the client accepted are those
   * it asks for. Resolves with its name.
   */
  async pull(remote: string, localName: string, accepted: PluginPrivilege[] | null, opts: TransferOptions): Promise<string> {
    const ref = remoteReference(remote);
    const name = this.pullName(remote, localName);
    if (this.store.list().some((r) => r.plugin.Name === name) || this.creating.has(name)) throw errors.managedPluginExists(name);
    this.creating.add(name);
    const stage = await this.store.stage();
    try {
      const fetched = await fetchPlugin(ref, stage, { ...opts, registry: this.deps.registry });
      if (!samePrivileges(privilegesOf(fetched.config), accepted)) throw errors.managedPluginPrivileges();
      if (this.store.list().some((r) => r.plugin.Name === name)) throw errors.managedPluginExists(name);
      const config = fetched.config;
      const plugin: Plugin = { Config: config, Enabled: false, Id: randomBytes(32).toString("hex"), Name: name, PluginReference: formatReference(ref), Settings: initialSettings(config) };
      await this.store.commit(stage, { plugin, layers: fetched.layers, config: fetched.configDigest });
      this.event("pull", familiarName(formatReference(ref)), name);
      return name;
    } catch (err) {
      await this.store.discard(stage).catch(() => {});
      throw err;
    } finally {
      this.creating.delete(name);
    }
  }

  /** The name a pull installs the plugin under (the `Docker-Plugin-Name` of its answer). */
  pullName(remote: string, localName: string): string {
    return installName(remoteReference(remote), localName);
  }

  /** `POST /plugins/{name}/upgrade?remote=`: a disabled plugin's root filesystem and configuration from the registry; its settings stay. */
  upgrade(refOrId: string, remote: string, accepted: PluginPrivilege[] | null, opts: TransferOptions): Promise<void> {
    const { plugin } = this.resolve(refOrId);
    const ref = remoteReference(remote);
    return this.queue.run(plugin.Id, async () => {
      const rec = this.current(plugin.Id);
      if (rec.plugin.Enabled) throw errors.managedPluginEnabled(rec.plugin.Name, "plugin must be disabled before upgrading");
      const stage = await this.store.stage();
      try {
        const fetched = await fetchPlugin(ref, stage, { ...opts, registry: this.deps.registry });
        if (!samePrivileges(privilegesOf(fetched.config), accepted)) throw errors.managedPluginPrivileges();
        const next: PluginRecord = {
          plugin: { ...rec.plugin, Config: fetched.config, PluginReference: formatReference(ref) },
          layers: fetched.layers,
          config: fetched.configDigest,
        };
        await this.store.replace(stage, next);
        this.event("pull", familiarName(formatReference(ref)), refOrId);
      } catch (err) {
        await this.store.discard(stage).catch(() => {});
        throw err;
      }
    });
  }

  // --- use ----------------------------------------------------------------------------------

  /**
   * Where an enabled plugin providing `capability` (`authz`, `volumedriver`...) is reached: the
   * same endpoint the socket and spec-file discovery gives (host/remote-plugins/discover.ts).
   * Throws Docker's errors: not found, found but disabled, not providing the capability.
   */
  endpoint(refOrId: string, capability: string): PluginEndpoint {
    const { plugin } = this.resolve(refOrId);
    if (!plugin.Enabled) throw errors.managedPluginDisabled(refOrId);
    if (!provides(plugin, capability)) throw errors.managedPluginCapability(refOrId, capability.toLowerCase());
    return this.runner.endpoint(plugin, refOrId, (this.timeouts.get(plugin.Id) ?? DEFAULT_ENABLE_TIMEOUT) * 1000);
  }

  /**
   * The host path the paths a plugin answers are relative to (Docker's BasePath: its root
   * filesystem; a volume plugin's Mountpoint `/data/v1` is `<rootfs>/data/v1` on the host, seen
   * there through its PropagatedMount).
   */
  basePath(refOrId: string): string {
    return this.store.rootfs(this.resolve(refOrId).plugin.Id);
  }

  /** One more user of the plugin (Docker's Acquire): it is then in use. */
  acquire(refOrId: string): void {
    const id = this.resolve(refOrId).plugin.Id;
    this.refs.set(id, (this.refs.get(id) ?? 0) + 1);
  }

  /** One user fewer (Docker's Release). */
  release(refOrId: string): void {
    const id = this.resolve(refOrId).plugin.Id;
    const n = (this.refs.get(id) ?? 0) - 1;
    if (n > 0) this.refs.set(id, n);
    else this.refs.delete(id);
  }

  /** Told before a plugin is disabled (or removed enabled): its users let it go (the authorization chain drops it, as Docker's does). */
  onDisable(listener: (plugin: Plugin) => void): void {
    this.disabledListeners.push(listener);
  }

  // --- the daemon's start and stop ------------------------------------------------------------

  /** At start: every enabled plugin runs again (one left running, under --live-restore, is taken as it is). */
  async restore(): Promise<void> {
    const enabled = this.store.list().filter((r) => r.plugin.Enabled);
    // ours before the supervisor is first asked: its catch-up removes what is not
    for (const rec of enabled) this.running.set(rec.plugin.Id, "");
    // what a crash left running that is not enabled (a disable or rm cut short) is stopped and cleaned
    await this.runner.sweep((id) => this.running.has(id)).catch((err: Error) => this.deps.log.warn({ err }, "cannot clean the plugins' supervisor"));
    await Promise.all(
      enabled.map((rec) =>
        this.queue.run(rec.plugin.Id, async () => {
          try {
            if (await this.runner.isRunning(rec.plugin.Id)) {
              this.running.set(rec.plugin.Id, new Date().toISOString());
              await this.runner.waitReady(rec.plugin, DEFAULT_ENABLE_TIMEOUT);
              return;
            }
            this.running.delete(rec.plugin.Id);
            await this.startPlugin(rec, DEFAULT_ENABLE_TIMEOUT);
          } catch (err) {
            // shown disabled until the next start, which tries again (Docker's restore)
            this.deps.log.error({ err, plugin: rec.plugin.Name }, "failed to restore plugin");
            await this.stopPlugin(rec.plugin.Id).catch(() => {});
            rec.plugin.Enabled = false;
          }
        }),
      ),
    );
  }

  /** At the daemon's stop: plugins stop (they start again with it), unless --live-restore keeps them. */
  async shutdown(liveRestore: boolean): Promise<void> {
    this.closed = true;
    if (!liveRestore) {
      await Promise.all([...this.running.keys()].map((id) => this.stopPlugin(id).catch((err: Error) => this.deps.log.error({ err, plugin: id }, "stopping a plugin failed"))));
    }
    await this.runner.close(liveRestore);
  }

  // --- inside -------------------------------------------------------------------------------

  private current(id: string): PluginRecord {
    const rec = this.store.get(id);
    if (!rec) throw errors.managedPluginNotFound(id);
    return rec;
  }

  private async startPlugin(rec: PluginRecord, timeoutSeconds: number): Promise<void> {
    const id = rec.plugin.Id;
    this.running.set(id, "");
    this.timeouts.set(id, timeoutSeconds);
    try {
      await this.runner.start(rec.plugin, this.store.dir(id), timeoutSeconds, () => this.running.set(id, new Date().toISOString()));
    } catch (err) {
      this.running.delete(id);
      await this.runner.releaseMounts(this.store.dir(id)).catch(() => {});
      if (err instanceof EngineError) throw err;
      throw errors.managedPluginStartFailed(rec.plugin.Name, (err as Error).message);
    }
  }

  private async stopPlugin(id: string): Promise<void> {
    this.stopping.add(id);
    try {
      await this.runner.stop(id);
      this.running.delete(id);
      await this.runner.releaseMounts(this.store.dir(id));
    } finally {
      this.stopping.delete(id);
    }
  }

  /** A plugin's process ended: one stopped on purpose is done; an enabled one is started again (Docker's restart), a few times in a row at most. */
  private exited(id: string, exitCode: number): void {
    if (this.stopping.has(id) || !this.running.has(id)) return;
    void this.queue
      .run(id, async () => {
        const rec = this.store.get(id);
        if (this.stopping.has(id) || !this.running.has(id)) return;
        this.deps.log.warn({ plugin: rec?.plugin.Name ?? id, exitCode }, "a plugin's process ended");
        await this.stopPlugin(id);
        if (!rec?.plugin.Enabled || this.closed) return;
        const n = (this.restarts.get(id) ?? 0) + 1;
        if (n > MAX_RESTARTS) {
          this.deps.log.error({ plugin: rec.plugin.Name }, `the plugin ended ${MAX_RESTARTS} times in a row; it is left stopped until it is enabled again or the daemon starts`);
          rec.plugin.Enabled = false;
          this.restarts.delete(id);
          return;
        }
        this.restarts.set(id, n);
        await new Promise((r) => setTimeout(r, 500 * n));
        await this.startPlugin(rec, DEFAULT_ENABLE_TIMEOUT);
        this.restarts.delete(id);
      })
      .catch((err: Error) => this.deps.log.error({ err, plugin: id }, "restarting a plugin failed"));
  }

  private event(action: string, id: string, name: string): void {
    this.deps.hooks.event.call(makeEvent("plugin", action, id, { name }));
  }
}

/** The plugin a `remote` names (its tag `latest` unless it has a tag or digest). */
function remoteReference(remote: string): Reference {
  return parseReference(remote, "latest");
}

/** The name a pulled plugin is installed under (Docker's getName): `name` given (`latest` added), else the remote's. */
function installName(ref: Reference, name: string): string {
  if (name) {
    let digest;
    try {
      digest = parseReference(name, null).digest;
    } catch (err) {
      throw errors.managedPluginInvalidName(name, (err as Error).message);
    }
    if (digest) throw errors.managedPluginDigestName();
    return pluginName(name);
  }
  return familiarName(formatReference({ ...ref, digest: undefined, tag: ref.tag ?? "latest" }));
}

/** The name a plugin is created under (`p` -> `p:latest`), or Docker's refusal. */
export function pluginName(repoName: string): string {
  let ref;
  try {
    ref = parseReference(repoName, null);
  } catch (err) {
    throw errors.managedPluginInvalidName(repoName, (err as Error).message);
  }
  if (ref.digest) throw errors.managedPluginCanonicalName();
  return familiarName(formatReference({ ...ref, tag: ref.tag ?? "latest" }));
}

/** A filter value matches as Docker's filters.Args.Match does: exactly, or as a regular expression. */
function matches(filter: string, value: string): boolean {
  if (filter === value) return true;
  try {
    return new RegExp(filter).test(value);
  } catch {
    return false;
  }
}

/** The configuration with its keys in Docker's order (DockerVersion and rootfs were set after parsing). */
function reorder(c: Plugin["Config"]): Plugin["Config"] {
  const { Args, Description, DockerVersion, Documentation, Entrypoint, Env, Interface, IpcHost, Linux, Mounts, Network, PidHost, PropagatedMount, User, WorkDir, rootfs } = c;
  return { Args, Description, ...(DockerVersion ? { DockerVersion } : {}), Documentation, Entrypoint, Env, Interface, IpcHost, Linux, Mounts, Network, PidHost, PropagatedMount, User, WorkDir, ...(rootfs ? { rootfs } : {}) };
}
