/**
 * The bridge driver's network options (`POST /networks/create`'s `Options`, `-o` of
 * `docker network create`, and `--default-network-opt bridge=<key>=<value>`), under
 * Docker's names with `com.engine` in place of `com.docker`. Docker's own names are read too
 * (a `com.engine` one given beside wins): compose files and clients written for Docker's
 * daemon send them (`driver_opts: com.docker.network.bridge.name: br0`). The default network
 * gets its options from the daemon's flags (`--icc`, `--ip-masq`, `--mtu`, `--ip`), written
 * into it the way Docker shows them in `docker network inspect bridge`.
 */
import { isIP } from "node:net";
import type { NetworkSpec } from "../../core/contracts/network.js";
import type { DaemonConfig } from "../../core/options/table.js";

export const OPT = {
  name: "com.engine.network.bridge.name",
  icc: "com.engine.network.bridge.enable_icc",
  masquerade: "com.engine.network.bridge.enable_ip_masquerade",
  hostBindingIpv4: "com.engine.network.bridge.host_binding_ipv4",
  defaultBridge: "com.engine.network.bridge.default_bridge",
  mtu: "com.engine.network.driver.mtu",
  /** `nat` (the default) or `isolated`: no gateway, no address on the bridge (an internal network only). */
  gatewayMode4: "com.engine.network.bridge.gateway_mode_ipv4",
  gatewayMode6: "com.engine.network.bridge.gateway_mode_ipv6",
  /** No IPv4 address on the bridge (the gateway is someone else's, or, on an internal network, none). */
  inhibitIpv4: "com.engine.network.bridge.inhibit_ipv4",
  /** The source address of the network's outgoing IPv4 traffic (SNAT instead of MASQUERADE). */
  hostIpv4: "com.engine.network.host_ipv4",
  hostIpv6: "com.engine.network.host_ipv6",
  /** Internal: the bridge was named by `--bridge` (the operator's, never deleted). */
  external: "com.engine.network.bridge.external",
} as const;

/** Docker's name of one of ours. */
const dockerName = (key: string) => key.replace(/^com\.engine\./, "com.docker.");

/** The options a request may give under Docker's names (the daemon's own two are ours alone). */
const ALIASED = new Set<string>([OPT.name, OPT.icc, OPT.masquerade, OPT.hostBindingIpv4, OPT.mtu, OPT.hostIpv4, OPT.hostIpv6, OPT.gatewayMode4, OPT.gatewayMode6, OPT.inhibitIpv4]);

const KNOWN = new Set<string>([...Object.values(OPT), ...[...ALIASED].map(dockerName)]);

/** An option's value under our name, else (for those that have one) under Docker's. */
function option(o: Record<string, string>, key: string): string | undefined {
  return o[key] ?? (ALIASED.has(key) ? o[dockerName(key)] : undefined);
}

export interface BridgeOptions {
  bridge: string;
  icc: boolean;
  masquerade: boolean;
  hostBindingIpv4: string;
  mtu: number;
  /** By family: the gateway mode is `isolated` (no gateway, no address on the bridge). */
  isolated: { 4: boolean; 6: boolean };
  /** `inhibit_ipv4`: the bridge has no IPv4 address. */
  inhibitIpv4: boolean;
  /** `host_ipv4` / `host_ipv6`: the source of the network's outgoing traffic, by family. */
  snatSource: { 4?: string; 6?: string };
  /** The operator's bridge (`--bridge NAME`): used, never made nor deleted. */
  external: boolean;
  /**
   * A bridge the daemon made, known from the options alone (so after a restart too, when the
   * bridge is found already there): the default network's (`engine0`) unless `--bridge` named
   * the operator's, and a user-defined network's own `br-<id>` (the daemon's name for it, which
   * no operator's bridge has). A name the request gave may be a bridge someone else made.
   */
  madeByDaemon: boolean;
}

