/**
 * The plugin contract: what every loadable part of the engine is.
 *
 * Vocabulary
 * - plugin: a module whose default export is `{ manifest, apply }`.
 * - id: `<kind>.<name>`, e.g. `storage.overlay2`, `authz.readonly`. Unique in one daemon.
 * - kind: the driver family it belongs to; a daemon selects drivers of a kind by name
 *   (`--storage-driver overlay2` selects `storage.overlay2`).
 * - requires: ids of plugins that must be applied first; the loader loads them too.
 * - options: the namespaced options the plugin accepts (`overlay2.size`); the plugin validates
 *   their values, and a namespaced option no plugin declares is an error.
 * - capabilities: free-form words that say what optional abilities the plugin has, reported
 *   in `/info` and checked by callers instead of guessing.
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
  /** The values of this plugin's namespaced options, as given by the operator. */
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
