/**
 * core/network's address arithmetic (cidr.ts), the address management of a network (ipam.ts)
 * and the choice of a subnet from the address pools (address-pools.ts). Pure functions: nothing
 * here touches an interface or sends a packet. The `ip -j route` fixtures are real output, captured
 * on the development machine and in a scratch network namespace.
 */
import "./helpers/root-hooks.js";
import { expectAddressError } from "./helpers/address-error.js";
import { expect } from "chai";
import {
  AddressError,
  Cidr,
  contains,
  formatAddress,
  isLoopback,
  normalizeAddress,
  normalizeCidr,
  overlaps,
  parseAddress,
  splitCidr,
} from "../core/network/cidr.js";
import { NetworkIpam, type SubnetConfig } from "../core/network/ipam.js";
import { defaultPools, effectivePools, nextFreeSubnet, parseHostRoutes, ulaPool, type Pool } from "../core/network/address-pools.js";

/** `ip -j route show` on the development machine (192.0.2.0/24 is its LAN). */
const HOST_ROUTES_V4 =
  '[{"dst":"default","gateway":"192.0.2.1","dev":"eth0","flags":[]},{"dst":"192.0.2.0/24","dev":"eth0","protocol":"kernel","scope":"link","prefsrc":"192.0.2.2","flags":[]}]\n';
/** `ip -j -6 route show` on the development machine. */
const HOST_ROUTES_V6 =
  '[{"dst":"fd00::/64","dev":"eth0","protocol":"kernel","metric":256,"flags":[],"pref":"medium"},{"dst":"fe80::/64","dev":"eth0","protocol":"kernel","metric":256,"flags":[],"pref":"medium"},{"dst":"default","gateway":"fd00::1","dev":"eth0","metric":1024,"flags":[],"pref":"medium"}]\n';
/** A scratch namespace with a host route, a blackhole route and a default route (`ip -j route show`). */
const NETNS_ROUTES_V4 =
  '[{"dst":"default","gateway":"198.51.100.254","dev":"d0","flags":[]},{"type":"blackhole","dst":"10.99.0.0/16","flags":[]},{"dst":"198.51.100.0/24","dev":"d0","protocol":"kernel","scope":"link","prefsrc":"198.51.100.1","flags":[]},{"dst":"203.0.113.7","dev":"d0","scope":"link","flags":[]}]\n';
/** The same namespace, `ip -j -6 route show`: a host route, an unreachable route, link-local twice (two veths). */
const NETNS_ROUTES_V6 =
  '[{"dst":"fd12:3456::/64","dev":"d0","protocol":"kernel","metric":256,"flags":[],"pref":"medium"},{"dst":"fd12:3456:1::5","dev":"d0","metric":1024,"flags":[],"pref":"medium"},{"type":"unreachable","dst":"fd12:ffff::/48","dev":"lo","metric":1024,"flags":[],"pref":"medium"},{"dst":"fe80::/64","dev":"d1","protocol":"kernel","metric":256,"flags":[],"pref":"medium"},{"dst":"fe80::/64","dev":"d0","protocol":"kernel","metric":256,"flags":[],"pref":"medium"}]\n';

function addr(text: string): bigint {
  return parseAddress(text).value;
}

