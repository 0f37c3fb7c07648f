/**
 * Imports a plugin module and checks that it is one: a default export (or an export named
 * `plugin`) with a manifest that fits the contract and an `apply` function.
 */
import typia from "typia";
import { PLUGIN_KINDS, parsePluginId, type EnginePlugin, type PluginManifest } from "../../core/contracts/plugin.js";
import { errors } from "../../core/errors.js";
import { importModule } from "../bundle-entries.js";
import type { PluginLocation } from "./resolve-plugin.js";

const validateManifest = typia.createValidate<PluginManifest>();

export interface LoadedPlugin {
  plugin: EnginePlugin;
  location: PluginLocation;
}

export async function importPlugin(location: PluginLocation): Promise<LoadedPlugin> {
  let mod: Record<string, unknown>;
  try {
    mod = await importModule(location.file);
  } catch (err) {
    throw errors.pluginInvalid(location.file, `it could not be imported: ${(err as Error).message}`);
  }
  const candidate = (mod.default ?? mod.plugin) as Partial<EnginePlugin> | undefined;
  if (!candidate || typeof candidate !== "object") {
    throw errors.pluginInvalid(location.file, "it has no default export (nor one named `plugin`)");
  }
  const checked = validateManifest(candidate.manifest);
  if (!checked.success) {
    const detail = checked.errors.map((e) => `${e.path.replace(/^\$input/, "manifest")} should be ${e.expected}`);
    throw errors.pluginInvalid(location.file, detail.join("; "));
  }
  const manifest = checked.data;
  const { kind } = parsePluginId(manifest.id);
  if (kind !== manifest.kind || !(PLUGIN_KINDS as readonly string[]).includes(kind)) {
    throw errors.pluginInvalid(location.file, `manifest id "${manifest.id}" must be "${manifest.kind}.<name>"`);
  }
  if (typeof candidate.apply !== "function") {
    throw errors.pluginInvalid(location.file, "it has no apply(hooks, ctx) function");
  }
  if (candidate.supported !== undefined && typeof candidate.supported !== "function") {
    throw errors.pluginInvalid(location.file, "supported must be a function of the host's facts");
  }
  return { plugin: candidate as EnginePlugin, location };
}
