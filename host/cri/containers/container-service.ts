/**
 * CRI containers: created, started, stopped and removed in a pod sandbox, run by a supervisor
 * of their own (`<exec-root>/cri/supervisor`, namespace `k8s.io`), so they never show among
 * Docker's containers and Docker's never among them, while sharing the daemon's images and
 * storage driver.
 *
 * Lifecycle of a container
 *   create: config checked -> name reserved (`k8s_<name>_<pod>_<namespace>_<uid>_<attempt>`)
 *   -> the image resolved -> a writable layer on it -> the record saved: CREATED. A failure
 *   removes the layer and the name.
 *   start: the layer mounted at `<exec-root>/cri/containers/<id>/rootfs` -> the bundle written
 *   (the runtime plugin's base spec, then the pod's part) -> the supervisor runs it through
 *   conmon, its output in the CRI log format at `<pod log dir>/<log_path>` -> RUNNING.
 *   A failed start leaves it EXITED with the error as its message (reason StartError).
 *   exit: the supervisor's event (or the catch-up list after a reconnect) -> EXITED with the
 *   code -> the supervisor forgets it, the bundle goes, the root filesystem is unmounted.
 *   remove: killed if running, then layer, folder and record removed; an unknown id is fine.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Logger } from "pino";
import type { RuntimeDriver } from "../../../core/contracts/runtime.js";
import type { StorageDriver } from "../../../core/contracts/storage.js";
import { errors } from "../../../core/errors.js";
import type { Image, ImageStore } from "../../../core/images/image-store.js";
import { cgroupDriverOf, type RuleHost } from "../../../core/options/rules.js";
import type { DaemonConfig } from "../../../core/options/table.js";
import { SupervisorLink } from "../../containers/supervisor-link.js";
import { selectRuntime } from "../../containers/runtime-select.js";
import { mountSpecs, unmountAll } from "../../storage/mount-specs.js";
import { SupervisorClientError } from "../../supervisor/client.js";
import { KeyedQueue } from "../../../core/async/keyed-queue.js";
import { CriStore } from "../cri-store.js";
import { findImage } from "../image-service.js";
import { nowNanos } from "../nanos.js";
import type { SandboxRecord, SandboxService } from "../sandbox/sandbox-service.js";
import { runtimeCgroupParent } from "../sandbox/sandbox-config.js";
import type { ContainerEventType } from "../events/container-events.js";
import { checkContainerConfig, dockerShape, type ContainerConfigMsg } from "./container-config.js";

type ResourcesMsg = NonNullable<NonNullable<ContainerConfigMsg["linux"]>["resources"]>;
import { cgroupMountMode, podSpec, supplementalGroupsPolicy } from "./container-spec.js";
import { execSync, type ExecSyncTarget } from "./exec-sync.js";
import { recursiveReadOnlySupported } from "./recursive-read-only.js";
import { checkTarget, pidModeOf, pidNamespacePath } from "./pid-namespace.js";
import { effectiveStopSignal, signalNumber } from "./stop-signal.js";

export type CriContainerState = "CONTAINER_CREATED" | "CONTAINER_RUNNING" | "CONTAINER_EXITED" | "CONTAINER_UNKNOWN";

export interface CriContainerRecord {
  id: string;
  name: string;
  sandboxId: string;
  state: CriContainerState;
  createdAt: string;
  startedAt: string;
  finishedAt: string;
  exitCode: number;
  reason: string;
  message: string;
  pid: number;
  /** The image as the kubelet named it, its ID, and the reference (a digested one when the store has it). */
  imageSpec: string;
  imageId: string;
  imageRef: string;
  /** The absolute log file, or "" without one. */
  logPath: string;
  /** The signal StopContainer sends, a name of the CRI's Signal enum (stop-signal.ts); absent in records older than it. */
  stopSignal?: string;
  /** The process's identity as started (ContainerStatus.user); absent before a start, and in records older than it. */
  user?: { uid: number; gid: number; additionalGids: number[] };
  config: ContainerConfigMsg;
}