describe("core/network cidr", () => {
  it("reads and writes addresses of both families, IPv6 in RFC 5952 form", () => {
    const cases: [string, 4 | 6, string][] = [
      ["0.0.0.0", 4, "0.0.0.0"],
      ["172.18.5.1", 4, "172.18.5.1"],
      ["255.255.255.255", 4, "255.255.255.255"],
      ["::", 6, "::"],
      ["::1", 6, "::1"],
      ["::0001", 6, "::1"],
      ["2001:DB8::0:1", 6, "2001:db8::1"],
      ["2001:db8:0:0:1:0:0:1", 6, "2001:db8::1:0:0:1"], // the first of two equal runs
      ["1:0:0:1:0:0:0:1", 6, "1:0:0:1::1"], // the longest run
      ["2001:db8:0:1:1:1:1:1", 6, "2001:db8:0:1:1:1:1:1"], // one zero group stays
      ["1:2:3:4:5:6:7:8", 6, "1:2:3:4:5:6:7:8"],
      ["fd00::", 6, "fd00::"],
      ["::ffff:192.0.2.1", 6, "::ffff:192.0.2.1"],
      ["::192.0.2.1", 6, "::c000:201"],
      ["1:2:3:4:5:6:192.0.2.1", 6, "1:2:3:4:5:6:c000:201"],
      ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 6, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
    ];
    for (const [text, family, shown] of cases) {
      const parsed = parseAddress(text);
      expect(parsed.family, text).to.equal(family);
      expect(formatAddress(parsed.value, family), text).to.equal(shown);
      expect(normalizeAddress(text), text).to.equal(shown);
    }
    expect(addr("10.0.0.1")).to.equal(0x0a000001n);
    expect(addr("::1:0")).to.equal(0x10000n);
  });

  it("refuses what is not an address, zones included", () => {
    for (const text of ["", "1.2.3", "256.1.1.1", "01.2.3.4", "1.2.3.4 ", "::1::2", "1:2:3:4:5:6:7:8:9", "fe80::1%eth0", "[::1]", "localhost"]) {
      expectAddressError(() => parseAddress(text), "invalid", `invalid IP address: "${text}"`);
    }
  });

  it("knows a subnet's network, broadcast, host range and size, keeping the address as written", () => {
    // text, subnet, as written, size, broadcast, first host, last host
    const cases: [string, string, string, bigint, string | undefined, string, string][] = [
      ["172.18.5.1/16", "172.18.0.0/16", "172.18.5.1/16", 65536n, "172.18.255.255", "172.18.0.1", "172.18.255.254"],
      ["172.18.0.0/16", "172.18.0.0/16", "172.18.0.0/16", 65536n, "172.18.255.255", "172.18.0.1", "172.18.255.254"],
      ["10.0.0.0/30", "10.0.0.0/30", "10.0.0.0/30", 4n, "10.0.0.3", "10.0.0.1", "10.0.0.2"],
      ["10.0.0.1/31", "10.0.0.0/31", "10.0.0.1/31", 2n, undefined, "10.0.0.0", "10.0.0.1"], // RFC 3021: both are hosts
      ["10.0.0.7/32", "10.0.0.7/32", "10.0.0.7/32", 1n, undefined, "10.0.0.7", "10.0.0.7"],
      ["0.0.0.0/0", "0.0.0.0/0", "0.0.0.0/0", 1n << 32n, "255.255.255.255", "0.0.0.1", "255.255.255.254"],
      ["fd00:1::5/64", "fd00:1::/64", "fd00:1::5/64", 1n << 64n, undefined, "fd00:1::1", "fd00:1::ffff:ffff:ffff:ffff"],
      ["fd00::/127", "fd00::/127", "fd00::/127", 2n, undefined, "fd00::1", "fd00::1"], // the anycast address is reserved
      ["2001:db8::1/128", "2001:db8::1/128", "2001:db8::1/128", 1n, undefined, "2001:db8::1", "2001:db8::1"],
    ];
    for (const [text, subnet, written, size, broadcast, firstHost, lastHost] of cases) {
      const c = Cidr.parse(text);
      expect(c.toString(), text).to.equal(subnet);
      expect(normalizeCidr(text), text).to.equal(subnet);
      expect(c.withAddress(), text).to.equal(written);
      expect(c.isNormalized, text).to.equal(subnet === written);
      expect(c.size, text).to.equal(size);
      expect(c.broadcast === undefined ? undefined : c.formatAddress(c.broadcast), text).to.equal(broadcast);
      expect(c.formatAddress(c.firstHost), text).to.equal(firstHost);
      expect(c.formatAddress(c.lastHost), text).to.equal(lastHost);
    }
    expect(Cidr.parse("172.18.5.1/16").addressString()).to.equal("172.18.5.1");
    expect(JSON.stringify({ subnet: Cidr.parse("10.1.2.3/8") })).to.equal('{"subnet":"10.0.0.0/8"}');
  });

  it("refuses malformed CIDRs", () => {
    for (const text of ["10.0.0.0", "10.0.0.0/", "10.0.0.0/33", "10.0.0.0/016", "10.0.0.0/-1", "fd00::/129", "x/8", "10.0.0.0/8/8", "/8", " 10.0.0.0/8"]) {
      expectAddressError(() => Cidr.parse(text), "invalid", /^invalid CIDR address: /);
    }
  });

  it("counts the n-th address from either end", () => {
    const c = Cidr.parse("172.18.0.0/16");
    const cases: [bigint | number, string][] = [
      [0, "172.18.0.0"],
      [1, "172.18.0.1"],
      [2n, "172.18.0.2"],
      [256, "172.18.1.0"],
      [-1, "172.18.255.255"],
      [-2, "172.18.255.254"],
      [65535, "172.18.255.255"],
      [-65536, "172.18.0.0"],
    ];
    for (const [n, shown] of cases) expect(c.formatAddress(c.nth(n)), String(n)).to.equal(shown);
    expectAddressError(() => c.nth(65536), "invalid", "172.18.0.0/16 has no address number 65536");
    expectAddressError(() => c.nth(-65537), "invalid", "172.18.0.0/16 has no address number -65537");
    const v6 = Cidr.parse("fd00:1::/64");
    expect(v6.formatAddress(v6.nth(1))).to.equal("fd00:1::1");
    expect(v6.formatAddress(v6.nth(-1))).to.equal("fd00:1::ffff:ffff:ffff:ffff");
  });

  it("tells containment and overlap, never across families", () => {
    const cases: [string, string, boolean, boolean][] = [
      // a, b, a contains b, a overlaps b
      ["172.18.0.0/16", "172.18.5.1", true, true],
      ["172.18.0.0/16", "172.19.0.1", false, false],
      ["172.18.0.0/16", "172.18.4.0/24", true, true],
      ["172.18.4.0/24", "172.18.0.0/16", false, true],
      ["172.16.0.0/12", "172.31.255.255/32", true, true],
      ["10.0.0.0/31", "10.0.0.1", true, true],
      ["10.0.0.0/31", "10.0.0.2", false, false],
      ["10.0.0.7/32", "10.0.0.7", true, true],
      ["0.0.0.0/0", "203.0.113.9", true, true],
      ["fd00::/8", "fd12:3456::/64", true, true],
      ["fd00:1::/64", "fd00:2::/64", false, false],
      ["fd00::/127", "fd00::1", true, true],
      ["::/0", "10.0.0.1", false, false], // families never mix
      ["0.0.0.0/0", "::1", false, false],
      ["::ffff:0:0/96", "10.0.0.1", false, false], // a mapped range is IPv6
    ];
    for (const [a, b, aContainsB, aOverlapsB] of cases) {
      expect(contains(a, b), `${a} contains ${b}`).to.equal(aContainsB);
      expect(overlaps(a, b), `${a} overlaps ${b}`).to.equal(aOverlapsB);
      expect(overlaps(b, a), `${b} overlaps ${a}`).to.equal(aOverlapsB);
    }
  });

  it("splits a pool into subnets of a size", () => {
    const twenties = splitCidr("192.168.0.0/16", 20);
    expect(twenties).to.have.length(16);
    expect(twenties.slice(0, 2)).to.deep.equal(["192.168.0.0/20", "192.168.16.0/20"]);
    expect(twenties.at(-1)).to.equal("192.168.240.0/20");
    expect(splitCidr("10.0.0.0/30", 31)).to.deep.equal(["10.0.0.0/31", "10.0.0.2/31"]);
    expect(splitCidr("10.0.0.0/24", 24)).to.deep.equal(["10.0.0.0/24"]);
    expect(splitCidr("10.0.0.9/30", 32)).to.deep.equal(["10.0.0.8/32", "10.0.0.9/32", "10.0.0.10/32", "10.0.0.11/32"]);
    // 2^16 /64s in a /48: the limit keeps the list short, the generator is lazy.
    expect(splitCidr("fd42:98fc:1c14::/48", 64, 3)).to.deep.equal(["fd42:98fc:1c14::/64", "fd42:98fc:1c14:1::/64", "fd42:98fc:1c14:2::/64"]);
    const lazy = Cidr.parse("fd00::/8").subnets(64);
    expect(String(lazy.next().value)).to.equal("fd00::/64");
    expectAddressError(() => splitCidr("10.0.0.0/16", 8), "invalid", "cannot split 10.0.0.0/16 into /8 subnets");
    expectAddressError(() => splitCidr("10.0.0.0/16", 33), "invalid", "cannot split 10.0.0.0/16 into /33 subnets");
  });

  it("recognises loopback addresses of both families", () => {
    const cases: [string, boolean][] = [
      ["127.0.0.1", true],
      ["127.0.0.53", true],
      ["127.255.255.254", true],
      ["::1", true],
      ["::ffff:127.0.0.1", true],
      ["128.0.0.1", false],
      ["10.0.0.1", false],
      ["::", false],
      ["::2", false],
      ["fe80::1%eth0", false],
      ["not-an-address", false],
    ];
    for (const [text, loopback] of cases) expect(isLoopback(text), text).to.equal(loopback);
  });
});

