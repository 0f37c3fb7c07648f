/**
 * `--cluster-default-advertise-addr`: the address this node gives other nodes of a cluster to
 * reach it, as an IP address or the name of one of its network interfaces. Docker's rules:
 * - a name of an interface (in the daemon's network namespace) stands for that interface's
 *   address: its IPv4 address if it has one, else its IPv6 address; an interface with no
 *   address, or with two of one family, cannot be used;
 * - anything else must be a non-zero IP address, without a port.
 * The daemon resolves it once at start and stops with a message naming the value when it
 * cannot be used; an empty value is nothing to advertise.
 */
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { errors } from "../../core/errors.js";

/** Interface names of this process's network namespace, with or without addresses. */
function interfaceNames(): Set<string> {
  // /proc/self/net follows the reader's namespace (/sys/class/net follows the one sysfs was mounted in).
  const lines = readFileSync("/proc/self/net/dev", "utf8").split("\n").slice(2);
  return new Set(lines.map((l) => l.split(":")[0].trim()).filter(Boolean));
}

export function resolveAdvertiseAddr(value: string): string {
  if (value === "") return "";
  if (interfaceNames().has(value)) {
    const addrs = (networkInterfaces()[value] ?? []).filter((a) => a.family === "IPv4" || a.family === "IPv6");
    const v4 = addrs.filter((a) => a.family === "IPv4").map((a) => a.address);
    const v6 = addrs.filter((a) => a.family === "IPv6").map((a) => a.address);
    if (v4.length > 1) throw errors.clusterAdvertiseAddrInvalid(value, `interface ${value} has more than one IPv4 address (${v4[0]} and ${v4[1]})`);
    if (v6.length > 1) throw errors.clusterAdvertiseAddrInvalid(value, `interface ${value} has more than one IPv6 address (${v6[0]} and ${v6[1]})`);
    const address = v4[0] ?? v6[0];
    if (address === undefined) throw errors.clusterAdvertiseAddrInvalid(value, `interface ${value} has no IPv4 or IPv6 address`);
    return address;
  }
  if (isIP(value) === 0) {
    throw errors.clusterAdvertiseAddrInvalid(value, "it is neither a network interface of this host nor an IP address (give a non-zero IP address or an interface name, without a port)");
  }
  if (/^(0+\.){3}0+$/.test(value) || /^[0:]+$/.test(value)) {
    throw errors.clusterAdvertiseAddrInvalid(value, "the unspecified address cannot be advertised (give a non-zero IP address or an interface name)");
  }
  return value;
}
