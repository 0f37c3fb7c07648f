/**
 * The documentation of plugin options, written from the manifests' declarations (see
 * core/contracts/plugin.ts): the lines `engined --help` ends with, for the plugins it finds, and
 * docs/plugin-options.md for the built-in ones (`scripts/plugin-options-doc.mjs` writes it;
 * test/plugin-options-doc.test.ts fails when it is out of date). A third-party package's options
 * are documented the same way, from its own manifest, with no change to the engine.
 */
import { parsePluginId, type PluginKind, type PluginManifest } from "../contracts/plugin.js";
import { typeNameOfOption } from "./plugin-options.js";

/** Where a user gives the options of each kind. */
export const OPTION_SOURCES: Record<PluginKind, string> = {
  storage: "--storage-opt",
  log: "--log-opt, docker run --log-opt",
  network: "docker network create -o",
  volume: "docker volume create -o",
  runtime: "",
  authz: "",
};

/** A plugin found, with where it came from (`built-in`, `package engine-plugin-volume-x`). */
export interface DocumentedPlugin {
  manifest: PluginManifest;
  source: string;
}

const byId = (a: DocumentedPlugin, b: DocumentedPlugin) => a.manifest.id.localeCompare(b.manifest.id);
const withOptions = (plugins: readonly DocumentedPlugin[]) =>
  plugins.filter((p) => Object.keys(p.manifest.options ?? {}).length > 0).sort(byId);

/** The `engined --help` section: each plugin's options, with type and default. */
export function pluginOptionsHelp(plugins: readonly DocumentedPlugin[]): string {
  const lines = ["Plugin options (declared by each plugin's manifest; docs/plugin-options.md):"];
  for (const { manifest, source } of withOptions(plugins)) {
    const { kind, name } = parsePluginId(manifest.id);
    lines.push(`  ${kind} driver ${name} (${source}; ${OPTION_SOURCES[kind as PluginKind]}):`);
    for (const [key, spec] of Object.entries(manifest.options!)) {
      const def = spec.default !== undefined ? ` (default ${spec.default})` : "";
      lines.push(`    ${`${key} ${typeNameOfOption(spec)}`.padEnd(40)} ${spec.description}${def}`);
    }
  }
  lines.push("");
  return lines.join("\n");
}

const cell = (text: string) => text.replace(/\|/g, "\\|");

/** A markdown table of one plugin's options. */
export function pluginOptionsTable(manifest: PluginManifest): string[] {
  const lines = ["| option | type | default | meaning |", "|---|---|---|---|"];
  for (const [key, spec] of Object.entries(manifest.options ?? {})) {
    lines.push(`| \`${key}\` | ${cell(typeNameOfOption(spec))} | ${spec.default !== undefined ? `\`${spec.default}\`` : ""} | ${cell(spec.description)} |`);
  }
  return lines;
}

/** docs/plugin-options.md: every built-in plugin's options, by kind. */
export function pluginOptionsDoc(plugins: readonly DocumentedPlugin[]): string {
  const lines = [
    "# Plugin options",
    "",
    "Written from the built-in plugins' manifests (`plugins/*/manifest.ts`) by `scripts/plugin-options-doc.mjs`;",
    "do not edit by hand. Each plugin declares its options with a type; the daemon refuses an option a",
    "plugin does not declare, and a value its type cannot read, before the plugin sees it (see",
    "[plugins.md](plugins.md#options)). `engined --help` lists the same, with the installed packages' too.",
    "Types: `string` (any text), `bool` (true, false, 1, 0), `int`, `uint` (0 or more), `bytes` (a size:",
    "`512k`, `64m`, `1.5G`, 1024-based), `size` (a size above 0), `one of ...` (those words).",
    "",
  ];
  for (const { manifest } of withOptions(plugins)) {
    const { kind, name } = parsePluginId(manifest.id);
    lines.push(`## ${kind} driver \`${name}\``, "", `Given with \`${OPTION_SOURCES[kind as PluginKind]}\`.`, "", ...pluginOptionsTable(manifest), "");
  }
  return lines.join("\n");
}
