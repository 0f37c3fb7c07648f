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
import { execFileSync } from "node:child_process";
import { isIP } from "node:net";
import { errors } from "../../core/errors.js";

/**
 * The addresses of interface `name` in this process's network namespace, up or down (Node's
 * os.networkInterfaces leaves out interfaces that are down), or undefined when there is no
 * interface of that name.
 */
function interfaceAddresses(name: string): { v4: string[]; v6: string[] } | undefined {
  let out: string;
  try {
    out = execFileSync("ip", ["-j", "addr", "show", "dev", name], { encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "pipe"] });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw errors.clusterAdvertiseAddrInvalid(name, "cannot look up interfaces: the ip command (iproute2) is missing");
    return undefined; // "Device ... does not exist", or not a valid interface name
  }
  const links = JSON.parse(out || "[]") as { addr_info?: { family: string; local: string }[] }[];
  const addrs = links[0]?.addr_info ?? [];
  return { v4: addrs.filter((a) => a.family === "inet").map((a) => a.local), v6: addrs.filter((a) => a.family === "inet6").map((a) => a.local) };
}

export function resolveAdvertiseAddr(value: string): string {
  if (value === "") return "";
  const found = interfaceAddresses(value);
  if (found) {
    const { v4, v6 } = found;
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
