/**
 * network.bridge: each network is a Linux bridge on the host; each container a veth pair from
 * that bridge into its sandbox; iptables rules for masquerading, isolation and published
 * ports (firewall.ts); a userland proxy per published port (userland-proxy.ts) unless
 * `--userland-proxy=false`; on user-defined networks, a name server on the bridge's address
 * (dns-resolver.ts) that answers the containers' names and forwards the rest. The daemon
 * chooses subnets and addresses (core/network); the driver makes them real.
 */
import { isIP } from "node:net";
import { contains, normalizeAddress } from "../../core/network/cidr.js";
import type { EndpointSpec, JoinResult, LegacyLink, NetworkContext, NetworkDriver, NetworkSpec, PortRequest, PublishedPort } from "../../core/contracts/network.js";
import { killPoint } from "../../core/kill-points.js";
import { hostRunner, netnsRunner, type CommandRunner } from "../../core/net/commands.js";
import { EmbeddedDns } from "./dns-resolver.js";
import { Firewall, type NetworkRules, type PortRule } from "./firewall.js";
import { deleteLink, ensureBridge, plugVeth } from "./links.js";
import { PortAllocator } from "./port-allocator.js";
import { ipv6Listenable, startProxy, type ProxyHandle } from "./userland-proxy.js";
import { bridgeOptions, checkBridgeOptions, OPT, type BridgeOptions } from "./options.js";

export interface BridgeDriverContext extends Pick<NetworkContext, "config" | "tag" | "log"> {
  /** Where the commands run (the daemon's namespace unless a test says otherwise). */
  runner?: CommandRunner;
}

interface Joined {
  net: NetworkSpec;
  rules: PortRule[];
  proxies: ProxyHandle[];
  published: PublishedPort[];
}

export class BridgeDriver implements NetworkDriver {
  readonly name = "bridge";
  private readonly run: CommandRunner;
  private firewall?: Firewall;
  private readonly ports = new PortAllocator();
  /** By endpoint id: what a join holds, for its leave. */
  private readonly joined = new Map<string, Joined>();
  /** Bridges this daemon made (and so may delete), by network id. */
  private readonly madeBridges = new Set<string>();
  private based = false;
  private dns?: EmbeddedDns;
  /** By network id: the address its name server answers on. */
  private readonly nameservers = new Map<string, string>();
  /** Whether the host listens on IPv6 at all, asked once. */
  private v6?: Promise<boolean>;

  constructor(private readonly ctx: BridgeDriverContext) {
    this.run = ctx.runner ?? hostRunner;
  }

  private fw(): Firewall {
    const c = this.ctx.config();
    // ip6tables rules for every IPv6 network, as Docker 27+ makes them: --ipv6 is about the default network alone
    this.firewall ??= new Firewall({ tag: this.ctx.tag, runner: this.run, ipv4: c.iptables, ipv6: c.ip6tables });
    return this.firewall;
  }

  private async base(): Promise<void> {
    if (this.based) return;
    const c = this.ctx.config();
    if (c.iptables || c.ip6tables) {
      try {
        await this.fw().ensureBase();
      } catch (err) {
        if (!c.ip6tables) throw err;
        // A host whose kernel has no ip6tables (no IPv6) is no reason to refuse every network now
        // that ip6tables rules no longer wait for --ipv6: its IPv6 networks get none, and the log says so
        this.ctx.log?.warn({ err }, "ip6tables is enabled, but cannot set up ip6tables chains: IPv6 networks get no ip6tables rules");
        this.firewall = new Firewall({ tag: this.ctx.tag, runner: this.run, ipv4: c.iptables, ipv6: false });
        await this.firewall.ensureBase();
      }
    }
    this.based = true;
  }

  private rules(net: NetworkSpec): NetworkRules {
    const o = bridgeOptions(net, this.ctx.config());
    return {
      bridge: o.bridge,
      subnets: net.subnets.map((s) => s.subnet),
      gateways: net.subnets.map((s) => s.gateway).filter((g) => g !== ""),
      icc: o.icc,
      masquerade: o.masquerade,
      snatSource: o.snatSource,
      internal: net.internal,
      directRouting: this.ctx.config()["allow-direct-routing"],
    };
  }

