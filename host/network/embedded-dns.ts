/**
 * The address a container on a user-defined network asks for names, 127.0.0.11, as Docker's
 * containers do (resolv.conf names it, and programs configured for Docker name it too: nginx's
 * `resolver 127.0.0.11`). The name server itself runs in the daemon, on the network's gateway
 * address (plugins/network-bridge/dns-resolver.ts); in the container's network namespace, DNS to
 * 127.0.0.11:53 (UDP and TCP) is redirected there and its source masqueraded to the container's
 * address, which the name server knows the container by.
 *
 * Redirecting a packet from 127.0.0.1 out of eth0 needs `route_localnet` in the namespace; what
 * that would let through otherwise is dropped: loopback addresses arriving on another interface
 * (a neighbour's crafted packet for the container's 127.0.0.1 services, CVE-2020-8558's kind),
 * and loopback sources leaving by one, but for the redirected DNS. Docker binds its resolver
 * inside the namespace instead (a thread of dockerd enters it), which a Node daemon cannot do.
 *
 * The rules live in chains of their own in the namespace's nat and filter tables; re-pointing
 * them (a network connected or disconnected while the container runs) refills those chains and
 * leaves whatever the container's own processes set (a Docker daemon inside it) alone.
 */
import { execFileAsync } from "../../core/exec-file.js";

export const EMBEDDED_DNS_ADDRESS = "127.0.0.11";

const NAT = "ENGINE-DNS";
const NAT_SOURCE = "ENGINE-DNS-SOURCE";
const GUARD_IN = "ENGINE-LOOPBACK-IN";
const GUARD_OUT = "ENGINE-LOOPBACK-OUT";
/** Each built-in chain and the chain of ours it jumps to. */
const JUMPS = [
  ["nat", "OUTPUT", NAT],
  ["nat", "POSTROUTING", NAT_SOURCE],
  ["filter", "INPUT", GUARD_IN],
  ["filter", "OUTPUT", GUARD_OUT],
] as const;

/** The iptables-restore input: our chains filled (declared, so emptied first), and, on a new namespace, the jumps to them. */
export function embeddedDnsRules(nameserver: string, withJumps: boolean): string {
  const jumps = (table: string) => (withJumps ? JUMPS.filter(([t]) => t === table).map(([, chain, ours]) => `-A ${chain} -j ${ours}`) : []);
  return [
    "*nat",
    `:${NAT} - [0:0]`,
    `:${NAT_SOURCE} - [0:0]`,
    ...["udp", "tcp"].map((p) => `-A ${NAT} -d ${EMBEDDED_DNS_ADDRESS}/32 -p ${p} --dport 53 -j DNAT --to-destination ${nameserver}:53`),
    ...["udp", "tcp"].map((p) => `-A ${NAT_SOURCE} -s 127.0.0.0/8 -d ${nameserver}/32 -p ${p} --dport 53 -j MASQUERADE`),
    ...jumps("nat"),
    "COMMIT",
    "*filter",
    `:${GUARD_IN} - [0:0]`,
    `:${GUARD_OUT} - [0:0]`,
    `-A ${GUARD_IN} ! -i lo -d 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`,
    `-A ${GUARD_IN} ! -i lo -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`,
    `-A ${GUARD_OUT} ! -o lo -s 127.0.0.0/8 -m conntrack ! --ctstate DNAT -j DROP`,
    ...jumps("filter"),
    "COMMIT",
    "",
  ].join("\n");
}

/**
 * Points 127.0.0.11 in the namespace bound at `sandbox` at `nameserver` (an IPv4 address).
 * `fresh`: the namespace is new (nothing in it yet): one batch, jumps included; otherwise the
 * jumps are added only where missing. Rejects when the tools fail (no iptables here): the
 * caller then names the gateway in resolv.conf, as before.
 */
export async function pointEmbeddedDns(sandbox: string, nameserver: string, fresh: boolean): Promise<void> {
  const missingJumps = fresh
    ? ""
    : JUMPS.map(([table, chain, ours]) => `iptables -w -t ${table} -C ${chain} -j ${ours} 2>/dev/null || iptables -w -t ${table} -A ${chain} -j ${ours} || exit 1\n`).join("");
  // (one process in the namespace for all of it: a start pays one fork of nsenter)
  const script = `sysctl -qw net.ipv4.conf.all.route_localnet=1 && iptables-restore -w --noflush <<'RULES' || exit 1\n${embeddedDnsRules(nameserver, fresh)}RULES\n${missingJumps}`;
  await execFileAsync("nsenter", [`--net=${sandbox}`, "--", "sh", "-c", script], { timeout: 30_000 });
}