export interface CriContainerDeps {
  dataRoot: string;
  execRoot: string;
  config: () => DaemonConfig;
  host: RuleHost;
  images: ImageStore;
  storage: StorageDriver;
  runtime: RuntimeDriver;
  sandboxes: SandboxService;
  log: Logger;
  /** Told of each change once it is recorded (GetContainerEvents: events/container-events.ts). */
  events?: (type: ContainerEventType, id: string, sandboxId: string, at: string) => void;
}

/** The supervisor namespace of CRI containers, as containerd keeps them in `k8s.io`. */
export const CRI_SUPERVISOR_NAMESPACE = "k8s.io";

export class CriContainerService {
  readonly store: CriStore<CriContainerRecord>;
  readonly link: SupervisorLink;
  private readonly queue = new KeyedQueue();
  private readonly names = new Map<string, string>();

  constructor(private readonly deps: CriContainerDeps) {
    this.store = new CriStore<CriContainerRecord>(join(deps.dataRoot, "cri", "containers"));
    for (const rec of this.store.list()) this.names.set(rec.name, rec.id);
    const store = this.store;
    this.link = new SupervisorLink({
      containers: {
        // the pods' inits run there too (sandbox/pod-init.ts), under their sandbox's id
        has: (id) => store.get(id) !== undefined || deps.sandboxes.hasInit(id),
        list: () => [
          ...store.list().map((r) => ({ Id: r.id, State: { Running: r.state === "CONTAINER_RUNNING", StartedAt: isoOf(r.startedAt) } as never })),
          ...deps.sandboxes.withInit().map((p) => ({ Id: p.id, State: { Running: true, StartedAt: isoOf(p.init!.startedAt) } as never })),
        ],
      },
      config: deps.config,
      execRoot: deps.execRoot,
      own: { home: join(deps.execRoot, "cri", "supervisor"), namespace: CRI_SUPERVISOR_NAMESPACE },
      log: deps.log.child({ part: "cri-supervisor" }),
      onExit: (id, code, error) => void (deps.sandboxes.hasInit(id) ? deps.sandboxes.initExited(id) : this.recordExit(id, code, error)),
    });
  }

  /** At start: follow the supervisor when any container may be running there. */
  async restore(): Promise<void> {
    if (this.store.list().some((r) => r.state === "CONTAINER_RUNNING")) await this.link.client().catch((err: Error) => this.deps.log.warn({ err }, "the CRI supervisor does not answer"));
  }

  close(): Promise<void> {
    // CRI containers live on without engined, as containerd's do without its CRI plugin
    return this.link.close(true);
  }

  private paths(id: string) {
    const base = join(this.deps.execRoot, "cri", "containers", id);
    return { base, rootfs: join(base, "rootfs"), bundle: join(base, "bundle") };
  }

  get(id: string): CriContainerRecord {
    if (!id) throw errors.criInvalidArgument("container_id", "must not be empty");
    const rec = this.store.find(id);
    if (!rec) throw errors.criContainerNotFound(id);
    return rec;
  }

  usesImage(imageId: string): boolean {
    return this.imageUser(imageId) !== undefined;
  }

  /** A container of ours using the image, if any. */
  imageUser(imageId: string): string | undefined {
    return this.store.list().find((r) => r.imageId === imageId)?.id;
  }

