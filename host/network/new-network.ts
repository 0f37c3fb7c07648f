/**
 * A user-defined network from `POST /networks/create`, checked the way Docker checks it: a name
 * (not blank, not predefined) no other network has, a local scope (cluster networks are an orchestrator's),
 * subnets that are well formed, hold their gateway and range, and overlap no other
 * network's (an IPv6 one on a network without IPv6 is ignored); a missing IPv4 (or, with
 * EnableIPv6, IPv6) subnet comes from the first free subnet
 * of the address pools that no network and no route of the host already uses. With an IPAM
 * plugin (`IPAM.Driver` other than `default`) the subnets are only checked for their form: the
 * plugin gives the pools and gateways (remote-ipam.ts), and refuses what overlaps. The driver's
 * `default-network-opts` fill the options the request leaves out, `com.docker.network.enable_ipv4`
 * and `_ipv6` among them, which choose the IP families a request leaves out.
 */
import type { NetworkSpec, SubnetConfig } from "../../core/contracts/network.js";
import { errors } from "../../core/errors.js";
import { effectivePools, nextFreeSubnet } from "../../core/network/address-pools.js";
import { AddressError, Cidr, type Family } from "../../core/network/cidr.js";
import { NetworkIpam } from "../../core/network/ipam.js";
import type { IpamConfigRequest, NetworkCreateRequest } from "../../core/network/network-request.js";
import type { DaemonConfig } from "../../core/options/table.js";

/** The names of network modes (`--network host`), which no user-defined network may take. */
const PREDEFINED_NAMES = ["bridge", "host", "none", "default"];

/**
 * Docker's rule: any name that is not only white space (spaces, slashes, colons and non-ASCII
 * letters included; kept as given, not trimmed), and none of the predefined names, which are
 * refused before the names taken are looked at.
 */
function checkName(name: string): void {
  if (PREDEFINED_NAMES.includes(name)) throw errors.networkNamePredefined(name);
  if (name.trim() === "") throw errors.networkInvalidName(name);
}

export interface NewNetworkContext {
  id: string;
  config: DaemonConfig;
  /** Every network the daemon has (names and subnets taken). */
  others: readonly NetworkSpec[];
  /** The host's route destinations of a family (the default route left out). */
  hostRoutes(family: Family): Promise<string[]>;
  /** Stable per daemon: the seed of the IPv6 pool when none is configured. */
  hostId: string;
}

/** A request's AddressError as the API's error (400 malformed, 403 taken or exhausted, as Docker). */
export function addressFailure(err: unknown): unknown {
  if (!(err instanceof AddressError)) return err;
  if (err.kind === "invalid") return errors.networkInvalid(err.message);
  return err.kind === "in-use" ? errors.networkAddressInUse(err.message) : errors.networkPoolExhausted(err.message);
}

function requestedSubnet(c: IpamConfigRequest, enabled: Record<Family, boolean>): SubnetConfig | undefined {
  if (!c.Subnet) {
    if (c.Gateway || c.IPRange) throw errors.networkInvalid(`a gateway or an IP range needs a subnet (Gateway ${c.Gateway ?? "-"}, IPRange ${c.IPRange ?? "-"})`);
    return undefined;
  }
  const subnet = Cidr.parse(c.Subnet);
  // An IPv6 pool on a network without IPv6 is left unchecked and unused, as Docker's daemon
  // leaves it (its validateIpamConfig skips it; no IPv6 address is allocated from it).
  if (subnet.family === 6 && !enabled[6]) return undefined;
  if (!enabled[subnet.family]) throw errors.networkInvalid(`subnet ${c.Subnet} is IPv${subnet.family}, which the network does not enable (EnableIPv${subnet.family})`);
  return {
    subnet: c.Subnet,
    gateway: c.Gateway || subnet.formatAddress(subnet.firstHost),
    ...(c.IPRange ? { ipRange: c.IPRange } : {}),
    ...(c.AuxiliaryAddresses && Object.keys(c.AuxiliaryAddresses).length ? { auxAddresses: { ...c.AuxiliaryAddresses } } : {}),
  };
}

