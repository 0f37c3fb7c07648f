/**
 * The configuration as `/info` reports it: the Docker fields that show options (registries,
 * runtimes, proxies, security options) and `EngineOptions`, the reloadable options by their
 * file keys, so that an operator sees what a reload changed. Credentials in proxy URLs are
 * masked as `xxxxx:xxxxx`, as Docker masks them.
 */
import { isIP } from "node:net";
import { cgroupDriverOf, type RuleHost } from "../core/options/rules.js";
import { definitionOf, optionNames, type DaemonConfig } from "../core/options/table.js";
import type { RegistryConfigInfo, RuntimeInfo } from "../core/system-info.js";
import { DEFAULT_RUNTIME_NAME } from "../core/options/value-types-structured.js";
import { DEFAULT_DOMAIN } from "../core/images/reference.js";
import { shownValue } from "../core/options/mask-credentials.js";


/**
 * `RegistryConfig`: as Docker's registry service reports it, the public index (`docker.io`,
 * with the mirrors) always among the IndexConfigs, beside each insecure registry named by host;
 * the keys in Go's order for a map (sorted); the insecure ranges as given, then the loopback
 * ones (`::1/128`, `127.0.0.0/8`) that are insecure in any case.
 */
export function registryConfig(config: DaemonConfig): RegistryConfigInfo {
  const cidrs: string[] = [];
  const mirrors = config["registry-mirror"].map((m) => (m.endsWith("/") ? m : `${m}/`));
  const indexConfigs: RegistryConfigInfo["IndexConfigs"] = { [DEFAULT_DOMAIN]: { Name: DEFAULT_DOMAIN, Mirrors: mirrors, Secure: true, Official: true } };
  for (const entry of [...config["insecure-registry"], "::1/128", "127.0.0.0/8"]) {
    if (entry.includes("/") && isIP(entry.split("/")[0])) {
      if (!cidrs.includes(entry)) cidrs.push(entry);
    } else {
      indexConfigs[entry] = { Name: entry, Mirrors: [], Secure: false, Official: false };
    }
  }
  return {
    InsecureRegistryCIDRs: cidrs,
    IndexConfigs: Object.fromEntries(Object.entries(indexConfigs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    Mirrors: mirrors,
  };
}

export function runtimesInfo(config: DaemonConfig): Record<string, RuntimeInfo> {
  return { [DEFAULT_RUNTIME_NAME]: { path: "runc" }, ...structuredClone(config["add-runtime"]) };
}

export function securityOptions(config: DaemonConfig, host: RuleHost): string[] {
  const out = [`name=seccomp,profile=${config["seccomp-profile"]}`];
  if (config["selinux-enabled"]) out.push("name=selinux");
  if (config["userns-remap"]) out.push("name=userns");
  if (config.rootless) out.push("name=rootless");
  if (config["no-new-privileges"]) out.push("name=no-new-privileges");
  if (host.cgroupVersion === 2) out.push("name=cgroupns");
  return out;
}

export function cgroupDriver(config: DaemonConfig, host: RuleHost): string {
  return cgroupDriverOf(config, host);
}

/** The reloadable options by file key, secrets masked. */
export function reloadableOptions(config: DaemonConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of optionNames) {
    const def = definitionOf(name);
    if (!def.reloadable || !def.key) continue;
    out[def.key] = shownValue(def, config[name]);
  }
  return out;
}

/**
 * The whole configuration as `daemon.json` would hold it, credentials masked: what a reload
 * logs, as Docker's "Reloaded configuration:" line. A dotted key (`proxies.http-proxy`) is a
 * member of its object, as in the file.
 */
export function configForLog(config: DaemonConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of optionNames) {
    const def = definitionOf(name);
    if (!def.key || def.action) continue;
    const [parent, member] = def.key.split(".", 2);
    if (member === undefined) out[parent] = shownValue(def, config[name]);
    else ((out[parent] ??= {}) as Record<string, unknown>)[member] = shownValue(def, config[name]);
  }
  return out;
}
