/**
 * Finds an out-of-process plugin (authorization, volume driver) by name, the way the plugin ecosystem lays them
 * out, first match wins:
 *   1. a unix socket `<name>.sock` or `<name>/<name>.sock` in `/run/engine/plugins`;
 *   2. a spec file `<name>.spec` or `<name>.json` (or in a `<name>/` folder) in
 *      `/etc/engine/plugins`, then `/usr/lib/engine/plugins`.
 * A spec file can also be named by its path. `.spec` holds one address (`unix:///path`,
 * `tcp://host:port`, `http://`, `https://`); `.json` holds `{"Addr", "TLSConfig"}` and,
 * as an engine extension, `"TimeoutSeconds"`.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, extname, join } from "node:path";
import { errors } from "../../core/errors.js";

export interface PluginDirs {
  /** Where plugins listen: `<dir>/<name>.sock`. */
  sockets: string;
  /** Where spec files are, in the order they are searched. */
  specs: string[];
}

export const DEFAULT_PLUGIN_DIRS: PluginDirs = {
  sockets: "/run/engine/plugins",
  specs: ["/etc/engine/plugins", "/usr/lib/engine/plugins"],
};

/** Docker's plugin client gives a plugin 30 seconds; so does ours unless the spec says less. */
const DEFAULT_TIMEOUT_MS = 30_000;

export interface PluginTls {
  /** Verify the plugin's certificate against this CA instead of the system's. */
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  insecureSkipVerify: boolean;
}

export interface PluginEndpoint {
  /** The name the operator gave; denials are reported under it. */
  name: string;
  /** How it was found, for logs: `socket /run/engine/plugins/x.sock`, `spec file ...`. */
  source: string;
  /** `unix:///path`, `tcp://host:port`, `http://host:port` or `https://host:port`. */
  address: string;
  /** Present when the plugin is reached through TLS. */
  tls?: PluginTls;
  timeoutMs: number;
}

export function isSpecFilePath(name: string): boolean {
  return [".spec", ".json"].includes(extname(name));
}

/** The endpoint a spec file names; the plugin's name is the file's, without its extension. */
export function endpointFromSpecFile(path: string): PluginEndpoint {
  const name = basename(path, extname(path));
  return extname(path) === ".json" ? readJsonSpec(name, path) : readTextSpec(name, path);
}

/** The plugin called `name`, or the places looked at when there is none. */
export function discoverPlugin(name: string, dirs: PluginDirs): { endpoint: PluginEndpoint } | { tried: string[] } {
  const tried: string[] = [];
  for (const socket of candidates(dirs.sockets, name, ".sock")) {
    tried.push(`the socket ${socket}`);
    if (statSync(socket, { throwIfNoEntry: false })?.isSocket()) {
      return { endpoint: { name, source: `socket ${socket}`, address: `unix://${socket}`, timeoutMs: DEFAULT_TIMEOUT_MS } };
    }
  }
  for (const dir of dirs.specs) {
    for (const spec of [...candidates(dir, name, ".spec"), ...candidates(dir, name, ".json")]) {
      tried.push(`the spec file ${spec}`);
      if (statSync(spec, { throwIfNoEntry: false })?.isFile()) {
        const endpoint = spec.endsWith(".json") ? readJsonSpec(name, spec) : readTextSpec(name, spec);
        return { endpoint };
      }
    }
  }
  return { tried };
}

/**
 * The names there is a socket, a spec file or a folder for, in the order of the places looked
 * at, each once: what Docker's daemon asks when it needs "every volume driver".
 */
export function listPluginNames(dirs: PluginDirs): string[] {
  const names = new Set<string>();
  const entries = (dir: string) => {
    try {
      return readdirSync(dir, { withFileTypes: true });
    } catch {
      return [];
    }
  };
  for (const e of entries(dirs.sockets)) {
    if (e.name.endsWith(".sock")) names.add(e.name.slice(0, -".sock".length));
    else if (e.isDirectory()) names.add(e.name);
  }
  for (const dir of dirs.specs) {
    for (const e of entries(dir)) {
      const ext = extname(e.name);
      if (ext === ".spec" || ext === ".json") names.add(e.name.slice(0, -ext.length));
      else if (e.isDirectory()) names.add(e.name);
    }
  }
  // (a folder that holds no plugin of its name is none: the look-up of the name finds nothing there)
  return [...names].filter((n) => PLUGIN_NAME.test(n));
}

