/**
 * Address management of one network, as Docker's default IPAM driver does it. A network has one or
 * more subnets (IPv4 and/or IPv6); each has an optional `ipRange` (Docker's `--fixed-cidr` for the
 * default bridge, `IPRange` of `POST /networks/create`) that dynamic addresses come from, a gateway
 * (default: the first host address of the subnet; the address part of `--bip` for the default
 * bridge) and auxiliary addresses that are never handed out.
 *
 * `--default-gateway` is stored the way Docker stores it: as the auxiliary address
 * `DefaultGatewayIPv4` (`DefaultGatewayIPv6`), so that inspect shows it where Docker does; the
 * container's default route goes there instead of to the gateway (`Allocation.defaultRoute`).
 *
 * Dynamic allocation is sequential, as Docker's is: the search starts after the address handed out
 * last and wraps around to the start of the range, so an address just released is not given to the
 * next container at once (a peer that still has the old container's address in a cache would reach
 * the wrong one). Requested (static) addresses need only lie in the subnet, not in the range.
 *
 * The state is plain JSON (`toJSON` / `fromJSON`) so that a restarted daemon finds the same
 * allocations and the same place to continue from.
 */
import typia from "typia";
import { AddressError, Cidr, formatAddress, parseAddress, type Family } from "./cidr.js";

export const DEFAULT_GATEWAY_AUX = { 4: "DefaultGatewayIPv4", 6: "DefaultGatewayIPv6" } as const;

export interface SubnetConfig {
  /** A normalised CIDR: `172.18.0.0/16` (`172.18.5.0/16` is refused, as Docker does). */
  subnet: string;
  /** A normalised CIDR inside `subnet`: where dynamic addresses come from. Default: the whole subnet. */
  ipRange?: string;
  /** An address of `subnet`. Default: its first host address. null: none (no address is reserved for one). */
  gateway?: string | null;
  /** Name → address of `subnet`; reserved. `DefaultGatewayIPv4`/`-v6` is also the default route. */
  auxiliaryAddresses?: Record<string, string>;
}

/** A subnet as the network reports it (Docker's `IPAM.Config` entry, with the defaults filled in). */
export interface SubnetInfo {
  family: Family;
  subnet: string;
  prefixLength: number;
  ipRange?: string;
  /** Empty when the subnet has none. */
  gateway: string;
  auxiliaryAddresses: Record<string, string>;
  /** Where a container's default route goes: `DefaultGatewayIPv4`/`-v6` when set, else the gateway. */
  defaultRoute: string;
}

export interface Allocation {
  family: Family;
  address: string;
  prefixLength: number;
  /** `172.18.0.2/16`, as `ip addr add` takes it. */
  cidr: string;
  subnet: string;
  gateway: string;
  defaultRoute: string;
}

export interface AllocateOptions {
  /** A static address (`IPAMConfig.IPv4Address`): must be in one of the subnets and free. */
  address?: string;
  /** Who holds the address (an endpoint id): `releaseOwner` frees everything it holds. */
  owner?: string;
}

export interface IpamState {
  subnets: {
    subnet: string;
    ipRange?: string;
    /** Empty: none. */
    gateway: string;
    auxiliaryAddresses: Record<string, string>;
    /** Address → owner ("" when none). */
    allocated: Record<string, string>;
    /** Where the next dynamic search starts. */
    next?: string;
  }[];
}

const validateState = typia.createValidate<IpamState>();

/** One subnet's bookkeeping. */
class SubnetPool {
  readonly allocated = new Map<bigint, string>();
  /** Why an address is not free, for reserved addresses (network, broadcast, gateway, auxiliaries). */
  private readonly reservedWhy = new Map<bigint, string>();
  next: bigint;

  constructor(
    readonly subnet: Cidr,
    readonly range: Cidr | undefined,
    readonly gateway: bigint | undefined,
    readonly aux: Record<string, string>,
  ) {
    for (const r of subnet.reserved) {
      this.reservedWhy.set(r, r === subnet.network ? `the network address of ${subnet}` : `the broadcast address of ${subnet}`);
    }
    if (gateway !== undefined) this.reservedWhy.set(gateway, `the gateway of ${subnet}`);
    for (const [name, text] of Object.entries(aux)) {
      const value = parseAddress(text).value;
      if (!this.reservedWhy.has(value)) this.reservedWhy.set(value, `auxiliary address ${name}`);
    }
    this.next = this.rangeStart;
  }

  get family(): Family {
    return this.subnet.family;
  }

  get rangeStart(): bigint {
    return (this.range ?? this.subnet).network;
  }

  get rangeEnd(): bigint {
    return (this.range ?? this.subnet).last;
  }

  whyTaken(value: bigint): string | undefined {
    const reserved = this.reservedWhy.get(value);
    if (reserved !== undefined) return reserved;
    const owner = this.allocated.get(value);
    if (owner === undefined) return undefined;
    return owner ? `held by ${owner}` : "allocated";
  }

