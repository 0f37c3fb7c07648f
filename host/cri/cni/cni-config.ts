/**
 * The CNI network configuration for pods, as libcni finds it: the files of the configuration
 * folder ending in `.conflist`, `.conf` or `.json`, in name order, the first that parses being
 * the pod network (a single-plugin `.conf` stands for a list of one). Its plugins are looked
 * for in the plugin folders, in order. Read at each use: a CNI config dropped in later (as
 * network add-ons do) makes the node's network ready without a restart.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface CniPluginConf {
  type: string;
  capabilities?: Record<string, boolean>;
  [key: string]: unknown;
}

export interface CniNetwork {
  /** The file it came from. */
  file: string;
  name: string;
  cniVersion: string;
  plugins: CniPluginConf[];
}

export interface CniDirs {
  confDir: string;
  binDirs: readonly string[];
}

/** Where a plugin's binary is, or undefined. */
export function pluginPath(binDirs: readonly string[], type: string): string | undefined {
  if (!/^[A-Za-z0-9._-]+$/.test(type)) return undefined;
  return binDirs.map((d) => join(d, type)).find((p) => existsSync(p));
}

function parseFile(file: string): CniNetwork {
  const raw = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  const plugins = Array.isArray(raw.plugins) ? (raw.plugins as CniPluginConf[]) : typeof raw.type === "string" ? [raw as CniPluginConf] : [];
  if (typeof raw.name !== "string" || raw.name === "") throw new Error(`${file}: no network name`);
  if (plugins.length === 0) throw new Error(`${file}: no plugins`);
  for (const p of plugins) if (typeof p?.type !== "string" || p.type === "") throw new Error(`${file}: a plugin without a type`);
  return { file, name: raw.name, cniVersion: typeof raw.cniVersion === "string" ? raw.cniVersion : "0.4.0", plugins };
}

/** The pod network, or why there is none (the message of the NetworkReady condition). */
export function loadPodNetwork(dirs: CniDirs): { network: CniNetwork } | { problem: string } {
  let names: string[];
  try {
    names = readdirSync(dirs.confDir).filter((n) => /\.(conflist|conf|json)$/.test(n)).sort();
  } catch {
    names = [];
  }
  const problems: string[] = [];
  for (const name of names) {
    try {
      const network = parseFile(join(dirs.confDir, name));
      const missing = network.plugins.map((p) => p.type).filter((t) => !pluginPath(dirs.binDirs, t));
      if (missing.length) {
        problems.push(`${name}: plugin ${missing.join(", ")} not found in ${dirs.binDirs.join(":")}`);
        continue;
      }
      return { network };
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  if (names.length === 0) return { problem: `cni config uninitialized: no network configuration in ${dirs.confDir}` };
  return { problem: `cni config uninitialized: ${problems.join("; ")}` };
}
