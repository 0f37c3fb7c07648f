/**
 * The stats calls: ContainerStats, ListContainerStats, PodSandboxStats, ListPodSandboxStats.
 * The lists take every container (running or not: one that does not run has its writable layer
 * only) or pod that the filter's id (full or a prefix), pod id and labels select, ANDed; an
 * unknown id in a list's filter selects nothing, in a single call it is NotFound.
 */
import type { CriHandlers } from "../cri-server.js";
import { matchesLabels } from "../label-selector.js";
import type { CriContainerService } from "../containers/container-service.js";
import type { SandboxRecord, SandboxService } from "../sandbox/sandbox-service.js";
import type { CriStatsReader } from "./cri-stats.js";

interface ContainerStatsFilter {
  id: string;
  podSandboxId: string;
  labelSelector: Record<string, string>;
}

interface PodStatsFilter {
  id: string;
  labelSelector: Record<string, string>;
}

export function statsHandlers(stats: CriStatsReader, containers: CriContainerService, sandboxes: SandboxService): CriHandlers {
  const prune = () => stats.prune([...containers.store.list().map((r) => r.id), ...sandboxes.store.list().map((r) => r.id)]);
  const podStats = (pod: SandboxRecord) => stats.pod(pod, containers.ofSandbox(pod.id));
  return {
    async ContainerStats(req: { containerId: string }) {
      return { stats: await stats.container(containers.get(req.containerId)) };
    },

    async ListContainerStats(req: { filter: ContainerStatsFilter | null }) {
      const f = req.filter;
      prune();
      const chosen = containers.store
        .list()
        .filter((r) => !f?.id || r.id.startsWith(f.id))
        .filter((r) => !f?.podSandboxId || r.sandboxId.startsWith(f.podSandboxId))
        .filter((r) => matchesLabels(r.config.labels, f?.labelSelector));
      return { stats: await Promise.all(chosen.map((r) => stats.container(r))) };
    },

    async PodSandboxStats(req: { podSandboxId: string }) {
      return { stats: await podStats(sandboxes.get(req.podSandboxId)) };
    },

    async ListPodSandboxStats(req: { filter: PodStatsFilter | null }) {
      const f = req.filter;
      prune();
      const chosen = sandboxes.store
        .list()
        .filter((r) => !f?.id || r.id.startsWith(f.id))
        .filter((r) => matchesLabels(r.settings.labels, f?.labelSelector));
      return { stats: await Promise.all(chosen.map(podStats)) };
    },
  };
}