/**
 * What a plugin name may be when a client names it (a volume driver): a file name, never a
 * path, so that a name cannot lead the daemon to a socket or spec file outside the plugin
 * folders.
 */
export const PLUGIN_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

function candidates(dir: string, name: string, ext: string): string[] {
  return [join(dir, name + ext), join(dir, name, name + ext)];
}

function readTextSpec(name: string, path: string): PluginEndpoint {
  const address = read(path).trim();
  checkAddress(path, address);
  return { name, source: `spec file ${path}`, address, tls: address.startsWith("https://") ? { insecureSkipVerify: false } : undefined, timeoutMs: DEFAULT_TIMEOUT_MS };
}

interface JsonSpec {
  Addr?: unknown;
  TLSConfig?: { InsecureSkipVerify?: unknown; CAFile?: unknown; CertFile?: unknown; KeyFile?: unknown };
  TimeoutSeconds?: unknown;
}

function readJsonSpec(name: string, path: string): PluginEndpoint {
  let spec: JsonSpec;
  try {
    spec = JSON.parse(read(path)) as JsonSpec;
  } catch (err) {
    throw errors.pluginSpecInvalid(path, `it is not valid JSON: ${(err as Error).message}`);
  }
  if (!spec || typeof spec !== "object" || typeof spec.Addr !== "string") throw errors.pluginSpecInvalid(path, 'it has no "Addr" string');
  const address = spec.Addr.trim();
  checkAddress(path, address);
  const timeout = spec.TimeoutSeconds ?? DEFAULT_TIMEOUT_MS / 1000;
  if (typeof timeout !== "number" || !(timeout > 0) || timeout > 3600) {
    throw errors.pluginSpecInvalid(path, '"TimeoutSeconds" must be a number of seconds above 0 and at most 3600');
  }
  return { name, source: `spec file ${path}`, address, tls: tlsOf(path, address, spec.TLSConfig), timeoutMs: timeout * 1000 };
}

/**
 * TLS for `https://`, and for `tcp://` when the spec has a TLSConfig. Unlike Docker, a missing
 * CAFile does not turn verification off: the system's CAs are used, and skipping the check
 * takes an explicit `"InsecureSkipVerify": true`.
 */
function tlsOf(path: string, address: string, config: JsonSpec["TLSConfig"]): PluginTls | undefined {
  if (config !== undefined && (typeof config !== "object" || config === null)) throw errors.pluginSpecInvalid(path, '"TLSConfig" must be an object');
  if (!address.startsWith("https://") && !(address.startsWith("tcp://") && config)) return undefined;
  const file = (key: "CAFile" | "CertFile" | "KeyFile") => {
    const value = config?.[key];
    if (value === undefined || value === "") return undefined;
    if (typeof value !== "string") throw errors.pluginSpecInvalid(path, `"TLSConfig.${key}" must be a path`);
    return value;
  };
  const tls = { caFile: file("CAFile"), certFile: file("CertFile"), keyFile: file("KeyFile"), insecureSkipVerify: config?.InsecureSkipVerify === true };
  if (Boolean(tls.certFile) !== Boolean(tls.keyFile)) throw errors.pluginSpecInvalid(path, '"TLSConfig" needs both CertFile and KeyFile, or neither');
  return tls;
}

function checkAddress(path: string, address: string): void {
  if (!/^(unix:\/\/\/|tcp:\/\/|https?:\/\/)./.test(address)) {
    throw errors.pluginSpecInvalid(path, `"${address}" is not an address: use unix:///path, tcp://host:port, http:// or https://`);
  }
}

function read(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    throw errors.pluginSpecInvalid(path, (err as Error).message);
  }
}