  async create(sandboxId: string, configMsg: ContainerConfigMsg | null): Promise<string> {
    const pod = this.deps.sandboxes.get(sandboxId);
    const config = checkContainerConfig(configMsg);
    if (pod.state !== "SANDBOX_READY") throw errors.criSandboxNotReady(pod.id);
    checkTarget(config, pod.id, (t) => this.store.find(t));
    const rro = config.mounts.findIndex((m) => m.recursiveReadOnly);
    if (rro >= 0 && !recursiveReadOnlySupported(this.deps.config(), pod.runtimeHandler, this.deps.host)) {
      throw errors.criInvalidArgument(`config.mounts[${rro}].recursive_read_only`, `the pod's runtime handler ${JSON.stringify(pod.runtimeHandler)} cannot make recursive read-only mounts`);
    }
    const image = findImage(this.deps.images, config.image!.image);
    if (!image) throw errors.criImageNotFound(config.image!.image);
    const m = pod.settings.metadata;
    const name = `k8s_${config.metadata!.name}_${m.name}_${m.namespace}_${m.uid}_${config.metadata!.attempt ?? 0}`;
    const holder = this.names.get(name);
    if (holder) throw errors.criNameInUse("container", name, holder);
    const id = randomBytes(32).toString("hex");
    this.names.set(name, id);
    try {
      const top = image.chain.at(-1);
      await this.deps.storage.create(id, top?.slice("sha256:".length), { writable: true });
      const rec: CriContainerRecord = {
        id, name, sandboxId: pod.id, state: "CONTAINER_CREATED", createdAt: nowNanos(), startedAt: "0", finishedAt: "0", exitCode: 0, reason: "", message: "", pid: 0,
        imageSpec: config.image!.image, imageId: image.id, imageRef: imageRefOf(image),
        logPath: config.logPath && pod.settings.logDirectory ? join(pod.settings.logDirectory, config.logPath) : "",
        stopSignal: effectiveStopSignal(config.stopSignal, image.config.config?.StopSignal),
        config,
      };
      await this.store.save(rec).catch(async (err: unknown) => {
        await this.store.remove(id).catch(() => {});
        throw err;
      });
      this.deps.events?.("CONTAINER_CREATED_EVENT", id, pod.id, rec.createdAt);
      return id;
    } catch (err) {
      await this.deps.storage.remove(id).catch(() => {});
      this.names.delete(name);
      throw err;
    }
  }

  start(id: string): Promise<void> {
    const found = this.get(id);
    return this.queue.run(found.id, async () => {
      const rec = this.get(found.id);
      if (rec.state !== "CONTAINER_CREATED") throw errors.criContainerState(rec.id, stateWord(rec.state), "only a created container can be started");
      const pod = this.deps.sandboxes.get(rec.sandboxId);
      if (pod.state !== "SANDBOX_READY") throw errors.criSandboxNotReady(pod.id);
      const p = this.paths(rec.id);
      try {
        const sup = await this.link.client();
        const daemon = this.deps.config();
        const runtime = selectRuntime(daemon, pod.runtimeHandler || undefined, this.deps.host);
        await mkdir(p.base, { recursive: true, mode: 0o711 });
        await mountSpecs(await this.deps.storage.mounts(rec.id), p.rootfs);
        let user: CriContainerRecord["user"];
        const shape = dockerShape(rec.config, {
          hostname: pod.hostname, cgroupParent: runtimeCgroupParent(pod.settings.cgroupParent, cgroupDriverOf(daemon, this.deps.host)), hostNetwork: pod.settings.namespaces.network === "NODE", hostIpc: pod.settings.namespaces.ipc === "NODE",
          hostPid: pidModeOf(rec.config, pod) === "NODE",
        });
        const pidPath = await pidNamespacePath(rec.config, pod, this.deps.sandboxes, sup, (t) => this.store.find(t));
        await this.deps.runtime.writeBundle(
          {
            containerId: rec.id, config: shape.create, hostConfig: shape.host, imageConfig: this.deps.images.resolve(rec.imageId).config.config ?? {},
            daemon, host: this.deps.host, rootfs: p.rootfs, bundleDir: p.bundle, runtime: { name: runtime.name, entry: daemon["add-runtime"]?.[runtime.name] },
          },
          async (spec) => {
            const sc = rec.config.linux?.securityContext;
            const out = supplementalGroupsPolicy(cgroupMountMode(podSpec(spec, pod, rec.config.mounts, sc?.readonlyRootfs === true, pidPath), sc?.cgroupMountMode), sc?.supplementalGroupsPolicy, sc?.supplementalGroups ?? []);
            const u = out.process?.user;
            if (u) user = { uid: u.uid, gid: u.gid, additionalGids: u.additionalGids ?? [] };
            return out;
          },
        );
        if (rec.logPath) await mkdir(dirname(rec.logPath), { recursive: true });
        const state = await sup.run({
          id: rec.id, bundle: p.bundle, runtime: { path: runtime.path, args: runtime.args },
          ...(rec.logPath ? { logPath: rec.logPath } : {}),
          ...(rec.config.tty ? { terminal: true } : {}),
          ...(rec.config.stdin ? { stdin: true, leaveStdinOpen: !rec.config.stdinOnce } : {}),
          ...(this.deps.runtime.noPivot(daemon) ? { noPivot: true } : {}),
        });
        const startedAt = nowNanos();
        await this.store.save({ ...rec, state: "CONTAINER_RUNNING", startedAt, pid: state.pid, ...(user ? { user } : {}) });
        this.deps.events?.("CONTAINER_STARTED_EVENT", rec.id, rec.sandboxId, startedAt);
      } catch (err) {
        await this.release(rec.id).catch(() => {});
        const message = (err as Error).message;
        const at = nowNanos();
        await this.store.save({ ...rec, state: "CONTAINER_EXITED", startedAt: at, finishedAt: at, exitCode: 128, reason: "StartError", message });
        this.deps.events?.("CONTAINER_STOPPED_EVENT", rec.id, rec.sandboxId, at);
        throw err;
      }
    });
  }