function bool(v: string | undefined, fallback: boolean, key: string): boolean {
  if (v === undefined || v === "") return fallback;
  if (/^(1|t|true)$/i.test(v)) return true;
  if (/^(0|f|false)$/i.test(v)) return false;
  throw new Error(`invalid value for ${key}: "${v}" (a boolean: true or false)`);
}

/**
 * A gateway mode this driver runs: `nat` (the default: the bridge is the gateway, outgoing traffic
 * masqueraded) or `isolated`. Docker's `routed` and `nat-unprotected` are refused rather than
 * taken for `nat`, which would expose or hide what the network's creator did not ask for.
 */
function checkGatewayMode(v: string): void {
  if (v === "" || v === "nat" || v === "isolated") return;
  if (v === "routed" || v === "nat-unprotected") throw new Error(`gateway mode ${v} is not supported by this daemon (nat or isolated)`);
  throw new Error(`unknown gateway mode ${v}`);
}

/**
 * Throws for a value this driver cannot use. An option it does not know is kept in the network's
 * Options and not used, as Docker's bridge driver reads only the labels it knows (clients send
 * options meant for other daemons: docker-compose's `driver_opts`).
 */
export function checkBridgeOptions(options: Record<string, string>): void {
  for (const [k, v] of Object.entries(options)) {
    if (!KNOWN.has(k)) continue;
    const ours = k.replace(/^com\.docker\./, "com.engine.");
    if (ours === OPT.mtu && !(Number.isInteger(Number(v)) && Number(v) >= 68 && Number(v) <= 65535)) throw new Error(`invalid value for ${k}: "${v}" (an MTU between 68 and 65535)`);
    if (ours === OPT.name && !/^[a-zA-Z0-9_.-]{1,15}$/.test(v)) throw new Error(`invalid value for ${k}: "${v}" (an interface name of at most 15 characters)`);
    if ([OPT.icc, OPT.masquerade, OPT.defaultBridge, OPT.external, OPT.inhibitIpv4].includes(ours as never)) bool(v, true, k);
    if (ours === OPT.gatewayMode4 || ours === OPT.gatewayMode6) checkGatewayMode(v);
    // Docker's words for an address that is none; one of the other family is refused too, which
    // Docker's bridge driver would take and iptables then refuse at the network's rules
    const family = ours === OPT.hostIpv4 ? 4 : ours === OPT.hostIpv6 ? 6 : 0;
    if (family && isIP(v) === 0) throw new Error(`failed to parse ${k} value: ${v} (nil ip)`);
    if (family && isIP(v) !== family) throw new Error(`failed to parse ${k} value: ${v} (not an IPv${family} address)`);
  }
}

export function bridgeOptions(net: NetworkSpec, config: DaemonConfig): BridgeOptions {
  const o = (key: string) => option(net.options, key);
  return {
    bridge: o(OPT.name) || `br-${net.id.slice(0, 12)}`,
    icc: bool(o(OPT.icc), true, OPT.icc),
    masquerade: bool(o(OPT.masquerade), true, OPT.masquerade),
    hostBindingIpv4: o(OPT.hostBindingIpv4) || config.ip || "0.0.0.0",
    mtu: Number(o(OPT.mtu) || config.mtu || 1500),
    // (read, not checked: a network stored before the check was made keeps working)
    isolated: { 4: o(OPT.gatewayMode4) === "isolated", 6: o(OPT.gatewayMode6) === "isolated" },
    inhibitIpv4: /^(1|t|true)$/i.test(o(OPT.inhibitIpv4) ?? ""),
    // (an address of another family, which a network stored before the check could have, is left out)
    snatSource: { ...(isIP(o(OPT.hostIpv4) ?? "") === 4 ? { 4: o(OPT.hostIpv4) } : {}), ...(isIP(o(OPT.hostIpv6) ?? "") === 6 ? { 6: o(OPT.hostIpv6) } : {}) },
    external: bool(o(OPT.external), false, OPT.external),
    madeByDaemon: !bool(o(OPT.external), false, OPT.external) && (!!net.isDefault || !o(OPT.name)),
  };
}
