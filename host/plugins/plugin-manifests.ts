/**
 * The manifests of the plugins this engine can load, for what reads declarations without
 * applying anything: `engined --help` (each plugin's options), docs/plugin-options.md, and the
 * check of whose a `--storage-opt` is (host/storage/option-owners.ts).
 * - built-in: each `plugins/<kind>-<name>/manifest.js` (the manifest module only, not the plugin);
 * - installed: each `node_modules/engine-plugin-<kind>-<name>` package where resolve-plugin.ts
 *   looks (the first of a name wins, as there), imported and checked as the loader does. A
 *   package that cannot be read is left out, and says why in `unreadable`.
 */
import { existsSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { PluginManifest } from "../../core/contracts/plugin.js";
import type { DocumentedPlugin } from "../../core/options/plugin-options-doc.js";
import { importModule } from "../bundle-entries.js";
import { importPlugin } from "./load-plugin.js";
import { findPluginModule, type ResolveOptions } from "./resolve-plugin.js";

const PACKAGE = /^engine-plugin-([a-z]+)-([a-z0-9][a-z0-9._-]*)$/;

/** The built-in plugins' manifests (of one kind's folders, `<kind>-<name>`, when `kind` is given), by folder name order. */
export async function builtinManifests(builtinDir: string, kind?: string): Promise<PluginManifest[]> {
  const out: PluginManifest[] = [];
  const folders = existsSync(builtinDir) ? readdirSync(builtinDir).filter((f) => !kind || f.startsWith(`${kind}-`)).sort() : [];
  for (const folder of folders) {
    const file = join(builtinDir, folder, "manifest.js");
    if (!existsSync(file)) continue;
    const { manifest } = (await importModule(file)) as { manifest?: PluginManifest };
    if (manifest?.id) out.push(manifest);
  }
  return out;
}

/** Every plugin found: the built-in ones, then the installed packages. */
export async function knownPlugins(opts: ResolveOptions): Promise<{ plugins: DocumentedPlugin[]; unreadable: string[] }> {
  const plugins: DocumentedPlugin[] = (await builtinManifests(opts.builtinDir)).map((manifest) => ({ manifest, source: "built-in" }));
  const unreadable: string[] = [];
  const seen = new Set(plugins.map((p) => p.manifest.id));
  for (const pkg of installedPackageNames(opts.searchFrom)) {
    const [, kind, name] = PACKAGE.exec(pkg)!;
    const found = findPluginModule(kind, name, { ...opts, builtinDir: join(opts.builtinDir, "\0none") });
    if (!("file" in found)) continue;
    try {
      const { plugin } = await importPlugin(found);
      if (seen.has(plugin.manifest.id)) continue;
      seen.add(plugin.manifest.id);
      plugins.push({ manifest: plugin.manifest, source: found.source });
    } catch (err) {
      unreadable.push(`${pkg}: ${(err as Error).message}`);
    }
  }
  return { plugins, unreadable };
}

/** The `engine-plugin-*` package names in the `node_modules` folders resolve-plugin.ts searches. */
function installedPackageNames(searchFrom: readonly string[]): string[] {
  const names = new Set<string>();
  for (const start of searchFrom) {
    for (let dir = resolve(start); ; dir = dirname(dir)) {
      const modules = join(dir, "node_modules");
      if (existsSync(modules)) for (const entry of readdirSync(modules)) if (PACKAGE.test(entry)) names.add(entry);
      if (dirname(dir) === dir) break;
    }
  }
  return [...names].sort();
}
