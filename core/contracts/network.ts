/**
 * The network contract: how containers get a network, and how a network driver makes one.
 *
 * Vocabulary
 * - network: a named, local layer-2 domain with an id (64 hex), a driver (`bridge`), address
 *   management (subnets, each with its gateway and optional sub-range), driver options
 *   (`com.engine.network.bridge.name`, `com.engine.network.driver.mtu`...), labels, and
 *   `internal` (no way in or out). The daemon's default network is named `bridge` (the
 *   interface `engine0` unless `--bridge` names another); `host` and `none` are not networks a
 *   driver makes but modes of a container.
 * - sandbox: a container's network namespace, bound to a file under the exec root
 *   (`<exec-root>/netns/<container id>`). The daemon makes it before the container's process
 *   exists and names it in the OCI spec, so the process starts with its network ready; the
 *   binding outlives the process, so that everything can be released after an exit.
 * - endpoint: one container on one network: the interface name inside the sandbox (`eth0`), its
 *   addresses (CIDR form, `172.18.0.2/16`), MAC, default gateway, DNS names (container name,
 *   aliases, short id) and published ports.
 * - published port: a container port reachable on a host address and port (NAT rules and,
 *   with `--userland-proxy`, a proxy listening there).
 *
 * Lifecycle
 *   createNetwork (at daemon start for the default bridge; `POST /networks/create`) ->
 *   join(network, endpoint, sandbox) at each container start, and at `POST /networks/{id}/connect`
 *   of a running container (the daemon has already chosen the addresses; the driver makes the
 *   interfaces, routes and rules, binds the published ports, choosing host ports asked as 0, and
 *   registers the endpoint's DNS names with the network's name server, if it has one) -> leave
 *   at the container's exit, stop, removal or disconnect (safe twice, and with a sandbox that is
 *   already gone) -> deleteNetwork (`DELETE /networks/{id}`;
 *   never while an endpoint is joined; never deletes an interface the driver did not create).
 *   restore(networks, endpoints) once at start, before anything else: the networks and the
 *   endpoints of the containers still running (live restore), to take back what they hold
 *   (interfaces, rules, proxies, ports) and drop what no longer belongs to anything.
 *   shutdown() when the daemon stops: proxies stop; interfaces and rules stay (containers may
 *   keep running, and a restart finds them again).
 *
 * A driver may also be a server of another process speaking Docker's `NetworkDriver` protocol
 * (host/network/remote-network-driver.ts adapts it to this contract; host/remote-plugins finds it).
 *
 * Conformance: `networkConformance(name, makeDriver, abilities)` (test/network-conformance.ts)
 * tests these rules against a driver, built-in or a third party's, in network namespaces it makes.
 */

import type { DaemonConfig } from "../options/table.js";

/** One subnet of a network's address management, as `POST /networks/create` gives it (IPAM.Config). */
export interface SubnetConfig {
  /** CIDR: `172.18.0.0/16`, `fd00:1::/64`. */
  subnet: string;
  /**
   * The gateway's address in the subnet (no prefix length); empty when none is reserved, for a
   * network whose driver uses none (`gatewayless`).
   */
  gateway: string;
  /** Where dynamic addresses come from (Docker's IPRange, or `--fixed-cidr`). */
  ipRange?: string;
  /** Addresses that are never handed out, by name. */
  auxAddresses?: Record<string, string>;
  /**
   * Taken from the daemon's address pools, not given by the create request: a container cannot
   * ask for a fixed address in it (Docker's rule for subnets that are not "static").
   */
  fromPool?: boolean;
  /** The pool's id at the IPAM plugin that gave it (a network of `ipamDriver`). */
  poolId?: string;
}

export interface NetworkSpec {
  id: string;
  name: string;
  driver: string;
  created: string;
  internal: boolean;
  attachable: boolean;
  enableIPv4: boolean;
  enableIPv6: boolean;
  subnets: SubnetConfig[];
  options: Record<string, string>;
  /** `IPAM.Options` as the create gave them (the default IPAM driver reads none; an IPAM plugin gets them); inspect shows them. */
  ipamOptions?: Record<string, string> | null;
  /**
   * The IPAM plugin of another process that gave the network's pools and gives its containers'
   * addresses (`--ipam-driver`); absent: the daemon's own address management.
   */
  ipamDriver?: string;
  /** The plugin's address space the pools were asked in (what a network plugin is told). */
  ipamAddressSpace?: string;
  labels: Record<string, string>;
  /** The default network (`bridge`), made from the daemon's options, not by the API. */
  isDefault?: boolean;
}

export interface PortRequest {
  proto: "tcp" | "udp" | "sctp";
  containerPort: number;
  /** Empty: `--ip` (or the network's `host_binding_ipv4`), which defaults to 0.0.0.0. */
  hostIp: string;
  /** 0: any free port; a range `[first, last]` takes the first free one in it. */
  hostPort: number;
  hostPortLast?: number;
}

export interface PublishedPort {
  proto: "tcp" | "udp" | "sctp";
  containerPort: number;
  hostIp: string;
  hostPort: number;
}

