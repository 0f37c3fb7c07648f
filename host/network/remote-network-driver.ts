/**
 * A network driver served by another process: a plugin written for Docker's daemon
 * (`NetworkDriver` in its `Plugin.Activate` answer; libnetwork's "remote" driver protocol),
 * found by name as host/remote-plugins describes. The plugin makes the network's links; the
 * daemon keeps the addresses (its own address management, or the network's IPAM plugin:
 * remote-ipam.ts) and the container's side:
 *
 *   createNetwork -> CreateNetwork {NetworkID, Options, IPv4Data, IPv6Data}
 *   deleteNetwork -> DeleteNetwork {NetworkID}
 *   join -> CreateEndpoint {NetworkID, EndpointID, Interface: {Address, AddressIPv6, MacAddress}, Options}
 *           Join {NetworkID, EndpointID, SandboxKey, Options}: the interface the plugin made
 *             (`InterfaceName.SrcName`) is moved into the container's namespace and named
 *             `<DstPrefix><n>`, given its addresses, and the plugin's gateway and static routes
 *           ProgramExternalConnectivity {NetworkID, EndpointID, Options} (optional: ports)
 *           EndpointOperInfo {NetworkID, EndpointID} (optional: the ports it published)
 *   leave -> RevokeExternalConnectivity (optional), the interface given back to the host's
 *            namespace under its name, Leave, DeleteEndpoint
 *
 * The network's names are the daemon's: its embedded name server answers them at 127.0.0.11 in
 * each container's namespace (plugin-name-server.ts), as Docker's resolver serves every
 * user-defined network whatever its driver.
 *
 * An answer's non-empty `Err` fails the call as `remote: <Err>`, Docker's words. A failed join
 * undoes what it did (Leave, DeleteEndpoint), so nothing is left in the plugin or the sandbox.
 * The plugin keeps its own state across restarts of either side; `restore` asks it nothing
 * (the name servers of running containers start again).
 *
 * Not done, where Docker's daemon does more: the `docker_gwbridge` a global-scope driver's
 * endpoint without a gateway gets.
 */
import type { EndpointSpec, JoinResult, NetworkDriver, NetworkSpec, PortRequest, PublishedPort } from "../../core/contracts/network.js";
import { hostRunner, netnsRunner } from "../../core/net/commands.js";
import { optional } from "../remote-plugins/client.js";
import type { RemotePlugin } from "../remote-plugins/remote-plugins.js";
import type { PluginNameServer } from "./plugin-name-server.js";

export const NETWORK_DRIVER_INTERFACE = "NetworkDriver";

/** IP protocol numbers, as libnetwork's port maps carry them. */
const PROTO_NUMBER = { tcp: 6, udp: 17, sctp: 132 } as const;
const PROTO_NAME: Record<number, PublishedPort["proto"]> = { 6: "tcp", 17: "udp", 132: "sctp" };

interface JoinAnswer {
  InterfaceName?: { SrcName?: unknown; DstPrefix?: unknown } | null;
  Gateway?: unknown;
  GatewayIPv6?: unknown;
  StaticRoutes?: { Destination?: unknown; RouteType?: unknown; NextHop?: unknown }[] | null;
}

/** What a joined endpoint needs at its leave: the name its interface had on the host. */
interface Joined {
  srcName: string;
}

export class RemoteNetworkDriver implements NetworkDriver {
  private readonly joined = new Map<string, Joined>();

  private constructor(
    readonly name: string,
    /** `local` or `global`, as the plugin declared it. */
    readonly scope: string,
    private readonly plugin: RemotePlugin,
    private readonly names: PluginNameServer,
    private readonly warn: (obj: object, msg: string) => void,
  ) {}

  /**
   * The driver, once the plugin is active, serves networks, and has declared a valid scope.
   * `names`: the name server of every plugin's networks; `warn`: the daemon's log.
   */
  static async open(plugin: RemotePlugin, names: PluginNameServer, warn: (obj: object, msg: string) => void): Promise<RemoteNetworkDriver> {
    await plugin.activation.require(NETWORK_DRIVER_INTERFACE);
    const caps = await call<{ Scope?: unknown }>(plugin, "GetCapabilities", {});
    // Docker's daemon refuses a driver that declares anything else
    if (caps.Scope !== "local" && caps.Scope !== "global") throw new Error(`invalid capability: expecting 'local' or 'global', got ${String(caps.Scope ?? "")}`);
    return new RemoteNetworkDriver(plugin.name, caps.Scope, plugin, names, warn);
  }

