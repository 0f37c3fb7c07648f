/**
 * The pod sandbox calls: RunPodSandbox, StopPodSandbox, RemovePodSandbox, PodSandboxStatus,
 * ListPodSandbox.
 *
 * Lifecycle of a sandbox
 *   run: settings checked (sandbox-config.ts) -> name reserved -> namespaces pinned
 *   (pinned-namespaces.ts: network unless on the node's, IPC unless the node's, UTS unless on
 *   the node's network) -> sysctls set in them -> CNI attaches the network (cni/pod-network.ts)
 *   -> hostname, resolv.conf, hosts written -> with pid POD, the pod's init started, PID 1 of
 *   the namespace its containers share (pod-init.ts) -> the record saved: READY. A failing
 *   step undoes every earlier one, record and name included: nothing half-made stays.
 *   stop: its containers stopped -> the init killed (every process left in its namespace with
 *   it) -> the network released (CNI DEL: addresses, veth, port rules) and the network
 *   namespace unpinned -> NOTREADY (saved). Stopping again does nothing. An init that exits
 *   by itself (killed from outside) makes the pod NOTREADY, as a dead pause container does
 *   under containerd: the kubelet then makes the pod again.
 *   remove: stopped first, its containers removed, the other namespaces unpinned, folder and
 *   record removed. Removing an unknown sandbox succeeds (the call is idempotent).
 */
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { hostname as nodeHostname } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import { errors } from "../../../core/errors.js";
import { parseMountinfo, readMountinfo } from "../../../core/mountinfo.js";
import type { DaemonConfig } from "../../../core/options/table.js";
import { attachPod, detachPod, podIps, type PodAttachment } from "../cni/pod-network.js";
import type { CniDirs } from "../cni/cni-config.js";
import { KeyedQueue } from "../../../core/async/keyed-queue.js";
import { CriStore } from "../cri-store.js";
import { nowNanos } from "../nanos.js";
import { runtimeHandlers } from "../runtime-info.js";
import type { PodInits } from "./pod-init.js";
import { pinNamespaces, runInNamespaces, unpinNamespace, unpinNamespaces, type PinnedKind, type PinnedNamespaces } from "./pinned-namespaces.js";
import { checkSandboxConfig, sandboxName, sysctlNamespace, type PodSandboxConfigMsg, type SandboxSettings } from "./sandbox-config.js";
import { writeSandboxFiles, type SandboxFiles } from "./sandbox-files.js";

export type SandboxState = "SANDBOX_READY" | "SANDBOX_NOTREADY";

export interface SandboxRecord {
  id: string;
  name: string;
  createdAt: string;
  state: SandboxState;
  runtimeHandler: string;
  settings: SandboxSettings;
  /** The hostname the pod has (the node's on the node's network or when none was given). */
  hostname: string;
  pinned: PinnedNamespaces;
  files: SandboxFiles;
  /** The CNI attachment while the pod has its network (not on the node's, not once stopped). */
  network?: PodAttachment;
  ips: string[];
  /** Set while the pod's init runs (pid POD): a container of the supervisor's, its id the sandbox's. */
  init?: { startedAt: string };
}

/** What the container side does for the sandbox calls (containers/container-service.ts). */
export interface SandboxContainers {
  stopAll(sandboxId: string): Promise<void>;
  removeAll(sandboxId: string): Promise<void>;
  statuses(sandboxId: string): Promise<object[]>;
}

export interface SandboxDeps {
  dataRoot: string;
  execRoot: string;
  config: () => DaemonConfig;
  cniDirs: () => CniDirs;
  /** The node's pod CIDRs as CNI's `ipRanges` (UpdateRuntimeConfig: pod-cidr.ts), undefined before the kubelet gave one. */
  ipRanges?: () => { subnet: string }[][] | undefined;
  log: Logger;
}

export class SandboxService {
  readonly store: CriStore<SandboxRecord>;
  private readonly queue = new KeyedQueue();
  /** Reserved names: those of the records, and of runs under way. */
  private readonly names = new Map<string, string>();
  /** The sandboxes whose RunPodSandbox is under way (an init may run before the record is saved). */
  private readonly making = new Set<string>();
  containers?: SandboxContainers;
  /** The inits of pods sharing a PID namespace (pod-init.ts); set once the CRI supervisor's link exists. */
  inits?: PodInits;

