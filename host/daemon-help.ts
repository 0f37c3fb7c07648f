/**
 * `engined --help`, written from the option table: grouped, with defaults; then the options of
 * every plugin found (built-in and installed packages), from their manifests.
 */
import { pluginOptionsHelp } from "../core/options/plugin-options-doc.js";
import { optionTable, type OptionDefinition, type OptionGroup } from "../core/options/table.js";
import { knownPlugins } from "./plugins/plugin-manifests.js";
import type { ResolveOptions } from "./plugins/resolve-plugin.js";

const GROUP_TITLES: Record<OptionGroup, string> = {
  api: "API listeners",
  tls: "TLS",
  daemon: "Daemon",
  logging: "Logging",
  runtime: "Containers and runtimes",
  storage: "Storage",
  security: "Security",
  network: "Networking",
  registry: "Registries and proxies",
  cluster: "Cluster mode and metrics",
};

export function daemonHelp(env: NodeJS.ProcessEnv): string {
  const lines = ["Usage:\tengined [OPTIONS]", "", "A self-sufficient runtime for containers.", ""];
  const defs = Object.values(optionTable) as OptionDefinition<unknown>[];
  for (const group of Object.keys(GROUP_TITLES) as OptionGroup[]) {
    const members = defs.filter((d) => d.group === group && d.flag).sort((a, b) => a.flag!.localeCompare(b.flag!));
    if (members.length === 0) continue;
    lines.push(`${GROUP_TITLES[group]}:`);
    for (const def of members) {
      const names = `${def.short ? `-${def.short}, ` : "    "}--${def.flag}${valueName(def)}`;
      lines.push(`  ${names.padEnd(42)} ${def.help}${defaultText(def, env)}${def.reloadable ? " (reloadable)" : ""}`);
    }
    lines.push("");
  }
  const fromEnv = defs.filter((d) => !d.flag && !d.key);
  if (fromEnv.length) {
    lines.push("Environment:");
    for (const def of fromEnv) lines.push(`  ${def.help}`);
    lines.push("  ENGINE_CERT_PATH, ENGINE_TLS_VERIFY, ENGINE_DRIVER, HTTP_PROXY, HTTPS_PROXY, NO_PROXY: see the options above", "");
  }
  const fileOnly = defs.filter((d) => !d.flag && d.key).map((d) => d.key);
  lines.push(`Set in the configuration file only: ${fileOnly.join(", ")}.`, "");
  return lines.join("\n");
}

function valueName(def: OptionDefinition<unknown>): string {
  if (def.type.name === "bool") return "";
  return ` ${def.metavar ?? def.type.name}`;
}

function defaultText(def: OptionDefinition<unknown>, env: NodeJS.ProcessEnv): string {
  if (def.action) return "";
  const value = typeof def.default === "function" ? def.default(env) : def.default;
  if (value === "" || value === false || (Array.isArray(value) && value.length === 0)) return "";
  return ` (default ${def.type.show(value)})`;
}

/** The help's last section: each plugin's declared options, and the packages that could not be read. */
export async function pluginsHelp(resolve: ResolveOptions): Promise<string> {
  const { plugins, unreadable } = await knownPlugins(resolve);
  const broken = unreadable.map((why) => `  (not read: ${why})\n`).join("");
  return `${pluginOptionsHelp(plugins)}${broken}`;
}
