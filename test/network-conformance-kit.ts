/**
 * What the network conformance suite's parts share: networks and endpoints as the daemon would
 * give them (addresses chosen, 10.213.N.0/24 and fd00:213:N::/64, far from anything a host
 * uses), and what a namespace shows of them (links, addresses, routes, rules, traffic).
 */
import { createHash, randomBytes } from "node:crypto";
import type { EndpointSpec, NetworkSpec } from "../core/contracts/network.js";
import { eventually, type Netns } from "./helpers/net-daemon.js";

const hex64 = (seed: string) => createHash("sha256").update(seed).digest("hex");

/** Network N: one IPv4 subnet (and an IPv6 one when `ipv6`), gateway .1. */
export function networkSpec(driver: string, n: number, over: Partial<NetworkSpec> & { ipv6?: boolean } = {}): NetworkSpec {
  const { ipv6, ...rest } = over;
  return {
    id: hex64(`net-${n}-${randomBytes(4).toString("hex")}`),
    name: `conf${n}`,
    driver,
    created: new Date().toISOString(),
    internal: false,
    attachable: false,
    enableIPv4: true,
    enableIPv6: !!ipv6,
    subnets: [{ subnet: `10.213.${n}.0/24`, gateway: `10.213.${n}.1` }, ...(ipv6 ? [{ subnet: `fd00:213:${n}::/64`, gateway: `fd00:213:${n}::1` }] : [])],
    options: {},
    labels: {},
    ...rest,
  };
}

/** Host H of network `net` (its N from the subnet): address .H, MAC 02:42:0a:d5:N:H. */
export function endpointSpec(net: NetworkSpec, h: number, over: Partial<EndpointSpec> = {}): EndpointSpec {
  const n = Number(net.subnets[0].subnet.split(".")[2]);
  const v6 = net.subnets.find((s) => s.subnet.includes(":"));
  const byte = (x: number) => x.toString(16).padStart(2, "0");
  return {
    containerId: hex64(`container-${h}`),
    containerName: `c${h}`,
    networkId: net.id,
    endpointId: hex64(`endpoint-${net.id}-${h}`),
    ifname: "eth0",
    mac: `02:42:0a:d5:${byte(n)}:${byte(h)}`,
    ipv4: `10.213.${n}.${h}/24`,
    ipv6: v6 ? `fd00:213:${n}::${h.toString(16)}/64` : undefined,
    gateway4: net.subnets[0].gateway,
    gateway6: v6?.gateway,
    aliases: [],
    ports: [],
    ...over,
  };
}

export const addressOf = (cidr: string | undefined) => cidr!.split("/")[0];

interface IpAddr {
  ifname: string;
  mtu: number;
  address: string;
  operstate: string;
  addr_info: { family: string; local: string; prefixlen: number; scope: string }[];
}

/** The interface `ifname` in `ns` as `ip -j addr` shows it, or undefined. */
export function linkIn(ns: Netns, ifname: string): IpAddr | undefined {
  const all = JSON.parse(ns.run("ip", "-j", "addr", "show")) as IpAddr[];
  return all.find((l) => l.ifname === ifname);
}

/** The names of the interfaces in `ns`, sorted. */
export function linkNames(ns: Netns): string[] {
  return (JSON.parse(ns.run("ip", "-j", "link", "show")) as { ifname: string }[]).map((l) => l.ifname).sort();
}

/** The global addresses of `ifname` in `ns`, CIDR form. */
export function addressesIn(ns: Netns, ifname: string): string[] {
  return (linkIn(ns, ifname)?.addr_info ?? []).filter((a) => a.scope === "global").map((a) => `${a.local}/${a.prefixlen}`);
}

/** The default routes of `ns` (both families): `via dev`. */
export function defaultRoutes(ns: Netns): string[] {
  const routes = [...(JSON.parse(ns.run("ip", "-j", "route", "show", "default")) as { gateway: string; dev: string }[]), ...(JSON.parse(ns.run("ip", "-j", "-6", "route", "show", "default")) as { gateway: string; dev: string }[])];
  return routes.map((r) => `${r.gateway} ${r.dev}`);
}

/** Whether `from` gets an answer to one ping of `address`, tried a few times (a new port may take a moment). */
export async function reaches(from: Netns, address: string, tries = 3): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (from.status("busybox", address.includes(":") ? "ping6" : "ping", "-c", "1", "-W", "1", address) === 0) return true;
  }
  return false;
}

/** The text at `url` fetched from `from`, or null. */
export function fetchFrom(from: Netns, url: string): string | null {
  try {
    return from.run("curl", "-sf", "-g", "--connect-timeout", "1", "-m", "2", url);
  } catch {
    return null;
  }
}

/** Waits (bounded) until `url` answers `text` from `from`. */
export async function answers(from: Netns, url: string, text: string): Promise<void> {
  await eventually(`${url} to answer ${text}`, () => fetchFrom(from, url) === text, 10_000);
}

/** The lines of every table's rules in `ns` that mention `needle`. */
export function rulesMentioning(ns: Netns, needle: string): string[] {
  return ns
    .run("iptables-save")
    .split("\n")
    .filter((l) => l.startsWith("-A ") && l.includes(needle));
}
