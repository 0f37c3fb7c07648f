import type { PluginManifest } from "../../core/contracts/plugin.js";

export const manifest: PluginManifest = {
  id: "network.bridge",
  kind: "network",
  description: "Networks as Linux bridges: a veth pair per container, iptables rules for masquerading, isolation and published ports, and a userland proxy for loopback traffic. The default network driver.",
  capabilities: ["ipv6", "published-ports", "embedded-dns"],
};
