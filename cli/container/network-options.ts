/**
 * The network flags of `run` and `create` as the Docker CLI 28 reads them: `--network` (a name,
 * or `name=N,alias=A,ip=...,driver-opt=K=V,...`, several times for several networks), the
 * first network's `--network-alias`, `--ip`, `--ip6`, `--mac-address`, `--link-local-ip` and
 * (on a user-defined network) `--link`, and the DNS values. The result is HostConfig's
 * NetworkMode and the request's EndpointsConfig, with the Docker CLI's rules and messages.
 */
import { isIP } from "node:net";
import { csvFields } from "../flags.js";

/** One `--network` value. */
export interface NetworkAttachment {
  Target: string;
  Aliases: string[];
  DriverOpts?: Record<string, string>;
  Links: string[];
  IPv4Address: string;
  IPv6Address: string;
  LinkLocalIPs: string[];
  MacAddress: string;
  GwPriority: number;
}

/** The endpoint settings as the Docker CLI's JSON carries them (every field, unset ones zero). */
export interface EndpointSettings {
  IPAMConfig: { IPv4Address?: string; IPv6Address?: string; LinkLocalIPs?: string[] } | null;
  Links: string[] | null;
  Aliases: string[] | null;
  MacAddress: string;
  DriverOpts: Record<string, string> | null;
  GwPriority: number;
  NetworkID: string;
  EndpointID: string;
  Gateway: string;
  IPAddress: string;
  IPPrefixLen: number;
  IPv6Gateway: string;
  GlobalIPv6Address: string;
  GlobalIPv6PrefixLen: number;
  DNSNames: null;
}

/** The endpoint's state fields, which a client sends empty (the Docker CLI's JSON has them all). */
export const ENDPOINT_STATE = {
  NetworkID: "",
  EndpointID: "",
  Gateway: "",
  IPAddress: "",
  IPPrefixLen: 0,
  IPv6Gateway: "",
  GlobalIPv6Address: "",
  GlobalIPv6PrefixLen: 0,
  DNSNames: null,
} as const;

/** What the first network takes from the container-wide flags. */
export interface NetworkFlags {
  networks: readonly string[];
  aliases: readonly string[];
  links: readonly string[];
  ip: string;
  ip6: string;
  mac: string;
  linkLocalIps: readonly string[];
}

/** Go's net.ParseIP and IP.String: an IPv4 address, or an IPv6 one in its shortest form. */
function goIpString(text: string): string | undefined {
  if (isIP(text) === 4) return /(^|\.)0\d/.test(text) ? undefined : text;
  if (isIP(text) !== 6 || text.includes("%")) return undefined;
  const host = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  // an IPv4-mapped address prints as IPv4
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (!mapped) return host;
  const [hi, lo] = [parseInt(mapped[1], 16), parseInt(mapped[2], 16)];
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
}

/** `--dns`: an IP address (spaces around it allowed), kept in its normal form. */
export function validIpAddress(v: string): string {
  const ip = goIpString(v.trim());
  if (ip === undefined) throw new Error(`IP address is not correctly formatted: ${v}`);
  return ip;
}

