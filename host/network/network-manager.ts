/**
 * Containers' networks, as the daemon runs them: the default network (`bridge`, made from the
 * daemon's options at start), each container's mode (`bridge`, a network name, `none`, `host`,
 * `container:<id>`), its sandbox, addresses and published ports at start, their release at exit,
 * and the files that name its network (`/etc/hosts`, `/etc/resolv.conf`, `/etc/hostname`, kept in
 * the container's folder and bind-mounted, as Docker does).
 *
 * Order at a container's start: sandbox -> addresses (IPAM) -> driver.join -> files -> the OCI
 * spec names the sandbox and mounts the files (`processSpec`). At its end (exit, failed start,
 * removal): driver.leave -> addresses released -> sandbox removed. Both are safe to repeat.
 */
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Logger } from "pino";
import type { EndpointSpec, NetworkDriver, NetworkSpec, PortRequest } from "../../core/contracts/network.js";
import type { OciSpec } from "../../core/contracts/runtime.js";
import type { ContainerEndpoint, ContainerRecord, ContainerStore } from "../../core/containers/container-store.js";
import { errors } from "../../core/errors.js";
import type { EngineHooks } from "../../core/hooks.js";
import type { DaemonConfig } from "../../core/options/table.js";
import { defaultNetworkSpec } from "./default-network.js";
import { NetworkIpam } from "../../core/network/ipam.js";
import { containerFiles } from "./container-files.js";
import type { NetworkRecord, NetworkStore } from "./network-store.js";
import type { Sandboxes } from "./sandbox.js";

export interface NetworkManagerDeps {
  store: NetworkStore;
  sandboxes: Sandboxes;
  containers: ContainerStore;
  hooks: EngineHooks;
  config: () => DaemonConfig;
  log: Logger;
  /** The driver of a name, made once (createNetworkDriver). */
  driver: (name: string) => Promise<NetworkDriver>;
}

/** What a started container's spec needs from its network. */
interface Prepared {
  /** The namespace file to join; null: the host's namespace; undefined: a fresh empty one. */
  netns?: string | null;
  files: { hosts: string; resolvConf: string; hostname: string };
}

export const DEFAULT_NETWORK = "bridge";

export class NetworkManager {
  private readonly prepared = new Map<string, Prepared>();

  constructor(private readonly deps: NetworkManagerDeps) {}

  /** A short tag of this daemon (its exec root), for names shared with other daemons. */
  static tagOf(execRoot: string): string {
    return createHash("sha256").update(execRoot).digest("hex").slice(0, 6);
  }

  // --- start ----------------------------------------------------------------------------------

  /** The default network from the options; every network's driver state; running containers' endpoints back. */
  async start(): Promise<void> {
    const config = this.deps.config();
    const existing = this.deps.store.list().find((r) => r.spec.isDefault);
    if (config.bridge === "none") {
      if (existing) this.deps.store.remove(existing.spec.id); // its interface is left alone, as --bridge=none says
    } else {
      const taken = this.deps.store.list().filter((r) => !r.spec.isDefault).flatMap((r) => r.spec.subnets.map((s) => s.subnet));
      const spec = await defaultNetworkSpec(config, { id: existing?.spec.id ?? this.deps.store.newId(), previous: existing?.spec, taken });
      // the same options give the same network (and its allocations); changed ones a new one
      const same = existing && JSON.stringify({ ...existing.spec, created: "" }) === JSON.stringify({ ...spec, created: "" });
      if (!same) this.deps.store.save({ spec: { ...spec, created: existing?.spec.created ?? spec.created }, ipam: freshIpam(spec).toJSON() });
    }
    const running = this.deps.containers.list().filter((c) => c.State.Running);
    const endpoints = running.flatMap((c) => c.Endpoints ?? []);
    const byDriver = new Map<string, NetworkSpec[]>();
    for (const r of this.deps.store.list()) byDriver.set(r.spec.driver, [...(byDriver.get(r.spec.driver) ?? []), r.spec]);
    for (const [name, specs] of byDriver) {
      const ids = new Set(specs.map((s) => s.id));
      await (await this.deps.driver(name)).restore(specs, endpoints.filter((e) => ids.has(e.networkId)));
    }
    // sandboxes of containers that are not running any more (a crash between exit and release)
    for (const id of this.deps.sandboxes.list()) {
      const c = this.deps.containers.find(id);
      if (!c?.State.Running) await this.release(id).catch((err: Error) => this.deps.log.warn({ err, container: id }, "cannot remove a stale network sandbox"));
    }
    this.deps.hooks.processSpec.tapPromise("network", async (spec, ctx) => this.applyToSpec(spec, ctx.containerId));
  }

