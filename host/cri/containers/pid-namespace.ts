/**
 * Which PID namespace a CRI container runs in, from its `namespace_options.pid` (the pod's
 * when the container gives no namespace options):
 *   NODE: the node's. CONTAINER: its own. POD: the pod's, held by the pod's init
 *   (sandbox/pod-init.ts), when the pod shares one (the pod's own mode is POD); in a pod that
 *   does not, its own, as the kubelet never asks for that mix. TARGET: the namespace of
 *   `target_id`, a running container of the same pod (kubectl debug's ephemeral containers),
 *   as containerd checks it: an unknown target is NotFound, another pod's or one not running
 *   InvalidArgument, each naming the field. Checked at CreateContainer, and again at start
 *   (the target may have stopped meanwhile).
 * A namespace joined by path is found through the supervisor's pid of its first process, asked
 * each time: a pid in a record may have been reused since.
 */
import { errors } from "../../../core/errors.js";
import type { SupervisorClient } from "../../supervisor/client.js";
import type { NamespaceMode } from "../sandbox/sandbox-config.js";
import type { SandboxRecord, SandboxService } from "../sandbox/sandbox-service.js";
import type { ContainerConfigMsg } from "./container-config.js";

const TARGET_FIELD = "config.linux.security_context.namespace_options.target_id";

/** What the checks read of the pod's containers. */
export interface TargetCandidate {
  id: string;
  sandboxId: string;
  state: string;
}

export function pidModeOf(config: ContainerConfigMsg, pod: SandboxRecord): NamespaceMode {
  return config.linux?.securityContext?.namespaceOptions?.pid ?? pod.settings.namespaces.pid;
}

/** The target container of a TARGET pid mode, checked; `find` looks a container up by id. */
export function checkTarget(config: ContainerConfigMsg, sandboxId: string, find: (id: string) => TargetCandidate | undefined): TargetCandidate | undefined {
  const ns = config.linux?.securityContext?.namespaceOptions;
  if (ns?.pid !== "TARGET") return undefined;
  if (!ns.targetId) throw errors.criInvalidArgument(TARGET_FIELD, "a container id is required with pid TARGET");
  const target = find(ns.targetId);
  if (!target) throw errors.criTargetNotFound(TARGET_FIELD, ns.targetId);
  if (target.sandboxId !== sandboxId) throw errors.criInvalidArgument(TARGET_FIELD, `container ${target.id} belongs to pod sandbox ${target.sandboxId}, not to ${sandboxId}`);
  if (target.state !== "CONTAINER_RUNNING") throw errors.criInvalidArgument(TARGET_FIELD, `container ${target.id} is not running (${target.state})`);
  return target;
}

/** The PID namespace to join by path, or undefined for the container's own (or the node's: see pidModeOf). */
export async function pidNamespacePath(
  config: ContainerConfigMsg,
  pod: SandboxRecord,
  sandboxes: SandboxService,
  sup: SupervisorClient,
  find: (id: string) => TargetCandidate | undefined,
): Promise<string | undefined> {
  const mode = pidModeOf(config, pod);
  if (mode === "POD") return sandboxes.pidNamespace(pod);
  if (mode !== "TARGET") return undefined;
  const target = checkTarget(config, pod.id, find)!;
  const state = await sup.get(target.id).catch(() => undefined);
  if (state?.status !== "running") throw errors.criInvalidArgument(TARGET_FIELD, `container ${target.id} is not running`);
  return `/proc/${state.pid}/ns/pid`;
}