  /** Unmounts the root filesystem, removes the run folder, and has the supervisor forget it (all safe to repeat). */
  private async release(id: string): Promise<void> {
    const p = this.paths(id);
    await this.link.forget(id).catch(() => {});
    await unmountAll(p.rootfs);
    await rm(p.base, { recursive: true, force: true });
  }

  private recordExit(id: string, exitCode: number, error = ""): Promise<void> {
    return this.queue.run(id, async () => {
      const rec = this.store.get(id);
      if (!rec) return void (await this.release(id).catch(() => {}));
      if (rec.state === "CONTAINER_RUNNING") {
        const finishedAt = nowNanos();
        // the kubelet (and critest) read an OOM kill in the reason, as containerd and CRI-O say it;
        // conmon notes it for the supervisor, asked before it forgets the container (release)
        const oom = exitCode !== 0 && (await this.link.client().then((sup) => sup.get(id)).catch(() => undefined))?.oomKilled === true;
        const reason = oom ? "OOMKilled" : exitCode === 0 ? "Completed" : "Error";
        await this.store.save({ ...rec, state: "CONTAINER_EXITED", finishedAt, exitCode, reason, message: error, pid: 0 });
        this.deps.events?.("CONTAINER_STOPPED_EVENT", rec.id, rec.sandboxId, finishedAt);
      }
      await this.release(id).catch((err: Error) => this.deps.log.warn({ err, container: id }, "cleanup after an exit failed"));
    }).catch((err: Error) => this.deps.log.error({ err, container: id }, "recording a CRI container's exit failed"));
  }

  /**
   * The container's stop signal (stop-signal.ts: the kubelet's, else the image's, else SIGTERM),
   * then SIGKILL after `timeout` seconds; with no timeout, SIGKILL at once (containerd's
   * StopContainer). Stopping a stopped one is fine.
   */
  async stop(id: string, timeout: number): Promise<void> {
    if (!id) throw errors.criInvalidArgument("container_id", "must not be empty");
    // CRI: StopContainer is idempotent; an unknown (already removed) container is no error, as
    // containerd answers and critest's Idempotence asserts
    const rec = this.store.find(id);
    if (!rec) return;
    if (rec.state !== "CONTAINER_RUNNING") return;
    const sup = await this.link.client();
    const signal = timeout > 0 ? String(signalNumber(rec.stopSignal ?? this.imageStopSignal(rec)) ?? "TERM") : "KILL";
    const code = await sup.stop(rec.id, Math.max(0, timeout), signal).catch((err: Error) => {
      if (err instanceof SupervisorClientError && (err.status === 404 || err.status === 409)) return 137;
      throw err;
    });
    await this.recordExit(rec.id, code);
  }

  /** For records made before the stop signal was kept: the image's, as a Signal name. */
  private imageStopSignal(rec: CriContainerRecord): string {
    try {
      return effectiveStopSignal(undefined, this.deps.images.resolve(rec.imageId).config.config?.StopSignal);
    } catch {
      // the image is gone (it cannot be removed while a container uses it, but a store can be damaged)
      return "SIGTERM";
    }
  }