export interface EndpointSpec {
  containerId: string;
  /** Without the leading slash. */
  containerName: string;
  networkId: string;
  endpointId: string;
  /** The interface inside the sandbox. */
  ifname: string;
  mac: string;
  /** The container asked for `mac` (else the daemon made it up from the address). */
  macAsked?: boolean;
  /** CIDR form. */
  ipv4?: string;
  ipv6?: string;
  /**
   * Extra link-local addresses (`IPAMConfig.LinkLocalIPs`), CIDR form with Docker's prefixes
   * (/16 for IPv4, /64 for IPv6).
   */
  linkLocal?: string[];
  /** Where the default route goes (the bridge's address unless `--default-gateway`); none on an internal network. */
  gateway4?: string;
  gateway6?: string;
  aliases: string[];
  /** True on a container's networks after its first: their gateways are not its default route. */
  noDefaultRoute?: boolean;
  ports: PortRequest[];
  /** What the ports became (host ports chosen), filled by `join`. */
  published?: PublishedPort[];
  /**
   * The names other containers of the network find this one by (container name, aliases, short
   * id, hostname: Docker's `DNSNames`); empty on the default network, which has no name service.
   */
  dnsNames?: string[];
  /** Where the network's name service sends this container's other questions (its resolv.conf's servers). */
  dnsUpstreams?: string[];
  /**
   * Legacy links on a user-defined network (`EndpointsConfig.Links`): names only this container
   * resolves, each an alias of another container's name on the network (`{ db: "postgres-1" }`).
   */
  linkAliases?: Record<string, string>;
  /**
   * Legacy links (`--link`, the default network) between this endpoint and other running
   * containers: with inter-container traffic off (`--icc=false`), the driver lets each parent
   * reach its child's exposed ports, and their replies back.
   */
  legacyLinks?: LegacyLink[];
}

/** A legacy link as addresses: the parent may reach the child's exposed ports (`80/tcp`). */
export interface LegacyLink {
  parentIp: string;
  childIp: string;
  ports: string[];
}

/** What `join` made. */
export interface JoinResult {
  /** The published ports, host ports chosen. */
  published: PublishedPort[];
  /**
   * The address of a name server that answers the network's container names (and forwards the
   * rest to `dnsUpstreams`); the container's resolv.conf names only it. Undefined: the network
   * has none, and the container gets the host's servers.
   */
  nameserver?: string;
  /**
   * The MAC the container's interface has, when the driver decided it (a plugin that brings
   * its own interface keeps that interface's MAC unless the container asked for one): what the
   * endpoint shows from now on; "" when it is none of the daemon's business, as Docker shows it.
   */
  mac?: string;
}

/** What a network plugin's factory is given. */
export interface NetworkContext {
  /** The daemon's configuration now (reloads change it). */
  config: () => DaemonConfig;
  /**
   * Short and the same across restarts of one daemon (made from its exec root): for names the
   * driver puts in shared places (iptables chains), so that two daemons never touch each other's.
   */
  tag: string;
  execRoot: string;
  /** The daemon's log, for what the driver does not fail on but an operator should know. */
  log?: { warn(obj: object, msg: string): void };
}

export interface NetworkDriver {
  /** The name networks select it by (`bridge`). */
  readonly name: string;
  restore(networks: readonly NetworkSpec[], endpoints: readonly EndpointSpec[]): Promise<void>;
  /** Makes (or, for an existing interface named by `--bridge`, takes over) the network's bridge and rules; idempotent. */
  createNetwork(net: NetworkSpec): Promise<void>;
  deleteNetwork(net: NetworkSpec): Promise<void>;
  /** Joins the sandbox at `sandbox` to the network (another interface when it is on others already). */
  join(net: NetworkSpec, ep: EndpointSpec, sandbox: string): Promise<JoinResult>;
  leave(net: NetworkSpec, ep: EndpointSpec, sandbox: string | undefined): Promise<void>;
  /**
   * Before `POST /networks/create` makes anything: throws an Error naming what the driver cannot
   * do with this network (a bad value of an option it reads, a bridge name another network has).
   * An option it does not read is not refused: it stays in the network's Options, unused, as
   * Docker's drivers read only the labels they know (clients send options meant for others).
   */
  checkNetwork?(net: NetworkSpec, others: readonly NetworkSpec[]): void;
  /**
   * After `checkNetwork`, before anything is made: the families of a new network that need no
   * gateway address (Docker's GwAllocChecker). Their subnets get none reserved, unless the
   * request named one; a join then gets no default route in them.
   */
  gatewayless?(net: NetworkSpec): { 4: boolean; 6: boolean };
  /** A legacy link between two joined endpoints was removed (`DELETE /containers/{parent}/{alias}?link=1`): close what it opened. */
  unlink?(net: NetworkSpec, link: LegacyLink): Promise<void>;
  /**
   * A joined endpoint's container was renamed (`POST /containers/{id}/rename`): `containerName`
   * and `dnsNames` are the new ones. The network answers them from now on, and no longer the
   * old ones, as Docker's sandbox Rename does. A driver without it keeps the old names until the
   * container joins again.
   */
  rename?(net: NetworkSpec, ep: EndpointSpec): Promise<void>;
  /**
   * Publishes a joined endpoint's ports anew, releasing those it published before (`[]` leaves it
   * none), and resolves with what it published. The daemon calls it when a connect or a
   * disconnect moves the container's gateway to another of its networks: published ports go
   * with the gateway, as Docker's do. A driver without it keeps the ports where they were joined.
   */
  publish?(net: NetworkSpec, ep: EndpointSpec, ports: readonly PortRequest[]): Promise<PublishedPort[]>;
  shutdown(): Promise<void>;
}