export async function newNetworkSpec(req: NetworkCreateRequest, ctx: NewNetworkContext): Promise<NetworkSpec> {
  const name = req.Name ?? "";
  checkName(name);
  if (ctx.others.some((o) => o.name === name)) throw errors.networkNameInUse(name);
  const driver = req.Driver || "bridge";
  if (driver === "host" || driver === "null") throw errors.networkInvalid(`only one instance of "${driver}" network is allowed`);
  if (req.Scope && req.Scope !== "local") throw errors.networkInvalid(`scope "${req.Scope}" is not supported: this daemon's networks are local`);
  if (req.Ingress || req.ConfigOnly || req.ConfigFrom?.Network) {
    throw errors.networkInvalid("ingress and config-only networks are cluster features, which this daemon does not run");
  }
  const ipamDriver = req.IPAM?.Driver || "default";
  // another IPAM driver is a plugin of another process: it gives the pools (network-manager.ts
  // asks it), so nothing is taken from the daemon's pools, and overlaps are its to refuse
  const remoteIpam = ipamDriver !== "default";
  const options = withDefaults(ctx.config["default-network-opt"][driver] ?? {}, req.Options ?? {});
  const enableIPv4 = ipFamilyEnabled(options, 4, req.EnableIPv4, true);
  const enableIPv6 = ipFamilyEnabled(options, 6, req.EnableIPv6, false);
  if (!enableIPv4 && !enableIPv6) throw errors.networkInvalid("a network needs IPv4 or IPv6: EnableIPv4 and EnableIPv6 are both false");

  try {
    const subnets = (req.IPAM?.Config ?? []).map((c) => requestedSubnet(c, { 4: enableIPv4, 6: enableIPv6 })).filter((s): s is SubnetConfig => !!s);
    // well formed: the gateway, range and auxiliary addresses inside their subnet (the IPAM's own checks)
    if (remoteIpam) {
      // (a gateway only where the request names one: the plugin chooses the others)
      const named = new Set((req.IPAM?.Config ?? []).filter((c) => c.Gateway).map((c) => c.Subnet));
      for (const s of subnets) if (!named.has(s.subnet)) s.gateway = "";
      checkForPlugin(subnets);
    } else {
      new NetworkIpam(subnets.map((s) => ({ subnet: s.subnet, gateway: s.gateway, ipRange: s.ipRange, auxiliaryAddresses: s.auxAddresses })));
    }
    const taken = ctx.others.flatMap((o) => o.subnets.map((s) => s.subnet));
    for (const s of remoteIpam ? [] : subnets) {
      const other = ctx.others.find((o) => o.subnets.some((t) => Cidr.parse(t.subnet).overlaps(Cidr.parse(s.subnet))));
      if (other) throw errors.networkAddressInUse(`invalid pool request: Pool overlaps with other one on this address space (${s.subnet} and network ${other.name})`);
    }
    const pools = effectivePools(ctx.config["default-address-pool"], ctx.hostId);
    for (const family of [4, 6] as const) {
      const wanted = family === 4 ? enableIPv4 : enableIPv6;
      if (!wanted || remoteIpam || subnets.some((s) => Cidr.parse(s.subnet).family === family)) continue;
      const subnet = nextFreeSubnet(pools, [...taken, ...subnets.map((s) => s.subnet)], await ctx.hostRoutes(family), family);
      const cidr = Cidr.parse(subnet);
      subnets.push({ subnet, gateway: cidr.formatAddress(cidr.firstHost), fromPool: true });
    }
    return {
      id: ctx.id,
      name,
      driver,
      created: new Date().toISOString(),
      internal: !!req.Internal,
      attachable: !!req.Attachable,
      enableIPv4,
      enableIPv6,
      subnets,
      options,
      ...(req.IPAM?.Options ? { ipamOptions: { ...req.IPAM.Options } } : {}),
      ...(remoteIpam ? { ipamDriver } : {}),
      labels: { ...(req.Labels ?? {}) },
    };
  } catch (err) {
    throw addressFailure(err);
  }
}

/**
 * The checks of the daemon's own address management that hold for an IPAM plugin's pools too:
 * each address and range inside its subnet, and subnets that do not overlap. Whether an address
 * may be had (a subnet's network address as its gateway...) is the plugin's to say.
 */
function checkForPlugin(subnets: readonly SubnetConfig[]): void {
  const check = (config: ConstructorParameters<typeof NetworkIpam>[0][number]) => {
    try {
      new NetworkIpam([config]);
    } catch (err) {
      if (!(err instanceof AddressError && err.kind === "in-use")) throw err;
    }
  };
  new NetworkIpam(subnets.map((s) => ({ subnet: s.subnet, gateway: null, ipRange: s.ipRange })));
  for (const s of subnets) {
    if (s.gateway) check({ subnet: s.subnet, gateway: s.gateway });
    for (const [name, address] of Object.entries(s.auxAddresses ?? {})) check({ subnet: s.subnet, gateway: null, auxiliaryAddresses: { [name]: address } });
  }
}

/**
 * Whether a new network has an IP family, as Docker 28 decides it: the request's `EnableIPv4` /
 * `EnableIPv6` when given (the option of that name is then dropped from `options`, whether the
 * request or `--default-network-opt` put it there, so that inspect shows no value that was not
 * used), else the option `com.docker.network.enable_ipv4` / `_ipv6` (the request's, else the
 * daemon's default), else `fallback`.
 */
function ipFamilyEnabled(options: Record<string, string>, family: 4 | 6, asked: boolean | null | undefined, fallback: boolean): boolean {
  const keys = [`com.docker.network.enable_ipv${family}`, `com.engine.network.enable_ipv${family}`];
  if (asked !== undefined && asked !== null) {
    for (const k of keys) delete options[k];
    return asked;
  }
  const key = keys.find((k) => k in options);
  if (key === undefined) return fallback;
  const v = options[key];
  if (/^(1|t|true)$/i.test(v)) return true;
  if (/^(0|f|false)$/i.test(v)) return false;
  throw errors.networkInvalid(`driver-opt "${key}" is not a valid bool`);
}

/**
 * A request's options over the daemon's defaults for its driver. A default is left out when the
 * request gives the same option under Docker's name (`com.docker.` for our `com.engine.`,
 * which drivers read too): the request's wins, whichever name it uses.
 */
function withDefaults(defaults: Record<string, string>, asked: Record<string, string>): Record<string, string> {
  const swap = (k: string) => (k.startsWith("com.engine.") ? `com.docker.${k.slice(11)}` : k.startsWith("com.docker.") ? `com.engine.${k.slice(11)}` : k);
  const kept = Object.entries(defaults).filter(([k]) => !(k in asked) && !(swap(k) in asked));
  return { ...Object.fromEntries(kept), ...asked };
}
