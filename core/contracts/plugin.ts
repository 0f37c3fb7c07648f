/**
 * The plugin contract: what every loadable part of the engine is.
 *
 * Vocabulary
 * - plugin: a module whose default export is `{ manifest, apply }`.
 * - id: `<kind>.<name>`, e.g. `storage.overlay2`, `authz.readonly`. Unique in one daemon.
 * - kind: the driver family it belongs to; a daemon selects drivers of a kind by name
 *   (`--storage-driver overlay2` selects `storage.overlay2`).
 * - requires: ids of plugins that must be applied first; the loader loads them too.
 * - options: the namespaced options the plugin accepts (`overlay2.size`), each with a line of
 *   description. The host reads the storage plugins' declarations to refuse a `--storage-opt`
 *   that belongs to another driver or to none (host/storage/option-owners.ts); the driver checks
 *   the values, which it receives in its driver context (`StorageContext.options`).
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

export const PLUGIN_KINDS = ["storage", "runtime", "network", "log", "authz", "volume"] as const;
export type PluginKind = (typeof PLUGIN_KINDS)[number];

export interface PluginOptionSpec {
  /** One line for `--help` and the README. */
  description: string;
}

export interface PluginManifest {
  /** `<kind>.<name>`; the kind part must equal `kind`. */
  id: string;
  kind: PluginKind;
  version?: string;
  description?: string;
  /** Ids that must be applied before this one. */
  requires?: string[];
  /** Namespaced options this plugin accepts, by full name (`overlay2.size`). */
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
   * The values of this plugin's namespaced options, from the loader's `optionsFor` when its
   * caller gives one. The daemon gives none, so this is `{}`: drivers get their options in their
   * driver context (`StorageContext.options`, a logger's `LoggerContext.options`).
   */
  options: Record<string, string>;
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