/** `--dns-search`: a domain (`.` for none), without its trailing dot. */
export function validDnsSearch(v: string): string {
  const val = v.replace(/^ +| +$/g, "");
  if (val === ".") return val;
  // the Docker CLI's own pattern, `(:?` groups and all
  const m = /^(:?(:?[a-zA-Z0-9]|(:?[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))(:?\.(:?[a-zA-Z0-9]|(:?[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])))*)\.?\s*$/.exec(val);
  if (!/[a-zA-Z]/.test(val) || !m || m[1].length >= 255) throw new Error(`${val} is not a valid domain`);
  return m[1];
}

/** Go's net.ParseMAC: 6, 8 or 20 bytes as hex pairs separated by `:` or `-`, or dotted quads. */
export function validMac(v: string): boolean {
  const s = v.trim();
  const pairs = /^[0-9a-fA-F]{2}([:-])[0-9a-fA-F]{2}(\1[0-9a-fA-F]{2})*$/.test(s) ? s.split(/[:-]/).length : 0;
  const quads = /^[0-9a-fA-F]{4}(\.[0-9a-fA-F]{4})*$/.test(s) ? s.split(".").length * 2 : 0;
  return [6, 8, 20].includes(pairs || quads);
}

/** `name=N,alias=A,...` (any `word=word` in the value) or a plain network name. */
export function parseNetworkFlag(value: string): NetworkAttachment {
  const n: NetworkAttachment = { Target: "", Aliases: [], Links: [], IPv4Address: "", IPv6Address: "", LinkLocalIPs: [], MacAddress: "", GwPriority: 0 };
  if (!/\w+=\w+(,\w+=\w+)*/.test(value)) return { ...n, Target: value };
  for (const field of csvFields(value)) {
    const eq = field.indexOf("=");
    if (eq <= 0) throw new Error(`invalid field ${field}`);
    const key = field.slice(0, eq).trim();
    const val = field.slice(eq + 1).trim();
    if (key === "name") n.Target = val;
    else if (key === "alias") n.Aliases.push(val);
    else if (key === "ip") n.IPv4Address = val;
    else if (key === "ip6") n.IPv6Address = val;
    else if (key === "mac-address") n.MacAddress = val;
    else if (key === "link-local-ip") n.LinkLocalIPs.push(val);
    else if (key === "driver-opt") {
      const e = val.indexOf("=");
      if (e <= 0) throw new Error("invalid key value pair format in driver options");
      (n.DriverOpts ??= {})[val.slice(0, e).trim()] = val.slice(e + 1).trim();
    } else if (key === "gw-priority") {
      if (!/^[+-]?\d+$/.test(val)) throw new Error(`invalid gw-priority (${val}): invalid syntax`);
      n.GwPriority = Number(val);
    } else throw new Error(`invalid field key ${key}`);
  }
  if (n.Target === "") throw new Error("network name/id is not specified");
  return n;
}

/** Docker's NetworkMode.IsUserDefined. */
export function isUserDefined(mode: string): boolean {
  return !["default", "bridge", "host", "none"].includes(mode) && !/^container:/.test(mode);
}

/** The first network takes the container-wide flags; either form of a setting, not both. */
function applyContainerFlags(n: NetworkAttachment, f: NetworkFlags): void {
  if (n.Aliases.length && f.aliases.length) throw new Error("conflicting options: cannot specify both --network-alias and per-network alias");
  if (n.Links.length && f.links.length) throw new Error("conflicting options: cannot specify both --link and per-network links");
  if (n.IPv4Address && f.ip) throw new Error("conflicting options: cannot specify both --ip and per-network IPv4 address");
  if (n.IPv6Address && f.ip6) throw new Error("conflicting options: cannot specify both --ip6 and per-network IPv6 address");
  if (n.MacAddress && f.mac) throw new Error("conflicting options: cannot specify both --mac-address and per-network MAC address");
  if (n.LinkLocalIPs.length && f.linkLocalIps.length) throw new Error("conflicting options: cannot specify both --link-local-ip and per-network link-local IP addresses");
  if (f.aliases.length) n.Aliases = [...f.aliases];
  // on a user-defined network a link is an alias the endpoint resolves; on the default bridge, a legacy link
  if (isUserDefined(n.Target) && f.links.length) n.Links = [...f.links];
  if (f.ip) n.IPv4Address = f.ip;
  if (f.ip6) n.IPv6Address = f.ip6;
  if (f.mac) n.MacAddress = f.mac;
  if (f.linkLocalIps.length) n.LinkLocalIPs = [...f.linkLocalIps];
}

function endpointOf(n: NetworkAttachment): EndpointSettings {
  if (n.Target.trim() === "") throw new Error("no name set for network");
  if (!isUserDefined(n.Target)) {
    if (n.Aliases.length) throw new Error("network-scoped aliases are only supported for user-defined networks");
    if (n.Links.length) throw new Error("links are only supported for user-defined networks");
  }
  if (n.MacAddress && !validMac(n.MacAddress)) throw new Error(`${n.MacAddress} is not a valid mac address`);
  const ipam = n.IPv4Address || n.IPv6Address || n.LinkLocalIPs.length
    ? { ...(n.IPv4Address ? { IPv4Address: n.IPv4Address } : {}), ...(n.IPv6Address ? { IPv6Address: n.IPv6Address } : {}), ...(n.LinkLocalIPs.length ? { LinkLocalIPs: n.LinkLocalIPs } : {}) }
    : null;
  return {
    IPAMConfig: ipam,
    Links: n.Links.length ? n.Links : null,
    Aliases: n.Aliases.length ? n.Aliases : null,
    MacAddress: n.MacAddress,
    DriverOpts: n.DriverOpts ?? null,
    GwPriority: n.GwPriority,
    ...ENDPOINT_STATE,
  };
}

const isBare = (e: EndpointSettings) => !e.IPAMConfig && !e.Links && !e.Aliases && !e.MacAddress && !e.DriverOpts && !e.GwPriority;

/**
 * NetworkMode (the first network, `default` without one) and the endpoints: one per network,
 * the only network's left out when nothing is set for it (the daemon makes it anyway), and
 * `default`'s always there when no network is named, as the Docker CLI 28 sends them.
 */
export function networkConfig(f: NetworkFlags): { mode: string; endpoints: Record<string, EndpointSettings> } {
  const nets = f.networks.map(parseNetworkFlag);
  const endpoints: Record<string, EndpointSettings> = {};
  if (nets.length === 0) {
    const n = parseNetworkFlag("default");
    applyContainerFlags(n, f);
    endpoints.default = endpointOf(n);
  }
  let userDefined = false;
  let other = false;
  nets.forEach((n, i) => {
    if (isUserDefined(n.Target)) userDefined = true;
    else other = true;
    if (i === 0) applyContainerFlags(n, f);
    const ep = endpointOf(n);
    if (n.Target in endpoints) throw new Error(`network "${n.Target}" is specified multiple times`);
    if (i === 0 && nets.length === 1 && isBare(ep)) return;
    endpoints[n.Target] = ep;
  });
  if (userDefined && other) throw new Error("conflicting options: cannot attach both user-defined and non-user-defined network-modes");
  return { mode: nets[0]?.Target ?? "default", endpoints };
}