  async restore(networks: readonly NetworkSpec[], endpoints: readonly EndpointSpec[]): Promise<void> {
    for (const net of networks) await this.createNetwork(net);
    const byId = new Map(networks.map((n) => [n.id, n]));
    for (const ep of endpoints) {
      const net = byId.get(ep.networkId);
      if (!net) continue;
      // the interfaces are in the running container's sandbox already; ports and proxies come back
      const held: Joined = { net, rules: [], proxies: [], published: [] };
      this.joined.set(ep.endpointId, held);
      this.registerNames(net, ep);
      for (const p of ep.published ?? []) {
        this.ports.reserve(p.proto, p.hostIp, p.hostPort);
        await this.publishOne(held, ep, p).catch(() => undefined);
      }
    }
    await this.dropStalePorts(networks);
  }

  /**
   * The rules of ports published by containers that stopped while the daemon was down stay in
   * the chains (rules outlive the daemon): they would send a later container's traffic to an
   * address that may be someone else's by then, so they go, with what they alone used.
   */
  private async dropStalePorts(networks: readonly NetworkSpec[]): Promise<void> {
    const c = this.ctx.config();
    if (!c.iptables && !c.ip6tables) return;
    const key = (r: Omit<PortRule, "bridge" | "loopback">) => `${r.proto} ${normalizeAddress(r.hostIp)} ${r.hostPort} ${normalizeAddress(r.containerIp)} ${r.containerPort}`;
    const held = new Set([...this.joined.values()].flatMap((j) => j.rules.map(key)));
    for (const p of await this.fw().publishedPorts()) {
      if (held.has(key(p))) continue;
      const net = networks.find((n) => n.subnets.some((s) => contains(s.subnet, p.containerIp)));
      if (!net) continue; // not a network of this driver's: not ours to judge
      await this.fw().removePort({ ...p, bridge: bridgeOptions(net, c).bridge, loopback: false });
    }
  }

  async createNetwork(net: NetworkSpec): Promise<void> {
    const o = bridgeOptions(net, this.ctx.config());
    const addresses = bridgeAddresses(net, o).map((a) => `${a.gateway}/${a.subnet.split("/")[1]}`);
    const made = await ensureBridge(this.run, { name: o.bridge, mtu: o.mtu, addresses: o.external ? [] : addresses });
    if (made || o.madeByDaemon) this.madeBridges.add(net.id);
    // no IPv6 address at all, a kernel-made link-local one included, as Docker's isolated mode
    if (o.isolated[6] && net.enableIPv6) await this.run("sysctl", ["-q", "-w", `net/ipv6/conf/${o.bridge}/disable_ipv6=1`]);
    killPoint("bridge.link-made");
    await this.base();
    const c = this.ctx.config();
    // Forwarding per family, when a network of that family is made (the first IPv6 network turns
    // IPv6 forwarding on, whatever --ipv6 says), as Docker 28's createNetwork does
    if (c["ip-forward"]) {
      const families = new Set(net.subnets.map((s) => isIP(s.subnet.split("/")[0])));
      await this.fw().setForwarding({ enable: true, noDrop: c["ip-forward-no-drop"], ipv4: families.has(4), ipv6: families.has(6) });
    }
    if (c.iptables || c.ip6tables) {
      await this.fw().addNetwork(this.rules(net));
      killPoint("bridge.rules-added");
      if (!o.icc) await this.fw().enableBridgeNetfilter();
    }
    await this.startNameServer(net);
  }

