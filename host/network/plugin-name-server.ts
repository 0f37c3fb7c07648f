/**
 * The embedded name server of the networks whose links plugins of other processes make: as on
 * every user-defined network in Docker (libnetwork gives each endpoint a resolver unless the
 * daemon disabled it, which it does on the default bridge alone), a container resolves the
 * others of its networks by name, alias and short id, and asks the rest of its `--dns`, the
 * daemon's or the host's servers (resolv.conf names 127.0.0.11 and keeps those as ExtServers).
 *
 * The daemon cannot count on reaching such a network (the plugin's links may lead anywhere), so
 * the server answers in each container's own namespace, on 127.0.0.11:53 there, with sockets the
 * daemon bound in it (core/net/netns-sockets.ts) and serves from its own: forwarded questions
 * leave from the daemon's namespace, as Docker's do. One server for all such plugins: a
 * container on two of their networks has one 127.0.0.11.
 */
import { bindInNetns } from "../../core/net/netns-sockets.js";
import type { EndpointSpec, NetworkSpec } from "../../core/contracts/network.js";
import { EmbeddedDns, sandboxKey } from "../../plugins/network-bridge/dns-resolver.js";
import { EMBEDDED_DNS_ADDRESS } from "./embedded-dns.js";

const DNS_PORT = 53;

export class PluginNameServer {
  private dns?: EmbeddedDns;
  /** By container: its endpoints on these networks (its server closes with the last). */
  private readonly endpoints = new Map<string, Set<string>>();

  constructor(private readonly onError: (err: Error) => void = () => undefined) {}

  /**
   * The endpoint's names registered and, when its container has none yet, the server started in
   * `sandbox`; resolves with the address resolv.conf names. Rejects when it cannot listen there.
   */
  async join(net: NetworkSpec, ep: EndpointSpec, sandbox: string): Promise<string> {
    const dns = (this.dns ??= new EmbeddedDns({ upstreams: [], onError: this.onError }));
    this.register(net, ep);
    this.endpoints.set(ep.containerId, (this.endpoints.get(ep.containerId) ?? new Set()).add(ep.endpointId));
    if (!dns.servesSandbox(ep.containerId)) {
      try {
        await dns.serveSandbox(ep.containerId, bindInNetns(sandbox, EMBEDDED_DNS_ADDRESS, DNS_PORT), EMBEDDED_DNS_ADDRESS, DNS_PORT);
      } catch (err) {
        await this.leave(net, ep);
        throw new Error(`cannot start the network's name server in the container at ${EMBEDDED_DNS_ADDRESS}:${DNS_PORT}: ${(err as Error).message}`, { cause: err });
      }
    }
    return EMBEDDED_DNS_ADDRESS;
  }

  /** Its names again (a rename). */
  register(net: NetworkSpec, ep: EndpointSpec): void {
    if (!this.dns) return;
    const addresses = [ep.ipv4, ep.ipv6].filter((a): a is string => !!a).map((a) => a.split("/")[0]);
    this.dns.setNetworkName(net.id, net.name);
    this.dns.setEndpoint(net.id, ep.containerId, ep.dnsNames ?? [], addresses, ep.dnsUpstreams?.map((address) => ({ address })), ep.linkAliases);
  }

  /**
   * The endpoint's names forgotten; the container's server closed once it is on none of these
   * networks (its sockets would keep a namespace that is gone otherwise alive).
   */
  async leave(net: NetworkSpec, ep: EndpointSpec): Promise<void> {
    if (!this.dns) return;
    this.dns.removeEndpoint(net.id, ep.containerId);
    const held = this.endpoints.get(ep.containerId);
    held?.delete(ep.endpointId);
    if (held?.size) return;
    this.endpoints.delete(ep.containerId);
    await this.dns.close(sandboxKey(ep.containerId));
  }

  async shutdown(): Promise<void> {
    await this.dns?.closeAll();
  }
}