  /** The plugin keeps its networks and endpoints itself; the name server of running containers' is started again. */
  async restore(networks: readonly NetworkSpec[], endpoints: readonly EndpointSpec[]): Promise<void> {
    for (const ep of endpoints as readonly (EndpointSpec & { sandbox?: string; nameserver?: string })[]) {
      const net = networks.find((n) => n.id === ep.networkId);
      if (net && ep.sandbox && ep.nameserver) await this.nameServer(net, ep, ep.sandbox);
    }
  }

  /** The container's name server at 127.0.0.11; undefined, and the log says why, when it cannot listen there (the container gets its upstreams instead, as Docker's does). */
  private async nameServer(net: NetworkSpec, ep: EndpointSpec, sandbox: string): Promise<string | undefined> {
    try {
      return await this.names.join(net, ep, sandbox);
    } catch (err) {
      this.warn({ err: (err as Error).message, network: net.name, container: ep.containerId }, "no embedded name server for the container on a plugin's network");
      return undefined;
    }
  }

  async rename(net: NetworkSpec, ep: EndpointSpec): Promise<void> {
    this.names.register(net, ep);
  }

  async createNetwork(net: NetworkSpec): Promise<void> {
    const data = (family: 4 | 6) =>
      net.subnets
        .filter((s) => s.subnet.includes(":") === (family === 6))
        .map((s) => {
          const prefix = s.subnet.split("/")[1];
          return {
            // (the IPAM plugin's, for a network whose pools one gave)
            AddressSpace: net.ipamAddressSpace ?? "LocalDefault",
            Pool: s.subnet,
            ...(s.gateway ? { Gateway: `${s.gateway}/${prefix}` } : {}),
            AuxAddresses: Object.fromEntries(Object.entries(s.auxAddresses ?? {}).map(([k, a]) => [k, `${a}/${prefix}`])),
          };
        });
    await call(this.plugin, "CreateNetwork", {
      NetworkID: net.id,
      Options: {
        "com.docker.network.enable_ipv4": net.enableIPv4,
        "com.docker.network.enable_ipv6": net.enableIPv6,
        "com.docker.network.generic": net.options,
        ...(net.internal ? { "com.docker.network.internal": true } : {}),
      },
      IPv4Data: data(4),
      IPv6Data: data(6),
    });
  }

  async deleteNetwork(net: NetworkSpec): Promise<void> {
    await call(this.plugin, "DeleteNetwork", { NetworkID: net.id });
  }

