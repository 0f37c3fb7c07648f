/**
 * The default network (`bridge`) from the daemon's options, as Docker makes its `bridge`:
 * the interface `engine0` (or the operator's bridge named by `--bridge`), its subnet from
 * `--bip`, else the address the bridge already has (a restart, or the operator's bridge), else
 * the first free subnet of the address pools (one that overlaps neither another network nor a
 * route on the host); `--fixed-cidr` as the range containers get addresses from;
 * `--default-gateway` as the containers' default route (an address of the subnet; `--bip` with
 * `--bridge NAME` is refused, as Docker does); `--icc`, `--ip-masq`, `--mtu` and `--ip`
 * written into its options (`--default-network-opt` is for networks made later, not this one).
 */
import { execFileAsync as exec } from "../../core/exec-file.js";
import type { NetworkSpec, SubnetConfig } from "../../core/contracts/network.js";
import { effectivePools, nextFreeSubnet, parseHostRoutes } from "../../core/network/address-pools.js";
import { Cidr, contains } from "../../core/network/cidr.js";
import { DEFAULT_GATEWAY_AUX } from "../../core/network/ipam.js";
import type { DaemonConfig } from "../../core/options/table.js";
import { errors } from "../../core/errors.js";

const DEFAULT_BRIDGE = "engine0";

async function ipJson(args: string[]): Promise<unknown[]> {
  try {
    return JSON.parse((await exec("ip", ["-j", ...args], { timeout: 10_000 })).stdout || "[]") as unknown[];
  } catch {
    return [];
  }
}

/** The bridge's global addresses of a family, CIDR form (`172.18.0.1/16`). */
async function bridgeAddresses(name: string, family: 4 | 6): Promise<string[]> {
  const links = (await ipJson([`-${family}`, "addr", "show", "dev", name])) as { addr_info?: { local: string; prefixlen: number; scope?: string }[] }[];
  return (links[0]?.addr_info ?? []).filter((a) => a.scope !== "link").map((a) => `${a.local}/${a.prefixlen}`);
}

/** The host's routes of a family, except those of the bridge itself (its own subnet is no obstacle). */
export async function hostRoutes(bridge: string, family: 4 | 6): Promise<string[]> {
  const routes = ((await ipJson([`-${family}`, "route", "show"])) as { dev?: string }[]).filter((r) => r.dev !== bridge);
  return parseHostRoutes(JSON.stringify(routes));
}

/** `172.18.5.1/16` → the subnet `172.18.0.0/16` with the gateway `172.18.5.1`. */
function fromAddress(cidr: string): { subnet: string; gateway: string } {
  const c = Cidr.parse(cidr);
  return { subnet: Cidr.of(c.network, c.prefix, c.family).toString(), gateway: c.formatAddress(c.address) };
}

export interface DefaultNetworkContext {
  id: string;
  previous?: NetworkSpec;
  /** Subnets of the other networks. */
  taken: string[];
  /** For the IPv6 pool made from it when no IPv6 pool is configured. */
  hostId?: string;
}

export async function defaultNetworkSpec(config: DaemonConfig, ctx: DefaultNetworkContext): Promise<NetworkSpec> {
  const external = config.bridge !== "";
  // Docker refuses the pair too: the operator's bridge has its address already, and the daemon
  // never changes an interface it did not make, so a --bip would name an address nobody has.
  if (external && config.bip) throw errors.configRule([`You specified -b & --bip, mutually exclusive options. Please specify only one (--bridge ${config.bridge} takes its subnet from the bridge's address)`]);
  const name = external ? config.bridge : DEFAULT_BRIDGE;
  const pools = effectivePools(config["default-address-pool"], ctx.hostId ?? ctx.id);
  const subnets: SubnetConfig[] = [];

  const pick = async (family: 4 | 6, bip: string, fixed: string, gatewayOpt: string): Promise<void> => {
    let chosen: { subnet: string; gateway: string } | undefined;
    if (bip) chosen = fromAddress(bip);
    else {
      const present = await bridgeAddresses(name, family);
      if (present.length) chosen = fromAddress(present[0]);
      else if (external && family === 4) throw errors.configRule([`the bridge ${name} (--bridge) has no IPv4 address: give it one, or choose --bip`]);
      else if (fixed) chosen = { subnet: Cidr.parse(fixed).toString(), gateway: Cidr.parse(fixed).formatAddress(Cidr.parse(fixed).firstHost) };
      else {
        const before = ctx.previous?.subnets.find((s) => Cidr.parse(s.subnet).family === family);
        const subnet = before && !ctx.taken.some((t) => Cidr.parse(t).overlaps(Cidr.parse(before.subnet)))
          ? before.subnet
          : nextFreeSubnet(pools, ctx.taken, await hostRoutes(name, family), family);
        chosen = { subnet, gateway: before?.subnet === subnet ? before.gateway : Cidr.parse(subnet).formatAddress(Cidr.parse(subnet).firstHost) };
      }
    }
    const s: SubnetConfig = { subnet: chosen.subnet, gateway: chosen.gateway };
    if (fixed) {
      const range = Cidr.parse(fixed);
      if (!Cidr.parse(chosen.subnet).containsCidr(range)) throw errors.configRule([`--fixed-cidr${family === 6 ? "-v6" : ""} ${fixed} is not inside the bridge's subnet ${chosen.subnet}`]);
      s.ipRange = Cidr.of(range.network, range.prefix, range.family).toString();
    }
    if (gatewayOpt) {
      if (!contains(chosen.subnet, gatewayOpt)) throw errors.configRule([`--default-gateway${family === 6 ? "-v6" : ""} ${gatewayOpt} is not in the bridge's subnet ${chosen.subnet}: the default gateway must be part of the network`]);
      s.auxAddresses = { [DEFAULT_GATEWAY_AUX[family]]: gatewayOpt };
    }
    subnets.push(s);
  };

  await pick(4, config.bip, config["fixed-cidr"], config["default-gateway"]);
  if (config.ipv6) await pick(6, config.bip6, config["fixed-cidr-v6"], config["default-gateway-v6"]);

  const options: Record<string, string> = {
    "com.engine.network.bridge.default_bridge": "true",
    "com.engine.network.bridge.enable_icc": String(config.icc),
    "com.engine.network.bridge.enable_ip_masquerade": String(config["ip-masq"]),
    "com.engine.network.bridge.host_binding_ipv4": config.ip,
    "com.engine.network.bridge.name": name,
    "com.engine.network.driver.mtu": String(config.mtu),
    ...(external ? { "com.engine.network.bridge.external": "true" } : {}),
  };
  return {
    id: ctx.id,
    name: "bridge",
    driver: "bridge",
    created: ctx.previous?.created ?? new Date().toISOString(),
    internal: false,
    attachable: false,
    enableIPv4: true,
    enableIPv6: config.ipv6,
    subnets,
    options,
    labels: {},
    isDefault: true,
  };
}