  constructor(private readonly deps: SandboxDeps) {
    this.store = new CriStore<SandboxRecord>(join(deps.dataRoot, "cri", "sandboxes"));
    for (const rec of this.store.list()) this.names.set(rec.name, rec.id);
  }

  /** At start: a READY sandbox whose namespaces are gone (the node rebooted; the exec root is a tmpfs) is NOTREADY. */
  async restore(): Promise<void> {
    const mounted = new Set(parseMountinfo(readMountinfo()).map((m) => m.mountPoint));
    for (const rec of this.store.list()) {
      const lost = Object.values(rec.pinned.paths).some((p) => p && !mounted.has(p));
      if (rec.state === "SANDBOX_READY" && lost) {
        this.deps.log.warn({ sandbox: rec.id }, "the pod's namespaces are gone: the sandbox is not ready");
        await this.store.save({ ...rec, state: "SANDBOX_NOTREADY" });
      }
    }
  }

  /**
   * At start, once the supervisor can be asked: a READY sandbox whose init is gone (the node
   * rebooted; it was killed while engined was down) is NOTREADY.
   */
  async restoreInits(): Promise<void> {
    for (const rec of this.store.list().filter((r) => r.state === "SANDBOX_READY" && r.init)) {
      let pid: number | undefined;
      try {
        pid = await this.inits?.pid(rec.id);
      } catch (err) {
        // not known either way: the link's catch-up tells the exit once the supervisor answers
        this.deps.log.warn({ err, sandbox: rec.id }, "cannot ask the supervisor for the pod's init");
        continue;
      }
      if (pid === undefined) await this.initExited(rec.id);
    }
  }

  /**
   * Whether `id` is the supervisor id of a pod's init, running or being started (the supervisor
   * link's catch-up removes what it does not know, and tells exits by id).
   */
  hasInit(id: string): boolean {
    return this.making.has(id) || this.store.get(id)?.init !== undefined;
  }

  /** The pods whose init runs, for the supervisor link's catch-up. */
  withInit(): SandboxRecord[] {
    return this.store.list().filter((r) => r.init);
  }

  /** The pod's init exited though nobody stopped the pod: its PID namespace is gone, and the pod with it (NOTREADY). */
  initExited(id: string): Promise<void> {
    return this.queue.run(id, async () => {
      const rec = this.store.get(id);
      if (!rec?.init) return;
      this.deps.log.warn({ sandbox: id }, "the pod's init exited: the sandbox is not ready");
      await this.inits?.stop(rec.id, this.dir(rec.id)).catch((err: Error) => this.deps.log.warn({ err, sandbox: id }, "cleaning up after the pod's init failed"));
      await this.store.save({ ...rec, state: "SANDBOX_NOTREADY", init: undefined });
    });
  }

  /** The path of the pod's PID namespace for a container to join (pid POD); undefined when the pod has no init. */
  async pidNamespace(rec: SandboxRecord): Promise<string | undefined> {
    if (!rec.init || !this.inits) return undefined;
    return this.inits.namespacePath(rec.id);
  }

  private dir(id: string): string {
    return join(this.deps.execRoot, "cri", "sandboxes", id);
  }

  /** The sandbox an id names (full or a unique prefix), else NotFound. */
  get(id: string): SandboxRecord {
    if (!id) throw errors.criInvalidArgument("pod_sandbox_id", "must not be empty");
    const rec = this.store.find(id);
    if (!rec) throw errors.criSandboxNotFound(id);
    return rec;
  }

  async run(config: PodSandboxConfigMsg | null, runtimeHandler: string): Promise<string> {
    const settings = checkSandboxConfig(config);
    if (!runtimeHandlers(this.deps.config()).includes(runtimeHandler)) throw errors.criRuntimeHandler(runtimeHandler);
    const name = sandboxName(settings);
    const holder = this.names.get(name);
    if (holder) throw errors.criNameInUse("pod sandbox", name, holder);
    const id = randomBytes(32).toString("hex");
    this.names.set(name, id);
    this.making.add(id);
    const undo: (() => Promise<unknown>)[] = [() => Promise.resolve(this.names.delete(name))];
    try {
      return await this.queue.run(id, () => this.make(id, name, settings, runtimeHandler, undo));
    } catch (err) {
      for (const step of undo.reverse()) await step().catch((e: Error) => this.deps.log.warn({ err: e, sandbox: id }, "undoing a failed RunPodSandbox"));
      throw err;
    } finally {
      this.making.delete(id);
    }
  }

