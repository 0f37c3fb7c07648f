/**
 * Where the subnet of the default bridge and of a new network comes from when none is given: the
 * first subnet of the address pools that overlaps neither a network of the daemon nor a route
 * already on the host (a subnet that shadows the host's LAN or VPN would cut the host off from it).
 *
 * Pools are Docker's `--default-address-pool base=10.10.0.0/16,size=24` (`default-address-pools` in
 * daemon.json); configured pools replace the IPv4 defaults. As Docker (v27+) does, the pools are
 * searched in address order, a pool inside an earlier, wider one is ignored, and when no IPv6 pool
 * is configured a ULA /48 derived from the daemon's host id gives IPv6 subnets (`effectivePools`).
 *
 * The host's routes are read by the caller (`ip -j route show`, `ip -j -6 route show`) and given to
 * `parseHostRoutes`: nothing here runs a command.
 */
import { createHash } from "node:crypto";
import type { AddressPool } from "../options/value-types-net.js";
import { AddressError, Cidr, formatAddress, parseAddress, type Family } from "./cidr.js";

export type Pool = AddressPool;

/** Docker's local-scope defaults: 172.17–31.0.0/16 as /16s, then 192.168.0.0/16 as /20s. */
export function defaultPools(): Pool[] {
  return [
    { base: "172.17.0.0/16", size: 16 },
    { base: "172.18.0.0/16", size: 16 },
    { base: "172.19.0.0/16", size: 16 },
    { base: "172.20.0.0/14", size: 16 },
    { base: "172.24.0.0/14", size: 16 },
    { base: "172.28.0.0/14", size: 16 },
    { base: "192.168.0.0/16", size: 20 },
  ];
}

/**
 * A ULA prefix (fdXX:XXXX:XXXX::/48, split in /64s) that is the same on every start of the daemon
 * on this host and unlikely to be another host's: 40 bits of SHA-256 of the host id, as Docker
 * derives it (loosely RFC 4193 3.2.2).
 */
export function ulaPool(hostId: string): Pool {
  const digest = createHash("sha256").update(hostId).digest();
  const globalId = digest.readBigUInt64BE(0) & ((1n << 40n) - 1n);
  const base = parseAddress("fd00::").value + (globalId << 80n);
  return { base: `${formatAddress(base, 6)}/48`, size: 64 };
}

/** The pools the daemon uses: the configured ones or the defaults, plus the ULA pool when there is no IPv6 pool. */
export function effectivePools(configured: readonly Pool[], hostId: string): Pool[] {
  const pools = configured.length > 0 ? [...configured] : defaultPools();
  if (!pools.some((p) => Cidr.parse(p.base).family === 6)) pools.push(ulaPool(hostId));
  return pools;
}

interface PreparedPool {
  base: Cidr;
  size: number;
}

/** Docker's order: by base address (wider first on a tie); a pool overlapping an earlier one is dropped. */
function preparePools(pools: readonly Pool[], family: Family): PreparedPool[] {
  const prepared = pools
    .map((p) => ({ base: Cidr.parse(p.base), size: p.size }))
    .filter((p) => p.base.family === family)
    .map((p) => {
      if (!Number.isInteger(p.size) || p.size < p.base.prefix || p.size > p.base.bits) {
        throw new AddressError("invalid", `invalid pool size ${p.size} for base ${p.base}: it must be between ${p.base.prefix} and ${p.base.bits}`);
      }
      return { base: Cidr.of(p.base.network, p.base.prefix, family), size: p.size };
    })
    .sort((a, b) => (a.base.network < b.base.network ? -1 : a.base.network > b.base.network ? 1 : a.base.prefix - b.base.prefix));
  const kept: PreparedPool[] = [];
  for (const p of prepared) if (!kept.some((k) => k.base.overlaps(p.base))) kept.push(p);
  return kept;
}

/**
 * The first subnet of the pools that overlaps none of `taken` (the subnets of the daemon's
 * networks) and none of `hostRoutes` (destinations of the host's routes, the default route left
 * out; a bare address, such as a nameserver of the host that Docker also keeps clear of, is one
 * address). Throws Docker's error when every candidate is in the way.
 */
export function nextFreeSubnet(pools: readonly Pool[], taken: readonly string[], hostRoutes: readonly string[], family: Family): string {
  const obstacles = [...taken, ...hostRoutes].map((c) => (c.includes("/") ? Cidr.parse(c) : Cidr.single(c))).filter((c) => c.family === family);
  for (const pool of preparePools(pools, family)) {
    const step = 1n << BigInt(pool.base.bits - pool.size);
    let candidate = pool.base.network;
    // Each pass either returns or jumps past the end of an obstacle, so the loop runs at most
    // once per obstacle, even in an IPv6 pool with 2^56 candidates.
    while (candidate + step - 1n <= pool.base.last) {
      const subnet = Cidr.of(candidate, pool.size, family);
      const inTheWay = obstacles.filter((o) => o.overlaps(subnet));
      if (inTheWay.length === 0) return subnet.toString();
      const pastAll = inTheWay.reduce((max, o) => (o.last > max ? o.last : max), 0n) + 1n;
      candidate = ((pastAll + step - 1n) / step) * step;
    }
  }
  throw new AddressError(
    "exhausted",
    `could not find an available, non-overlapping IPv${family} address pool among the defaults to assign to the network`,
  );
}

interface IpRouteEntry {
  dst?: unknown;
  type?: unknown;
}

/**
 * The destinations of `ip -j route show` / `ip -j -6 route show` as normalised CIDRs: the default
 * route is left out (it overlaps everything), a bare address is a /32 or /128, multicast routes
 * are not address space a network could take.
 */
export function parseHostRoutes(ipJsonRouteOutput: string): string[] {
  const text = ipJsonRouteOutput.trim();
  if (text === "") return []; // some iproute2 versions print nothing when there is no route
  let entries: unknown;
  try {
    entries = JSON.parse(text);
  } catch {
    throw new AddressError("invalid", `cannot read the output of ip -j route: ${text.slice(0, 80)}`);
  }
  if (!Array.isArray(entries)) throw new AddressError("invalid", "cannot read the output of ip -j route: not an array");
  const out = new Set<string>();
  for (const entry of entries as IpRouteEntry[]) {
    if (typeof entry?.dst !== "string" || entry.dst === "default" || entry.type === "multicast") continue;
    const dst = entry.dst;
    try {
      out.add((dst.includes("/") ? Cidr.parse(dst) : Cidr.single(dst)).toString());
    } catch {
      // A destination iproute2 names rather than numbers: not address space.
    }
  }
  return [...out];
}