describe("core/network ipam", () => {
  function allocateAll(ipam: NetworkIpam, family: 4 | 6, max = 20): string[] {
    const out: string[] = [];
    for (let i = 0; i < max; i++) {
      try {
        out.push(ipam.allocate(family).address);
      } catch (err) {
        if (err instanceof AddressError && err.kind === "exhausted") return out;
        throw err;
      }
    }
    return out;
  }

  it("fills in the gateway and hands out the lowest free addresses, skipping what is reserved", () => {
    // config, gateway, every dynamic address in order until exhaustion (at most 4 shown)
    const cases: [SubnetConfig, string, string[]][] = [
      [{ subnet: "172.18.0.0/16" }, "172.18.0.1", ["172.18.0.2", "172.18.0.3", "172.18.0.4", "172.18.0.5"]],
      // --bip 172.18.5.1/16: the bridge's address is the gateway; the range is the whole subnet
      [{ subnet: "172.18.0.0/16", gateway: "172.18.5.1" }, "172.18.5.1", ["172.18.0.1", "172.18.0.2", "172.18.0.3", "172.18.0.4"]],
      // --fixed-cidr / IPRange: the range's own first address is a host of the subnet
      [{ subnet: "10.0.0.0/24", ipRange: "10.0.0.128/25" }, "10.0.0.1", ["10.0.0.128", "10.0.0.129", "10.0.0.130", "10.0.0.131"]],
      // the gateway inside the range is skipped
      [{ subnet: "10.0.0.0/24", ipRange: "10.0.0.0/30", gateway: "10.0.0.2" }, "10.0.0.2", ["10.0.0.1", "10.0.0.3"]],
      [{ subnet: "10.0.0.0/24", ipRange: "10.0.0.252/30" }, "10.0.0.1", ["10.0.0.252", "10.0.0.253", "10.0.0.254"]], // not .255: broadcast
      [{ subnet: "172.18.0.0/30" }, "172.18.0.1", ["172.18.0.2"]],
      [{ subnet: "10.0.0.0/31" }, "10.0.0.0", ["10.0.0.1"]], // no network or broadcast address in a /31
      [{ subnet: "10.0.0.7/32" }, "10.0.0.7", []],
      [{ subnet: "10.0.0.0/29", auxiliaryAddresses: { printer: "10.0.0.2", router: "10.0.0.4" } }, "10.0.0.1", ["10.0.0.3", "10.0.0.5", "10.0.0.6"]],
      [{ subnet: "fd00:1::/64" }, "fd00:1::1", ["fd00:1::2", "fd00:1::3", "fd00:1::4", "fd00:1::5"]],
      [{ subnet: "fd00:1::/64", ipRange: "fd00:1::/80" }, "fd00:1::1", ["fd00:1::2", "fd00:1::3", "fd00:1::4", "fd00:1::5"]],
      [{ subnet: "fd00:1::/64", ipRange: "fd00:1:0:0:8000::/65" }, "fd00:1::1", ["fd00:1:0:0:8000::", "fd00:1::8000:0:0:1", "fd00:1::8000:0:0:2", "fd00:1::8000:0:0:3"]],
      [{ subnet: "fd00::/126" }, "fd00::1", ["fd00::2", "fd00::3"]], // the last one is a host: no broadcast in IPv6
      [{ subnet: "fd00::/127" }, "fd00::1", []], // the anycast address and the gateway
    ];
    for (const [config, gateway, dynamic] of cases) {
      const ipam = new NetworkIpam([config]);
      const family = config.subnet.includes(":") ? 6 : 4;
      expect(ipam.subnets()[0].gateway, config.subnet).to.equal(gateway);
      expect(allocateAll(ipam, family, 4), JSON.stringify(config)).to.deep.equal(dynamic);
    }
  });

  it("says which range ran out, as one line", () => {
    const cases: [SubnetConfig[], 4 | 6, string][] = [
      [[{ subnet: "172.18.0.0/30" }], 4, "no available IPv4 addresses in 172.18.0.0/30"],
      [[{ subnet: "10.0.0.0/31" }], 4, "no available IPv4 addresses in 10.0.0.0/31"],
      [[{ subnet: "10.0.0.7/32" }], 4, "no available IPv4 addresses in 10.0.0.7/32"],
      [[{ subnet: "10.0.0.0/24", ipRange: "10.0.0.252/30" }], 4, "no available IPv4 addresses in 10.0.0.252/30"],
      [[{ subnet: "fd00::/127" }], 6, "no available IPv6 addresses in fd00::/127"],
      [[{ subnet: "fd00::1/128" }], 6, "no available IPv6 addresses in fd00::1/128"],
      [[{ subnet: "10.0.0.0/30" }, { subnet: "10.0.1.0/30" }], 4, "no available IPv4 addresses in 10.0.0.0/30, 10.0.1.0/30"],
    ];
    for (const [configs, family, message] of cases) {
      const ipam = new NetworkIpam(configs);
      allocateAll(ipam, family);
      expectAddressError(() => ipam.allocate(family), "exhausted", message);
    }
  });

  it("moves on to the next subnet of the family when one is full", () => {
    const ipam = new NetworkIpam([{ subnet: "10.0.0.0/30" }, { subnet: "fd00::/64" }, { subnet: "10.0.1.0/30" }]);
    expect(allocateAll(ipam, 4)).to.deep.equal(["10.0.0.2", "10.0.1.2"]);
    expect(ipam.allocate(6).address).to.equal("fd00::2");
    expectAddressError(() => new NetworkIpam([{ subnet: "10.0.0.0/24" }]).allocate(6), "invalid", "the network has no IPv6 subnet");
  });

  it("returns what a container needs to configure its interface and route", () => {
    const ipam = new NetworkIpam([
      { subnet: "172.18.0.0/16", gateway: "172.18.5.1", auxiliaryAddresses: { DefaultGatewayIPv4: "172.18.0.254" } },
      { subnet: "fd00:1::/64" },
    ]);
    expect(ipam.allocate(4, { owner: "ep1" })).to.deep.equal({
      family: 4,
      address: "172.18.0.1",
      prefixLength: 16,
      cidr: "172.18.0.1/16",
      subnet: "172.18.0.0/16",
      gateway: "172.18.5.1",
      defaultRoute: "172.18.0.254", // --default-gateway: the route goes there, not to the bridge
    });
    expect(ipam.allocate(6, { owner: "ep1" })).to.deep.equal({
      family: 6,
      address: "fd00:1::2",
      prefixLength: 64,
      cidr: "fd00:1::2/64",
      subnet: "fd00:1::/64",
      gateway: "fd00:1::1",
      defaultRoute: "fd00:1::1",
    });
    expect(ipam.subnets()).to.deep.equal([
      {
        family: 4,
        subnet: "172.18.0.0/16",
        prefixLength: 16,
        gateway: "172.18.5.1",
        auxiliaryAddresses: { DefaultGatewayIPv4: "172.18.0.254" },
        defaultRoute: "172.18.0.254",
      },
      { family: 6, subnet: "fd00:1::/64", prefixLength: 64, gateway: "fd00:1::1", auxiliaryAddresses: {}, defaultRoute: "fd00:1::1" },
    ]);
    expect(ipam.hasFamily(6)).to.equal(true);
  });

  it("gives a requested address when it is in the subnet and free, with a clear reason when not", () => {
    const ipam = new NetworkIpam([
      { subnet: "172.18.0.0/16", ipRange: "172.18.1.0/24", auxiliaryAddresses: { printer: "172.18.0.9" } },
      { subnet: "fd00:1::/64" },
    ]);
    // outside the range is fine: only dynamic addresses come from the range
    expect(ipam.allocate(4, { address: "172.18.0.5", owner: "a" }).cidr).to.equal("172.18.0.5/16");
    expect(ipam.allocate(6, { address: "fd00:1::0:abc", owner: "a" }).address).to.equal("fd00:1::abc");
    const cases: [4 | 6, string, AddressError["kind"], string][] = [
      [4, "10.0.0.5", "invalid", "address 10.0.0.5 is not in subnet 172.18.0.0/16"],
      [6, "fd00:2::5", "invalid", "address fd00:2::5 is not in subnet fd00:1::/64"],
      [4, "fd00:1::5", "invalid", "address fd00:1::5 is not an IPv4 address"],
      [4, "172.18.0.300", "invalid", 'invalid IPv4 address: "172.18.0.300"'],
      [4, "172.18.0.5", "in-use", "address 172.18.0.5 is already in use (held by a)"],
      [6, "fd00:1::abc", "in-use", "address fd00:1::abc is already in use (held by a)"],
      [4, "172.18.0.1", "in-use", "address 172.18.0.1 is already in use (the gateway of 172.18.0.0/16)"],
      [4, "172.18.0.0", "in-use", "address 172.18.0.0 is already in use (the network address of 172.18.0.0/16)"],
      [4, "172.18.255.255", "in-use", "address 172.18.255.255 is already in use (the broadcast address of 172.18.0.0/16)"],
      [4, "172.18.0.9", "in-use", "address 172.18.0.9 is already in use (auxiliary address printer)"],
      [6, "fd00:1::", "in-use", "address fd00:1:: is already in use (the network address of fd00:1::/64)"],
    ];
    for (const [family, address, kind, message] of cases) {
      expectAddressError(() => ipam.allocate(family, { address }), kind, message);
    }
    const anonymous = new NetworkIpam([{ subnet: "10.0.0.0/24" }]);
    anonymous.allocate(4, { address: "10.0.0.3" });
    expectAddressError(() => anonymous.allocate(4, { address: "10.0.0.3" }), "in-use", "address 10.0.0.3 is already in use (allocated)");
  });

  it("continues after the last address it gave and wraps around, so a released address is not reused at once", () => {
    const ipam = new NetworkIpam([{ subnet: "10.0.0.0/29" }]); // hosts .1-.6, .1 is the gateway
    expect(allocateAll(ipam, 4, 3)).to.deep.equal(["10.0.0.2", "10.0.0.3", "10.0.0.4"]);
    expect(ipam.release("10.0.0.3")).to.equal(true);
    expect(ipam.allocate(4).address).to.equal("10.0.0.5"); // not the .3 just released
    expect(ipam.allocate(4).address).to.equal("10.0.0.6");
    expect(ipam.allocate(4).address).to.equal("10.0.0.3"); // wrapped around
    expect(ipam.release("10.0.0.2")).to.equal(true);
    expect(ipam.release("10.0.0.5")).to.equal(true);
    expect(ipam.allocate(4).address).to.equal("10.0.0.5"); // from the cursor (after .3) onwards
    expect(ipam.allocate(4).address).to.equal("10.0.0.2");
    expectAddressError(() => ipam.allocate(4), "exhausted", "no available IPv4 addresses in 10.0.0.0/29");
  });

  it("does not move the sequential search for a requested address", () => {
    const ipam = new NetworkIpam([{ subnet: "10.0.0.0/24" }]);
    expect(ipam.allocate(4, { address: "10.0.0.3" }).address).to.equal("10.0.0.3");
    expect(allocateAll(ipam, 4, 3)).to.deep.equal(["10.0.0.2", "10.0.0.4", "10.0.0.5"]);
  });

  it("releases by address or by owner, and releasing twice is harmless", () => {
    const ipam = new NetworkIpam([{ subnet: "10.0.0.0/24" }, { subnet: "fd00:1::/64" }]);
    ipam.allocate(4, { owner: "c1" });
    ipam.allocate(6, { owner: "c1" });
    ipam.allocate(4, { owner: "c2" });
    expect(ipam.isAllocated("10.0.0.2")).to.equal(true);
    expect(ipam.releaseOwner("c1")).to.deep.equal(["10.0.0.2", "fd00:1::2"]);
    expect(ipam.isAllocated("10.0.0.2")).to.equal(false);
    expect(ipam.releaseOwner("c1")).to.deep.equal([]);
    expect(ipam.release("10.0.0.3")).to.equal(true);
    expect(ipam.release("10.0.0.3")).to.equal(false);
    expect(ipam.release("10.0.0.1")).to.equal(false); // the gateway is not an allocation
    expect(ipam.release("192.0.2.1")).to.equal(false); // not in any subnet
    expect(ipam.allocations()).to.deep.equal([]);
  });

  it("refuses subnets, ranges, gateways and auxiliary addresses that do not fit, with Docker's wording", () => {
    const cases: [SubnetConfig[], AddressError["kind"], string][] = [
      [[{ subnet: "10.10.10.0/8" }], "invalid", "invalid subnet 10.10.10.0/8: it should be 10.0.0.0/8"],
      [[{ subnet: "foobar" }], "invalid", "invalid subnet foobar: invalid CIDR block notation"],
      [[{ subnet: "10.0.0.0/8", ipRange: "foobar" }], "invalid", "invalid ip-range foobar: invalid CIDR block notation"],
      [[{ subnet: "10.10.10.0/24", ipRange: "10.0.0.0/8" }], "invalid", "invalid ip-range 10.0.0.0/8: CIDR block is bigger than its parent subnet 10.10.10.0/24"],
      [[{ subnet: "10.0.0.0/8", ipRange: "10.10.10.0/16" }], "invalid", "invalid ip-range 10.10.10.0/16: it should be 10.10.0.0/16"],
      [[{ subnet: "10.0.0.0/8", ipRange: "192.168.0.0/24" }], "invalid", "invalid ip-range 192.168.0.0/24: parent subnet 10.0.0.0/8 doesn't contain ip-range"],
      [[{ subnet: "10.0.0.0/8", ipRange: "fd00::/64" }], "invalid", "invalid ip-range fd00::/64: parent subnet is an IPv4 block"],
      [[{ subnet: "10.0.0.0/8", gateway: "192.168.0.1" }], "invalid", "invalid gateway 192.168.0.1: parent subnet 10.0.0.0/8 doesn't contain this address"],
      [[{ subnet: "10.0.0.0/8", gateway: "1001.10.5.3" }], "invalid", "invalid gateway 1001.10.5.3: invalid address"],
      [[{ subnet: "fd00::/64", gateway: "10.0.0.1" }], "invalid", "invalid gateway 10.0.0.1: parent subnet is an IPv6 block"],
      [[{ subnet: "10.0.0.0/24", gateway: "10.0.0.0" }], "in-use", "invalid gateway 10.0.0.0: address already in use (the network address of 10.0.0.0/24)"],
      [[{ subnet: "10.0.0.0/24", gateway: "10.0.0.255" }], "in-use", "invalid gateway 10.0.0.255: address already in use (the broadcast address of 10.0.0.0/24)"],
      [
        [{ subnet: "10.0.0.0/8", auxiliaryAddresses: { DefaultGatewayIPv4: "192.168.0.1" } }],
        "invalid",
        "invalid auxiliary address DefaultGatewayIPv4: parent subnet 10.0.0.0/8 doesn't contain this address",
      ],
      [[{ subnet: "10.0.0.0/8", auxiliaryAddresses: { x: "dummy" } }], "invalid", "invalid auxiliary address x: invalid address"],
      [[{ subnet: "10.0.0.0/16" }, { subnet: "10.0.1.0/24" }], "invalid", "invalid subnet 10.0.1.0/24: it overlaps 10.0.0.0/16, another subnet of the network"],
    ];
    for (const [configs, kind, message] of cases) expectAddressError(() => new NetworkIpam(configs), kind, message);
    // Docker accepts the default gateway on the gateway's address: both are just reserved
    const same = new NetworkIpam([{ subnet: "10.10.0.0/16", gateway: "10.10.0.1", auxiliaryAddresses: { DefaultGatewayIPv4: "10.10.0.1" } }]);
    expect(same.allocate(4).address).to.equal("10.10.0.2");
  });

  it("restores the same allocations and the same place to continue from after a restart", () => {
    const before = new NetworkIpam([
      { subnet: "172.18.0.0/16", ipRange: "172.18.1.0/24", gateway: "172.18.0.1", auxiliaryAddresses: { DefaultGatewayIPv4: "172.18.0.254" } },
      { subnet: "fd00:1::/64" },
    ]);
    before.allocate(4, { owner: "c1" });
    before.allocate(4, { owner: "c2" });
    before.allocate(4, { owner: "c3", address: "172.18.7.7" });
    before.allocate(6, { owner: "c1" });
    before.release("172.18.1.0");
    const saved = JSON.stringify(before.toJSON());
    expect(JSON.parse(saved)).to.deep.equal({
      subnets: [
        {
          subnet: "172.18.0.0/16",
          ipRange: "172.18.1.0/24",
          gateway: "172.18.0.1",
          auxiliaryAddresses: { DefaultGatewayIPv4: "172.18.0.254" },
          allocated: { "172.18.1.1": "c2", "172.18.7.7": "c3" },
          next: "172.18.1.2",
        },
        { subnet: "fd00:1::/64", gateway: "fd00:1::1", auxiliaryAddresses: {}, allocated: { "fd00:1::2": "c1" }, next: "fd00:1::3" },
      ],
    });
    const after = NetworkIpam.fromJSON(JSON.parse(saved));
    expect(after.allocations()).to.deep.equal(before.allocations());
    expect(after.subnets()).to.deep.equal(before.subnets());
    expect(JSON.stringify(after.toJSON())).to.equal(saved);
    // both continue at the same place: the released 172.18.1.0 is not handed out again first
    expect(after.allocate(4).address).to.equal(before.allocate(4).address).and.to.equal("172.18.1.2");
    expect(after.allocate(6).address).to.equal("fd00:1::3");
    expectAddressError(() => after.allocate(4, { address: "172.18.7.7" }), "in-use", "address 172.18.7.7 is already in use (held by c3)");
  });

  it("refuses a saved state that breaks the rules", () => {
    const good = { subnets: [{ subnet: "10.0.0.0/24", gateway: "10.0.0.1", auxiliaryAddresses: {}, allocated: { "10.0.0.2": "c1" } }] };
    expect(NetworkIpam.fromJSON(good).allocations()).to.deep.equal([{ address: "10.0.0.2", owner: "c1", subnet: "10.0.0.0/24" }]);
    const withAllocated = (allocated: Record<string, string>) => ({ subnets: [{ ...good.subnets[0], allocated }] });
    expectAddressError(() => NetworkIpam.fromJSON(withAllocated({ "10.0.1.2": "c1" })), "invalid", "address 10.0.1.2 is not in subnet 10.0.0.0/24");
    expectAddressError(() => NetworkIpam.fromJSON(withAllocated({ "10.0.0.1": "c1" })), "in-use", /the gateway/);
    expectAddressError(() => NetworkIpam.fromJSON({ subnets: [{ subnet: "10.0.0.0/24" }] }), "invalid", /^invalid IPAM state: /);
    expectAddressError(() => NetworkIpam.fromJSON(null), "invalid", /^invalid IPAM state: /);
    // a cursor outside the subnet (a hand-edited file) is ignored: the search starts at the range
    const stray = NetworkIpam.fromJSON({ subnets: [{ ...good.subnets[0], next: "192.0.2.9" }] });
    expect(stray.allocate(4).address).to.equal("10.0.0.3");
  });

  it("big ranges: a search after a restart on a full network wraps past the taken addresses", () => {
    const ipam = new NetworkIpam([{ subnet: "10.0.0.0/21" }, { subnet: "fd00:1::/64" }]);
    expect(allocateAll(ipam, 4, 3000)).to.have.length(2045); // 2048 less network, gateway, broadcast
    for (let i = 0; i < 2000; i++) ipam.allocate(6, { owner: `c${i}` });
    // restart on a full network, free one address near the end: the search wraps and walks past 2041 taken ones
    const restored = NetworkIpam.fromJSON(JSON.parse(JSON.stringify(ipam.toJSON())));
    restored.release("10.0.7.250");
    expect(restored.allocate(4).address).to.equal("10.0.7.250");
    expect(restored.allocate(6).address).to.equal("fd00:1::7d2"); // 2000 after fd00:1::1
  });
});

