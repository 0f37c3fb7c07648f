/**
 * Runs CNI plugins as the CNI specification says a runtime does: the plugin's binary with the
 * command and the attachment in `CNI_*` variables, its network configuration on stdin, its
 * result (or `{code, msg, details}` with a non-zero exit) on stdout. A network of several
 * plugins is a chain: ADD runs them in order, each given the previous one's result as
 * `prevResult`; DEL runs them in reverse with the final result. Capabilities a plugin declares
 * (`portMappings`, `dns`) get their values in `runtimeConfig`.
 */
import { spawn } from "node:child_process";
import { errors } from "../../../core/errors.js";
import { pluginPath, type CniNetwork, type CniPluginConf } from "./cni-config.js";

export interface CniAttachment {
  containerId: string;
  netns: string;
  ifName: string;
  /** `K8S_POD_NAME=...` and the like: CNI_ARGS. */
  args: Record<string, string>;
  /** Values for the capabilities plugins declare, by capability name. */
  capabilities: Record<string, unknown>;
}

export interface CniResult {
  cniVersion?: string;
  interfaces?: { name: string; mac?: string; sandbox?: string }[];
  ips?: { address: string; gateway?: string; interface?: number }[];
  routes?: unknown[];
  dns?: unknown;
  [key: string]: unknown;
}

/** How long one plugin may take (a plugin that hangs must not hold RunPodSandbox forever). */
const PLUGIN_TIMEOUT_MS = 60_000;

function runPlugin(binDirs: readonly string[], command: "ADD" | "DEL", conf: object, type: string, at: CniAttachment): Promise<CniResult | undefined> {
  const binary = pluginPath(binDirs, type);
  if (!binary) return Promise.reject(errors.criNetworkConfig(`plugin ${type} not found in ${binDirs.join(":")}`));
  const env = {
    PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin",
    CNI_COMMAND: command,
    CNI_CONTAINERID: at.containerId,
    CNI_NETNS: at.netns,
    CNI_IFNAME: at.ifName,
    CNI_ARGS: ["IgnoreUnknown=1", ...Object.entries(at.args).map(([k, v]) => `${k}=${v}`)].join(";"),
    CNI_PATH: binDirs.join(":"),
  };
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [], { env, stdio: ["pipe", "pipe", "pipe"], timeout: PLUGIN_TIMEOUT_MS });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", (e) => reject(errors.criNetworkSetup(type, e.message)));
    child.on("close", (code, signal) => {
      if (code === 0) {
        try {
          resolve(out.trim() ? (JSON.parse(out) as CniResult) : undefined);
        } catch {
          reject(errors.criNetworkSetup(type, `${command} answered what is not JSON: ${out.slice(0, 200)}`));
        }
        return;
      }
      let message = (err || out).trim() || (signal ? `killed by ${signal}` : `exit code ${code}`);
      try {
        const parsed = JSON.parse(out) as { msg?: string; details?: string };
        if (parsed.msg) message = parsed.details ? `${parsed.msg}: ${parsed.details}` : parsed.msg;
      } catch {
        // not the JSON error form: stderr or stdout as they are
      }
      reject(errors.criNetworkSetup(type, `${command}: ${message}`));
    });
    child.stdin.on("error", () => {}); // a plugin that exits without reading its stdin
    child.stdin.end(JSON.stringify(conf));
  });
}

/** The configuration one plugin of the chain is given. */
function pluginConf(network: CniNetwork, plugin: CniPluginConf, at: CniAttachment, prevResult: CniResult | undefined): object {
  const runtimeConfig: Record<string, unknown> = {};
  for (const [cap, on] of Object.entries(plugin.capabilities ?? {})) if (on && at.capabilities[cap] !== undefined) runtimeConfig[cap] = at.capabilities[cap];
  return {
    ...plugin,
    name: network.name,
    cniVersion: network.cniVersion,
    ...(prevResult ? { prevResult } : {}),
    ...(Object.keys(runtimeConfig).length ? { runtimeConfig } : {}),
  };
}

/** ADD of the chain: resolves with the last plugin's result. A failure deletes what the chain made so far. */
export async function cniAdd(network: CniNetwork, binDirs: readonly string[], at: CniAttachment): Promise<CniResult> {
  let result: CniResult | undefined;
  try {
    for (const plugin of network.plugins) result = (await runPlugin(binDirs, "ADD", pluginConf(network, plugin, at, result), plugin.type, at)) ?? result;
  } catch (err) {
    await cniDel(network, binDirs, at, result).catch(() => {});
    throw err;
  }
  return result ?? { cniVersion: network.cniVersion };
}

/** DEL of the chain, last plugin first; every plugin runs even when one fails (the first failure is thrown after). */
export async function cniDel(network: CniNetwork, binDirs: readonly string[], at: CniAttachment, prevResult?: CniResult): Promise<void> {
  let first: unknown;
  for (const plugin of [...network.plugins].reverse()) {
    await runPlugin(binDirs, "DEL", pluginConf(network, plugin, at, prevResult), plugin.type, at).catch((err: unknown) => (first ??= err));
  }
  if (first) throw first;
}
