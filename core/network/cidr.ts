/**
 * IPv4 and IPv6 addresses and CIDR subnets, held as BigInts so that both families share one
 * arithmetic: parsing and formatting (RFC 5952 for IPv6), containment and overlap, the network,
 * broadcast and host addresses of a subnet, the n-th address, and splitting a pool into subnets.
 *
 * A CIDR keeps the address it was written with next to its network: `--bip 172.18.5.1/16` means
 * "the bridge has 172.18.5.1 in 172.18.0.0/16", while `--subnet 172.18.5.0/16` is the same subnet
 * written carelessly. `Cidr.parse` reads both; `toString()` gives the normalised subnet and
 * `withAddress()` the form as written.
 *
 * `AddressError` is the error of every module in core/network: its `kind` says how the API should
 * answer (Docker: invalid → 400, in-use → 403, exhausted → 503 for addresses, 400 for pools).
 */
import { isIP } from "node:net";

export type Family = 4 | 6;

export type AddressErrorKind = "invalid" | "in-use" | "exhausted";

export class AddressError extends Error {
  constructor(
    readonly kind: AddressErrorKind,
    message: string,
  ) {
    super(message);
    this.name = "AddressError";
  }
}

export interface Address {
  family: Family;
  value: bigint;
}

export function addressBits(family: Family): number {
  return family === 4 ? 32 : 128;
}

/** 4 or 6 for an address without a zone (`fe80::1%eth0` is 0: a zone has no place in a subnet), else 0. */
export function addressFamily(text: string): Family | 0 {
  if (text.includes("%")) return 0;
  return isIP(text) as Family | 0;
}