  /**
   * User-defined networks answer their containers' names, as Docker's do, on the bridge's IPv4
   * address, port 53 (the daemon's own namespace, so the host's loopback servers stay
   * reachable as upstreams). The default network has none, as in Docker. A server that cannot
   * listen (port 53 of that address taken) leaves the network's containers with the host's
   * servers, and says so.
   */
  private async startNameServer(net: NetworkSpec): Promise<void> {
    if (net.isDefault || this.nameservers.has(net.id)) return;
    // IPv6-only networks have none yet: the bridge's IPv6 address is unusable until DAD ends;
    // one whose bridge has no IPv4 address (isolated, inhibit_ipv4) has nowhere to serve from
    const gateway = bridgeAddresses(net, bridgeOptions(net, this.ctx.config())).map((s) => s.gateway).find((g) => isIP(g) === 4);
    if (!gateway) return;
    this.dns ??= new EmbeddedDns({ upstreams: [], onError: () => undefined });
    try {
      await this.dns.listen(net.id, gateway);
      this.nameservers.set(net.id, gateway);
    } catch (err) {
      this.ctx.log?.warn({ err, network: net.name }, `no name server on ${gateway}:53 for network ${net.name}: its containers get the host's name servers`);
    }
  }

  async rename(net: NetworkSpec, ep: EndpointSpec): Promise<void> {
    if (this.joined.has(ep.endpointId)) this.registerNames(net, ep);
  }

  private registerNames(net: NetworkSpec, ep: EndpointSpec): void {
    if (!this.dns || !this.nameservers.has(net.id)) return;
    const addresses = [ep.ipv4, ep.ipv6].filter((a): a is string => !!a).map((a) => a.split("/")[0]);
    const upstreams = ep.dnsUpstreams?.map((address) => ({ address }));
    this.dns.setNetworkName(net.id, net.name);
    this.dns.setEndpoint(net.id, ep.containerId, ep.dnsNames ?? [], addresses, upstreams, ep.linkAliases);
  }

  checkNetwork(net: NetworkSpec, others: readonly NetworkSpec[]): void {
    checkBridgeOptions(net.options);
    const isolated = bridgeOptions(net, this.ctx.config()).isolated;
    if ((isolated[4] || isolated[6]) && !net.internal) throw new Error("gateway mode 'isolated' can only be used for an internal network");
    // the daemon's own marks of the default network: on another they would leave its bridge behind
    for (const own of [OPT.external, OPT.defaultBridge]) if (own in net.options) throw new Error(`${own} is set by the daemon for its default network only`);
    const config = this.ctx.config();
    const bridge = bridgeOptions(net, config).bridge;
    const holder = others.find((o) => o.driver === this.name && bridgeOptions(o, config).bridge === bridge);
    if (holder) throw new Error(`bridge name ${bridge} is already used by network ${holder.name}`);
  }

  /**
   * Docker's rule: an isolated family has no gateway, and an internal network whose bridge has
   * no IPv4 address (`inhibit_ipv4`) has no use for one (no default route goes anywhere).
   */
  gatewayless(net: NetworkSpec): { 4: boolean; 6: boolean } {
    const o = bridgeOptions(net, this.ctx.config());
    return { 4: o.isolated[4] || (o.inhibitIpv4 && net.internal), 6: o.isolated[6] };
  }

  async deleteNetwork(net: NetworkSpec): Promise<void> {
    const o = bridgeOptions(net, this.ctx.config());
    const c = this.ctx.config();
    if (c.iptables || c.ip6tables) await this.fw().removeNetwork(this.rules(net));
    // never an interface the daemon did not make (`--bridge NAME`)
    if (!o.external && (this.madeBridges.has(net.id) || o.madeByDaemon)) await deleteLink(this.run, o.bridge);
    this.madeBridges.delete(net.id);
    if (this.nameservers.delete(net.id)) await this.dns?.close(net.id);
  }

