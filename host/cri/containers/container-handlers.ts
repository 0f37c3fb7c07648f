/** The CRI calls of containers, over CriContainerService; and what the sandbox calls need of it. */
import type { CriHandlers } from "../cri-server.js";
import { matchesLabels } from "../label-selector.js";
import type { SandboxContainers } from "../sandbox/sandbox-service.js";
import type { CriContainerRecord, CriContainerService } from "./container-service.js";

function brief(rec: CriContainerRecord) {
  return {
    id: rec.id,
    podSandboxId: rec.sandboxId,
    metadata: rec.config.metadata,
    image: { image: rec.imageSpec, annotations: {} },
    imageRef: rec.imageRef,
    imageId: rec.imageId,
    state: rec.state,
    createdAt: rec.createdAt,
    labels: rec.config.labels,
    annotations: rec.config.annotations,
  };
}

export function containerStatus(rec: CriContainerRecord) {
  const r = rec.config.linux?.resources;
  return {
    id: rec.id,
    metadata: rec.config.metadata,
    state: rec.state,
    createdAt: rec.createdAt,
    startedAt: rec.startedAt,
    finishedAt: rec.finishedAt,
    exitCode: rec.exitCode,
    image: { image: rec.imageSpec, annotations: {} },
    imageRef: rec.imageRef,
    imageId: rec.imageId,
    reason: rec.reason,
    message: rec.message,
    labels: rec.config.labels,
    annotations: rec.config.annotations,
    mounts: rec.config.mounts,
    logPath: rec.logPath,
    resources: r ? { linux: r } : null,
    stopSignal: rec.stopSignal ?? "RUNTIME_DEFAULT",
    // the identity the process was started with (the kubelet's status.containerStatuses[].user)
    user: rec.user ? { linux: { uid: String(rec.user.uid), gid: String(rec.user.gid), supplementalGroups: rec.user.additionalGids.map(String) } } : null,
  };
}

export function containerHandlers(containers: CriContainerService): CriHandlers {
  return {
    async CreateContainer(req: { podSandboxId: string; config: never }) {
      return { containerId: await containers.create(req.podSandboxId, req.config) };
    },
    async StartContainer(req: { containerId: string }) {
      await containers.start(req.containerId);
      return {};
    },
    async StopContainer(req: { containerId: string; timeout: string }) {
      await containers.stop(req.containerId, Number(req.timeout));
      return {};
    },
    async RemoveContainer(req: { containerId: string }) {
      await containers.remove(req.containerId);
      return {};
    },
    async ListContainers(req: { filter: { id: string; state: { state: string } | null; podSandboxId: string; labelSelector: Record<string, string> } | null }) {
      const f = req.filter;
      const list = containers.store
        .list()
        .filter((r) => !f?.id || r.id.startsWith(f.id))
        .filter((r) => !f?.podSandboxId || r.sandboxId.startsWith(f.podSandboxId))
        .filter((r) => !f?.state || r.state === f.state.state)
        .filter((r) => matchesLabels(r.config.labels, f?.labelSelector))
        .sort((a, b) => (BigInt(a.createdAt) < BigInt(b.createdAt) ? -1 : 1));
      return { containers: list.map(brief) };
    },
    async ExecSync(req: { containerId: string; cmd: string[]; timeout: string }) {
      return containers.execSync(req.containerId, req.cmd, Number(req.timeout));
    },
    async ReopenContainerLog(req: { containerId: string }) {
      await containers.reopenLog(req.containerId);
      return {};
    },
    async UpdateContainerResources(req: { containerId: string; linux: never }) {
      await containers.updateResources(req.containerId, req.linux);
      return {};
    },
    async ContainerStatus(req: { containerId: string; verbose: boolean }) {
      const rec = containers.get(req.containerId);
      const info: Record<string, string> = req.verbose ? { info: JSON.stringify({ pid: rec.pid, sandboxId: rec.sandboxId, name: rec.name, config: rec.config }) } : {};
      return { status: containerStatus(rec), info };
    },
  };
}

/** What StopPodSandbox and RemovePodSandbox do to the pod's containers, and its status's list of them. */
export function sandboxContainers(containers: CriContainerService): SandboxContainers {
  return {
    async stopAll(sandboxId) {
      for (const rec of containers.ofSandbox(sandboxId)) await containers.stop(rec.id, 0);
    },
    async removeAll(sandboxId) {
      for (const rec of containers.ofSandbox(sandboxId)) await containers.remove(rec.id);
    },
    async statuses(sandboxId) {
      return containers.ofSandbox(sandboxId).map(containerStatus);
    },
  };
}
