/**
 * The plugin contract: what every loadable part of the engine is.
 *
 * Vocabulary
 * - plugin: a module whose default export is `{ manifest, apply }`.
 * - id: `<kind>.<name>`, e.g. `storage.overlay2`, `authz.readonly`. Unique in one daemon.
 * - kind: the driver family it belongs to; a daemon selects drivers of a kind by name
 *   (`--storage-driver overlay2` selects `storage.overlay2`).
 * - requires: ids of plugins that must be applied first; the loader loads them too.
 * - options: what a user passes to the plugin's drivers, declared in the manifest with a
 *   line of description and a value type named from the option table's (`size`, `uint`,
 *   `bool`; see core/options/plugin-options.ts), or `values` (one of these words). What they
 *   describe depends on the kind, each the source Docker has for it:
 *     storage  `--storage-opt key=value` (daemon-wide), namespaced by driver: `overlay2.size`;
 *     log      `--log-opt` (the daemon's defaults) and a container's `LogConfig.Config`;
 *     network  `docker network create -o` (`Options`);
 *     volume   `docker volume create -o`, a mount's `VolumeOptions.DriverConfig.Options`.
 *   A manifest that declares `options` takes only those (log drivers also take the options
 *   Docker's daemon reads for every log driver: `mode`, `max-buffer-size`, `cache-*`); one
 *   without takes anything and checks it itself. The host reads every declaration through one
 *   path (host/plugins/plugin-options.ts): an undeclared key or a value its type cannot read is
 *   refused, in the words of the kind (a storage option at daemon start, the others with a 400
 *   when a container, network or volume is created), before the plugin sees it. Storage
 *   options, the daemon-wide ones, reach the plugin typed and with their defaults twice:
 *   `PluginContext.options` at apply and `StorageContext.options`. The per-call ones reach the
 *   driver as given (text, as Docker records and shows them); a volume driver's `create` is
 *   also given them typed. `engined --help` and docs/plugin-options.md show every declaration;
 *   the host also refuses a `--storage-opt` that another storage driver declares, naming it
 *   (host/storage/option-owners.ts).
 * - capabilities: words in the manifest for people and tools that read it. The host does not
 *   read them: the optional abilities it acts on are the `capabilities` of the driver object,
 *   declared in each driver contract.
 *
 * Lifecycle
 * 1. resolve: the loader finds the module for a selected name (built-in folder
 *    `plugins/<kind>-<name>/`, installed package `engine-plugin-<kind>-<name>`, or a path the
 *    operator gave; a driver an API request names is never a path). A plugin loaded from a path
 *    is known by its manifest's name: its hooks are tapped `for(<name>)`.
 * 2. check: the manifest is validated; `supported(host)` may answer why the plugin is not for
 *    this host. An unsupported plugin that was selected stops the daemon; one that was only a
 *    candidate (auto-detection) is skipped with an info line.
 * 3. order: plugins are sorted so that each comes after what it requires; a cycle is an error.
 * 4. apply: `apply(hooks, ctx)` taps hooks and nothing else. It must be cheap: heavy work
 *    (mounting, starting processes) waits for the hooks that call it.
 * 5. the daemon runs; on shutdown the `shutdown` hook lets plugins release what they hold.
 *
 * Errors
 * A plugin throws a plain `Error` whose message says, in the operator's or client's terms, what
 * is wrong ("unknown log opt 'x' for json-file log driver"); the host turns it into the
 * catalogue error of the operation that called it (core/errors/*.ts): a 400 for a check of
 * input (`validateOptions`, `checkNetwork`), the operation's own error otherwise (a volume
 * driver's failed create is `ENGINE_ERR_VOLUME_DRIVER_FAILED`). A plugin that has the precise
 * catalogue error for a case throws that instead (a storage driver's unknown option); where the
 * host passes catalogue errors through, the client gets it unchanged. At daemon start (a storage
 * driver's factory, the `start` hook) any throw stops the daemon with its message. What reaches
 * the API unwrapped is a 500 with the message (`toEngineError`), so a check of client input
 * must not rely on that.
 */
import type { Logger } from "pino";
import type { EngineHooks } from "../hooks.js";
import type { PluginOptionTypeName, PluginOptionValues } from "../options/plugin-options.js";

export const PLUGIN_KINDS = ["storage", "runtime", "network", "log", "authz", "volume"] as const;
export type PluginKind = (typeof PLUGIN_KINDS)[number];

/** One option a plugin declares (see Vocabulary). */
export interface PluginOptionSpec {
  /** One line for `--help` and docs/plugin-options.md. */
  description: string;
  /** How the value is read (core/options/plugin-options.ts); default `string`, any text. */
  type?: PluginOptionTypeName;
  /** The words the value must be one of (then `type` is not read). */
  values?: string[];
  /** The value when the option is not given, as text the type reads. */
  default?: string;
}

export interface PluginManifest {
  /** `<kind>.<name>`; the kind part must equal `kind`. */
  id: string;
  kind: PluginKind;
  version?: string;
  description?: string;
  /** Ids that must be applied before this one. */
  requires?: string[];
  /** The options this plugin's drivers take, by the name a user gives (`overlay2.size`, `max-size`). */
  options?: Record<string, PluginOptionSpec>;
  capabilities?: string[];
}

/** Facts about the host a plugin may check in `supported`. */
export interface HostFacts {
  platform: NodeJS.Platform;
  arch: string;
  kernel: string;
  cgroupVersion: 1 | 2;
  /** The daemon's data root (`--data-root`), given to `supported` by the loader: a storage plugin may need a filesystem there. */
  dataRoot?: string;
}

export interface PluginContext {
  /** A child logger whose lines carry the plugin's id. */
  log: Logger;
  dataRoot: string;
  execRoot: string;
  host: HostFacts;
  /**
   * The daemon-wide values of this plugin's options, read by their declared types, defaults
   * filled: a storage driver's `--storage-opt` entries. Plugins of the other kinds get their
   * options per call (see Vocabulary), and `{}` here.
   */
  options: PluginOptionValues;
}

export interface EnginePlugin {
  manifest: PluginManifest;
  /** `true`, or the reason the plugin cannot work on this host. */
  supported?(host: HostFacts): true | string;
  apply(hooks: EngineHooks, ctx: PluginContext): void;
}

/** Splits an id `kind.name` into its parts. */
export function parsePluginId(id: string): { kind: string; name: string } {
  const dot = id.indexOf(".");
  return dot < 0 ? { kind: "", name: id } : { kind: id.slice(0, dot), name: id.slice(dot + 1) };
}