  async join(net: NetworkSpec, ep: EndpointSpec, sandbox: string): Promise<JoinResult> {
    const o = bridgeOptions(net, this.ctx.config());
    await plugVeth(this.run, {
      bridge: o.bridge,
      mtu: o.mtu,
      sandbox,
      ifname: ep.ifname,
      mac: ep.mac,
      addresses: [ep.ipv4, ep.ipv6, ...(ep.linkLocal ?? [])].filter((a): a is string => !!a),
      // without the proxy, a container reaching its own published port comes back in by the
      // bridge port it left by: hairpin mode lets it (Docker's setHairpinMode)
      hairpin: !this.ctx.config()["userland-proxy"],
      gateway4: net.internal || ep.noDefaultRoute ? undefined : ep.gateway4,
      gateway6: net.internal || ep.noDefaultRoute ? undefined : ep.gateway6,
    });
    const held: Joined = { net, rules: [], proxies: [], published: [] };
    this.joined.set(ep.endpointId, held);
    try {
      const c = this.ctx.config();
      if (!o.icc && c.iptables && ep.legacyLinks?.length) await this.fw().addLinks(o.bridge, ep.legacyLinks);
      await this.publishRequests(held, ep, ep.ports);
    } catch (err) {
      await this.leave(net, ep, sandbox).catch(() => undefined);
      // Docker's words for a port it could not publish, which users search for
      throw new Error(`driver failed programming external connectivity on endpoint ${ep.containerName} (${ep.endpointId}): ${(err as Error).message}`, { cause: err });
    }
    this.registerNames(net, ep);
    return { published: held.published, nameserver: this.nameservers.get(net.id) };
  }

  /** The ports of a joined endpoint published: host ports chosen, proxies started, rules added. */
  private async publishRequests(held: Joined, ep: EndpointSpec, ports: readonly PortRequest[]): Promise<void> {
    const c = this.ctx.config();
    const o = bridgeOptions(held.net, c);
    for (const req of ports) {
      const hostIp = req.hostIp || o.hostBindingIpv4;
      let hostPort = 0;
      // a port asked as 0 is chosen here; one taken by something else is tried again with another
      for (let attempt = 0; ; attempt++) {
        hostPort = this.ports.allocate(req.proto, hostIp, req.hostPort, req.hostPortLast);
        try {
          await this.publishOne(held, ep, { proto: req.proto, containerPort: req.containerPort, hostIp, hostPort });
          break;
        } catch (err) {
          this.ports.release(req.proto, hostIp, hostPort);
          if (req.hostPort !== 0 || attempt >= 20) throw err;
        }
      }
      // As Docker: a port published on every address is on every IPv6 address too, with the
      // same host port (a failure fails the join, leave undoes it): to the container's IPv6
      // address, or through the userland proxy to its IPv4 one when it has none (Docker 28's
      // sortAndNormPBs; none without the proxy, nor on a host without IPv6)
      const toV4 = !ep.ipv6 && c["userland-proxy"] && req.proto !== "sctp";
      if (!req.hostIp && hostIp === "0.0.0.0" && (ep.ipv6 || (toV4 && (await (this.v6 ??= ipv6Listenable()))))) {
        this.ports.allocate(req.proto, "::", hostPort);
        await this.publishOne(held, ep, { proto: req.proto, containerPort: req.containerPort, hostIp: "::", hostPort });
      }
    }
  }

  /** What a joined endpoint published, released: proxies stopped, rules removed, host ports freed. */
  private async unpublishAll(held: Joined): Promise<void> {
    for (const proxy of held.proxies.splice(0)) await proxy.stop().catch(() => undefined);
    for (const rule of held.rules.splice(0)) await this.fw().removePort(rule).catch(() => undefined);
    for (const p of held.published.splice(0)) this.ports.release(p.proto, p.hostIp, p.hostPort);
  }

  /**
   * A joined endpoint's published ports, anew: those it had are released first ([] leaves it
   * none). For the ports following a container's gateway to another of its networks.
   */
  async publish(net: NetworkSpec, ep: EndpointSpec, ports: readonly PortRequest[]): Promise<PublishedPort[]> {
    const held = this.joined.get(ep.endpointId);
    if (!held) throw new Error(`endpoint ${ep.endpointId} is not joined to network ${net.name}`);
    await this.unpublishAll(held);
    try {
      await this.publishRequests(held, ep, ports);
    } catch (err) {
      await this.unpublishAll(held);
      throw new Error(`driver failed programming external connectivity on endpoint ${ep.containerName} (${ep.endpointId}): ${(err as Error).message}`, { cause: err });
    }
    return [...held.published];
  }

