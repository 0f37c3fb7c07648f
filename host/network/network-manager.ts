/**
 * The daemon's networks: the default network (`bridge`, made from the daemon's options at
 * start), the two pre-defined ones that are modes rather than networks (`host`, `none`: listed
 * and inspected as Docker lists them, never given to a driver), and user-defined networks made
 * and removed through the API. Containers' use of them is in container-networks.ts.
 *
 * A network is written to the store before its driver makes it and removed from the store after
 * its driver deleted it, so a crash in between leaves a record whose interfaces `restore`
 * makes again (or a removal that can be asked for again), never interfaces without a record.
 */
import { createHash } from "node:crypto";
import type { Logger } from "pino";
import { KeyedQueue } from "../../core/async/keyed-queue.js";
import type { NetworkDriver, NetworkSpec } from "../../core/contracts/network.js";
import type { ContainerEndpoint, ContainerStore } from "../../core/containers/container-store.js";
import { EngineError, errors } from "../../core/errors.js";
import { killPoint } from "../../core/kill-points.js";
import type { NetworkCreateRequest } from "../../core/network/network-request.js";
import type { DaemonConfig } from "../../core/options/table.js";
import { defaultNetworkSpec, hostRoutes } from "./default-network.js";
import { NetworkIpam } from "../../core/network/ipam.js";
import { Cidr } from "../../core/network/cidr.js";
import { newNetworkSpec } from "./new-network.js";
import type { NetworkRecord, NetworkStore } from "./network-store.js";
import type { EngineHooks } from "../../core/hooks.js";
import { makeEvent } from "../../core/events/event.js";
import { networkEvent } from "./network-events.js";
import type { PoolRequest, RemoteIpam } from "./remote-ipam.js";

export interface NetworkManagerDeps {
  store: NetworkStore;
  containers: ContainerStore;
  config: () => DaemonConfig;
  log: Logger;
  /** The driver of a name, made once (createNetworkDriver); rejects for a driver no plugin makes. */
  driver: (name: string) => Promise<NetworkDriver>;
  /** For the `create` and `destroy` events of networks made and removed through the API. */
  hooks: EngineHooks;
  /** The IPAM plugin of a name (`--ipam-driver`); rejects for a name no plugin serves (404) or one that cannot be used. */
  ipam?: (name: string) => Promise<RemoteIpam>;
}

export const DEFAULT_NETWORK = "bridge";
/** What a network's driver answers at the daemon's start when its plugin is not running: found but not answering, or no socket yet. */
const WAITING_PLUGIN = [errors.networkPluginUnusable.code, errors.pluginNotFound.code, errors.pluginMadeNoDriver.code];
/** The pre-defined networks that are a container's modes: name -> driver, as Docker lists them. */
export const MODE_NETWORKS: Record<string, string> = { host: "host", none: "null" };

export class NetworkManager {
  private readonly claiming = new KeyedQueue();
  /** Drivers whose plugin was not running at the daemon's start: restored at their first use. */
  private readonly unrestored = new Set<string>();
  private readonly restoring = new Map<string, Promise<void>>();

  constructor(private readonly deps: NetworkManagerDeps) {}

  /** A short tag of this daemon (its exec root), for names shared with other daemons. */
  static tagOf(execRoot: string): string {
    return createHash("sha256").update(execRoot).digest("hex").slice(0, 6);
  }

  /** The pre-defined networks and the default one from the options; every network's driver state back. */
  async start(endpoints: readonly ContainerEndpoint[]): Promise<void> {
    for (const [name, driver] of Object.entries(MODE_NETWORKS)) {
      if (!this.deps.store.find(name)) await this.deps.store.save({ spec: modeNetworkSpec(this.deps.store.newId(), name, driver), ipam: { subnets: [] } });
    }
    const config = this.deps.config();
    const existing = this.list().find((r) => r.spec.isDefault);
    if (config.bridge === "none") {
      if (existing) await this.deps.store.remove(existing.spec.id); // its interface is left alone, as --bridge=none says
    } else {
      const taken = this.list().filter((r) => !r.spec.isDefault).flatMap((r) => r.spec.subnets.map((s) => s.subnet));
      const spec = await defaultNetworkSpec(config, { id: existing?.spec.id ?? this.deps.store.newId(), previous: existing?.spec, taken, hostId: this.hostId() });
      // the same options give the same network (and its allocations); changed ones a new one
      const same = existing && JSON.stringify({ ...existing.spec, created: "" }) === JSON.stringify({ ...spec, created: "" });
      if (!same) await this.deps.store.save({ spec: { ...spec, created: existing?.spec.created ?? spec.created }, ipam: freshIpam(spec).toJSON() });
    }
    const byDriver = new Map<string, NetworkSpec[]>();
    for (const r of this.driven()) byDriver.set(r.spec.driver, [...(byDriver.get(r.spec.driver) ?? []), r.spec]);
    for (const [name, specs] of byDriver) {
      const ids = new Set(specs.map((s) => s.id));
      let driver: NetworkDriver;
      try {
        driver = await this.deps.driver(name);
      } catch (err) {
        // a plugin of another process that is not running yet (its socket there or not yet): its
        // networks wait for it (their containers fail to start until it answers), the daemon
        // does not, as Docker's starts whatever its networks' plugins do
        if (!(err instanceof EngineError && WAITING_PLUGIN.includes(err.code))) throw err;
        this.deps.log.warn({ err: err.message, driver: name }, "network plugin not available at start");
        this.unrestored.add(name);
        continue;
      }
      await driver.restore(specs, endpoints.filter((e) => ids.has(e.networkId)));
    }
  }