  private async make(id: string, name: string, s: SandboxSettings, runtimeHandler: string, undo: (() => Promise<unknown>)[]): Promise<string> {
    const hostNetwork = s.namespaces.network === "NODE";
    const hostname = hostNetwork || !s.hostname ? nodeHostname() : s.hostname;
    const dir = this.dir(id);
    undo.push(() => rm(dir, { recursive: true, force: true }));
    const kinds: PinnedKind[] = [...(hostNetwork ? [] : (["net", "uts"] as const)), ...(s.namespaces.ipc === "NODE" ? [] : (["ipc"] as const))];
    const pinned = await pinNamespaces(join(dir, "ns"), kinds, hostname);
    undo.push(() => unpinNamespaces(pinned));
    for (const [key, value] of Object.entries(s.sysctls)) {
      await runInNamespaces(pinned, [sysctlNamespace(key)!], ["sysctl", "-w", `${key}=${value}`]).catch((err: { stderr?: string }) => {
        throw errors.criInvalidArgument(`config.linux.sysctls[${key}]`, String(err.stderr ?? err).trim());
      });
    }
    let network: PodAttachment | undefined;
    if (!hostNetwork) {
      const capabilities = {
        portMappings: s.portMappings
          .filter((p) => p.hostPort > 0)
          .map((p) => ({ hostPort: p.hostPort, containerPort: p.containerPort, protocol: p.protocol.toLowerCase(), hostIP: p.hostIp })),
        ...(s.dns ? { dns: s.dns } : {}),
        ...(this.deps.ipRanges?.() ? { ipRanges: this.deps.ipRanges() } : {}),
      };
      network = await attachPod(this.deps.cniDirs(), pinned.paths.net!, { sandboxId: id, ...s.metadata }, capabilities);
      const attached = network;
      undo.push(() => detachPod(attached));
    }
    const ips = podIps(network?.result);
    const files = await writeSandboxFiles(dir, { hostname, dns: s.dns, hostNetwork, ips });
    let init: SandboxRecord["init"];
    if (s.namespaces.pid === "POD") {
      if (!this.inits) throw errors.criPodInit("the supervisor is not linked yet");
      const inits = this.inits;
      await inits.start({ id, dir, pinned, hostname, cgroupParent: s.cgroupParent, runtimeHandler });
      undo.push(() => inits.stop(id, dir));
      init = { startedAt: nowNanos() };
    }
    const rec: SandboxRecord = { id, name, createdAt: nowNanos(), state: "SANDBOX_READY", runtimeHandler, settings: s, hostname, pinned, files, network, ips, init };
    undo.push(() => this.store.remove(id));
    await this.store.save(rec);
    this.deps.log.info({ sandbox: id, name, ips }, "pod sandbox ready");
    return id;
  }

  async stop(id: string): Promise<void> {
    if (!id) throw errors.criInvalidArgument("pod_sandbox_id", "must not be empty");
    // CRI: StopPodSandbox is idempotent and must not fail once the pod's resources are gone, an
    // unknown (already removed) pod included, as containerd answers and critest's Idempotence asserts
    const found = this.store.find(id);
    if (!found) return;
    await this.queue.run(found.id, async () => {
      const rec = this.store.get(found.id);
      if (!rec) return;
      await this.containers?.stopAll(rec.id);
      if (rec.init) await this.inits?.stop(rec.id, this.dir(rec.id));
      if (rec.network) await detachPod(rec.network);
      await unpinNamespace(rec.pinned, "net");
      if (rec.state !== "SANDBOX_NOTREADY" || rec.network || rec.init) await this.store.save({ ...rec, state: "SANDBOX_NOTREADY", network: undefined, init: undefined });
    });
  }

  async remove(id: string): Promise<void> {
    if (!id) throw errors.criInvalidArgument("pod_sandbox_id", "must not be empty");
    const found = this.store.find(id);
    if (!found) return;
    await this.stop(found.id);
    await this.queue.run(found.id, async () => {
      const rec = this.store.get(found.id);
      if (!rec) return;
      await this.containers?.removeAll(rec.id);
      await unpinNamespaces(rec.pinned);
      await rm(this.dir(rec.id), { recursive: true, force: true });
      await this.store.remove(rec.id);
      this.names.delete(rec.name);
    });
  }
}