  /** The first free address in [from, to]; each step passes a taken address, so the walk is short. */
  private firstFree(from: bigint, to: bigint): bigint | undefined {
    for (let a = from; a <= to; a++) if (this.whyTaken(a) === undefined) return a;
    return undefined;
  }

  /** Sequential: from `next` to the end of the range, then from its start (Docker's serial mode). */
  takeNext(owner: string): bigint | undefined {
    const start = this.next >= this.rangeStart && this.next <= this.rangeEnd ? this.next : this.rangeStart;
    const found = this.firstFree(start, this.rangeEnd) ?? (start > this.rangeStart ? this.firstFree(this.rangeStart, start - 1n) : undefined);
    if (found === undefined) return undefined;
    this.allocated.set(found, owner);
    this.next = found + 1n;
    return found;
  }

  sortedAllocations(): [address: string, owner: string][] {
    return [...this.allocated.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([value, owner]) => [formatAddress(value, this.family), owner]);
  }

  info(): SubnetInfo {
    const gateway = this.gateway === undefined ? "" : formatAddress(this.gateway, this.family);
    return {
      family: this.family,
      subnet: this.subnet.toString(),
      prefixLength: this.subnet.prefix,
      ...(this.range ? { ipRange: this.range.toString() } : {}),
      gateway,
      auxiliaryAddresses: { ...this.aux },
      defaultRoute: this.aux[DEFAULT_GATEWAY_AUX[this.family]] ?? gateway,
    };
  }

  allocation(value: bigint): Allocation {
    const info = this.info();
    const address = formatAddress(value, this.family);
    return {
      family: this.family,
      address,
      prefixLength: info.prefixLength,
      cidr: `${address}/${info.prefixLength}`,
      subnet: info.subnet,
      gateway: info.gateway,
      defaultRoute: info.defaultRoute,
    };
  }
}

function invalid(message: string): AddressError {
  return new AddressError("invalid", message);
}

function parseCidrField(what: string, text: string): Cidr {
  let cidr: Cidr;
  try {
    cidr = Cidr.parse(text);
  } catch {
    throw invalid(`invalid ${what} ${text}: invalid CIDR block notation`);
  }
  if (!cidr.isNormalized) throw invalid(`invalid ${what} ${text}: it should be ${cidr}`);
  return cidr;
}

/** Docker's checks of an address of the subnet (`invalid gateway X: parent subnet ... doesn't contain this address`). */
function parseMember(what: string, text: string, subnet: Cidr): bigint {
  let value: bigint;
  let family: Family;
  try {
    ({ value, family } = parseAddress(text));
  } catch {
    throw invalid(`invalid ${what}: invalid address`);
  }
  if (family !== subnet.family) throw invalid(`invalid ${what}: parent subnet is an IPv${subnet.family} block`);
  if (!subnet.containsAddress(value)) throw invalid(`invalid ${what}: parent subnet ${subnet} doesn't contain this address`);
  const reserved = subnet.reserved.find((r) => r === value);
  if (reserved !== undefined) {
    const which = reserved === subnet.network ? "network" : "broadcast";
    throw new AddressError("in-use", `invalid ${what}: address already in use (the ${which} address of ${subnet})`);
  }
  return value;
}

function makePool(config: SubnetConfig): SubnetPool {
  const subnet = parseCidrField("subnet", config.subnet);
  let range: Cidr | undefined;
  if (config.ipRange) {
    range = parseCidrField("ip-range", config.ipRange);
    if (range.family !== subnet.family) throw invalid(`invalid ip-range ${config.ipRange}: parent subnet is an IPv${subnet.family} block`);
    if (range.prefix < subnet.prefix) throw invalid(`invalid ip-range ${config.ipRange}: CIDR block is bigger than its parent subnet ${subnet}`);
    if (!subnet.containsCidr(range)) throw invalid(`invalid ip-range ${config.ipRange}: parent subnet ${subnet} doesn't contain ip-range`);
  }
  let gateway: bigint | undefined;
  if (config.gateway === null) {
    gateway = undefined;
  } else if (config.gateway) {
    gateway = parseMember(`gateway ${config.gateway}`, config.gateway, subnet);
  } else {
    gateway = subnet.firstHost;
  }
  const aux: Record<string, string> = {};
  for (const [name, text] of Object.entries(config.auxiliaryAddresses ?? {})) {
    aux[name] = formatAddress(parseMember(`auxiliary address ${name}`, text, subnet), subnet.family);
  }
  return new SubnetPool(subnet, range, gateway, aux);
}

export class NetworkIpam {
  private readonly pools: SubnetPool[];

  constructor(subnets: readonly SubnetConfig[]) {
    this.pools = subnets.map(makePool);
    for (let i = 0; i < this.pools.length; i++) {
      for (let j = 0; j < i; j++) {
        if (this.pools[i].subnet.overlaps(this.pools[j].subnet)) {
          throw invalid(`invalid subnet ${this.pools[i].subnet}: it overlaps ${this.pools[j].subnet}, another subnet of the network`);
        }
      }
    }
  }

