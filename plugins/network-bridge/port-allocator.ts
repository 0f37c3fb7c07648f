/**
 * Which host port a published port gets, as Docker's port allocator decides it: a specific port
 * is reserved if no other binding holds it, a range ("8000-8010") or a host port of 0 takes the
 * next free port after the last one given out in that range (the ephemeral range for 0),
 * wrapping around once; so the first request of a range gets its first port, and a port just
 * released is not handed out again at once.
 *
 * The allocator is bookkeeping only: it never binds. The caller binds (the userland proxy) and,
 * when the bind fails with "address already in use" (a process outside the engine holds the
 * port) for a request of 0 or a range, releases that port and calls `allocate` again with the
 * same request: the cursor has moved past the failed port, so the next call returns another one.
 * Docker gives up after 10 such attempts; a specific port is not retried.
 *
 * Conflicts follow the kernel's bind rules for the way the proxy binds: the same address; an
 * IPv4 address and 0.0.0.0; an IPv6 address and "::". The proxy binds "::" IPv6-only, as
 * docker-proxy does, so 0.0.0.0 and "::" do not conflict: Docker publishes a port on both.
 * Protocols never conflict with each other.
 */
import { readFileSync } from "node:fs";
import { isIPv4, isIPv6 } from "node:net";

/** Docker's range when /proc/sys/net/ipv4/ip_local_port_range cannot be read. */
const FALLBACK_RANGE = { first: 49153, last: 65535 } as const;

/** The kernel's ephemeral port range, which Docker also uses for host ports asked as 0. */
export function ephemeralRange(file = "/proc/sys/net/ipv4/ip_local_port_range"): { first: number; last: number } {
  try {
    const [first, last] = readFileSync(file, "utf8").trim().split(/\s+/).map(Number);
    if (validPort(first) && validPort(last) && first <= last) return { first, last };
  } catch {
    // not Linux, or /proc not mounted: Docker's fallback below
  }
  return { ...FALLBACK_RANGE };
}

/** Docker's wording, which clients show: `Bind for 0.0.0.0:8080 failed: port is already allocated`. */
export class PortAlreadyAllocatedError extends Error {
  readonly code = "EADDRINUSE";
  constructor(
    readonly proto: string,
    readonly hostIp: string,
    readonly port: number,
    /** What the binding process said, when the port was found taken by a bind. */
    readonly detail?: string,
  ) {
    super(`Bind for ${hostPort(hostIp, port)} failed: port is already allocated`);
    this.name = "PortAlreadyAllocatedError";
  }
}

/** Every port of the range (or of the ephemeral range) is held. */
export class PortsExhaustedError extends Error {
  constructor(
    readonly proto: string,
    readonly hostIp: string,
    readonly first: number,
    readonly last: number,
  ) {
    super(`Bind for ${hostPort(hostIp, `${first}-${last}`)} failed: all ports are allocated (${proto})`);
    this.name = "PortsExhaustedError";
  }
}

/** `127.0.0.1:80`, `[::1]:80`. */
export function hostPort(ip: string, port: number | string): string {
  return isIPv6(ip) ? `[${ip}]:${port}` : `${ip}:${port}`;
}

export class PortAllocator {
  private readonly range: { first: number; last: number };
  /** proto -> host address -> ports given out. */
  private readonly held = new Map<string, Map<string, Set<number>>>();
  /** Docker's per proto, address and range cursor: the last port given out there. */
  private readonly cursors = new Map<string, number>();

  constructor(range?: { first: number; last: number }) {
    this.range = range ?? ephemeralRange();
    if (!validPort(this.range.first) || !validPort(this.range.last) || this.range.first > this.range.last) {
      throw new RangeError(`invalid port range ${this.range.first}-${this.range.last}`);
    }
  }

  /**
   * A specific port (`first`, with `last` absent or equal), the next free port in
   * [first, last], or, with `first` 0, the next free port of the ephemeral range. The port is
   * held until `release`. Throws PortAlreadyAllocatedError / PortsExhaustedError.
   */
  allocate(proto: string, hostIp: string, first: number, last?: number): number {
    const ip = normalizeIp(hostIp);
    if (first === 0 && (last === undefined || last === 0)) return this.findFree(proto, ip, this.range.first, this.range.last);
    checkPort(first);
    if (last === undefined || last === first) {
      if (this.conflicts(proto, ip, first)) throw new PortAlreadyAllocatedError(proto, ip, first);
      this.hold(proto, ip, first);
      return first;
    }
    checkPort(last);
    if (first > last) throw new RangeError(`invalid port range ${first}-${last}: the first port is above the last`);
    return this.findFree(proto, ip, first, last);
  }

  /** Gives a port back; releasing a port that is not held does nothing. */
  release(proto: string, hostIp: string, port: number): void {
    const ip = normalizeIp(hostIp);
    const byIp = this.held.get(proto);
    const ports = byIp?.get(ip);
    if (!ports?.delete(port)) return;
    if (ports.size === 0) byIp!.delete(ip);
  }

  /**
   * After a daemon restart: marks a port that a restored container already holds. Never throws
   * for a conflict: the port is in use whatever the books say, and marking it twice is harmless.
   */
  reserve(proto: string, hostIp: string, port: number): void {
    checkPort(port);
    this.hold(proto, normalizeIp(hostIp), port);
  }

  private findFree(proto: string, ip: string, first: number, last: number): number {
    const key = `${proto} ${ip} ${first}-${last}`;
    const size = last - first + 1;
    const previous = this.cursors.get(key) ?? last;
    for (let i = 1; i <= size; i++) {
      const port = first + ((previous - first + i) % size);
      if (this.conflicts(proto, ip, port)) continue;
      this.hold(proto, ip, port);
      this.cursors.set(key, port);
      return port;
    }
    throw new PortsExhaustedError(proto, ip, first, last);
  }

  private conflicts(proto: string, ip: string, port: number): boolean {
    const byIp = this.held.get(proto);
    if (!byIp) return false;
    for (const [other, ports] of byIp) {
      if (ports.has(port) && addressesOverlap(ip, other)) return true;
    }
    return false;
  }

  private hold(proto: string, ip: string, port: number): void {
    let byIp = this.held.get(proto);
    if (!byIp) this.held.set(proto, (byIp = new Map()));
    let ports = byIp.get(ip);
    if (!ports) byIp.set(ip, (ports = new Set()));
    ports.add(port);
  }
}

/** Whether binding both addresses on one port would fail (see the file's comment). */
function addressesOverlap(a: string, b: string): boolean {
  if (a === b) return true;
  const wildcardOf = (wildcard: string, ip: string) => (wildcard === "0.0.0.0" && isIPv4(ip)) || (wildcard === "::" && isIPv6(ip));
  return wildcardOf(a, b) || wildcardOf(b, a);
}

/** One spelling per address: "" is Docker's default 0.0.0.0, ::ffff:a.b.c.d is a.b.c.d, IPv6 compressed. */
function normalizeIp(ip: string): string {
  if (ip === "") return "0.0.0.0";
  if (isIPv4(ip)) return ip;
  if (!isIPv6(ip)) throw new TypeError(`invalid host IP address "${ip}"`);
  // The URL parser prints IPv6 addresses in their canonical form (RFC 5952).
  const canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!mapped) return canonical;
  const hi = parseInt(mapped[1], 16);
  const lo = parseInt(mapped[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function validPort(port: number | undefined): port is number {
  return port !== undefined && Number.isInteger(port) && port >= 1 && port <= 65535;
}

function checkPort(port: number): void {
  if (!validPort(port)) throw new RangeError(`invalid port ${port}: a port is an integer from 1 to 65535`);
}