  list(): NetworkRecord[] {
    return this.deps.store.list();
  }

  /** By id, unique id prefix or name; undefined when there is none. */
  find(ref: string): NetworkRecord | undefined {
    return this.deps.store.find(ref);
  }

  network(ref: string): NetworkRecord {
    const rec = this.deps.store.find(ref);
    if (!rec) throw errors.networkNotFound(ref);
    return rec;
  }

  /** The networks a driver makes (not `host` and `none`). */
  driven(): NetworkRecord[] {
    return this.list().filter((r) => !isModeNetwork(r.spec));
  }

  /** The driver of a network; one whose plugin was not running at the daemon's start is given back its networks and endpoints first, once. */
  async driverOf(spec: NetworkSpec): Promise<NetworkDriver> {
    const driver = await this.deps.driver(spec.driver);
    if (this.unrestored.has(spec.driver)) {
      let restoring = this.restoring.get(spec.driver);
      if (!restoring) {
        const specs = this.driven().filter((r) => r.spec.driver === spec.driver).map((r) => r.spec);
        const endpoints = specs.flatMap((s) => this.activeEndpoints(s.id));
        restoring = driver.restore(specs, endpoints).then(() => void this.unrestored.delete(spec.driver));
        this.restoring.set(spec.driver, restoring);
        restoring.finally(() => this.restoring.delete(spec.driver)).catch(() => undefined);
      }
      await restoring;
    }
    return driver;
  }

  /** The endpoints of running containers on a network. */
  activeEndpoints(networkId: string): ContainerEndpoint[] {
    return this.deps.containers
      .list()
      .filter((c) => c.State.Running)
      .flatMap((c) => c.Endpoints ?? [])
      .filter((ep) => ep.networkId === networkId && ep.endpointId);
  }

  /** The `host-gateway` addresses: `--host-gateway-ip`s, else the default bridge's addresses. */
  hostGateway(): string[] {
    const given = this.deps.config()["host-gateway-ip"];
    if (given.length) return given;
    const def = this.list().find((r) => r.spec.isDefault);
    return def ? def.spec.subnets.map((s) => s.gateway) : [];
  }

  /** Saves an address change of a network (the IPAM state): at once in memory, resolves once on disk. */
  save(rec: NetworkRecord): Promise<void> {
    return this.deps.store.save(rec);
  }

  // --- the API ----------------------------------------------------------------------------------

  async create(req: NetworkCreateRequest): Promise<NetworkRecord> {
    const { rec, driver } = await this.claiming.run("", () => this.claim(req));
    const spec = rec.spec;
    try {
      await driver.createNetwork(spec);
      killPoint("network.made");
    } catch (err) {
      await driver.deleteNetwork(spec).catch(() => undefined);
      await this.releasePools(spec);
      await this.deps.store.remove(spec.id);
      throw errors.networkSetupFailed(`cannot create network ${spec.name}: ${(err as Error).message}`);
    }
    this.deps.hooks.event.call(networkEvent(spec, "create"));
    return rec;
  }

  /**
   * The new network's record, saved, and its driver. One claim at a time, from the look at the
   * other networks to the save: two at once would both take the same free subnet and name.
   */
  private async claim(req: NetworkCreateRequest): Promise<{ rec: NetworkRecord; driver: NetworkDriver }> {
    const others = this.list().map((r) => r.spec);
    const spec = await newNetworkSpec(req, { id: this.deps.store.newId(), config: this.deps.config(), others, hostRoutes: (f) => hostRoutes("", f), hostId: this.hostId() });
    let driver: NetworkDriver;
    try {
      driver = await this.deps.driver(spec.driver);
    } catch (err) {
      if (err instanceof EngineError && (err.code === errors.pluginPathFromClient.code || err.code === errors.networkPluginUnusable.code)) throw err;
      this.deps.log.debug({ err, driver: spec.driver }, "no network driver");
      throw errors.networkDriverNotFound(spec.driver);
    }
    try {
      driver.checkNetwork?.(spec, others.filter((o) => !isModeNetwork(o)));
    } catch (err) {
      throw errors.networkInvalid((err as Error).message);
    }
    // Docker's GwAllocChecker: a family whose gateway the driver will not use has no address
    // reserved for one, unless the request named it
    const skip = driver.gatewayless?.(spec);
    if (skip) {
      const named = new Set((req.IPAM?.Config ?? []).filter((c) => c.Gateway).map((c) => c.Subnet));
      for (const s of spec.subnets) if (skip[Cidr.parse(s.subnet).family] && !named.has(s.subnet)) s.gateway = "";
    }
    // an IPAM plugin's pools are asked for last, after everything that may refuse the network
    // (the daemon's own address management then holds nothing of it)
    if (spec.ipamDriver) await this.requestPools(spec, skip);
    const rec: NetworkRecord = { spec, ipam: (spec.ipamDriver ? new NetworkIpam([]) : freshIpam(spec)).toJSON() };
    try {
      await this.deps.store.save(rec);
    } catch (err) {
      await this.releasePools(spec);
      throw err;
    }
    killPoint("network.saved");
    return { rec, driver };
  }