  subnets(): SubnetInfo[] {
    return this.pools.map((p) => p.info());
  }

  hasFamily(family: Family): boolean {
    return this.pools.some((p) => p.family === family);
  }

  /**
   * An address for a container: the one asked for, or the next free one of the first subnet of
   * that family with room (Docker tries the subnets in order too).
   */
  allocate(family: Family, options: AllocateOptions = {}): Allocation {
    const owner = options.owner ?? "";
    const candidates = this.pools.filter((p) => p.family === family);
    if (candidates.length === 0) throw invalid(`the network has no IPv${family} subnet`);
    if (options.address !== undefined) return this.allocateStatic(family, options.address, owner, candidates);
    for (const pool of candidates) {
      const value = pool.takeNext(owner);
      if (value !== undefined) return pool.allocation(value);
    }
    const where = candidates.map((p) => (p.range ?? p.subnet).toString()).join(", ");
    throw new AddressError("exhausted", `no available IPv${family} addresses in ${where}`);
  }

  private allocateStatic(family: Family, text: string, owner: string, candidates: SubnetPool[]): Allocation {
    let parsed;
    try {
      parsed = parseAddress(text);
    } catch {
      throw invalid(`invalid IPv${family} address: "${text}"`);
    }
    if (parsed.family !== family) throw invalid(`address ${text} is not an IPv${family} address`);
    const pool = candidates.find((p) => p.subnet.containsAddress(parsed.value));
    const shown = formatAddress(parsed.value, family);
    if (!pool) {
      const subnets = candidates.map((p) => p.subnet.toString());
      throw invalid(`address ${shown} is not in subnet ${subnets.join(" or ")}`);
    }
    const why = pool.whyTaken(parsed.value);
    if (why !== undefined) throw new AddressError("in-use", `address ${shown} is already in use (${why})`);
    // A static address does not move the sequential cursor: Docker's serial search ignores it too.
    pool.allocated.set(parsed.value, owner);
    return pool.allocation(parsed.value);
  }

  /** Frees an address; false when it was not allocated (releasing twice is harmless). */
  release(address: string): boolean {
    const { family, value } = parseAddress(address);
    const pool = this.pools.find((p) => p.subnet.containsAddress(value, family));
    return pool ? pool.allocated.delete(value) : false;
  }

  /** Frees every address `owner` holds; returns them. */
  releaseOwner(owner: string): string[] {
    const released: string[] = [];
    for (const pool of this.pools) {
      for (const [value, holder] of pool.allocated) {
        if (holder !== owner) continue;
        pool.allocated.delete(value);
        released.push(formatAddress(value, pool.family));
      }
    }
    return released;
  }

  isAllocated(address: string): boolean {
    const { family, value } = parseAddress(address);
    return this.pools.some((p) => p.subnet.containsAddress(value, family) && p.allocated.has(value));
  }

  /** Every allocated address with its owner, subnet by subnet, in address order. */
  allocations(): { address: string; owner: string; subnet: string }[] {
    return this.pools.flatMap((p) => p.sortedAllocations().map(([address, owner]) => ({ address, owner, subnet: p.subnet.toString() })));
  }

  toJSON(): IpamState {
    return {
      subnets: this.pools.map((p) => {
        const info = p.info();
        return {
          subnet: info.subnet,
          ...(info.ipRange ? { ipRange: info.ipRange } : {}),
          gateway: info.gateway,
          auxiliaryAddresses: info.auxiliaryAddresses,
          allocated: Object.fromEntries(p.sortedAllocations()),
          next: formatAddress(p.next, p.family),
        };
      }),
    };
  }

  /** Restores a state `toJSON` wrote; a state that breaks the rules (an address outside its subnet, twice, reserved) is refused. */
  static fromJSON(state: unknown): NetworkIpam {
    const checked = validateState(state);
    if (!checked.success) {
      const first = checked.errors[0];
      throw invalid(`invalid IPAM state: ${first.path} should be ${first.expected}`);
    }
    const ipam = new NetworkIpam(
      checked.data.subnets.map((s) => ({ subnet: s.subnet, ipRange: s.ipRange, gateway: s.gateway === "" ? null : s.gateway, auxiliaryAddresses: s.auxiliaryAddresses })),
    );
    checked.data.subnets.forEach((saved, i) => {
      const pool = ipam.pools[i];
      for (const [address, owner] of Object.entries(saved.allocated)) {
        ipam.allocateStatic(pool.family, address, owner, [pool]);
      }
      if (saved.next !== undefined) {
        const next = parseAddress(saved.next);
        if (pool.subnet.containsAddress(next.value, next.family)) pool.next = next.value;
      }
    });
    return ipam;
  }
}
