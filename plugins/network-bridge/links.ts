/**
 * The interfaces of the bridge driver, made with iproute2: a bridge per network, and per
 * container a veth pair whose one end is plugged into the bridge and whose other end becomes
 * `eth0` in the container's sandbox (a network namespace bound to a file). Each side is set up
 * with one `ip -batch` run, so a container's network costs two processes, not ten.
 */
import { randomBytes } from "node:crypto";
import type { CommandRunner } from "../../core/net/commands.js";
import { netnsRunner } from "../../core/net/commands.js";

export interface BridgeSpec {
  name: string;
  mtu: number;
  /** CIDR form (`172.18.0.1/16`): the bridge's addresses. */
  addresses: string[];
}

interface IpLink {
  ifname: string;
  mtu?: number;
  linkinfo?: { info_kind?: string };
  addr_info?: { local: string; prefixlen: number; family: string; scope?: string }[];
}

/** The interface `name` as `ip -j -d addr show` sees it, or undefined. */
async function linkInfo(run: CommandRunner, name: string): Promise<IpLink | undefined> {
  try {
    const out = await run("ip", ["-j", "-d", "addr", "show", "dev", name]);
    return (JSON.parse(out) as IpLink[])[0];
  } catch {
    return undefined;
  }
}

/**
 * ` brd +` for an IPv4 address: the broadcast address computed from the prefix, as Docker's
 * netlink library sets it (`ip addr` shows `brd 172.17.255.255`); iproute2 leaves it out for
 * /31 and /32, as netlink does. Nothing for IPv6, which has no broadcast.
 */
function broadcast(cidr: string): string {
  return cidr.includes(":") ? "" : " brd +";
}

/** The global-scope addresses of an interface, CIDR form. */
function addressesOf(link: IpLink | undefined, family: "inet" | "inet6"): string[] {
  return (link?.addr_info ?? []).filter((a) => a.family === family && a.scope !== "link").map((a) => `${a.local}/${a.prefixlen}`);
}

/**
 * Makes the bridge `spec.name` with its addresses and MTU, up; when it exists (a restart, or a
 * bridge the operator made), adds only the addresses it lacks. Resolves with whether it made it.
 */
export async function ensureBridge(run: CommandRunner, spec: BridgeSpec): Promise<boolean> {
  const existing = await linkInfo(run, spec.name);
  if (existing && existing.linkinfo?.info_kind !== "bridge") throw new Error(`${spec.name} exists and is not a bridge (it is ${existing.linkinfo?.info_kind ?? "a plain device"})`);
  const have = new Set([...addressesOf(existing, "inet"), ...addressesOf(existing, "inet6")]);
  const lines: string[] = [];
  // a MAC of Docker's shape (02:42 and four random bytes, locally administered), set when made as
  // Docker's bridge driver sets it: the kernel's own would be random whole, and would change as
  // ports join the bridge
  if (!existing) lines.push(`link add name ${spec.name} mtu ${spec.mtu} address ${bridgeMac()} type bridge`);
  for (const a of spec.addresses) if (!have.has(a)) lines.push(`addr add ${a}${broadcast(a)} dev ${spec.name}`);
  lines.push(`link set ${spec.name} up`);
  await run("ip", ["-batch", "-"], { input: lines.join("\n") + "\n" });
  return !existing;
}

/** `02:42:xx:xx:xx:xx`, the last four bytes random (Docker's GenerateRandomMAC). */
function bridgeMac(): string {
  return ["02", "42", ...[...randomBytes(4)].map((b) => b.toString(16).padStart(2, "0"))].join(":");
}

export async function deleteLink(run: CommandRunner, name: string): Promise<void> {
  try {
    await run("ip", ["link", "del", "dev", name]);
  } catch (err) {
    if (!/Cannot find device|does not exist/.test((err as Error).message)) throw err;
  }
}

export interface VethSpec {
  bridge: string;
  mtu: number;
  /** The sandbox's bound namespace file. */
  sandbox: string;
  ifname: string;
  mac: string;
  /** CIDR form. */
  addresses: string[];
  gateway4?: string;
  gateway6?: string;
  /**
   * Hairpin mode on the bridge's port (Docker sets it with `--userland-proxy=false`): a
   * container that reaches its own published port through an address of the host gets the
   * DNATed packet back out of the port it came in by, which a bridge otherwise never does.
   */
  hairpin?: boolean;
}

/** Plugs a new veth pair into the bridge and the sandbox; resolves with the host end's name. */
export async function plugVeth(run: CommandRunner, spec: VethSpec): Promise<string> {
  const suffix = randomBytes(4).toString("hex").slice(0, 7);
  const host = `veth${suffix}`;
  const temp = `ctmp${suffix}`; // renamed inside the sandbox, where eth0 cannot clash with the host's
  // txqueuelen 0 on both ends, as Docker makes its veths: a virtual link has no queue to fill
  // (`ip link` inside the container then shows no `qlen 1000`)
  await run("ip", ["-batch", "-"], {
    input: [
      `link add ${host} mtu ${spec.mtu} txqueuelen 0 type veth peer name ${temp} mtu ${spec.mtu} txqueuelen 0 netns ${spec.sandbox}`,
      `link set ${host} master ${spec.bridge}`,
      ...(spec.hairpin ? [`link set ${host} type bridge_slave hairpin on`] : []),
      `link set ${host} up`,
    ].join("\n") + "\n",
  });
  try {
    const inside = [`link set ${temp} name ${spec.ifname}`, `link set ${spec.ifname} address ${spec.mac}`];
    for (const a of spec.addresses) inside.push(`addr add ${a}${broadcast(a)} dev ${spec.ifname}${a.includes(":") ? " nodad" : ""}`);
    inside.push(`link set ${spec.ifname} up`);
    if (spec.gateway4) inside.push(`route add default via ${spec.gateway4} dev ${spec.ifname}`);
    // ip -batch takes no option on a line (`-6 route ...` is "Object -6 is unknown"): the family
    // of `default` comes from the gateway's address.
    if (spec.gateway6) inside.push(`route add default via ${spec.gateway6} dev ${spec.ifname}`);
    const ipv6 = spec.addresses.some((a) => a.includes(":"));
    if (ipv6) await netnsRunner(spec.sandbox)("ip", ["-batch", "-"], { input: inside.join("\n") + "\n" });
    else {
      // An interface on a network without IPv6 has IPv6 turned off before it is up, as Docker's
      // (moby's setInterfaceIPv6): left on, it would take a link-local address, join IPv6
      // multicast groups and accept router advertisements from any other container on the
      // bridge (NDP cache poisoning, route injection). The loopback keeps ::1. A kernel without
      // IPv6 has no such file, and nothing to turn off.
      const script = `f=/proc/sys/net/ipv6/conf/$1/disable_ipv6; if [ -e "$f" ]; then echo 1 > "$f" || exit 1; fi; exec ip -batch -`;
      await netnsRunner(spec.sandbox)("sh", ["-c", script, "sh", temp], { input: inside.join("\n") + "\n" });
    }
  } catch (err) {
    await deleteLink(run, host).catch(() => undefined);
    throw err;
  }
  return host;
}