  /** The IPAM plugin of a network that has one (`--ipam-driver`). */
  async ipamOf(spec: NetworkSpec): Promise<RemoteIpam> {
    if (!spec.ipamDriver || !this.deps.ipam) throw errors.networkDriverNotFound(spec.ipamDriver ?? "default");
    return this.deps.ipam(spec.ipamDriver);
  }

  /**
   * The pools of a network of an IPAM plugin, asked for: those the request named, and one the
   * plugin chooses for each family the network has and the request named none of (Docker asks
   * an IPv6 one too when IPv6 is on). `skip`: the families whose gateway the driver does not use.
   */
  private async requestPools(spec: NetworkSpec, skip: { 4: boolean; 6: boolean } | undefined): Promise<void> {
    const ipam = await this.ipamOf(spec);
    const requests: PoolRequest[] = spec.subnets.map((s) => ({
      family: Cidr.parse(s.subnet).family,
      subnet: s.subnet,
      ...(s.ipRange ? { ipRange: s.ipRange } : {}),
      ...(s.gateway ? { gateway: s.gateway } : {}),
      ...(s.auxAddresses ? { auxAddresses: s.auxAddresses } : {}),
    }));
    for (const family of [4, 6] as const) {
      if ((family === 4 ? spec.enableIPv4 : spec.enableIPv6) && !requests.some((r) => r.family === family)) requests.push({ family });
    }
    try {
      spec.subnets = await ipam.requestPools(spec, requests, skip);
    } catch (err) {
      throw errors.networkIpamFailed((err as Error).message);
    }
    spec.ipamAddressSpace = ipam.addressSpace;
  }

  /** An IPAM plugin's pools given back (a network removed, or not made); what fails is logged, as Docker logs it. */
  private async releasePools(spec: NetworkSpec): Promise<void> {
    if (!spec.ipamDriver) return;
    let failures: Error[];
    try {
      failures = await (await this.ipamOf(spec)).releasePools(spec.subnets);
    } catch (err) {
      failures = [err as Error];
    }
    for (const err of failures) this.deps.log.warn({ err: err.message, network: spec.name }, "cannot give an address pool back to the IPAM plugin");
  }

  async remove(ref: string): Promise<void> {
    const rec = this.network(ref);
    if (rec.spec.isDefault || isModeNetwork(rec.spec)) throw errors.networkPredefined(rec.spec.name, "removed");
    if (this.activeEndpoints(rec.spec.id).length) throw errors.networkActiveEndpoints(rec.spec.name, rec.spec.id);
    await (await this.deps.driver(rec.spec.driver)).deleteNetwork(rec.spec);
    await this.releasePools(rec.spec);
    await this.deps.store.remove(rec.spec.id);
    this.deps.hooks.event.call(networkEvent(rec.spec, "destroy"));
  }

  /** Removes the user-defined networks no running container uses that `keep` does not keep; their names. */
  async prune(keep: (rec: NetworkRecord) => boolean): Promise<string[]> {
    const removed: string[] = [];
    for (const rec of this.driven()) {
      if (rec.spec.isDefault || keep(rec) || this.activeEndpoints(rec.spec.id).length) continue;
      await this.remove(rec.spec.id);
      removed.push(rec.spec.name);
    }
    // one event for the whole prune, as Docker's daemon logs it (networks reclaim no bytes)
    this.deps.hooks.event.call(makeEvent("network", "prune", "", { reclaimed: "0" }));
    return removed;
  }

  /** Stable per daemon (the id of its `none` network): the seed of the IPv6 pool. */
  private hostId(): string {
    return this.deps.store.find("none")?.spec.id ?? "";
  }
}

export function isModeNetwork(spec: NetworkSpec): boolean {
  return MODE_NETWORKS[spec.name] === spec.driver && !spec.isDefault;
}

function modeNetworkSpec(id: string, name: string, driver: string): NetworkSpec {
  return {
    id, name, driver, created: new Date().toISOString(), internal: false, attachable: false,
    enableIPv4: false, enableIPv6: false, subnets: [], options: {}, labels: {},
  };
}

/** The address management of a new network, from its subnets. */
function freshIpam(spec: NetworkSpec): NetworkIpam {
  return new NetworkIpam(spec.subnets.map((s) => ({ subnet: s.subnet, gateway: s.gateway === "" ? null : s.gateway, ...(s.ipRange ? { ipRange: s.ipRange } : {}), ...(s.auxAddresses ? { auxiliaryAddresses: s.auxAddresses } : {}) })));
}
