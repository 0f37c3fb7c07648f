/**
 * The built-in plugins of a kind, from their manifests under plugins/: what a conformance test
 * file compares its list of drivers with, so that a new built-in driver cannot go untested.
 */
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { PluginManifest } from "../../core/contracts/plugin.js";

/** The names of the built-in plugins of `kind` (`log.json-file` is `json-file`), sorted. */
export async function builtInPluginNames(kind: string): Promise<string[]> {
  const plugins = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "plugins");
  const names: string[] = [];
  for (const dir of readdirSync(plugins)) {
    const { manifest } = (await import(join(plugins, dir, "manifest.js"))) as { manifest: PluginManifest };
    if (manifest.kind === kind) names.push(manifest.id.slice(kind.length + 1));
  }
  return names.sort();
}