  private async publishOne(held: Joined, ep: EndpointSpec, p: PublishedPort): Promise<void> {
    const c = this.ctx.config();
    const o = bridgeOptions(held.net, c);
    const proxied = c["userland-proxy"] && p.proto !== "sctp";
    // an IPv6 host address reaches a container without IPv6 through the proxy alone, at its IPv4
    // address (Docker's, "to keep backward compatibility"): no NAT rule joins the two families
    const crossFamily = p.hostIp.includes(":") && !ep.ipv6 && proxied;
    const containerIp = (p.hostIp.includes(":") && !crossFamily ? ep.ipv6 : ep.ipv4)?.split("/")[0];
    if (!containerIp) throw new Error(`no ${p.hostIp.includes(":") ? "IPv6" : "IPv4"} address to publish ${p.containerPort}/${p.proto} to`);
    if (proxied) {
      const proxy = await startProxy(
        { proto: p.proto as "tcp" | "udp", hostIp: p.hostIp, hostPort: p.hostPort, containerIp, containerPort: p.containerPort },
        { path: c["userland-proxy-path"] || undefined },
      );
      held.proxies.push(proxy);
    }
    if ((c.iptables || c.ip6tables) && !crossFamily) {
      const rule: PortRule = { bridge: o.bridge, proto: p.proto, hostIp: p.hostIp, hostPort: p.hostPort, containerIp, containerPort: p.containerPort, loopback: !proxied };
      await this.fw().addPort(rule);
      held.rules.push(rule);
    }
    held.published.push(p);
  }

  async leave(net: NetworkSpec, ep: EndpointSpec, sandbox: string | undefined): Promise<void> {
    this.dns?.removeEndpoint(net.id, ep.containerId);
    const held = this.joined.get(ep.endpointId);
    this.joined.delete(ep.endpointId);
    const published = held?.published ?? ep.published ?? [];
    for (const proxy of held?.proxies ?? []) await proxy.stop().catch(() => undefined);
    for (const rule of held?.rules ?? []) await this.fw().removePort(rule).catch(() => undefined);
    for (const p of published) this.ports.release(p.proto, p.hostIp, p.hostPort);
    const c = this.ctx.config();
    const o = bridgeOptions(net, c);
    if (!o.icc && c.iptables && ep.ipv4) await this.fw().removeLinksOf(o.bridge, ep.ipv4.split("/")[0]).catch(() => undefined);
    // deleting the sandbox's end deletes the pair; a sandbox already gone took both with it
    if (sandbox) {
      await deleteLink(netnsRunner(sandbox), ep.ifname).catch(() => undefined);
    }
  }

  async unlink(net: NetworkSpec, link: LegacyLink): Promise<void> {
    const c = this.ctx.config();
    const o = bridgeOptions(net, c);
    if (!o.icc && c.iptables) await this.fw().removeLink(o.bridge, link);
  }

  async shutdown(): Promise<void> {
    for (const held of this.joined.values()) for (const proxy of held.proxies) await proxy.stop().catch(() => undefined);
    this.joined.clear();
    await this.dns?.closeAll();
    this.nameservers.clear();
  }
}

/** The subnets whose gateway address the bridge holds: not one without a gateway, nor an isolated family, nor IPv4 with inhibit_ipv4. */
function bridgeAddresses(net: NetworkSpec, o: BridgeOptions): NetworkSpec["subnets"] {
  return net.subnets.filter((s) => {
    const family = isIP(s.subnet.split("/")[0]) as 4 | 6;
    return s.gateway !== "" && !o.isolated[family] && !(family === 4 && o.inhibitIpv4);
  });
}
