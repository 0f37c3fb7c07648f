/**
 * The container's /etc/hosts and /etc/hostname, as Docker writes them: the loopback and IPv6
 * well-known names, then `ExtraHosts` (`--add-host`), then the container's own addresses with its
 * names. A container without an address (NetworkMode none) gets no line of its own.
 *
 * `ExtraHosts` entries are `name:ip` (split at the FIRST colon, since IPv6 addresses have colons)
 * or `name=ip` as newer clients send; `[ip]` brackets are accepted. The value `host-gateway` stands
 * for the host's addresses (`--host-gateway-ip`, else the default bridge's): one line per address.
 */
import { isIP } from "node:net";
import { AddressError, addressFamily } from "./cidr.js";

const HOST_GATEWAY = "host-gateway";

const DEFAULT_IPV4: readonly [string, string][] = [["127.0.0.1", "localhost"]];
const DEFAULT_IPV6: readonly [string, string][] = [
  ["::1", "localhost ip6-localhost ip6-loopback"],
  // (as Docker 28 writes them, formatted by Go's netip: 20.10 wrote `fe00::0` and `ff00::0`)
  ["fe00::", "ip6-localnet"],
  ["ff00::", "ip6-mcastprefix"],
  ["ff02::1", "ip6-allnodes"],
  ["ff02::2", "ip6-allrouters"],
];

export interface ExtraHost {
  name: string;
  /** An address, or `host-gateway`. */
  address: string;
}

/** Reads one `ExtraHosts` entry; Docker's errors for a bad one. */
export function parseExtraHost(entry: string): ExtraHost {
  let cut = entry.indexOf("=");
  if (cut < 0) cut = entry.indexOf(":");
  const name = cut < 0 ? "" : entry.slice(0, cut);
  // A name cannot hold a colon; rejecting it here catches `ip:name` written the wrong way round.
  if (cut < 0 || name === "" || name.includes(":")) throw new AddressError("invalid", `bad format for add-host: "${entry}"`);
  let address = entry.slice(cut + 1);
  if (address === HOST_GATEWAY) return { name, address };
  if (address.length > 2 && address.startsWith("[") && address.endsWith("]")) address = address.slice(1, -1);
  // No zone (`fe80::1%eth0`): Docker's client refuses it, and /etc/hosts cannot say which interface.
  if (addressFamily(address.trim()) === 0) throw new AddressError("invalid", `invalid IP address in add-host: "${address}"`);
  return { name, address: address.trim() };
}

export interface HostsFileInput {
  hostname: string;
  domainname?: string;
  /** The container's own addresses (IPv4 first, as Docker lists them); [] for NetworkMode none. */
  addresses: readonly string[];
  /** HostConfig.ExtraHosts. */
  extraHosts?: readonly string[];
  /** What `host-gateway` stands for: one address per family. */
  hostGatewayIps?: readonly string[];
  /** Legacy links: `[address, names]` lines after ExtraHosts (core/containers/links.ts makes the names). */
  linkedHosts?: readonly (readonly [string, string])[];
  /**
   * Whether the container's loopback has IPv6 (default true). Without it Docker leaves out the
   * IPv6 names and every IPv6 line, since nothing in the container could reach those addresses.
   */
  ipv6?: boolean;
}

export function hostsFile(input: HostsFileInput): string {
  const ipv6 = input.ipv6 ?? true;
  const records: [string, string][] = [...DEFAULT_IPV4, ...(ipv6 ? DEFAULT_IPV6 : [])];
  for (const entry of input.extraHosts ?? []) {
    const { name, address } = parseExtraHost(entry);
    if (address !== HOST_GATEWAY) {
      records.push([address, name]);
      continue;
    }
    const gateways = input.hostGatewayIps ?? [];
    if (gateways.length === 0) throw new AddressError("invalid", "unable to derive the IP value for host-gateway");
    for (const ip of gateways) records.push([ip, name]);
  }
  for (const [address, names] of input.linkedHosts ?? []) records.push([address, names]);
  // The full name first, then the short one: `getent hosts $(hostname)` and `hostname -f` both work.
  const fqdn = input.domainname ? `${input.hostname}.${input.domainname}` : input.hostname;
  const short = fqdn.split(".", 1)[0];
  const names = short !== fqdn ? `${fqdn} ${short}` : fqdn;
  for (const address of input.addresses) records.push([address, names]);
  return records
    .filter(([address]) => ipv6 || isIP(address) !== 6)
    .map(([address, name]) => `${address}\t${name}\n`)
    .join("");
}

/** /etc/hostname. */
export function hostnameFile(hostname: string): string {
  return `${hostname}\n`;
}
