/**
 * `engine build`'s flags as `POST /build`'s query, the way the Docker CLI's legacy builder
 * sends them: only what differs from the daemon's defaults (API 1.51 and Docker CLI 28 leave out
 * zero values, `rm=1` and `networkmode=default`), keys in Go's sorted order, maps as JSON with
 * sorted keys, and `version=1` (the classic builder). A value a flag cannot take is a usage
 * error worded as pflag's (`invalid argument "Foo" for "-t, --tag" flag: ...`), status 125.
 */
import type { Command } from "../command.js";
import type { QueryValue } from "../connection.js";
import { UsageError, type FlagSpec, type FlagValue } from "../flags.js";
import { parseNormalizedNamed } from "../reference.js";
import { defaultProxies } from "../auth/config.js";
import { parseBytes, parseUlimit, validEnv, validExtraHost, validLabel } from "../container/units.js";

export type BuildQuery = Record<string, QueryValue>;

/** The proxy build arguments config.json's `proxies.default` gives (each in upper and lower case). */
const PROXY_ARGS: [string, string][] = [
  ["HTTP_PROXY", "httpProxy"],
  ["HTTPS_PROXY", "httpsProxy"],
  ["NO_PROXY", "noProxy"],
  ["FTP_PROXY", "ftpProxy"],
  ["ALL_PROXY", "allProxy"],
];

/** Go's json.Marshal of a map: keys sorted. */
const sortedJson = (map: Record<string, string | null>) => JSON.stringify(Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));

/** pflag's StringSlice: each value split at commas. */
const commaList = (values: FlagValue) => (values as string[]).flatMap((v) => v.split(","));

export interface FlagReader {
  flags: Record<string, FlagValue>;
  given: Set<string>;
  specs: readonly FlagSpec[];
}

/** One flag's values through `read`, its error as pflag's flag error. */
function values<T>(r: FlagReader, name: string, read: (v: string) => T): T[] {
  const raw = r.flags[name];
  const list = Array.isArray(raw) ? raw : r.given.has(name) ? [String(raw)] : [];
  const spec = r.specs.find((s) => s.name === name);
  const shown = spec?.short ? `-${spec.short}, --${name}` : `--${name}`;
  return list.map((v) => {
    try {
      return read(v);
    } catch (e) {
      throw new UsageError(`invalid argument "${v}" for "${shown}" flag: ${(e as Error).message}`);
    }
  });
}

