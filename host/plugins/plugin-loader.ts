/**
 * The plugin host's loader. Given the drivers the configuration selects, it finds each
 * plugin (and what it requires), checks it, orders it and applies it:
 * - a selected plugin that is missing, invalid, not for this host, or fails in `apply` stops
 *   the daemon with a message that says which and why; there is no silent fallback;
 * - an optional candidate (auto-detection tries several) that is not for this host is skipped
 *   with an info line; one that fails is skipped with a warning;
 * - two plugins with one id, a requirement that is nowhere, and a cycle are errors;
 * - a plugin's daemon-wide options (`optionsFor`) are read through its manifest's declarations
 *   (plugin-options.ts) before it is applied: one it does not declare, or a value its type
 *   cannot read, stops the daemon with the kind's error; the typed values are its `ctx.options`.
 */
import type { Logger } from "pino";
import { parsePluginId, type EnginePlugin, type HostFacts, type PluginKind } from "../../core/contracts/plugin.js";
import { errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import type { PluginOptionValues } from "../../core/options/plugin-options.js";
import { importPlugin, type LoadedPlugin } from "./load-plugin.js";
import { checkPluginOptions } from "./plugin-options.js";
import { orderPlugins } from "./order-plugins.js";
import { resolvePlugin, type ChosenBy, type ResolveOptions } from "./resolve-plugin.js";

export interface PluginSelection {
  kind: PluginKind;
  /** A name, or a path to the plugin's module (a path only when the operator chose it). */
  name: string;
  /** Who named it; a client's choice is by name only (see resolve-plugin.ts). Default: the operator. */
  chosenBy?: ChosenBy;
  /** A candidate that may be skipped when it is not for this host. */
  optional?: boolean;
  /** The plugin, already made by the caller (an out-of-process authorization plugin's bridge). */
  provided?: LoadedPlugin;
}

export interface LoaderDeps {
  hooks: EngineHooks;
  log: Logger;
  host: HostFacts;
  dataRoot: string;
  execRoot: string;
  resolve: ResolveOptions;
  /** A plugin's daemon-wide options as given (`--storage-opt`), before its declarations read them; may throw. */
  optionsFor?: (plugin: EnginePlugin) => Record<string, string>;
  /** The hooks a plugin is applied to, when not `hooks` (the authorization chain gives each its own). */
  hooksFor?: (plugin: EnginePlugin) => EngineHooks;
}

export interface AppliedPlugin {
  id: string;
  source: string;
  file: string;
  plugin: EnginePlugin;
  /** Its daemon-wide options as its declarations read them (`ctx.options`). */
  options: PluginOptionValues;
}

interface Candidate extends LoadedPlugin {
  id: string;
  requires: string[];
  optional: boolean;
  /** What selected it: `--authorization-plugin x`, or `required by authz.y`. */
  reason: string;
}

export async function loadPlugins(selections: readonly PluginSelection[], deps: LoaderDeps): Promise<AppliedPlugin[]> {
  const candidates = new Map<string, Candidate>();
  const queue = selections.map((s) => ({ ...s, optional: Boolean(s.optional), reason: `${s.kind} "${s.name}"` }));
  while (queue.length > 0) {
    const sel = queue.shift()!;
    // A requirement the operator already selected some other way (a path) is loaded.
    if (sel.reason.startsWith("required by") && candidates.has(`${sel.kind}.${sel.name}`)) continue;
    const loaded = await tryLoad(sel, deps);
    if (!loaded) continue;
    const { manifest } = loaded.plugin;
    if (manifest.kind !== sel.kind) {
      throw errors.pluginKindMismatch(loaded.location.file, sel.kind, manifest.kind);
    }
    const existing = candidates.get(manifest.id);
    if (existing) {
      if (existing.location.file === loaded.location.file && existing.reason.startsWith("required by")) continue;
      throw errors.pluginDuplicateId(manifest.id, existing.location.file, loaded.location.file);
    }
    const requires = manifest.requires ?? [];
    candidates.set(manifest.id, { ...loaded, id: manifest.id, requires, optional: sel.optional, reason: sel.reason });
    for (const id of requires) {
      if (candidates.has(id) || queue.some((q) => `${q.kind}.${q.name}` === id)) continue;
      const { kind, name } = parsePluginId(id);
      queue.push({ kind: kind as PluginKind, name, optional: sel.optional, chosenBy: sel.chosenBy, reason: `required by ${manifest.id}` });
    }
  }
  const usable = dropUnsupported([...candidates.values()], deps);
  const ordered = orderPlugins(usable);
  const applied: AppliedPlugin[] = [];
  for (const candidate of ordered) {
    const failed = candidate.requires.find((id) => !applied.some((a) => a.id === id));
    if (failed) {
      if (!candidate.optional) throw errors.pluginMissingRequirement(candidate.id, failed);
      deps.log.warn({ plugin: candidate.id }, "plugin skipped: a plugin it requires failed");
      continue;
    }
    const options = optionsOf(candidate, deps);
    if (options && applyOne(candidate, options, deps)) {
      applied.push({ id: candidate.id, source: candidate.location.source, file: candidate.location.file, plugin: candidate.plugin, options });
    }
  }
  return applied;
}

async function tryLoad(
  sel: PluginSelection & { optional: boolean },
  deps: LoaderDeps,
): Promise<LoadedPlugin | undefined> {
  try {
    return sel.provided ?? (await importPlugin(resolvePlugin(sel.kind, sel.name, deps.resolve, sel.chosenBy)));
  } catch (err) {
    if (!sel.optional) throw err;
    deps.log.warn({ kind: sel.kind, name: sel.name, err: (err as Error).message }, "optional plugin could not be loaded");
    return undefined;
  }
}

/**
 * Plugins not for this host, and those that require them or a plugin that could not be loaded,
 * are dropped or are fatal.
 */
function dropUnsupported(candidates: Candidate[], deps: LoaderDeps): Candidate[] {
  const dropped = new Set<string>();
  for (const c of candidates) {
    const answer = c.plugin.supported ? c.plugin.supported({ ...deps.host, dataRoot: deps.dataRoot }) : true;
    if (answer === true) continue;
    if (!c.optional) throw errors.pluginNotSupported(c.id, answer);
    deps.log.info({ plugin: c.id, reason: answer }, "plugin skipped: not for this host");
    dropped.add(c.id);
  }
  const present = new Set(candidates.map((c) => c.id));
  let changed = true;
  while (changed) {
    changed = false;
    for (const c of candidates) {
      if (dropped.has(c.id)) continue;
      const missing = c.requires.find((id) => dropped.has(id) || !present.has(id));
      if (!missing) continue;
      if (!c.optional) throw errors.pluginMissingRequirement(c.id, missing);
      if (present.has(missing)) deps.log.info({ plugin: c.id, requires: missing }, "plugin skipped: what it requires is not for this host");
      else deps.log.warn({ plugin: c.id, requires: missing }, "plugin skipped: what it requires could not be loaded");
      dropped.add(c.id);
      changed = true;
    }
  }
  return candidates.filter((c) => !dropped.has(c.id));
}

/** The plugin's daemon-wide options, typed; undefined when an optional plugin's are refused (it is skipped). */
function optionsOf(candidate: Candidate, deps: LoaderDeps): PluginOptionValues | undefined {
  const { manifest } = candidate.plugin;
  try {
    return checkPluginOptions(manifest.kind, parsePluginId(manifest.id).name, manifest, deps.optionsFor?.(candidate.plugin) ?? {});
  } catch (err) {
    if (!candidate.optional) throw err;
    deps.log.warn({ plugin: candidate.id, err: (err as Error).message }, "optional plugin skipped: its options are refused");
    return undefined;
  }
}

function applyOne(candidate: Candidate, options: PluginOptionValues, deps: LoaderDeps): boolean {
  const log = deps.log.child({ plugin: candidate.id });
  try {
    candidate.plugin.apply(deps.hooksFor?.(candidate.plugin) ?? deps.hooks, {
      log,
      dataRoot: deps.dataRoot,
      execRoot: deps.execRoot,
      host: deps.host,
      options,
    });
  } catch (err) {
    const failure = errors.pluginLoadFailed(candidate.id, (err as Error).message);
    if (!candidate.optional) throw failure;
    deps.log.warn({ plugin: candidate.id, err: failure.message }, "optional plugin failed to apply");
    return false;
  }
  log.info({ source: candidate.location.source }, "plugin loaded");
  deps.hooks.appliedPlugin.call({ id: candidate.id, kind: candidate.plugin.manifest.kind, source: candidate.location.source });
  return true;
}