  network(ref: string): NetworkRecord {
    const rec = this.deps.store.find(ref);
    if (!rec) throw errors.networkNotFound(ref);
    return rec;
  }

  // --- a container's run ------------------------------------------------------------------------

  /** The mode a container's NetworkMode means here (`default` and empty are the default network, or none without one). */
  modeOf(c: Pick<ContainerRecord, "HostConfig">): string {
    const mode = c.HostConfig.NetworkMode ?? "";
    if (mode === "" || mode === "default") return this.deps.config().bridge === "none" ? "none" : DEFAULT_NETWORK;
    return mode;
  }

  /** Before the bundle is written: the container's network made, its files written. */
  async attach(c: ContainerRecord): Promise<void> {
    const mode = this.modeOf(c);
    const dir = this.deps.containers.dir(c.Id);
    const files = { hosts: join(dir, "hosts"), resolvConf: join(dir, "resolv.conf"), hostname: join(dir, "hostname") };
    if (mode === "none" || mode === "host") {
      containerFiles(files, { c, config: this.deps.config(), mode, addresses: [], hostGateway: this.hostGateway() });
      this.prepared.set(c.Id, { netns: mode === "host" ? null : undefined, files });
      c.Endpoints = undefined;
      return;
    }
    if (mode.startsWith("container:")) {
      const other = this.deps.containers.get(mode.slice("container:".length));
      if (!other.State.Running) throw errors.networkContainerNotRunning(other.Id);
      const theirs = this.prepared.get(other.Id);
      const otherDir = this.deps.containers.dir(other.Id);
      this.prepared.set(c.Id, {
        netns: this.deps.sandboxes.exists(other.Id) ? this.deps.sandboxes.path(other.Id) : theirs?.netns === null ? null : `/proc/${other.State.Pid}/ns/net`,
        files: theirs?.files ?? { hosts: join(otherDir, "hosts"), resolvConf: join(otherDir, "resolv.conf"), hostname: join(otherDir, "hostname") },
      });
      c.Endpoints = undefined;
      return;
    }
    const rec = this.network(mode);
    const driver = await this.deps.driver(rec.spec.driver);
    const sandbox = await this.deps.sandboxes.create(c.Id);
    let ep: ContainerEndpoint | undefined;
    try {
      ep = this.allocate(rec, c);
      ep.sandbox = sandbox;
      ep.published = await driver.join(rec.spec, ep, sandbox);
      c.Endpoints = [ep];
      const addresses = [ep.ipv4, ep.ipv6].filter((a): a is string => !!a).map((a) => a.split("/")[0]);
      containerFiles(files, { c, config: this.deps.config(), mode, addresses, hostGateway: this.hostGateway() });
      this.prepared.set(c.Id, { netns: sandbox, files });
    } catch (err) {
      if (ep) await driver.leave(rec.spec, ep, sandbox).catch(() => undefined);
      if (ep) this.releaseAddresses(ep);
      await this.deps.sandboxes.remove(c.Id).catch(() => undefined);
      c.Endpoints = undefined;
      throw err;
    }
  }

  /** After the container's process is gone (or its start failed): everything its run held. */
  async release(containerId: string): Promise<void> {
    this.prepared.delete(containerId);
    const c = this.deps.containers.find(containerId);
    const sandbox = this.deps.sandboxes.exists(containerId) ? this.deps.sandboxes.path(containerId) : undefined;
    for (const ep of c?.Endpoints ?? []) {
      if (!ep.endpointId) continue; // released already: what remains names the network for inspect
      const rec = this.deps.store.find(ep.networkId);
      if (rec) {
        await (await this.deps.driver(rec.spec.driver)).leave(rec.spec, ep, sandbox);
        this.releaseAddresses(ep);
      }
    }
    if (c?.Endpoints?.some((ep) => ep.endpointId)) {
      // as Docker shows a stopped container: on its networks, with no address
      c.Endpoints = c.Endpoints.map((ep) => ({ ...ep, endpointId: "", sandbox: undefined, ipv4: undefined, ipv6: undefined, gateway4: undefined, gateway6: undefined, published: [] }));
      if (this.deps.containers.has(c.Id)) this.deps.containers.save(c);
    }
    await this.deps.sandboxes.remove(containerId);
  }