describe("core/network address pools", () => {
  it("has Docker's defaults: 172.17-31.0.0/16, then 192.168.0.0/16 in /20s", () => {
    const subnets = defaultPools().flatMap((p) => splitCidr(p.base, p.size));
    expect(subnets).to.have.length(15 + 16);
    expect(subnets.slice(0, 15)).to.deep.equal(Array.from({ length: 15 }, (_, i) => `172.${17 + i}.0.0/16`));
    expect(subnets.slice(15)).to.deep.equal(Array.from({ length: 16 }, (_, i) => `192.168.${16 * i}.0/20`));
  });

  it("derives the same ULA /48 from a host id as Docker", () => {
    expect(ulaPool("")).to.deep.equal({ base: "fd42:98fc:1c14::/48", size: 64 });
    expect(ulaPool("499d4bc0-b0b3-416f-b1ee-cf6486315593")).to.deep.equal({ base: "fd62:fb69:18af::/48", size: 64 });
  });

  it("uses the configured pools instead of the defaults, and adds the ULA pool when none is IPv6", () => {
    const ula = ulaPool("host-1");
    expect(effectivePools([], "host-1")).to.deep.equal([...defaultPools(), ula]);
    expect(effectivePools([{ base: "10.10.0.0/16", size: 24 }], "host-1")).to.deep.equal([{ base: "10.10.0.0/16", size: 24 }, ula]);
    const dual: Pool[] = [{ base: "10.10.0.0/16", size: 24 }, { base: "fd99::/56", size: 64 }];
    expect(effectivePools(dual, "host-1")).to.deep.equal(dual);
  });

  it("picks the first subnet that overlaps no network of the daemon and no route of the host", () => {
    const defaults = defaultPools();
    const custom: Pool[] = [{ base: "10.10.0.0/16", size: 24 }];
    // pools, taken, host routes, family, expected
    const cases: [string, Pool[], string[], string[], 4 | 6, string][] = [
      ["nothing in the way", defaults, [], [], 4, "172.17.0.0/16"],
      ["the default bridge exists", defaults, ["172.17.0.0/16"], [], 4, "172.18.0.0/16"],
      ["another engine's bridge is a host route", defaults, [], ["172.17.0.0/16"], 4, "172.18.0.0/16"],
      ["a /24 route spoils its whole /16", defaults, ["172.17.0.0/16"], ["172.18.3.0/24"], 4, "172.19.0.0/16"],
      ["a host route to one address", defaults, [], ["172.17.0.5/32"], 4, "172.18.0.0/16"],
      ["a nameserver's bare address", defaults, [], ["172.17.0.53"], 4, "172.18.0.0/16"],
      ["a route wider than a candidate", defaults, [], ["172.16.0.0/12"], 4, "192.168.0.0/20"],
      ["172.16/12 and a home LAN in 192.168.0.0/24", defaults, [], ["172.16.0.0/12", "192.168.0.0/24"], 4, "192.168.16.0/20"],
      ["a taken network smaller than the pool size", defaults, ["172.17.0.0/24", "172.18.128.0/17"], [], 4, "172.19.0.0/16"],
      ["this machine's routes", defaults, [], parseHostRoutes(HOST_ROUTES_V4), 4, "172.17.0.0/16"],
      ["a custom pool", custom, [], [], 4, "10.10.0.0/24"],
      ["a custom pool, first /24 taken", custom, ["10.10.0.0/24"], ["10.10.1.0/25"], 4, "10.10.2.0/24"],
      ["custom pools in address order", [{ base: "10.20.0.0/16", size: 24 }, ...custom], [], [], 4, "10.10.0.0/24"],
      ["the wider of two pools at one address first", [{ base: "10.0.0.0/16", size: 20 }, { base: "10.0.0.0/8", size: 24 }], [], [], 4, "10.0.0.0/24"],
      ["the other family's obstacles do not count", custom, ["fd00::/8"], ["::/0"], 4, "10.10.0.0/24"],
      ["IPv6 from the ULA pool", [...defaults, ulaPool("")], [], [], 6, "fd42:98fc:1c14::/64"],
      ["IPv6, first /64 routed", [ulaPool("")], ["fd42:98fc:1c14:1::/64"], ["fd42:98fc:1c14::/64"], 6, "fd42:98fc:1c14:2::/64"],
      // fd00::/8 has 2^56 /64s: the search jumps past obstacles instead of walking them
      ["a huge IPv6 pool and this machine's fd00::/64", [{ base: "fd00::/8", size: 64 }], [], parseHostRoutes(HOST_ROUTES_V6), 6, "fd00:0:0:1::/64"],
      ["a huge IPv6 pool with a /16 taken", [{ base: "fd00::/8", size: 64 }], ["fd00::/16"], [], 6, "fd01::/64"],
    ];
    for (const [name, pools, taken, routes, family, expected] of cases) {
      expect(nextFreeSubnet(pools, taken, routes, family), name).to.equal(expected);
    }
  });

  it("says so, in Docker's words, when every candidate is in the way", () => {
    const cases: [Pool[], string[], string[], 4 | 6][] = [
      [[{ base: "10.10.0.0/23", size: 24 }], ["10.10.0.0/24", "10.10.1.0/24"], [], 4],
      [[{ base: "10.10.0.0/16", size: 24 }], [], ["10.0.0.0/8"], 4],
      [defaultPools(), ["172.16.0.0/12"], ["192.168.0.0/16"], 4],
      [defaultPools(), [], [], 6], // no IPv6 pool at all
      [[{ base: "fd00::/63", size: 64 }], ["fd00::/64"], ["fd00:0:0:1::/64"], 6],
      // a pool inside an earlier one is ignored, as Docker does, even when its smaller size would fit
      [[{ base: "10.0.0.0/23", size: 24 }, { base: "10.0.1.0/24", size: 25 }], ["10.0.0.0/25", "10.0.1.0/25"], [], 4],
    ];
    for (const [pools, taken, routes, family] of cases) {
      expectAddressError(
        () => nextFreeSubnet(pools, taken, routes, family),
        "exhausted",
        `could not find an available, non-overlapping IPv${family} address pool among the defaults to assign to the network`,
      );
    }
    expectAddressError(() => nextFreeSubnet([{ base: "10.10.0.0/16", size: 8 }], [], [], 4), "invalid", /^invalid pool size 8 for base 10.10.0.0\/16/);
  });

  it("reads the host's routes from ip -j route output", () => {
    const cases: [string, string, string[]][] = [
      ["this machine, IPv4", HOST_ROUTES_V4, ["192.0.2.0/24"]],
      ["this machine, IPv6", HOST_ROUTES_V6, ["fd00::/64", "fe80::/64"]],
      ["a host route and a blackhole", NETNS_ROUTES_V4, ["10.99.0.0/16", "198.51.100.0/24", "203.0.113.7/32"]],
      ["host route, unreachable, link-local twice", NETNS_ROUTES_V6, ["fd12:3456::/64", "fd12:3456:1::5/128", "fd12:ffff::/48", "fe80::/64"]],
      ["an empty namespace", "[]\n", []],
      ["no output at all", "", []],
      ["multicast and odd entries", '[{"dst":"ff00::/8","type":"multicast"},{"dev":"eth0"},{"dst":"10.1.2.0/24"},{"dst":"not-an-address"}]', ["10.1.2.0/24"]],
    ];
    for (const [name, output, routes] of cases) expect(parseHostRoutes(output), name).to.deep.equal(routes);
    expectAddressError(() => parseHostRoutes("Error: ipv4: something"), "invalid", /^cannot read the output of ip -j route/);
    expectAddressError(() => parseHostRoutes('{"dst":"default"}'), "invalid", "cannot read the output of ip -j route: not an array");
  });
});
