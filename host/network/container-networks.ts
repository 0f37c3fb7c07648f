/**
 * Containers' networks, as the daemon runs them: which networks a container is on (chosen at
 * create from its NetworkMode and EndpointsConfig, changed by connect and disconnect), its
 * sandbox, addresses, interfaces and published ports while it runs, their release at exit,
 * and the files that name its network (`/etc/hosts`, `/etc/resolv.conf`, `/etc/hostname`, kept in
 * the container's folder and bind-mounted, as Docker does).
 *
 * Order at a container's start: sandbox -> per network, in order: addresses (the daemon's own
 * address management, or the network's IPAM plugin, asked: remote-ipam.ts) ->
 * driver.join (`eth0` for the first, which takes the default route and the published ports;
 * `eth1`... for the others, or the names their endpoints ask for: interface-names.ts) -> both
 * moved to the gateway by Docker's order, when that is another (default-route.ts) -> files ->
 * the OCI spec names the sandbox and mounts the files
 * (`processSpec`). At its end (exit, failed start, removal): driver.leave -> addresses released
 * -> sandbox removed. Both are safe to repeat.
 */
import { randomBytes } from "node:crypto";
import { isIP } from "node:net";
import type { Logger } from "pino";
import type { LegacyLink, PortRequest } from "../../core/contracts/network.js";
import type { OciSpec } from "../../core/contracts/runtime.js";
import type { ContainerEndpoint, ContainerRecord, ContainerStore, NetworkAttachment } from "../../core/containers/container-store.js";
import { parseLink } from "../../core/containers/links.js";
import { networkDisabled } from "../../core/containers/network-disabled.js";
import { errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import { AddressError, Cidr } from "../../core/network/cidr.js";
import { NetworkIpam } from "../../core/network/ipam.js";
import type { EndpointConfigRequest } from "../../core/network/network-request.js";
import { containerResolvConf } from "../../core/network/resolv-conf.js";
import type { DaemonConfig } from "../../core/options/table.js";
import { containerFiles, hostResolvConf, networkFilePaths, type FilePaths } from "./container-files.js";
import { DEFAULT_NETWORK, isModeNetwork, MODE_NETWORKS, type NetworkManager } from "./network-manager.js";
import type { NetworkRecord } from "./network-store.js";
import { addressFailure } from "./new-network.js";
import type { Sandboxes } from "./sandbox.js";
import { networkEvent } from "./network-events.js";
import { EMBEDDED_DNS_ADDRESS, pointEmbeddedDns } from "./embedded-dns.js";
import { containerIdMap, type UsernsRemap } from "../userns/remap.js";
import { askedIfname, checkAskedIfnames, checkIfnameFree, interfaceName } from "./interface-names.js";
import { applyEndpointSysctls, endpointSysctls } from "./endpoint-sysctls.js";
import { moveDefaultRoutes, portsEndpoint } from "./default-route.js";
import { RemoteIpam } from "./remote-ipam.js";

export interface ContainerNetworksDeps {
  networks: NetworkManager;
  sandboxes: Sandboxes;
  containers: ContainerStore;
  hooks: EngineHooks;
  config: () => DaemonConfig;
  log: Logger;
  /** `--userns-remap`: remapped containers get a network namespace their user namespace owns, and the files are the remapped root's. */
  remap?: UsernsRemap;
  /** The `/etc/hosts` lines of a container's legacy links (host/containers/links.ts). */
  linkedHosts?: (c: ContainerRecord) => (readonly [string, string])[];
  /** The running containers linked with one on the default network, both ways (host/containers/links.ts). */
  linkPeers?: (c: ContainerRecord) => { children: ContainerRecord[]; parents: ContainerRecord[] };
}

/** What an endpoint has before its addresses: its id, and what was read (and checked) of its settings. */
interface EndpointStart {
  endpointId: string;
  links: { linkAliases?: Record<string, string> };
  linkLocal: string[];
  /** The MAC asked for (or one an IPAM plugin was given). */
  mac?: string;
}

/** One address of an endpoint: bare, with its prefix, and the default route it gives. */
interface EndpointAddress {
  address: string;
  cidr: string;
  gateway: string;
}

/** What a started container's spec needs from its network. */
interface Prepared {
  /** The namespace file to join; null: the host's namespace; undefined: a fresh empty one. */
  netns?: string | null;
  /** The user namespace that owns `netns`, for a remapped container to join (undefined: its own, made by the runtime). */
  userns?: string;
  files: FilePaths;
  /** Only `/etc/hostname` is mounted (a container with `NetworkDisabled` keeps the image's hosts and resolv.conf). */
  hostnameOnly?: boolean;
  /** The `host` or `none` network the container is on (announced at attach, and at release). */
  modeNetwork?: NetworkRecord;
}

export class ContainerNetworks {
  private readonly prepared = new Map<string, Prepared>();
  /** Endpoints whose driver join failed: their leave is no `disconnect` (there was no `connect`). */
  private readonly unjoined = new Set<string>();
  /** Running containers that joined the none network beside their mode (announced again at release). */
  private readonly onNone = new Set<string>();

  constructor(private readonly deps: ContainerNetworksDeps) {}

  /**
   * After the networks' `start`: sandboxes no running container owns are removed, and addresses
   * held for endpoints no running container has (a start a crash cut short after its addresses
   * were taken) given back; the spec tap.
   */
  async start(): Promise<void> {
    for (const id of this.deps.sandboxes.list()) {
      const c = this.deps.containers.find(id);
      if (!c?.State.Running) await this.release(id).catch((err: Error) => this.deps.log.warn({ err, container: id }, "cannot remove a stale network sandbox"));
    }
    const live = new Set(this.deps.containers.list().filter((c) => c.State.Running).flatMap((c) => (c.Endpoints ?? []).map((ep) => ep.endpointId)));
    for (const rec of this.deps.networks.list()) {
      const ipam = NetworkIpam.fromJSON(rec.ipam);
      const stale = [...new Set(ipam.allocations().map((a) => a.owner))].filter((owner) => owner && !live.has(owner));
      if (stale.length === 0) continue;
      for (const owner of stale) ipam.releaseOwner(owner);
      rec.ipam = ipam.toJSON();
      await this.deps.networks.save(rec);
      this.deps.log.info({ network: rec.spec.name, endpoints: stale }, "gave back the addresses of endpoints a crash left");
    }
    this.deps.hooks.processSpec.tapPromise("network", async (spec, ctx) => this.applyToSpec(spec, ctx.containerId));
  }

  // --- create -----------------------------------------------------------------------------------

  /**
   * The networks a new container is on, from its NetworkMode (already `bridge` for the default)
   * and `NetworkingConfig.EndpointsConfig` (keyed by network name or id), NetworkMode's first.
   * Checked as Docker checks them: networks that exist, no other network beside `host`, `none`
   * or `container:`, and no alias or fixed address on the default network.
   */
  attachmentsFor(mode: string, endpointsConfig: Record<string, EndpointConfigRequest | null | undefined>): Record<string, NetworkAttachment> | undefined {
    const shared = mode in MODE_NETWORKS || mode.startsWith("container:");
    const asked = Object.keys(endpointsConfig);
    if (shared) {
      if (asked.some((k) => k !== mode)) throw errors.networkModeConflict(mode);
      if (!(mode in MODE_NETWORKS)) return undefined;
      const rec = this.deps.networks.network(mode);
      attachment(rec, endpointsConfig[mode] ?? {}); // checked as any network's settings; none kept
      return { [mode]: { NetworkID: rec.spec.id } };
    }
    // A network that does not exist (yet) is an error of the start, not of the create, as in
    // Docker: a 404 here would make the Docker CLI try to pull the image.
    const out: Record<string, NetworkAttachment> = {};
    const pairs: [string, EndpointConfigRequest][] = [[mode, endpointsConfig[mode] ?? {}], ...asked.filter((k) => k !== mode).map((k): [string, EndpointConfigRequest] => [k, endpointsConfig[k] ?? {}])];
    for (const [ref, config] of pairs) {
      const rec = this.deps.networks.find(ref);
      const name = rec?.spec.name ?? ref;
      // the same network named twice (by name and by id): the one with settings counts
      if (out[name] && Object.keys(config).length === 0) continue;
      if (rec && isModeNetwork(rec.spec)) throw errors.networkModeConflict(rec.spec.name);
      out[name] = rec ? attachment(rec, config) : { ...attachmentFields(config), NetworkID: "" };
    }
    return out;
  }

  // --- a container's run ------------------------------------------------------------------------

  /** The mode a container's NetworkMode means here (`default` and empty are the default network, or none without one). */
  modeOf(c: Pick<ContainerRecord, "HostConfig">): string {
    const mode = c.HostConfig.NetworkMode ?? "";
    if (mode === "" || mode === "default") return this.deps.config().bridge === "none" ? "none" : DEFAULT_NETWORK;
    return mode;
  }

  private filePaths(id: string): FilePaths {
    return networkFilePaths(this.deps.containers.dir(id));
  }

  /** The networks a container joins, in order (records from before `Networks` existed: NetworkMode's). */
  private attachmentsOf(c: ContainerRecord): [string, NetworkAttachment][] {
    if (c.Networks) return Object.entries(c.Networks);
    const mode = this.modeOf(c);
    return [[mode, { NetworkID: this.deps.networks.network(mode).spec.id }]];
  }

  /**
   * The order a starting container joins its networks in: the one that gives the default route
   * (`eth0`, with the published ports) first. That is the one of the highest GwPriority (API
   * 1.48); of equal priorities, the first, NetworkMode's.
   */
  private joinOrder(c: ContainerRecord): [string, NetworkAttachment][] {
    const all = this.attachmentsOf(c);
    const top = all.reduce((best, entry, i) => ((entry[1].GwPriority ?? 0) > (all[best][1].GwPriority ?? 0) ? i : best), 0);
    return top === 0 ? all : [all[top], ...all.filter((_, i) => i !== top)];
  }

  /** Before the bundle is written: the container's network made, its files written. */
  async attach(c: ContainerRecord): Promise<void> {
    const mode = this.modeOf(c);
    const files = this.filePaths(c.Id);
    c.Endpoints = undefined;
    // (a client's own NetworkDisabled gives the hostname alone, whatever the daemon has)
    if (!networkDisabled(c) && this.onNoDefaultNetwork(c)) {
      // `--bridge none` made no default network: a container asking for it runs with its loopback
      // alone, as Docker's daemon runs it (its connectToNetwork sets Config.NetworkDisabled, which
      // the container keeps), whatever other network it names
      c.Config.NetworkDisabled = true;
      c.NetworkDisabledByDaemon = true;
    }
    const noDefault = c.NetworkDisabledByDaemon === true;
    if (networkDisabled(c)) {
      // Docker's Config.NetworkDisabled: a namespace of its own with its loopback alone, on no
      // network (no events), and of the three files its /etc/hostname only; disabled for want of
      // a default network, it keeps the three, as dockerd gives them (/etc/hosts and resolv.conf as none's)
      this.writeFiles(c, files, "none", undefined);
      this.prepared.set(c.Id, { netns: undefined, files, ...(noDefault ? {} : { hostnameOnly: true }) });
      return;
    }
    // (a container of the none mode that was taken off none, or put on another network since,
    // runs on the networks it is on now, as Docker's start connects those)
    if (mode === "host" || (mode === "none" && (!c.Networks || Object.keys(c.Networks).join() === "none"))) {
      if (mode === "host") await this.deps.sandboxes.hostLoopbackUp();
      this.writeFiles(c, files, mode, undefined);
      // Docker's host and none are networks a container joins too, with their events
      const modeNetwork = this.deps.networks.find(mode);
      this.prepared.set(c.Id, { netns: mode === "host" ? null : undefined, files, modeNetwork });
      if (modeNetwork) this.deps.hooks.event.call(networkEvent(modeNetwork.spec, "connect", c.Id));
      return;
    }
    const idMap = containerIdMap(this.deps.remap, c.HostConfig);
    if (mode.startsWith("container:")) {
      const other = this.deps.containers.get(mode.slice("container:".length));
      if (other.Id === c.Id) throw errors.networkJoinOwn();
      if (!other.State.Running) throw errors.networkContainerNotRunning(other.Name, other.State.Status);
      const theirs = this.prepared.get(other.Id);
      // A remapped container joins the other's user namespace too, as Docker does: its network
      // namespace belongs to that one.
      const userns = this.deps.sandboxes.hasUserns(other.Id) ? this.deps.sandboxes.usernsPath(other.Id) : `/proc/${other.State.Pid}/ns/user`;
      this.prepared.set(c.Id, {
        netns: this.deps.sandboxes.exists(other.Id) ? this.deps.sandboxes.path(other.Id) : theirs?.netns === null ? null : `/proc/${other.State.Pid}/ns/net`,
        ...(idMap ? { userns } : {}),
        files: theirs?.files ?? this.filePaths(other.Id),
      });
      return;
    }
    const order = this.joinOrder(c);
    checkAskedIfnames(order);
    const reserved = new Set(order.map(([, att]) => askedIfname(att)).filter((n): n is string => !!n));
    const sandbox = await this.deps.sandboxes.create(c.Id, idMap);
    const endpoints: ContainerEndpoint[] = [];
    c.Endpoints = endpoints;
    try {
      let nameserver: string | undefined;
      for (const [name, att] of order) {
        const ns = await this.join(c, name, att, sandbox, endpoints, reserved);
        nameserver ??= ns;
      }
      // the first joined took the route and the ports; another may be the gateway by Docker's
      // order (with one network, none: no need to ask the sandbox for its routes)
      if (endpoints.length > 1) await this.moveGateway(c, true);
      this.writeFiles(c, files, mode, nameserver && (await this.resolverAddress(c, sandbox, nameserver, true)));
      this.prepared.set(c.Id, { netns: sandbox, ...(idMap ? { userns: this.deps.sandboxes.usernsPath(c.Id) } : {}), files });
    } catch (err) {
      await this.leaveAll(c, sandbox);
      await this.deps.sandboxes.remove(c.Id).catch(() => undefined);
      throw addressFailure(err);
    }
  }

  /** Whether the container names the default network of a daemon that has none (`--bridge none`). */
  private onNoDefaultNetwork(c: ContainerRecord): boolean {
    if (this.deps.config().bridge !== "none" || this.deps.networks.find(DEFAULT_NETWORK)) return false;
    const names = c.Networks ? Object.keys(c.Networks) : [c.HostConfig.NetworkMode ?? ""];
    return names.includes(DEFAULT_NETWORK);
  }

  /** One network joined by a sandbox: addresses, the driver's join; pushes the endpoint; resolves with the network's name server. */
  private async join(c: ContainerRecord, name: string, att: NetworkAttachment, sandbox: string, endpoints: ContainerEndpoint[], reserved: ReadonlySet<string>): Promise<string | undefined> {
    // by id, else by name (a network made again under the same name after the create)
    const rec = (att.NetworkID && this.deps.networks.find(att.NetworkID)) || this.deps.networks.network(name);
    if (isModeNetwork(rec.spec) && rec.spec.name === "none") {
      // none put beside the mode (after every other network went): its null endpoint adds nothing to the namespace
      this.onNone.add(c.Id);
      this.deps.hooks.event.call(networkEvent(rec.spec, "connect", c.Id));
      return undefined;
    }
    const first = endpoints.length === 0;
    const ifname = interfaceName(att, endpoints, reserved);
    // (an IPAM plugin's addresses are asked for; the daemon's own are taken at once)
    const ep = rec.spec.ipamDriver ? await this.allocateRemote(rec, c, att, ifname, first) : this.allocate(rec, c, att, ifname, first);
    ep.sandbox = sandbox;
    endpoints.push(ep);
    let result;
    try {
      // the addresses taken are on disk before the endpoint is made (the starts of a burst
      // taking addresses of one network share its writes)
      await this.deps.networks.save(rec);
      result = await (await this.deps.networks.driverOf(rec.spec)).join(rec.spec, ep, sandbox);
    } catch (err) {
      this.unjoined.add(ep.endpointId);
      throw err;
    }
    // the endpoint's own sysctls, once its interface is in the namespace (a failure fails the join)
    try {
      await applyEndpointSysctls(sandbox, ep.ifname, endpointSysctls(att.DriverOpts));
    } catch (err) {
      this.unjoined.add(ep.endpointId);
      throw err;
    }
    this.deps.hooks.event.call(networkEvent(rec.spec, "connect", c.Id));
    ep.published = result.published;
    if (result.mac !== undefined) ep.mac = result.mac;
    if (result.nameserver) ep.nameserver = result.nameserver;
    return result.nameserver;
  }

  /** After the container's process is gone (or its start failed): everything its run held. */
  async release(containerId: string): Promise<void> {
    const modeNetwork = this.prepared.get(containerId)?.modeNetwork ?? (this.onNone.has(containerId) ? this.deps.networks.find("none") : undefined);
    this.prepared.delete(containerId);
    this.onNone.delete(containerId);
    if (modeNetwork) this.deps.hooks.event.call(networkEvent(modeNetwork.spec, "disconnect", containerId));
    const c = this.deps.containers.find(containerId);
    if (c?.Endpoints) {
      // Without the sandbox: the driver need not delete the container's ends of the veth pairs,
      // since removing the sandbox (below) takes them and their peers with it. The delete, a
      // blocking kernel operation of 15-35 ms a pair, is the dearest step of a container's exit.
      await this.leaveAll(c, undefined);
      if (this.deps.containers.has(c.Id)) await this.deps.containers.save(c);
    }
    await this.deps.sandboxes.remove(containerId);
  }

  /** Every endpoint left and its addresses released; `c.Endpoints` cleared. */
  private async leaveAll(c: ContainerRecord, sandbox: string | undefined): Promise<void> {
    for (const ep of c.Endpoints ?? []) await this.leave(ep, sandbox);
    c.Endpoints = undefined;
  }

  /** Leaves one network; `announce`: with its `disconnect` event (unless its join failed). */
  private async leave(ep: ContainerEndpoint, sandbox: string | undefined, announce = true): Promise<void> {
    const rec = this.deps.networks.find(ep.networkId);
    if (!rec || !ep.endpointId) return;
    // (a driver that cannot be had, a plugin not running, leaves nothing to undo here: the
    // endpoint goes all the same, as Docker's does, and the log says why)
    await this.deps.networks
      .driverOf(rec.spec)
      .then((driver) => driver.leave(rec.spec, ep, sandbox))
      .catch((err: Error) => this.deps.log.warn({ err, network: rec.spec.name }, "cannot leave a network"));
    if (!this.unjoined.delete(ep.endpointId) && announce) this.deps.hooks.event.call(networkEvent(rec.spec, "disconnect", ep.containerId));
    await this.releaseAddresses(rec, ep);
  }

  // --- connect and disconnect --------------------------------------------------------------------

  /**
   * `POST /networks/{id}/connect`: recorded; joined at once when the container runs, its default
   * route then moved to the network of the highest GwPriority (default-route.ts).
   */
  async connect(c: ContainerRecord, ref: string, config: EndpointConfigRequest): Promise<void> {
    const rec = this.deps.networks.network(ref);
    const mode = this.modeOf(c);
    // as Docker's daemon: a container on another's namespace is refused first, then the settings
    // are checked (an alias on a network that takes none), then what the network conflicts with
    if (mode.startsWith("container:")) throw errors.networkSharedNamespace();
    const att = attachment(rec, config);
    const networks = c.Networks ?? Object.fromEntries(this.attachmentsOf(c));
    if (isModeNetwork(rec.spec) && rec.spec.name === mode && Object.values(networks).some((a) => a.NetworkID === rec.spec.id)) {
      // the network it is on already: a stopped container's connect is taken as done, as Docker's
      if (c.State.Running) throw errors.networkAlreadyConnected(c.Name.replace(/^\//, ""), rec.spec.name);
      return;
    }
    // the networks it is on now, as Docker's updateNetworkSettings walks them (one gone is passed over)
    const current = Object.values(networks).filter((a) => a.NetworkID !== rec.spec.id).flatMap((a) => this.deps.networks.find(a.NetworkID)?.spec.name ?? []);
    checkConnectable(mode, isModeNetwork(rec.spec) ? rec.spec.name : undefined, current);
    // a second connect of a container that does not run is taken as done with the first settings
    // kept (its updateNetworkSettings), and a running one's is refused by its endpoint's name
    if (Object.values(networks).some((a) => a.NetworkID === rec.spec.id)) {
      if (c.State.Running) throw errors.networkAlreadyConnected(c.Name.replace(/^\//, ""), rec.spec.name);
      return;
    }
    // a running container of the none mode has the namespace its runtime made: bound now as its
    // sandbox, so that the network's interface goes there, as Docker's connect joins its sandbox
    if (c.State.Running && !this.deps.sandboxes.exists(c.Id) && !networkDisabled(c) && mode === "none" && !isModeNetwork(rec.spec) && c.State.Pid) {
      await this.deps.sandboxes.adopt(c.Id, c.State.Pid);
    }
    if (c.State.Running && this.deps.sandboxes.exists(c.Id)) {
      const endpoints = c.Endpoints ?? [];
      c.Endpoints = endpoints;
      const before = endpoints.length;
      const asked = askedIfname(att);
      if (asked) checkIfnameFree(asked, rec.spec.name, endpoints);
      try {
        await this.join(c, rec.spec.name, att, this.deps.sandboxes.path(c.Id), endpoints, new Set());
      } catch (err) {
        const [added] = endpoints.splice(before);
        if (added) await this.leave(added, this.deps.sandboxes.path(c.Id));
        throw addressFailure(err);
      }
    } else if (c.State.Running) {
      // running with networking disabled (a default-mode container on a daemon without a
      // default network): recorded, no interface, and the connect event all the same, as Docker's
      this.deps.hooks.event.call(networkEvent(rec.spec, "connect", c.Id));
    }
    c.Networks = { ...networks, [rec.spec.name]: att };
    await this.deps.containers.save(c);
    if (c.State.Running) {
      await this.rewriteFiles(c);
      await this.moveGateway(c);
    }
  }

  /**
   * After a rename: the endpoints carry the new name (network inspect's Containers, DNSNames),
   * and the networks of a running container answer it instead of the old one, as Docker's
   * sandbox Rename does. The caller saves the record.
   */
  async renamed(c: ContainerRecord): Promise<void> {
    const name = c.Name.replace(/^\//, "");
    for (const ep of c.Endpoints ?? []) {
      ep.containerName = name;
      const rec = this.deps.networks.find(ep.networkId);
      if (!rec || rec.spec.isDefault) continue;
      ep.dnsNames = dnsNames(c, ep.aliases);
      if (!c.State.Running || !this.deps.sandboxes.exists(c.Id)) continue;
      const driver = await this.deps.networks.driverOf(rec.spec);
      // as Docker: the rename is done; a network that cannot take the new name says so in the log
      await driver.rename?.(rec.spec, ep).catch((err: Error) => this.deps.log.warn({ err, network: rec.spec.name }, "cannot give the network the container's new name"));
    }
  }

  /** A legacy link removed while its parent runs: what the network opened for it is closed. */
  async unlink(parent: ContainerRecord, child: ContainerRecord): Promise<void> {
    const rec = this.deps.networks.find(DEFAULT_NETWORK);
    if (!rec?.spec.isDefault || !parent.State.Running || !child.State.Running) return;
    const addressOn = (o: ContainerRecord) => o.Endpoints?.find((e) => e.networkId === rec.spec.id)?.ipv4?.split("/")[0];
    const [parentIp, childIp] = [addressOn(parent), addressOn(child)];
    if (!parentIp || !childIp) return;
    const ports = Object.keys(child.Config.ExposedPorts ?? {});
    await (await this.deps.networks.driverOf(rec.spec)).unlink?.(rec.spec, { parentIp, childIp, ports });
  }

  /**
   * After a running container's connect or disconnect (and at its start): its default routes
   * where its networks' order says, and its published ports on the network that gives the
   * route, as Docker's gateway endpoint holds them. A port chosen by the daemon may change as it
   * moves; one the container asked for stays the same.
   */
  private async moveGateway(c: ContainerRecord, starting = false): Promise<void> {
    if (!this.deps.sandboxes.exists(c.Id) || !c.Endpoints?.length) return;
    const candidates = c.Endpoints.map((ep) => ({
      ep,
      priority: c.Networks?.[ep.networkName]?.GwPriority ?? 0,
      internal: this.deps.networks.find(ep.networkId)?.spec.internal ?? true,
    }));
    try {
      await moveDefaultRoutes(this.deps.sandboxes.path(c.Id), candidates);
    } catch (err) {
      // as Docker: the connect or disconnect is done; the route stays where it was, and the log says why
      this.deps.log.warn({ err, container: c.Id }, "cannot move the container's default route");
    }
    await this.movePorts(c, portsEndpoint(candidates), starting);
  }

  /** The container's published ports moved to `target`'s endpoint, when the driver can; at a start a failure fails it. */
  private async movePorts(c: ContainerRecord, target: ContainerEndpoint | undefined, starting: boolean): Promise<void> {
    const wanted = portRequests(c);
    const holder = c.Endpoints?.find((ep) => ep.ports.length > 0);
    if (wanted.length === 0 || holder === target || (!target && !holder)) return;
    const driverOf = async (ep: ContainerEndpoint) => {
      const rec = this.deps.networks.find(ep.networkId);
      return rec ? { rec, driver: await this.deps.networks.driverOf(rec.spec) } : undefined;
    };
    // no network of the container leads out any more: its ports are released, as Docker's are
    const to = target && (await driverOf(target));
    if (target && !to?.driver.publish) return;
    const from = holder && (await driverOf(holder));
    if (holder && !from?.driver.publish) return;
    if (holder && from) {
      await from.driver.publish!(from.rec.spec, holder, []).catch((err: Error) => this.deps.log.warn({ err, container: c.Id }, "cannot release the published ports"));
      holder.ports = [];
      holder.published = [];
    }
    try {
      if (target && to) {
        target.published = await to.driver.publish!(to.rec.spec, { ...target, ports: wanted }, wanted);
        target.ports = wanted;
      }
    } catch (err) {
      if (starting) throw err;
      // as Docker: the connect or disconnect is done; the ports could not follow, the log says why
      this.deps.log.warn({ err, container: c.Id }, "cannot publish the container's ports on its new gateway");
    }
    if (!starting) await this.deps.containers.save(c);
  }

  /** `POST /networks/{id}/disconnect`: left at once when the container runs, and forgotten. */
  async disconnect(c: ContainerRecord, ref: string, force: boolean): Promise<void> {
    // with force, or from a container that does not run, a network gone already can still be
    // forgotten by the name or id recorded (Docker's DisconnectFromNetwork looks it up only then)
    const rec = force || !c.State.Running ? this.deps.networks.find(ref) : this.deps.networks.network(ref);
    // a container made on the host's network stays on it: Docker 28's ErrConflictHostNetwork (400)
    if (rec?.spec.name === "host" && this.modeOf(c) === "host") throw errors.networkHostConflict();
    const networks = c.Networks ?? Object.fromEntries(this.attachmentsOf(c));
    const name = Object.keys(networks).find((n) => (rec ? networks[n].NetworkID === rec.spec.id : n === ref || networks[n].NetworkID === ref));
    if (!name) throw errors.networkNotConnected(c.Id, rec?.spec.name ?? ref, c.State.Running);
    if (rec?.spec.name === "none") {
      // a running container taken off none is not announced off it again at its exit
      this.onNone.delete(c.Id);
      const p = this.prepared.get(c.Id);
      if (p?.modeNetwork?.spec.id === rec.spec.id) p.modeNetwork = undefined;
    }
    const ep = c.Endpoints?.find((e) => e.networkId === networks[name].NetworkID);
    if (ep) {
      await this.leave(ep, this.deps.sandboxes.exists(c.Id) ? this.deps.sandboxes.path(c.Id) : undefined, false);
      c.Endpoints = c.Endpoints!.filter((e) => e !== ep);
    }
    const rest = { ...networks };
    delete rest[name];
    c.Networks = rest;
    await this.deps.containers.save(c);
    // as Docker: announced whether the container runs or not, when the network still exists
    if (rec) this.deps.hooks.event.call(networkEvent(rec.spec, "disconnect", c.Id));
    if (c.State.Running) {
      await this.rewriteFiles(c);
      await this.moveGateway(c);
    }
  }

  // --- files and the spec ------------------------------------------------------------------------

  private writeFiles(c: ContainerRecord, files: FilePaths, mode: string, nameserver: string | undefined): void {
    const addresses = (c.Endpoints ?? []).flatMap((ep) => [ep.ipv4, ep.ipv6]).filter((a): a is string => !!a).map((a) => a.split("/")[0]);
    const linkedHosts = this.deps.linkedHosts?.(c) ?? [];
    containerFiles(files, { c, config: this.deps.config(), mode, addresses, hostGateway: this.deps.networks.hostGateway(), nameserver, linkedHosts, owner: this.deps.remap?.root });
  }

  /** After a connect or disconnect of a running container: its hosts and resolv.conf anew (the same files, so its mounts see them). */
  private async rewriteFiles(c: ContainerRecord): Promise<void> {
    // after a daemon restart (live restore) nothing is prepared, but the files are where attach put them
    const files = this.prepared.get(c.Id)?.files ?? this.filePaths(c.Id);
    const nameserver = c.Endpoints?.map((ep) => ep.nameserver).find((n) => !!n);
    const sandbox = this.deps.sandboxes.exists(c.Id) ? this.deps.sandboxes.path(c.Id) : undefined;
    this.writeFiles(c, files, this.modeOf(c), nameserver && sandbox ? await this.resolverAddress(c, sandbox, nameserver, false) : nameserver);
  }

  /**
   * The name server address resolv.conf gives: 127.0.0.11, pointed at the network's name server
   * in the sandbox (embedded-dns.ts); the name server's own address where that cannot be done
   * (an IPv6 one, or no iptables on this host).
   */
  private async resolverAddress(c: ContainerRecord, sandbox: string, nameserver: string, fresh: boolean): Promise<string> {
    // (a server that listens at 127.0.0.11 in the container's namespace itself: a plugin's network)
    if (isIP(nameserver) !== 4 || nameserver === EMBEDDED_DNS_ADDRESS) return nameserver;
    try {
      await pointEmbeddedDns(sandbox, nameserver, fresh);
      return EMBEDDED_DNS_ADDRESS;
    } catch (err) {
      this.deps.log.warn({ err, container: c.Id }, `cannot make ${EMBEDDED_DNS_ADDRESS} reach the network's name server: the container is given ${nameserver}`);
      return nameserver;
    }
  }

  /**
   * `processSpec`: the network namespace to join (or none for host), the user namespace that owns
   * it (when the spec has one), and the three files mounted.
   */
  private applyToSpec(spec: OciSpec, containerId: string): OciSpec {
    const p = this.prepared.get(containerId);
    if (!p) return spec;
    const namespaces = (spec.linux?.namespaces ?? [])
      .filter((n) => n.type !== "network")
      .map((n) => (n.type === "user" && p.userns ? { type: "user" as const, path: p.userns } : n));
    if (p.netns !== null) namespaces.push(p.netns ? { type: "network", path: p.netns } : { type: "network" });
    const mounts = (spec.mounts ?? []).filter((m) => !["/etc/hosts", "/etc/resolv.conf", "/etc/hostname"].includes(m.destination));
    const files: [string, string][] = [["/etc/resolv.conf", p.files.resolvConf], ["/etc/hostname", p.files.hostname], ["/etc/hosts", p.files.hosts]];
    // read-only with a read-only root, as Docker's (a user's mount over one of them keeps its own mode)
    const mode = spec.root?.readonly === true ? ["ro"] : [];
    for (const [dest, src] of p.hostnameOnly ? files.filter(([dest]) => dest === "/etc/hostname") : files) {
      mounts.push({ destination: dest, type: "bind", source: src, options: ["rbind", "rprivate", ...mode] });
    }
    return { ...spec, mounts, linux: { ...spec.linux, namespaces } };
  }

  // --- addresses -------------------------------------------------------------------------------

  /** What an endpoint needs before any address is taken: a bad entry fails the start with nothing to give back. */
  private endpointStart(rec: NetworkRecord, c: ContainerRecord, att: NetworkAttachment): EndpointStart {
    const fixed = att.IPAMConfig ?? {};
    return {
      endpointId: randomBytes(32).toString("hex"),
      links: rec.spec.isDefault ? {} : linkAliases(att),
      linkLocal: (fixed.LinkLocalIPs ?? []).map(linkLocalCidr),
      mac: this.macFor(c, rec, att),
    };
  }

  /** An endpoint with addresses of the daemon's own address management. */
  private allocate(rec: NetworkRecord, c: ContainerRecord, att: NetworkAttachment, ifname: string, first: boolean): ContainerEndpoint {
    const start = this.endpointStart(rec, c, att);
    const ipam = NetworkIpam.fromJSON(rec.ipam);
    const fixed = att.IPAMConfig ?? {};
    const take = (family: 4 | 6, address: string | undefined): EndpointAddress => {
      try {
        const a = ipam.allocate(family, { owner: start.endpointId, ...(address ? { address } : {}) });
        return { address: a.address, cidr: a.cidr, gateway: a.defaultRoute };
      } catch (err) {
        // a full network in the words of Docker's endpoint allocation, which tools match on
        if (err instanceof AddressError && err.kind === "exhausted" && !address) {
          throw new AddressError("exhausted", `no available IPv${family} addresses on this network's address pools: ${rec.spec.name} (${rec.spec.id})`);
        }
        throw err;
      }
    };
    const v4 = rec.spec.enableIPv4 && ipam.hasFamily(4) ? take(4, fixed.IPv4Address) : undefined;
    const v6 = rec.spec.enableIPv6 && ipam.hasFamily(6) ? take(6, fixed.IPv6Address) : undefined;
    rec.ipam = ipam.toJSON();
    return this.endpointOf(rec, c, att, ifname, first, start, v4, v6);
  }

  /**
   * An endpoint with addresses from the network's IPAM plugin (IPv4's first, as Docker asks
   * them); the first given back when the second cannot be had.
   */
  private async allocateRemote(rec: NetworkRecord, c: ContainerRecord, att: NetworkAttachment, ifname: string, first: boolean): Promise<ContainerEndpoint> {
    const start = this.endpointStart(rec, c, att);
    const ipam = await this.deps.networks.ipamOf(rec.spec);
    // a plugin that wants the MAC with the request gets the one asked for, else a random one the endpoint keeps (as Docker makes it)
    if (ipam.requiresMac) start.mac ??= RemoteIpam.randomMac();
    const fixed = att.IPAMConfig ?? {};
    const has = (family: 4 | 6) => (family === 4 ? rec.spec.enableIPv4 : rec.spec.enableIPv6) && rec.spec.subnets.some((s) => s.poolId && Cidr.parse(s.subnet).family === family);
    const v4 = has(4) ? await ipam.endpointAddress(rec.spec, 4, fixed.IPv4Address, start.mac ?? "") : undefined;
    let v6: EndpointAddress | undefined;
    try {
      v6 = has(6) ? await ipam.endpointAddress(rec.spec, 6, fixed.IPv6Address, start.mac ?? "") : undefined;
    } catch (err) {
      if (v4) await ipam.releaseEndpointAddress(rec.spec, v4.cidr).catch(() => undefined);
      throw err;
    }
    return this.endpointOf(rec, c, att, ifname, first, start, v4, v6);
  }

  private endpointOf(rec: NetworkRecord, c: ContainerRecord, att: NetworkAttachment, ifname: string, first: boolean, start: EndpointStart, v4?: EndpointAddress, v6?: EndpointAddress): ContainerEndpoint {
    const name = c.Name.replace(/^\//, "");
    const aliases = att.Aliases ?? [];
    const userDefined = !rec.spec.isDefault;
    const legacyLinks = rec.spec.isDefault && v4 ? this.legacyLinks(c, rec.spec.id, v4.address) : [];
    return {
      containerId: c.Id,
      containerName: name,
      networkId: rec.spec.id,
      networkName: rec.spec.name,
      endpointId: start.endpointId,
      ifname,
      ...macOfEndpoint(start.mac, v4?.address),
      ...(v4 ? { ipv4: v4.cidr, gateway4: v4.gateway } : {}),
      ...(v6 ? { ipv6: v6.cidr, gateway6: v6.gateway } : {}),
      ...(start.linkLocal.length ? { linkLocal: start.linkLocal } : {}),
      aliases,
      ...(first ? {} : { noDefaultRoute: true }),
      // published ports go with the default route: the first network only, as in Docker, and
      // not one that is internal (no way out: Docker publishes nothing until one leads out)
      ports: first && !rec.spec.internal ? portRequests(c) : [],
      ...(legacyLinks.length ? { legacyLinks } : {}),
      ...(userDefined ? { dnsNames: dnsNames(c, aliases), dnsUpstreams: this.upstreamsOf(c), ...start.links } : { dnsNames: [] }),
    };
  }

  /** An endpoint's addresses given back: to the daemon's address management, or to the network's IPAM plugin (IPv4's first). */
  private async releaseAddresses(rec: NetworkRecord, ep: ContainerEndpoint): Promise<void> {
    if (!rec.spec.ipamDriver) {
      const ipam = NetworkIpam.fromJSON(rec.ipam);
      ipam.releaseOwner(ep.endpointId);
      rec.ipam = ipam.toJSON();
      await this.deps.networks.save(rec);
      return;
    }
    const warn = (err: Error) => this.deps.log.warn({ err: err.message, network: rec.spec.name, container: ep.containerId }, "cannot give an address back to the IPAM plugin");
    const ipam = await this.deps.networks.ipamOf(rec.spec).catch((err: Error) => void warn(err));
    for (const cidr of [ep.ipv4, ep.ipv6]) if (ipam && cidr) await ipam.releaseEndpointAddress(rec.spec, cidr).catch(warn);
  }

  /**
   * The legacy links of a container joining the default network, as address pairs with the
   * child's exposed ports: to its running children, and from the running parents linking to it.
   */
  private legacyLinks(c: ContainerRecord, networkId: string, address: string): LegacyLink[] {
    const peers = this.deps.linkPeers?.(c);
    if (!peers) return [];
    const addressOn = (o: ContainerRecord) => o.Endpoints?.find((e) => e.networkId === networkId)?.ipv4?.split("/")[0];
    const ports = (o: ContainerRecord) => Object.keys(o.Config.ExposedPorts ?? {});
    const out: LegacyLink[] = [];
    for (const child of peers.children) {
      const childIp = addressOn(child);
      if (childIp) out.push({ parentIp: address, childIp, ports: ports(child) });
    }
    for (const parent of peers.parents) {
      const parentIp = addressOn(parent);
      if (parentIp) out.push({ parentIp, childIp: address, ports: ports(c) });
    }
    return out.filter((l) => l.ports.length > 0);
  }

  /**
   * The MAC a container asks for on a network: its endpoint's (API 1.44), else on its
   * NetworkMode network the older `Config.MacAddress`. A bad one fails the start, as Docker's.
   */
  private macFor(c: ContainerRecord, rec: NetworkRecord, att: NetworkAttachment): string | undefined {
    const mode = this.modeOf(c);
    const onMode = mode === rec.spec.name || rec.spec.id.startsWith(mode);
    const asked = att.MacAddress || (onMode ? c.Config.MacAddress : undefined);
    if (!asked) return undefined;
    const m = /^([0-9a-f]{2})([:-])([0-9a-f]{2})\2([0-9a-f]{2})\2([0-9a-f]{2})\2([0-9a-f]{2})\2([0-9a-f]{2})$/i.exec(asked);
    if (!m) throw errors.networkInvalidMac(asked);
    return [m[1], m[3], m[4], m[5], m[6], m[7]].join(":").toLowerCase();
  }

  /** Where a container's other names are asked: its `--dns`, the daemon's, or the host's servers. */
  private upstreamsOf(c: ContainerRecord): string[] {
    const host = hostResolvConf();
    const config = this.deps.config();
    return containerResolvConf({
      hostResolvConf: host.text,
      hostResolvConfPath: host.path,
      container: { dns: c.HostConfig.Dns ?? [] },
      daemon: { dns: config.dns },
      embeddedDns: EMBEDDED_DNS_ADDRESS, // (only the upstreams are read)
      ipv6: true,
    }).upstreams;
  }
}

/** The settings of an EndpointConfig this daemon keeps: aliases and fixed addresses. */
function attachmentFields(config: EndpointConfigRequest): Omit<NetworkAttachment, "NetworkID"> {
  const aliases = (config.Aliases ?? []).filter((a) => a !== "");
  const { IPv4Address, IPv6Address } = config.IPAMConfig ?? {};
  const LinkLocalIPs = config.IPAMConfig?.LinkLocalIPs ?? [];
  const ipam = { ...(IPv4Address ? { IPv4Address } : {}), ...(IPv6Address ? { IPv6Address } : {}), ...(LinkLocalIPs.length ? { LinkLocalIPs: [...LinkLocalIPs] } : {}) };
  return {
    ...(aliases.length ? { Aliases: aliases } : {}),
    ...(config.Links?.length ? { Links: [...config.Links] } : {}),
    ...(config.MacAddress ? { MacAddress: config.MacAddress } : {}),
    ...(config.DriverOpts && Object.keys(config.DriverOpts).length ? { DriverOpts: { ...config.DriverOpts } } : {}),
    ...(Object.keys(ipam).length ? { IPAMConfig: ipam } : {}),
    ...(config.GwPriority ? { GwPriority: config.GwPriority } : {}),
  };
}

/** The attachment a create or connect asks for, checked against the network. */
function attachment(rec: NetworkRecord, config: EndpointConfigRequest): NetworkAttachment {
  const fields = attachmentFields(config);
  endpointSysctls(fields.DriverOpts); // (refused now, not at the start)
  const aliases = fields.Aliases ?? [];
  const fixed = fields.IPAMConfig ?? {};
  // the default network, host and none are not user-defined: no alias, no fixed address there
  const userDefined = !rec.spec.isDefault && !isModeNetwork(rec.spec);
  if (!userDefined && aliases.length) throw errors.networkInvalid("network-scoped alias is supported only for containers in user defined networks");
  if (!userDefined && (fixed.IPv4Address || fixed.IPv6Address)) throw errors.networkInvalid("user specified IP address is supported on user defined networks only");
  // each of the family it is given for, and not the unspecified address (Docker 28's
  // validateEndpointSettings, Go's net.IP: an IPv4-mapped IPv6 address is IPv4's)
  if (fixed.IPv4Address && !isAddressOf(fixed.IPv4Address, 4)) throw errors.networkInvalid(`invalid IPv4 address: ${fixed.IPv4Address}`);
  if (fixed.IPv6Address && !isAddressOf(fixed.IPv6Address, 6)) throw errors.networkInvalid(`invalid IPv6 address: ${fixed.IPv6Address}`);
  // Docker's create checks only that they are addresses (on the default bridge too: its
  // user-defined-address rule counts IPv4 and IPv6 only); that they are link-local, its start
  // (in Docker 28's words, one line per address; 20.10 said "Invalid link-local IP address: [a b]")
  const badLinkLocal = (fixed.LinkLocalIPs ?? []).filter((a) => isIP(a) === 0);
  if (badLinkLocal.length) throw errors.networkInvalid(badLinkLocal.map((a) => `invalid link-local IP address: ${a}`).join("\n"));
  for (const address of [fixed.IPv4Address, fixed.IPv6Address].filter((a): a is string => !!a)) {
    let single: Cidr;
    try {
      single = Cidr.single(address);
    } catch {
      throw errors.networkInvalid(`invalid IP address ${address}`);
    }
    // as Docker: only the subnets the network's create named count, of the address's family
    const given = rec.spec.subnets.filter((s) => !s.fromPool).map((s) => Cidr.parse(s.subnet)).filter((c) => c.family === single.family);
    if (!given.length) throw errors.networkInvalid("user specified IP address is supported only when connecting to networks with user configured subnets");
    if (!given.some((c) => c.containsCidr(single))) throw errors.networkInvalid(`no configured subnet or ip-range contain the IP address ${address}`);
  }
  return { NetworkID: rec.spec.id, ...fields };
}

/** Whether `text` is an address of `family` as Go's net.ParseIP and To4 take it, and not the unspecified one. */
function isAddressOf(text: string, family: 4 | 6): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(text)?.[1];
  const v4 = isIP(text) === 4 ? text : mapped && isIP(mapped) === 4 ? mapped : undefined;
  if (family === 4) return v4 !== undefined && v4 !== "0.0.0.0";
  return isIP(text) === 6 && v4 === undefined && !/^[0:]+$/.test(text);
}

/**
 * An endpoint's legacy links on a user-defined network (`--link db:alias` there): names its own
 * container resolves, alias to the name it stands for. A bad entry fails the start, as Docker's.
 */
function linkAliases(att: NetworkAttachment): { linkAliases?: Record<string, string> } {
  if (!att.Links?.length) return {};
  return { linkAliases: Object.fromEntries(att.Links.map((entry) => parseLink(entry)).map(({ name, alias }) => [alias, name])) };
}

/** Docker's DNSNames: the container's name, its aliases, its short id and its hostname, once each. */
function dnsNames(c: ContainerRecord, aliases: readonly string[]): string[] {
  return [...new Set([c.Name.replace(/^\//, ""), ...aliases, c.Id.slice(0, 12), c.Config.Hostname ?? ""].filter((n) => n !== ""))];
}

/** A MAC from an IPv4 address as Docker makes them (02:42 and the four bytes), random without one. */
/** The endpoint's MAC: the one asked for, else one made from its IPv4 address. */
function macOfEndpoint(asked: string | undefined, ipv4: string | undefined): { mac: string; macAsked?: true } {
  return asked ? { mac: asked, macAsked: true } : { mac: macOf(ipv4) };
}

function macOf(ipv4: string | undefined): string {
  const bytes = ipv4 ? ipv4.split("/")[0].split(".").map(Number) : [...randomBytes(4)];
  return ["02", "42", ...bytes.map((b) => b.toString(16).padStart(2, "0"))].join(":");
}

/** The container's PortBindings (and, with PublishAllPorts, every exposed port) as requests. */
function portRequests(c: Pick<ContainerRecord, "Config" | "HostConfig">): PortRequest[] {
  const out: PortRequest[] = [];
  const bindings = c.HostConfig.PortBindings ?? {};
  const keys = new Set(Object.keys(bindings));
  if (c.HostConfig.PublishAllPorts) for (const k of Object.keys(c.Config.ExposedPorts ?? {})) keys.add(k);
  for (const key of keys) {
    const m = /^(\d+)(?:-(\d+))?(?:\/(tcp|udp|sctp))?$/.exec(key);
    if (!m) throw errors.networkInvalidPort(key);
    const proto = (m[3] ?? "tcp") as PortRequest["proto"];
    const containerPort = Number(m[1]);
    const list = bindings[key]?.length ? bindings[key]! : [{ HostIp: "", HostPort: "" }];
    for (const b of list) {
      const hp = (b.HostPort ?? "").trim();
      const r = /^(\d+)?(?:-(\d+))?$/.exec(hp);
      if (!r) throw errors.networkInvalidPort(`${b.HostIp ? `${b.HostIp}:` : ""}${hp}:${key}`);
      out.push({ proto, containerPort, hostIp: b.HostIp ?? "", hostPort: Number(r[1] ?? 0), ...(r[2] ? { hostPortLast: Number(r[2]) } : {}) });
    }
  }
  return out;
}

/** A `--link-local-ip` with the prefix Docker gives it on the interface; one that is not link-local fails the start, as Docker's. */
function linkLocalCidr(address: string): string {
  const family = isIP(address);
  const range = Cidr.parse(family === 4 ? "169.254.0.0/16" : "fe80::/10");
  if (!range.containsCidr(Cidr.single(address))) throw errors.networkInvalid(`invalid link local IP address: ${address}`);
  return `${address}/${family === 4 ? 16 : 64}`;
}

/**
 * What Docker's updateNetworkSettings refuses of a connect, in its words: the host network to a
 * container not on it; anything to a container on the host's or another container's network
 * namespace; and the none network beside any other, of the networks the container is on now
 * (`current`, the one connected to left out): a container taken off every network may join none,
 * and one taken off none may join another, whatever its network mode. `modeNetwork` is the
 * network connected to when it is one of the modes (host, none).
 */
function checkConnectable(mode: string, modeNetwork: string | undefined, current: readonly string[]): void {
  if (mode.startsWith("container:")) throw errors.networkSharedNamespace();
  if (modeNetwork === "host") throw errors.networkHostConflict();
  if (mode === "host") throw errors.networkSharedNamespace();
  if (current.length > 0 && (modeNetwork === "none" || current.includes("none"))) throw errors.networkNoneConflict();
}