  private allocate(rec: NetworkRecord, c: ContainerRecord): ContainerEndpoint {
    const ipam = NetworkIpam.fromJSON(rec.ipam);
    const endpointId = randomBytes(32).toString("hex");
    const v4 = rec.spec.enableIPv4 && ipam.hasFamily(4) ? ipam.allocate(4, { owner: endpointId }) : undefined;
    const v6 = rec.spec.enableIPv6 && ipam.hasFamily(6) ? ipam.allocate(6, { owner: endpointId }) : undefined;
    rec.ipam = ipam.toJSON();
    this.deps.store.save(rec);
    return {
      containerId: c.Id,
      containerName: c.Name.replace(/^\//, ""),
      networkId: rec.spec.id,
      networkName: rec.spec.name,
      endpointId,
      ifname: "eth0",
      mac: macOf(v4?.address),
      ...(v4 ? { ipv4: v4.cidr, gateway4: v4.defaultRoute } : {}),
      ...(v6 ? { ipv6: v6.cidr, gateway6: v6.defaultRoute } : {}),
      aliases: [],
      ports: portRequests(c),
    };
  }

  private releaseAddresses(ep: EndpointSpec): void {
    const rec = this.deps.store.find(ep.networkId);
    if (!rec) return;
    const ipam = NetworkIpam.fromJSON(rec.ipam);
    ipam.releaseOwner(ep.endpointId);
    rec.ipam = ipam.toJSON();
    this.deps.store.save(rec);
  }

  /** `host-gateway` in ExtraHosts: `--host-gateway-ip`s, else the default bridge's addresses. */
  hostGateway(): string[] {
    const given = this.deps.config()["host-gateway-ip"];
    if (given.length) return given;
    const def = this.deps.store.list().find((r) => r.spec.isDefault);
    return def ? def.spec.subnets.map((s) => s.gateway) : [];
  }

  /** `processSpec`: the network namespace to join (or none for host), and the three files mounted. */
  private applyToSpec(spec: OciSpec, containerId: string): OciSpec {
    const p = this.prepared.get(containerId);
    if (!p) return spec;
    const namespaces = (spec.linux?.namespaces ?? []).filter((n) => n.type !== "network");
    if (p.netns !== null) namespaces.push(p.netns ? { type: "network", path: p.netns } : { type: "network" });
    const mounts = (spec.mounts ?? []).filter((m) => !["/etc/hosts", "/etc/resolv.conf", "/etc/hostname"].includes(m.destination));
    for (const [dest, src] of [["/etc/resolv.conf", p.files.resolvConf], ["/etc/hostname", p.files.hostname], ["/etc/hosts", p.files.hosts]]) {
      mounts.push({ destination: dest, type: "bind", source: src, options: ["rbind", "rprivate"] });
    }
    return { ...spec, mounts, linux: { ...spec.linux, namespaces } };
  }
}

/** The address management of a new network, from its subnets. */
export function freshIpam(spec: NetworkSpec): NetworkIpam {
  return new NetworkIpam(spec.subnets.map((s) => ({ subnet: s.subnet, gateway: s.gateway, ...(s.ipRange ? { ipRange: s.ipRange } : {}), ...(s.auxAddresses ? { auxiliaryAddresses: s.auxAddresses } : {}) })));
}

/** A MAC from an IPv4 address as Docker makes them (02:42 and the four bytes), random without one. */
function macOf(ipv4: string | undefined): string {
  const bytes = ipv4 ? ipv4.split("/")[0].split(".").map(Number) : [...randomBytes(4)];
  return ["02", "42", ...bytes.map((b) => b.toString(16).padStart(2, "0"))].join(":");
}

/** The container's PortBindings (and, with PublishAllPorts, every exposed port) as requests. */
export function portRequests(c: Pick<ContainerRecord, "Config" | "HostConfig">): PortRequest[] {
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
