/** Options of container networking: the default bridge, address pools, DNS, port publishing. */
import { BOTH, LINUX, option } from "../option.js";
import { addressPools, cidr4, cidr6, hostGatewayIps, ip, ipList } from "../value-types-net.js";
import { mapMap } from "../value-types-structured.js";
import { bool, int, list, string } from "../value-types.js";

export const networkOptions = {
  bridge: option({
    flag: "bridge", short: "b", key: "bridge", type: string(), default: "", platforms: BOTH, group: "network",
    help: 'Attach containers to a network bridge ("none" disables the default bridge)', example: { args: ["-b", "none"], value: "none" },
  }),
  bip: option({
    flag: "bip", key: "bip", type: cidr4, default: "", platforms: LINUX, group: "network",
    help: "IPv4 address and subnet of the default bridge", example: { args: ["--bip", "172.31.0.1/24"], value: "172.31.0.1/24" },
  }),
  bip6: option({
    flag: "bip6", key: "bip6", type: cidr6, default: "", platforms: LINUX, group: "network",
    help: "IPv6 address and subnet of the default bridge", example: { args: ["--bip6", "fd00:1::1/64"], value: "fd00:1::1/64" },
  }),
  "fixed-cidr": option({
    flag: "fixed-cidr", key: "fixed-cidr", type: cidr4, default: "", platforms: BOTH, group: "network",
    help: "IPv4 subnet for fixed IPs", example: { args: ["--fixed-cidr", "172.31.0.128/25"], value: "172.31.0.128/25" },
  }),
  "fixed-cidr-v6": option({
    flag: "fixed-cidr-v6", key: "fixed-cidr-v6", type: cidr6, default: "", platforms: LINUX, group: "network",
    help: "IPv6 subnet for fixed IPs", example: { args: ["--fixed-cidr-v6", "fd00:1::/80"], value: "fd00:1::/80" },
  }),
  "default-gateway": option({
    flag: "default-gateway", key: "default-gateway", type: ip, default: "", platforms: LINUX, group: "network",
    help: "Default IPv4 gateway of the default bridge", example: { args: ["--default-gateway", "172.31.0.254"], value: "172.31.0.254" },
  }),
  "default-gateway-v6": option({
    flag: "default-gateway-v6", key: "default-gateway-v6", type: ip, default: "", platforms: LINUX, group: "network",
    help: "Default IPv6 gateway of the default bridge", example: { args: ["--default-gateway-v6", "fd00:1::fe"], value: "fd00:1::fe" },
  }),
  "default-address-pool": option({
    flag: "default-address-pool", key: "default-address-pools", type: addressPools, default: [], platforms: LINUX,
    group: "network", metavar: "pool-options", help: "Default address pools for node specific local networks",
    example: { args: ["--default-address-pool", "base=172.30.0.0/16,size=24"], value: [{ base: "172.30.0.0/16", size: 24 }] },
  }),
  "default-network-opt": option({
    flag: "default-network-opt", key: "default-network-opts", type: mapMap, default: {}, platforms: BOTH, group: "network",
    metavar: "mapmap", help: "Default network options for new networks (<driver>=<option>=<value>)",
    example: { args: ["--default-network-opt", "bridge=com.engine.network.driver.mtu=1400"], value: { bridge: { "com.engine.network.driver.mtu": "1400" } } },
  }),
  mtu: option({
    flag: "mtu", key: "mtu", type: int(68), default: 1500, platforms: BOTH, group: "network",
    help: "Network MTU of the default bridge", example: { args: ["--mtu", "1400"], value: 1400 },
  }),
  "network-control-plane-mtu": option({
    flag: "network-control-plane-mtu", key: "network-control-plane-mtu", type: int(68), default: 1500, platforms: LINUX,
    group: "network", help: "Network control plane MTU", example: { args: ["--network-control-plane-mtu", "1400"], value: 1400 },
  }),
  icc: option({
    flag: "icc", key: "icc", type: bool, default: true, platforms: LINUX, group: "network",
    help: "Enable inter-container communication on the default bridge", example: { args: ["--icc=false"], value: false },
  }),
  ip: option({
    flag: "ip", key: "ip", type: ip, default: "0.0.0.0", platforms: LINUX, group: "network",
    help: "Host IP for port publishing from the default bridge", example: { args: ["--ip", "127.0.0.1"], value: "127.0.0.1" },
  }),
  "ip-forward": option({
    flag: "ip-forward", key: "ip-forward", type: bool, default: true, platforms: LINUX, group: "network",
    help: "Enable IP forwarding in system configuration", example: { args: ["--ip-forward=false"], value: false },
  }),
  "ip-forward-no-drop": option({
    flag: "ip-forward-no-drop", key: "ip-forward-no-drop", type: bool, default: false, platforms: LINUX, group: "network",
    help: "Do not set the filter-FORWARD policy to DROP when enabling IP forwarding", example: { args: ["--ip-forward-no-drop"], value: true },
  }),
  "ip-masq": option({
    flag: "ip-masq", key: "ip-masq", type: bool, default: true, platforms: LINUX, group: "network",
    help: "Enable IP masquerading for the default bridge", example: { args: ["--ip-masq=false"], value: false },
  }),
  iptables: option({
    flag: "iptables", key: "iptables", type: bool, default: true, platforms: LINUX, group: "network",
    help: "Enable addition of iptables rules", example: { args: ["--iptables=false"], value: false },
  }),
  ip6tables: option({
    flag: "ip6tables", key: "ip6tables", type: bool, default: true, platforms: LINUX, group: "network",
    help: "Enable addition of ip6tables rules", example: { args: ["--ip6tables=false"], value: false },
  }),
  ipv6: option({
    flag: "ipv6", key: "ipv6", type: bool, default: false, platforms: LINUX, group: "network",
    help: "Enable IPv6 networking on the default bridge", example: { args: ["--ipv6"], value: true },
  }),
  "allow-direct-routing": option({
    flag: "allow-direct-routing", key: "allow-direct-routing", type: bool, default: false, platforms: LINUX, group: "network",
    help: "Allow remote access to published ports on container IP addresses", example: { args: ["--allow-direct-routing"], value: true },
  }),
  "userland-proxy": option({
    flag: "userland-proxy", key: "userland-proxy", type: bool, default: true, platforms: LINUX, group: "network",
    help: "Use userland proxy for loopback traffic", example: { args: ["--userland-proxy=false"], value: false },
  }),
  "userland-proxy-path": option({
    flag: "userland-proxy-path", key: "userland-proxy-path", type: string(), default: "", platforms: LINUX, group: "network",
    help: "Path to the userland proxy binary", example: { args: ["--userland-proxy-path", "/usr/bin/proxy"], value: "/usr/bin/proxy" },
  }),
  "host-gateway-ip": option({
    flag: "host-gateway-ip", key: "host-gateway-ips", legacyKeys: ["host-gateway-ip"], type: hostGatewayIps, default: [],
    platforms: BOTH, keyPlatforms: { "host-gateway-ips": LINUX }, group: "network", metavar: "list",
    help: "Addresses the host-gateway value resolves to (one IPv4, one IPv6; default: the default bridge's)",
    example: { args: ["--host-gateway-ip", "172.31.0.1", "--host-gateway-ip", "fd00:1::1"], value: ["172.31.0.1", "fd00:1::1"] },
  }),
  dns: option({
    flag: "dns", key: "dns", type: ipList, default: [], platforms: BOTH, group: "network", metavar: "list",
    help: "DNS server to use", example: { args: ["--dns", "192.0.2.53"], value: ["192.0.2.53"] },
  }),
  "dns-opt": option({
    flag: "dns-opt", key: "dns-opts", type: list(), default: [], platforms: BOTH, group: "network", metavar: "list",
    help: "DNS options to use", example: { args: ["--dns-opt", "ndots:2"], value: ["ndots:2"] },
  }),
  "dns-search": option({
    flag: "dns-search", key: "dns-search", type: list(), default: [], platforms: BOTH, group: "network", metavar: "list",
    help: "DNS search domains to use", example: { args: ["--dns-search", "example.test"], value: ["example.test"] },
  }),
} as const;
