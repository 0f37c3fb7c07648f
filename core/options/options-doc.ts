/**
 * docs/options.md, written from the option table: every option with its flag, file key, type,
 * default, platforms and whether a reload changes it. `scripts/options-doc.mjs` writes the
 * file; test/options-doc.test.ts fails when it is out of date.
 */
import { homedir } from "node:os";
import { platformsOfKey } from "./option.js";
import { definitionOf, optionNames } from "./table.js";

const GROUPS: Record<string, string> = {
  api: "API listeners", tls: "TLS", daemon: "Daemon", logging: "Logging", runtime: "Containers and runtimes",
  storage: "Storage", security: "Security", network: "Networking", registry: "Registries and proxies",
  cluster: "Cluster mode and metrics",
};

const cell = (text: string) => text.replace(/\|/g, "\\|");

export function optionsDoc(): string {
  const lines = [
    "# Daemon options",
    "",
    "Written from the option table (`core/options/table/`) by `scripts/options-doc.mjs`; do not edit by hand.",
    "Each option is set by its flag, by its key in `daemon.json` (`--config-file`, default",
    "`/etc/engine/daemon.json`), or by its environment variable, in that order of precedence; setting one",
    "both as a flag and in the file is an error. `reload` marks what SIGHUP changes on a running daemon.",
    "Platforms: `linux`, `win` (the file's keys of the win-platform daemon, refused on Linux and back).",
    "",
  ];
  for (const [group, title] of Object.entries(GROUPS)) {
    const names = optionNames.filter((n) => definitionOf(n).group === group);
    if (!names.length) continue;
    lines.push(`## ${title}`, "", "| flag | file key | type | default | platforms | reload | meaning |", "|---|---|---|---|---|---|---|");
    for (const name of names) {
      const def = definitionOf(name);
      const flag = def.flag ? `${def.short ? `\`-${def.short}\`, ` : ""}\`--${def.flag}\`` : "";
      const keys = def.key
        ? [def.key, ...(def.legacyKeys ?? [])].map((k) => `\`${k}\`${platformsOfKey(def, k) !== def.platforms ? ` (${platformsOfKey(def, k).join(", ")})` : ""}`).join(", ")
        : "";
      const envs = def.env === undefined ? [] : typeof def.env === "string" ? [def.env] : def.env;
      // Defaults that depend on the environment are shown for an empty one, the home folder as ~.
      const value = typeof def.default === "function"
        ? `${def.type.show(def.default({}) as never).replace(homedir(), "~")} (or from the environment)`
        : def.type.show(def.default as never);
      lines.push(
        `| ${flag}${envs.length ? `${flag ? "; " : ""}${envs.map((e) => `\`${e}\``).join(", ")}` : ""} | ${keys} | ${def.type.name} | ${cell(value)} | ${def.platforms.join(", ")} | ${def.reloadable ? "yes" : ""} | ${cell(def.help)} |`,
      );
    }
    lines.push("");
  }
  return lines.join("\n");
}
