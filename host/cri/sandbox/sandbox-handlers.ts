/** The CRI calls of pod sandboxes, over SandboxService: requests in, CRI messages out. */
import { nowNanos } from "../nanos.js";
import type { CriHandlers } from "../cri-server.js";
import { matchesLabels } from "../label-selector.js";
import type { SandboxRecord, SandboxService } from "./sandbox-service.js";

function brief(rec: SandboxRecord) {
  return {
    id: rec.id,
    metadata: rec.settings.metadata,
    state: rec.state,
    createdAt: rec.createdAt,
    labels: rec.settings.labels,
    annotations: rec.settings.annotations,
    runtimeHandler: rec.runtimeHandler,
  };
}

/** A sandbox's PodSandboxStatus message (also in GetContainerEvents' events). */
export function sandboxStatus(rec: SandboxRecord) {
  const [ip = "", ...more] = rec.state === "SANDBOX_READY" ? rec.ips : [];
  return {
    ...brief(rec),
    network: { ip, additionalIps: more.map((m) => ({ ip: m })) },
    linux: { namespaces: { options: { ...rec.settings.namespaces, targetId: "", usernsOptions: null } } },
  };
}

export function sandboxHandlers(sandboxes: SandboxService): CriHandlers {
  return {
    async RunPodSandbox(req: { config: never; runtimeHandler: string }) {
      return { podSandboxId: await sandboxes.run(req.config, req.runtimeHandler) };
    },

    async StopPodSandbox(req: { podSandboxId: string }) {
      await sandboxes.stop(req.podSandboxId);
      return {};
    },

    async RemovePodSandbox(req: { podSandboxId: string }) {
      await sandboxes.remove(req.podSandboxId);
      return {};
    },

    async PodSandboxStatus(req: { podSandboxId: string; verbose: boolean }) {
      const rec = sandboxes.get(req.podSandboxId);
      const info: Record<string, string> = {};
      if (req.verbose) {
        info.info = JSON.stringify({
          hostname: rec.hostname,
          namespaces: rec.pinned.paths,
          // the init holding the pod's PID namespace (pid POD), its pid as the supervisor knows it
          init: rec.init ? { ...rec.init, pid: (await sandboxes.inits?.pid(rec.id).catch(() => undefined)) ?? 0 } : null,
          files: rec.files,
          cni: rec.network ? { network: rec.network.network.name, file: rec.network.network.file, result: rec.network.result } : null,
          config: rec.settings,
        });
      }
      const containersStatuses = (await sandboxes.containers?.statuses(rec.id)) ?? [];
      return { status: sandboxStatus(rec), info, containersStatuses, timestamp: nowNanos() };
    },

    async ListPodSandbox(req: { filter: { id: string; state: { state: string } | null; labelSelector: Record<string, string> } | null }) {
      const f = req.filter;
      const items = sandboxes.store
        .list()
        .filter((rec) => !f?.id || rec.id.startsWith(f.id))
        .filter((rec) => !f?.state || rec.state === f.state.state)
        .filter((rec) => matchesLabels(rec.settings.labels, f?.labelSelector))
        .sort((a, b) => (BigInt(a.createdAt) < BigInt(b.createdAt) ? -1 : 1))
        .map(brief);
      return { items };
    },
  };
}