  async join(net: NetworkSpec, ep: EndpointSpec, sandbox: string): Promise<JoinResult> {
    const ids = { NetworkID: net.id, EndpointID: ep.endpointId };
    const options = portOptions(ep.ports);
    const created = await call<{ Interface?: { Address?: unknown; AddressIPv6?: unknown; MacAddress?: unknown } | null }>(this.plugin, "CreateEndpoint", {
      ...ids,
      // a MAC only when the container asked for one, as Docker's daemon sends it
      Interface: { Address: ep.ipv4 ?? "", AddressIPv6: ep.ipv6 ?? "", MacAddress: ep.macAsked ? ep.mac : "" },
      Options: options,
    });
    let joined = false;
    try {
      const given = created.Interface ?? {};
      // the daemon chose the addresses: a plugin may fill one it was not given, not change one
      for (const [key, mine] of [["Address", ep.ipv4], ["AddressIPv6", ep.ipv6]] as const) {
        const theirs = typeof given[key] === "string" ? (given[key] as string) : "";
        if (theirs && mine && theirs !== mine) throw new Error(`driver modified interface address: ${theirs} is not ${mine}`);
      }
      const ipv4 = ep.ipv4 || (typeof given.Address === "string" && given.Address) || undefined;
      const ipv6 = ep.ipv6 || (typeof given.AddressIPv6 === "string" && given.AddressIPv6) || undefined;
      // the plugin's interface keeps its own MAC unless the container or the plugin named one
      const mac = typeof given.MacAddress === "string" && given.MacAddress ? given.MacAddress : ep.macAsked ? ep.mac : "";
      const answer = await call<JoinAnswer>(this.plugin, "Join", { ...ids, SandboxKey: sandbox, Options: options });
      joined = true;
      const srcName = typeof answer.InterfaceName?.SrcName === "string" ? answer.InterfaceName.SrcName : "";
      if (!srcName) throw new Error("the plugin named no interface to move into the container (InterfaceName.SrcName)");
      const prefix = typeof answer.InterfaceName?.DstPrefix === "string" && answer.InterfaceName.DstPrefix ? answer.InterfaceName.DstPrefix : "eth";
      // the daemon numbers a container's interfaces (eth0, eth1...); the plugin names their prefix
      const ifname = prefix + (/\d+$/.exec(ep.ifname)?.[0] ?? "0");
      const gateways = net.internal || ep.noDefaultRoute ? {} : { gateway4: str(answer.Gateway), gateway6: str(answer.GatewayIPv6) };
      await plugInterface(sandbox, { srcName, ifname, mac, addresses: [ipv4, ipv6, ...(ep.linkLocal ?? [])].filter((a): a is string => !!a), routes: answer.StaticRoutes ?? [], ...gateways });
      this.joined.set(ep.endpointId, { srcName });
      await optional(call(this.plugin, "ProgramExternalConnectivity", { ...ids, Options: options }));
      const info = await optional(call<{ Value?: Record<string, unknown> | null }>(this.plugin, "EndpointOperInfo", ids));
      return { published: publishedFrom(info?.Value?.["com.docker.network.portmap"]), mac, nameserver: await this.nameServer(net, ep, sandbox) };
    } catch (err) {
      await this.undoJoin(net, ep, sandbox, joined);
      throw err;
    }
  }

  private async undoJoin(net: NetworkSpec, ep: EndpointSpec, sandbox: string | undefined, joined: boolean): Promise<void> {
    const ids = { NetworkID: net.id, EndpointID: ep.endpointId };
    const held = this.joined.get(ep.endpointId);
    this.joined.delete(ep.endpointId);
    await this.names.leave(net, ep).catch(() => undefined);
    if (held && sandbox) await giveBack(sandbox, ep.ifname, held.srcName).catch(() => undefined);
    if (joined) await call(this.plugin, "Leave", ids).catch(() => undefined);
    await call(this.plugin, "DeleteEndpoint", ids).catch(() => undefined);
  }

  async leave(net: NetworkSpec, ep: EndpointSpec, sandbox: string | undefined): Promise<void> {
    const ids = { NetworkID: net.id, EndpointID: ep.endpointId };
    await this.names.leave(net, ep);
    await optional(call(this.plugin, "RevokeExternalConnectivity", ids)).catch(() => undefined);
    const held = this.joined.get(ep.endpointId);
    this.joined.delete(ep.endpointId);
    // (after a restart of the daemon the host name is not known: the interface goes with the sandbox)
    if (held && sandbox) await giveBack(sandbox, ep.ifname, held.srcName).catch(() => undefined);
    await call(this.plugin, "Leave", ids);
    await call(this.plugin, "DeleteEndpoint", ids);
  }

  async shutdown(): Promise<void> {
    // nothing held: the plugin's connections close when idle
  }
}

/** `NetworkDriver.<method>`: the answer, or its `Err` as the failure in Docker's words. */
async function call<T>(plugin: RemotePlugin, method: string, body: Record<string, unknown>): Promise<T> {
  const answer = (await plugin.client.call(`${NETWORK_DRIVER_INTERFACE}.${method}`, body)) as T & { Err?: unknown };
  if (typeof answer.Err === "string" && answer.Err !== "") throw new Error(`remote: ${answer.Err}`);
  return answer;
}

