/** Options of registries and outgoing traffic, cluster mode and metrics. */
import { BOTH, LINUX, option } from "../option.js";
import { int, list, string, ValueError } from "../value-types.js";
import { checkGenericResourceEntry } from "../../cluster/generic-resources.js";
import { checkCidr } from "../value-types-net.js";

/** `host:port`, a host name, or a CIDR. */
function checkRegistry(raw: string): void {
  if (raw.includes("/")) return checkCidr(raw);
  if (/^[a-z]+:\/\//i.test(raw)) throw new ValueError("give the registry as host[:port] or a CIDR, without a scheme");
}

/** A mirror is a URL with a scheme. */
function checkMirror(raw: string): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValueError("expected a URL such as https://mirror.example:5000");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ValueError("a mirror's scheme must be http or https");
}

function checkHostPort(raw: string): void {
  if (!/^(\[[0-9a-f:]+\]|[^:\s]*):\d{1,5}$/i.test(raw)) throw new ValueError("expected <ip>:<port>");
}

export const registryOptions = {
  "insecure-registry": option({
    flag: "insecure-registry", key: "insecure-registries", type: list(checkRegistry), default: [], platforms: BOTH,
    group: "registry", reloadable: true, metavar: "list", help: "Registries (host:port or CIDR) treated as insecure",
    example: { args: ["--insecure-registry", "registry.test:5000", "--insecure-registry", "10.0.0.0/8"], value: ["registry.test:5000", "10.0.0.0/8"] },
  }),
  "registry-mirror": option({
    flag: "registry-mirror", key: "registry-mirrors", type: list(checkMirror), default: [], platforms: BOTH,
    group: "registry", reloadable: true, metavar: "list", help: "Preferred registry mirrors",
    example: { args: ["--registry-mirror", "https://mirror.test"], value: ["https://mirror.test"] },
  }),
  "max-concurrent-downloads": option({
    flag: "max-concurrent-downloads", key: "max-concurrent-downloads", type: int(1), default: 3, platforms: BOTH,
    group: "registry", reloadable: true, help: "Maximum concurrent downloads for each pull",
    example: { args: ["--max-concurrent-downloads", "6"], value: 6 },
  }),
  "max-concurrent-uploads": option({
    flag: "max-concurrent-uploads", key: "max-concurrent-uploads", type: int(1), default: 5, platforms: BOTH,
    group: "registry", reloadable: true, help: "Maximum concurrent uploads for each push",
    example: { args: ["--max-concurrent-uploads", "2"], value: 2 },
  }),
  "max-download-attempts": option({
    flag: "max-download-attempts", key: "max-download-attempts", type: int(1), default: 5, platforms: BOTH,
    group: "registry", reloadable: true, help: "Maximum download attempts for each pull",
    example: { args: ["--max-download-attempts", "2"], value: 2 },
  }),
  "http-proxy": option({
    flag: "http-proxy", key: "proxies.http-proxy", type: string(), default: "", platforms: LINUX, group: "registry",
    secret: true, env: ["HTTP_PROXY", "http_proxy"], help: "HTTP proxy URL to use for outgoing traffic",
    example: { args: ["--http-proxy", "http://proxy.test:3128"], value: "http://proxy.test:3128" },
  }),
  "https-proxy": option({
    flag: "https-proxy", key: "proxies.https-proxy", type: string(), default: "", platforms: LINUX, group: "registry",
    secret: true, env: ["HTTPS_PROXY", "https_proxy"], help: "HTTPS proxy URL to use for outgoing traffic",
    example: { args: ["--https-proxy", "http://u:p@proxy.test:3128"], value: "http://u:p@proxy.test:3128" },
  }),
  "no-proxy": option({
    flag: "no-proxy", key: "proxies.no-proxy", type: string(), default: "", platforms: LINUX, group: "registry",
    env: ["NO_PROXY", "no_proxy"], help: "Comma-separated list of hosts or IP addresses for which the proxy is skipped",
    example: { args: ["--no-proxy", "localhost,.test"], value: "localhost,.test" },
  }),
  // --- cluster mode and metrics ---
  "cluster-default-advertise-addr": option({
    flag: "cluster-default-advertise-addr", key: "cluster-default-advertise-addr", type: string(), default: "",
    platforms: BOTH, group: "cluster", help: "Address or interface name to advertise in cluster mode (checked at start)",
    example: { args: ["--cluster-default-advertise-addr", "eth0"], value: "eth0" },
  }),
  "node-generic-resource": option({
    flag: "node-generic-resource", key: "node-generic-resources", type: list(checkGenericResourceEntry), default: [], platforms: LINUX,
    group: "cluster", metavar: "list", help: "Advertise user-defined resources (<name>=<count>, or <name>=<id> for each named one)",
    example: { args: ["--node-generic-resource", "gpu=2", "--node-generic-resource", "fpga=fpga-0"], value: ["gpu=2", "fpga=fpga-0"] },
  }),
  "metrics-addr": option({
    flag: "metrics-addr", key: "metrics-addr", type: string(checkHostPort), default: "", platforms: LINUX, group: "cluster",
    help: "Set default address and port to serve the metrics api on (needs --experimental)",
    example: { args: ["--metrics-addr", "127.0.0.1:9323"], value: "127.0.0.1:9323" },
  }),
} as const;