function ipv4Value(text: string): bigint {
  return text.split(".").reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function ipv6Value(text: string): bigint {
  let head = text;
  const tail: number[] = [];
  if (head.includes(".")) {
    // An IPv4 tail (`::ffff:192.0.2.1`) fills the last two groups.
    const cut = head.lastIndexOf(":");
    const v4 = Number(ipv4Value(head.slice(cut + 1)));
    tail.push(Math.floor(v4 / 0x10000), v4 % 0x10000);
    head = head.slice(0, cut + 1);
    if (!head.endsWith("::")) head = head.slice(0, -1);
  }
  const [left, right] = head.includes("::") ? head.split("::") : [head, undefined];
  const leftGroups = left ? left.split(":") : [];
  const rightGroups = right ? right.split(":") : [];
  const missing = 8 - tail.length - leftGroups.length - rightGroups.length;
  const groups = [...leftGroups, ...Array<string>(right === undefined ? 0 : missing).fill("0"), ...rightGroups];
  return [...groups.map((g) => parseInt(g, 16)), ...tail].reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

/** Reads an IPv4 or IPv6 address; throws `invalid IP address: "..."`. */
export function parseAddress(text: string): Address {
  const family = addressFamily(text);
  if (family === 0) throw new AddressError("invalid", `invalid IP address: "${text}"`);
  return { family, value: family === 4 ? ipv4Value(text) : ipv6Value(text) };
}

/** The address as Docker prints it: dotted quad, or RFC 5952 (lower case, longest zero run as `::`). */
export function formatAddress(value: bigint, family: Family): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((value >> s) & 0xffn)).join(".");
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
  // IPv4-mapped addresses keep their dotted tail, as Go's netip prints them.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${formatAddress(value & 0xffffffffn, 4)}`;
  }
  let bestStart = -1;
  let bestLength = 1; // a single zero group is never shortened (RFC 5952 4.2.2)
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLength).join(":")}`;
}

/** The canonical spelling of an address (`::0001` → `::1`). */
export function normalizeAddress(text: string): string {
  const { family, value } = parseAddress(text);
  return formatAddress(value, family);
}

export function isLoopback(text: string): boolean {
  const plain = text.split("%")[0];
  const family = addressFamily(plain);
  if (family === 0) return false;
  const { value } = parseAddress(plain);
  if (family === 4) return value >> 24n === 127n;
  if (value === 1n) return true;
  // ::ffff:127.x.y.z is the IPv4 loopback seen through an IPv6 socket.
  return value >> 32n === 0xffffn && (value & 0xffffffffn) >> 24n === 127n;
}

export class Cidr {
  private constructor(
    readonly family: Family,
    /** The first address of the subnet. */
    readonly network: bigint,
    readonly prefix: number,
    /** The address as written (equal to `network` for a normalised CIDR). */
    readonly address: bigint,
  ) {}

  /** Reads `addr/prefix`; the address may have host bits set (see `withAddress`, `isNormalized`). */
  static parse(text: string): Cidr {
    const m = /^([^/]+)\/(0|[1-9]\d{0,2})$/.exec(text);
    const family = m ? addressFamily(m[1]) : 0;
    if (!m || family === 0) throw new AddressError("invalid", `invalid CIDR address: "${text}"`);
    const prefix = Number(m[2]);
    if (prefix > addressBits(family)) throw new AddressError("invalid", `invalid CIDR address: "${text}" (prefix longer than ${addressBits(family)} bits)`);
    const address = parseAddress(m[1]).value;
    return new Cidr(family, address & ~hostMask(family, prefix), prefix, address);
  }

  /** The subnet of `prefix` bits that contains `address` (its host bits are cleared). */
  static of(address: bigint, prefix: number, family: Family): Cidr {
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > addressBits(family)) {
      throw new AddressError("invalid", `invalid prefix length ${prefix} for an IPv${family} subnet`);
    }
    return new Cidr(family, address & ~hostMask(family, prefix), prefix, address);
  }

  /** A /32 or /128 of one address. */
  static single(text: string): Cidr {
    const { family, value } = parseAddress(text);
    return new Cidr(family, value, addressBits(family), value);
  }

  get bits(): number {
    return addressBits(this.family);
  }

  /** How many addresses the subnet has. */
  get size(): bigint {
    return 1n << BigInt(this.bits - this.prefix);
  }

  /** The last address of the subnet (the broadcast address of an IPv4 subnet that has one). */
  get last(): bigint {
    return this.network + this.size - 1n;
  }

  get isNormalized(): boolean {
    return this.address === this.network;
  }

  /** IPv4 subnets of /30 and wider; /31 links (RFC 3021), /32 and IPv6 have none. */
  get broadcast(): bigint | undefined {
    return this.family === 4 && this.prefix <= 30 ? this.last : undefined;
  }

  /**
   * The addresses that are not hosts, as Docker reserves them: the IPv4 network and broadcast
   * addresses (not in a /31 or /32), the IPv6 Subnet-Router anycast address (not in a /128).
   */
  get reserved(): bigint[] {
    if (this.prefix === this.bits) return [];
    if (this.family === 6) return [this.network];
    return this.prefix <= 30 ? [this.network, this.last] : [];
  }

  get firstHost(): bigint {
    return this.reserved.includes(this.network) ? this.network + 1n : this.network;
  }

  get lastHost(): bigint {
    return this.broadcast === undefined ? this.last : this.last - 1n;
  }

  /** The n-th address counted from the network address (0); a negative n counts back from the last (-1). */
  nth(n: bigint | number): bigint {
    const i = BigInt(n);
    const value = i < 0n ? this.last + 1n + i : this.network + i;
    if (value < this.network || value > this.last) throw new AddressError("invalid", `${this} has no address number ${i}`);
    return value;
  }

  containsAddress(value: bigint, family: Family = this.family): boolean {
    return family === this.family && value >= this.network && value <= this.last;
  }

  /** Whether `other` lies wholly inside this subnet. */
  containsCidr(other: Cidr): boolean {
    return other.family === this.family && other.network >= this.network && other.last <= this.last;
  }

  overlaps(other: Cidr): boolean {
    return other.family === this.family && other.network <= this.last && other.last >= this.network;
  }

  /** The subnets of `prefix` bits, in order (lazily: an IPv6 pool has more than can be listed). */
  *subnets(prefix: number): Generator<Cidr> {
    if (prefix < this.prefix || prefix > this.bits) {
      throw new AddressError("invalid", `cannot split ${this} into /${prefix} subnets`);
    }
    const step = 1n << BigInt(this.bits - prefix);
    for (let net = this.network; net <= this.last; net += step) yield new Cidr(this.family, net, prefix, net);
  }

  formatAddress(value: bigint): string {
    return formatAddress(value, this.family);
  }

  /** The address as written, without the prefix. */
  addressString(): string {
    return formatAddress(this.address, this.family);
  }

  /** `172.18.5.1/16`: the address as written with the prefix, as `ip addr add` takes it. */
  withAddress(): string {
    return `${this.addressString()}/${this.prefix}`;
  }

  /** The normalised subnet: `172.18.0.0/16`. */
  toString(): string {
    return `${formatAddress(this.network, this.family)}/${this.prefix}`;
  }

  toJSON(): string {
    return this.toString();
  }
}

function hostMask(family: Family, prefix: number): bigint {
  return (1n << BigInt(addressBits(family) - prefix)) - 1n;
}

/** `172.18.5.0/16` → `172.18.0.0/16`. */
export function normalizeCidr(text: string): string {
  return Cidr.parse(text).toString();
}

function asCidr(text: string): Cidr {
  return text.includes("/") ? Cidr.parse(text) : Cidr.single(text);
}

/** Whether the subnet `cidr` contains the address or subnet `what` (addresses of another family: false). */
export function contains(cidr: string, what: string): boolean {
  return Cidr.parse(cidr).containsCidr(asCidr(what));
}

/** Whether two subnets (or addresses) share at least one address; different families never do. */
export function overlaps(a: string, b: string): boolean {
  return asCidr(a).overlaps(asCidr(b));
}

/** The first `limit` subnets of `prefix` bits in `pool` (the limit keeps an IPv6 split finite). */
export function splitCidr(pool: string, prefix: number, limit = 65536): string[] {
  const out: string[] = [];
  for (const subnet of Cidr.parse(pool).subnets(prefix)) {
    if (out.length >= limit) break;
    out.push(subnet.toString());
  }
  return out;
}