function str(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** The endpoint's ports as libnetwork hands them to drivers. */
function portOptions(ports: readonly PortRequest[]): Record<string, unknown> {
  return {
    "com.docker.network.endpoint.exposedports": ports.map((p) => ({ Proto: PROTO_NUMBER[p.proto], Port: p.containerPort })),
    "com.docker.network.portmap": ports.map((p) => ({
      Proto: PROTO_NUMBER[p.proto],
      IP: "",
      Port: p.containerPort,
      HostIP: p.hostIp,
      HostPort: p.hostPort,
      HostPortEnd: p.hostPortLast ?? p.hostPort,
    })),
  };
}

/** The ports a plugin says it published (`EndpointOperInfo`'s port map). */
function publishedFrom(value: unknown): PublishedPort[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((m) => m && typeof m === "object" && PROTO_NAME[(m as { Proto?: number }).Proto ?? 0] && Number((m as { HostPort?: number }).HostPort) > 0)
    .map((m: { Proto: number; Port?: number; HostIP?: string; HostPort: number }) => ({
      proto: PROTO_NAME[m.Proto],
      containerPort: Number(m.Port ?? 0),
      hostIp: m.HostIP || "0.0.0.0",
      hostPort: Number(m.HostPort),
    }));
}

interface PlugSpec {
  srcName: string;
  ifname: string;
  /** "": the interface keeps its own. */
  mac: string;
  addresses: string[];
  routes: NonNullable<JoinAnswer["StaticRoutes"]>;
  gateway4?: string;
  gateway6?: string;
}

/** libnetwork's route types: 0 through a next hop, 1 on the link. */
const ROUTE_NEXTHOP = 0;

/** The plugin's interface, moved into the sandbox and set up there as the container's `ifname`. */
async function plugInterface(sandbox: string, spec: PlugSpec): Promise<void> {
  await hostRunner("ip", ["link", "set", "dev", spec.srcName, "netns", sandbox]);
  const lines = [`link set ${spec.srcName} name ${spec.ifname}`, ...(spec.mac ? [`link set ${spec.ifname} address ${spec.mac}`] : [])];
  for (const a of spec.addresses) lines.push(`addr add ${a} dev ${spec.ifname}${a.includes(":") ? " nodad" : ""}`);
  lines.push(`link set ${spec.ifname} up`);
  for (const r of spec.routes) {
    const dest = str(r.Destination);
    if (!dest) continue;
    const hop = str(r.NextHop);
    lines.push(Number(r.RouteType) === ROUTE_NEXTHOP && hop ? `route add ${dest} via ${hop} dev ${spec.ifname}` : `route add ${dest} dev ${spec.ifname}`);
  }
  if (spec.gateway4) lines.push(`route add default via ${spec.gateway4} dev ${spec.ifname}`);
  if (spec.gateway6) lines.push(`route add default via ${spec.gateway6} dev ${spec.ifname}`);
  // As on the daemon's own networks: no IPv6 on an interface without an IPv6 address (no
  // link-local address, no router advertisements taken from the network)
  const noIpv6 = !spec.addresses.some((a) => a.includes(":"));
  const script = `${noIpv6 ? 'f=/proc/sys/net/ipv6/conf/$1/disable_ipv6; if [ -e "$f" ]; then echo 1 > "$f" || exit 1; fi; ' : ""}exec ip -batch -`;
  try {
    await netnsRunner(sandbox)("sh", ["-c", script, "sh", spec.srcName], { input: lines.join("\n") + "\n" });
  } catch (err) {
    await giveBack(sandbox, spec.ifname, spec.srcName).catch(() => undefined);
    await giveBack(sandbox, spec.srcName, spec.srcName).catch(() => undefined);
    throw new Error(`cannot set up the plugin's interface ${spec.srcName} in the container: ${(err as Error).message}`, { cause: err });
  }
}

/** The interface given back to the daemon's own namespace (not always the host's) under the name the plugin gave it. */
async function giveBack(sandbox: string, ifname: string, srcName: string): Promise<void> {
  const home = `/proc/${process.pid}/ns/net`;
  await netnsRunner(sandbox)("ip", ["-batch", "-"], { input: `link set ${ifname} down\nlink set ${ifname} name ${srcName}\nlink set ${srcName} netns ${home}\n` });
}
