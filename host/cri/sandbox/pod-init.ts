/**
 * The PID namespace of a pod that shares one among its containers (`namespace_options.pid =
 * POD`, Kubernetes' shareProcessNamespace). A PID namespace cannot be pinned by a bind mount
 * as the pod's other namespaces are (pinned-namespaces.ts): it lives only as long as its first
 * process, and no process can join it after that one is gone. So the pod gets a tiny init:
 * catatonit (Debian's static build, podman's pause process) in pause mode, PID 1 of a new PID
 * namespace, reaping the zombies its containers' orphans become. It runs as a container of the
 * CRI supervisor (conmon + runc, namespace `k8s.io`, the supervisor id being the sandbox id),
 * so it outlives engined as the pod's containers do; its root is an empty read-only folder with
 * the binary bind-mounted in, it has no capabilities, and it joins the pod's network, IPC and
 * UTS namespaces. The pod's containers join its namespace through `/proc/<pid>/ns/pid`, the
 * pid read from the supervisor each time (never a stale record: a pid can be reused).
 *
 * Killed at StopPodSandbox: the kernel then kills every process left in the namespace.
 * Files: `<sandbox dir>/init/rootfs` (empty), `<sandbox dir>/init/bundle/config.json`.
 */
import { accessSync, constants } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { delimiter, join } from "node:path";
import type { OciSpec, RuntimeDriver } from "../../../core/contracts/runtime.js";
import { errors } from "../../../core/errors.js";
import { cgroupDriverOf, type RuleHost } from "../../../core/options/rules.js";
import type { DaemonConfig } from "../../../core/options/table.js";
import { selectRuntime } from "../../containers/runtime-select.js";
import { SupervisorClientError, type SupervisorClient } from "../../supervisor/client.js";
import { podNamespaces } from "../containers/container-spec.js";
import type { PinnedNamespaces } from "./pinned-namespaces.js";
import { runtimeCgroupParent } from "./sandbox-config.js";

/** Where the binary appears inside the init's (otherwise empty) root. */
const INIT_IN_ROOT = "/catatonit";

/** Where Debian puts catatonit, and where podman's packages do, tried after PATH. */
const KNOWN_PLACES = ["/usr/bin/catatonit", "/usr/libexec/podman/catatonit"];

export interface PodInitDeps {
  client: () => Promise<SupervisorClient>;
  /** The supervisor's removal of the init once it has exited (SupervisorLink.forget). */
  forget: (id: string) => Promise<void>;
  runtime: RuntimeDriver;
  host: RuleHost;
  config: () => DaemonConfig;
}

/** What the init is started for: the pod's id (also the init's), folder, namespaces, cgroup and runtime. */
export interface PodOfInit {
  id: string;
  dir: string;
  pinned: PinnedNamespaces;
  hostname: string;
  cgroupParent: string;
  runtimeHandler: string;
}

/** catatonit on PATH or in its usual places; a clear error when it is not installed. */
export function findCatatonit(pathEnv: string = process.env.PATH ?? ""): string {
  const candidates = [...pathEnv.split(delimiter).filter(Boolean).map((d) => join(d, "catatonit")), ...KNOWN_PLACES];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw errors.criPodInit("catatonit is not installed (Debian: apt-get install catatonit); it is the init of pods that share their process namespace (namespace_options.pid = POD)");
}

export class PodInits {
  constructor(private readonly deps: PodInitDeps) {}

  private paths(dir: string) {
    const base = join(dir, "init");
    return { base, rootfs: join(base, "rootfs"), bundle: join(base, "bundle") };
  }

  /** Starts the pod's init under the supervisor; resolves with its pid (on the host). */
  async start(pod: PodOfInit): Promise<number> {
    const binary = findCatatonit();
    const p = this.paths(pod.dir);
    await mkdir(p.rootfs, { recursive: true, mode: 0o755 });
    const daemon = this.deps.config();
    const runtime = selectRuntime(daemon, pod.runtimeHandler || undefined, this.deps.host);
    await this.deps.runtime.writeBundle(
      {
        containerId: pod.id,
        config: { Image: "", Hostname: pod.hostname, Entrypoint: [INIT_IN_ROOT, "-P"], Env: [], Labels: {} },
        hostConfig: { CapDrop: ["ALL"], ReadonlyRootfs: true, SecurityOpt: ["no-new-privileges"], CgroupParent: runtimeCgroupParent(pod.cgroupParent, cgroupDriverOf(daemon, this.deps.host)), IpcMode: "private" },
        imageConfig: {}, daemon, host: this.deps.host, rootfs: p.rootfs, bundleDir: p.bundle, runtime: { name: runtime.name, entry: daemon["add-runtime"]?.[runtime.name] },
      },
      async (spec: OciSpec) => {
        const { hostname: _baseHostname, ...rest } = spec;
        return {
          ...rest,
          // runc sets a hostname only in a UTS namespace of the container's (here: the pod's)
          ...(pod.pinned.paths.uts ? { hostname: pod.hostname } : {}),
          mounts: [...(spec.mounts ?? []), { destination: INIT_IN_ROOT, type: "bind", source: binary, options: ["bind", "ro"] }],
          linux: { ...spec.linux, namespaces: podNamespaces(spec, pod.pinned) },
        };
      },
    );
    const sup = await this.deps.client();
    try {
      const state = await sup.run({ id: pod.id, bundle: p.bundle, runtime: { path: runtime.path, args: runtime.args }, ...(this.deps.runtime.noPivot(daemon) ? { noPivot: true } : {}) });
      return state.pid;
    } catch (err) {
      await this.stop(pod.id, pod.dir).catch(() => {});
      throw errors.criPodInit(`cannot start the pod's init: ${(err as Error).message}`);
    }
  }

  /** The init's pid while it runs, else undefined (exited, or unknown to the supervisor). */
  async pid(id: string): Promise<number | undefined> {
    const sup = await this.deps.client();
    const state = await sup.get(id).catch((err: Error) => {
      if (err instanceof SupervisorClientError && err.status === 404) return undefined;
      throw err;
    });
    return state?.status === "running" ? state.pid : undefined;
  }

  /** The path of the pod's PID namespace, for a container to join; an error when the init does not run. */
  async namespacePath(id: string): Promise<string> {
    const pid = await this.pid(id);
    if (!pid) throw errors.criPodInit("the pod's init is not running: its process namespace is gone (stop and run the pod again)");
    return `/proc/${pid}/ns/pid`;
  }

  /** Kills the init (and with it every process left in the namespace), has the supervisor forget it, removes its files. Safe to repeat. */
  async stop(id: string, dir: string): Promise<void> {
    const sup = await this.deps.client();
    await sup.stop(id, 0, "KILL").catch((err: Error) => {
      if (!(err instanceof SupervisorClientError && (err.status === 404 || err.status === 409))) throw err;
    });
    await this.deps.forget(id);
    await rm(this.paths(dir).base, { recursive: true, force: true });
  }
}