  async remove(id: string): Promise<void> {
    if (!id) throw errors.criInvalidArgument("container_id", "must not be empty");
    const found = this.store.find(id);
    if (!found) return;
    await this.stop(found.id, 0);
    await this.queue.run(found.id, async () => {
      const rec = this.store.get(found.id);
      if (!rec) return;
      await this.release(rec.id);
      await this.deps.storage.remove(rec.id);
      await this.store.remove(rec.id);
      this.names.delete(rec.name);
      this.deps.events?.("CONTAINER_DELETED_EVENT", rec.id, rec.sandboxId, nowNanos());
    });
  }

  /** Runs a command in the running container to its end (exec-sync.ts). */
  async execSync(id: string, cmd: string[], timeoutSeconds: number) {
    return execSync(await this.link.client(), this.deps.runtime, this.execTarget(id), cmd, timeoutSeconds);
  }

  /** Where a command runs in the container (its bundle and root filesystem); it must be running. */
  execTarget(id: string): ExecSyncTarget {
    const rec = this.running(id, "a command runs only in a running container");
    const p = this.paths(rec.id);
    return { id: rec.id, bundle: p.bundle, rootfs: p.rootfs };
  }

  /** The container's record, or FAILED_PRECONDITION (`want` says why) when it does not run. */
  running(id: string, want: string): CriContainerRecord {
    const rec = this.get(id);
    if (rec.state !== "CONTAINER_RUNNING") throw errors.criContainerState(rec.id, stateWord(rec.state), want);
    return rec;
  }

  /** The kubelet rotated the log: conmon starts a new file at the log path. Only while it runs. */
  async reopenLog(id: string): Promise<void> {
    const rec = this.get(id);
    if (rec.state !== "CONTAINER_RUNNING") throw errors.criContainerState(rec.id, stateWord(rec.state), "only a running container's log can be reopened");
    if (!rec.logPath) throw errors.criContainerState(rec.id, "running without a log_path", "there is no log file to reopen");
    await (await this.link.client()).reopenLog(rec.id);
  }

  /**
   * New CPU and memory limits: applied to a running container's cgroup (`runtime update`), and
   * kept in the record for its next start and its status either way.
   */
  updateResources(id: string, resources: ResourcesMsg | null): Promise<void> {
    if (!resources) throw errors.criInvalidArgument("linux", "the Linux resources are required");
    const found = this.get(id);
    return this.queue.run(found.id, async () => {
      const rec = this.get(found.id);
      if (rec.state === "CONTAINER_RUNNING") {
        const oci: Record<string, unknown> = {};
        const cpu = {
          ...(Number(resources.cpuShares) > 0 ? { shares: Number(resources.cpuShares) } : {}),
          ...(Number(resources.cpuQuota) > 0 ? { quota: Number(resources.cpuQuota) } : {}),
          ...(Number(resources.cpuPeriod) > 0 ? { period: Number(resources.cpuPeriod) } : {}),
          ...(resources.cpusetCpus ? { cpus: resources.cpusetCpus } : {}),
          ...(resources.cpusetMems ? { mems: resources.cpusetMems } : {}),
        };
        if (Object.keys(cpu).length) oci.cpu = cpu;
        if (Number(resources.memoryLimitInBytes) > 0) {
          const swap = Number(resources.memorySwapLimitInBytes);
          oci.memory = { limit: Number(resources.memoryLimitInBytes), ...(swap > 0 ? { swap } : {}) };
        }
        await (await this.link.client()).update(rec.id, oci);
      }
      const linux = { ...(rec.config.linux ?? { securityContext: null }), resources: { ...(rec.config.linux?.resources ?? {}), ...resources } };
      await this.store.save({ ...rec, config: { ...rec.config, linux } as ContainerConfigMsg });
    });
  }

  ofSandbox(sandboxId: string): CriContainerRecord[] {
    return this.store.list().filter((r) => r.sandboxId === sandboxId);
  }
}

/** A record's nanoseconds as an ISO time. */
function isoOf(nanos: string): string {
  return new Date(Number(BigInt(nanos || "0") / 1_000_000n)).toISOString();
}

function stateWord(state: CriContainerState): string {
  return state.replace("CONTAINER_", "").toLowerCase();
}

/** The reference the kubelet compares: a digested name when the store has one, else the ID. */
function imageRefOf(image: Image): string {
  return image.references.find((r) => r.includes("@")) ?? image.id;
}

export type { SandboxRecord };