/** The build arguments: `K=V`, a bare `K` from the environment (or `null`, which the daemon reads as "no value"), then the proxies of config.json where not given. */
function buildArgs(r: FlagReader, env: NodeJS.ProcessEnv, configDir: string): Record<string, string | null> {
  const args: Record<string, string | null> = {};
  for (const entry of values(r, "build-arg", validEnv(env))) {
    const eq = entry.indexOf("=");
    if (eq < 0) args[entry] = null;
    else args[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  const proxies = defaultProxies(configDir);
  for (const [name, key] of PROXY_ARGS) {
    const value = proxies[key];
    if (!value) continue;
    args[name] ??= value;
    args[name.toLowerCase()] ??= value;
  }
  return args;
}

/** The query without `dockerfile` (which the context decides); throws UsageError for a bad value. */
export function buildQuery(r: FlagReader, env: NodeJS.ProcessEnv, configDir: string): BuildQuery {
  const f = r.flags;
  const tags = values(r, "tag", (t) => {
    parseNormalizedNamed(t);
    return t;
  });
  const labels: Record<string, string> = {};
  for (const label of values(r, "label", validLabel)) {
    const eq = label.indexOf("=");
    labels[eq < 0 ? label : label.slice(0, eq)] = eq < 0 ? "" : label.slice(eq + 1);
  }
  const args = buildArgs(r, env, configDir);
  const [memory = 0] = values(r, "memory", parseBytes);
  const [memswap = 0] = values(r, "memory-swap", (v) => (v === "-1" ? -1 : parseBytes(v)));
  const [shmsize = 0] = values(r, "shm-size", parseBytes);
  const ulimits = values(r, "ulimit", parseUlimit);
  const cacheFrom = commaList(f["cache-from"]);
  const text = (name: string) => String(f[name]) || undefined;
  const number = (name: string) => Number(f[name]) || undefined;
  const isolation = String(f.isolation);
  const network = String(f.network);
  return {
    buildargs: Object.keys(args).length ? sortedJson(args) : undefined,
    cachefrom: cacheFrom.length ? JSON.stringify(cacheFrom) : undefined,
    cgroupparent: text("cgroup-parent"),
    cpuperiod: number("cpu-period"),
    cpuquota: number("cpu-quota"),
    cpusetcpus: text("cpuset-cpus"),
    cpusetmems: text("cpuset-mems"),
    cpushares: number("cpu-shares"),
    extrahosts: values(r, "add-host", validExtraHost),
    forcerm: f["force-rm"] ? true : undefined,
    isolation: isolation && isolation.toLowerCase() !== "default" ? isolation : undefined,
    labels: Object.keys(labels).length ? sortedJson(labels) : undefined,
    memory: memory || undefined,
    memswap: memswap || undefined,
    networkmode: network && network !== "default" ? network : undefined,
    nocache: f["no-cache"] ? true : undefined,
    platform: text("platform"),
    pull: f.pull ? true : undefined,
    q: f.quiet ? true : undefined,
    rm: f.rm ? undefined : false,
    securityopt: commaList(f["security-opt"]),
    shmsize: shmsize || undefined,
    squash: f.squash ? true : undefined,
    t: tags,
    target: text("target"),
    ulimits: ulimits.length ? JSON.stringify(ulimits) : undefined,
    version: "1",
  };
}

/** The query with the Dockerfile's name in the context, keys in Go's order. */
export function withDockerfile(query: BuildQuery, dockerfile: string): BuildQuery {
  const all: BuildQuery = { ...query, dockerfile: dockerfile || undefined };
  return Object.fromEntries(Object.entries(all).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The flags of `engine build`, in the help's (alphabetical) order. */
export const BUILD_FLAGS: Command["flags"] = [
  { name: "add-host", type: "list", description: `Add a custom host-to-IP mapping ("host:ip")` },
  { name: "build-arg", type: "list", description: "Set build-time variables" },
  { name: "cache-from", type: "list", valueName: "strings", description: "Images to consider as cache sources" },
  { name: "cgroup-parent", type: "string", description: `Set the parent cgroup for the "RUN" instructions during build` },
  { name: "compress", type: "bool", description: "Compress the build context using gzip" },
  { name: "cpu-period", type: "int", description: "Limit the CPU CFS (Completely Fair Scheduler) period" },
  { name: "cpu-quota", type: "int", description: "Limit the CPU CFS (Completely Fair Scheduler) quota" },
  { name: "cpu-shares", short: "c", type: "int", description: "CPU shares (relative weight)" },
  { name: "cpuset-cpus", type: "string", description: "CPUs in which to allow execution (0-3, 0,1)" },
  { name: "cpuset-mems", type: "string", description: "MEMs in which to allow execution (0-3, 0,1)" },
  // there is no content trust here: accepted, as scripts written for Docker pass it
  { name: "disable-content-trust", type: "bool", default: true, hidden: true, description: "Skip image verification" },
  { name: "file", short: "f", type: "string", description: `Name of the Dockerfile (Default is "PATH/Dockerfile")` },
  { name: "force-rm", type: "bool", description: "Always remove intermediate containers" },
  { name: "iidfile", type: "string", description: "Write the image ID to the file" },
  { name: "isolation", type: "string", description: "Container isolation technology" },
  { name: "label", type: "list", description: "Set metadata for an image" },
  { name: "memory", short: "m", type: "string", valueName: "bytes", description: "Memory limit" },
  { name: "memory-swap", type: "string", valueName: "bytes", description: "Swap limit equal to memory plus swap: -1 to enable unlimited swap" },
  { name: "network", type: "string", default: "default", description: "Set the networking mode for the RUN instructions during build" },
  { name: "no-cache", type: "bool", description: "Do not use cache when building the image" },
  { name: "platform", type: "string", description: "Set platform if server is multi-platform capable" },
  { name: "pull", type: "bool", description: "Always attempt to pull a newer version of the image" },
  { name: "quiet", short: "q", type: "bool", description: "Suppress the build output and print image ID on success" },
  { name: "rm", type: "bool", default: true, description: "Remove intermediate containers after a successful build" },
  { name: "security-opt", type: "list", valueName: "strings", description: "Security options" },
  { name: "shm-size", type: "string", valueName: "bytes", description: `Size of "/dev/shm"` },
  { name: "squash", type: "bool", description: "Squash newly built layers into a single new layer" },
  { name: "tag", short: "t", type: "list", description: `Name and optionally a tag in the "name:tag" format` },
  { name: "target", type: "string", description: "Set the target build stage to build." },
  { name: "ulimit", type: "list", valueName: "ulimit", description: "Ulimit options" },
];
