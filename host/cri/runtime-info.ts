/**
 * Version and Status: who answers, and whether it can run pods. RuntimeReady says the OCI
 * runtime can be run (the default runtime's binary is there); NetworkReady says a CNI network
 * configuration with all its plugins is there (cni/cni-config.ts), with containerd's reason
 * `NetworkPluginNotReady` when not, which keeps a kubelet from placing pods that need the pod
 * network while it still runs hostNetwork ones.
 */
import { ENGINE_VERSION } from "../../core/version.js";
import type { RuleHost } from "../../core/options/rules.js";
import { cgroupDriverOf } from "../../core/options/rules.js";
import type { DaemonConfig } from "../../core/options/table.js";
import { selectRuntime } from "../containers/runtime-select.js";
import { loadPodNetwork, type CniDirs } from "./cni/cni-config.js";
import { recursiveReadOnlySupported } from "./containers/recursive-read-only.js";

/** The CRI version of this runtime.v1 API, as containerd and CRI-O answer it. */
export const CRI_KUBELET_API_VERSION = "0.1.0";
export const CRI_RUNTIME_NAME = "engine";
export const CRI_RUNTIME_API_VERSION = "v1";

export interface RuntimeInfoDeps {
  config: () => DaemonConfig;
  host: RuleHost;
  cniDirs: () => CniDirs;
  /** How many GetContainerEvents streams are open (in the verbose info: a client gone must not stay counted). */
  eventListeners: () => number;
  /** The pod CIDRs the kubelet gave (UpdateRuntimeConfig). */
  podCidrs: () => string[];
}

interface Condition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

function runtimeCondition(deps: RuntimeInfoDeps): Condition {
  try {
    selectRuntime(deps.config(), undefined, deps.host);
    return { type: "RuntimeReady", status: true, reason: "", message: "" };
  } catch (err) {
    return { type: "RuntimeReady", status: false, reason: "RuntimeNotReady", message: (err as Error).message };
  }
}

function networkCondition(deps: RuntimeInfoDeps): Condition {
  const found = loadPodNetwork(deps.cniDirs());
  if ("network" in found) return { type: "NetworkReady", status: true, reason: "", message: "" };
  return { type: "NetworkReady", status: false, reason: "NetworkPluginNotReady", message: `Network plugin returns error: ${found.problem}` };
}

/** The runtime handlers a RunPodSandbox may name: "" (the default runtime) and every configured runtime. */
export function runtimeHandlers(config: DaemonConfig): string[] {
  return ["", ...Object.keys(config["add-runtime"] ?? {}).sort()];
}

export function runtimeInfoHandlers(deps: RuntimeInfoDeps) {
  return {
    async Version() {
      return { version: CRI_KUBELET_API_VERSION, runtimeName: CRI_RUNTIME_NAME, runtimeVersion: ENGINE_VERSION, runtimeApiVersion: CRI_RUNTIME_API_VERSION };
    },

    /** The cgroup driver, for kubelets that take it from the runtime rather than from their own flag. */
    async RuntimeConfig() {
      return { linux: { cgroupDriver: cgroupDriverOf(deps.config(), deps.host) === "systemd" ? "SYSTEMD" : "CGROUPFS" } };
    },

    async Status(req: { verbose: boolean }) {
      const conditions = [runtimeCondition(deps), networkCondition(deps)];
      const config = deps.config();
      const info: Record<string, string> = {};
      if (req.verbose) {
        const found = loadPodNetwork(deps.cniDirs());
        info.config = JSON.stringify({
          cgroupDriver: cgroupDriverOf(config, deps.host),
          cni: { ...deps.cniDirs(), network: "network" in found ? found.network : null },
          defaultRuntime: config["default-runtime"],
          podCidrs: deps.podCidrs(),
        });
        info.containerEvents = JSON.stringify({ listeners: deps.eventListeners() });
      }
      const handlers = runtimeHandlers(config).map((name) => ({ name, features: { recursiveReadOnlyMounts: recursiveReadOnlySupported(config, name, deps.host), userNamespaces: false } }));
      // supplemental_groups_policy: Strict is honoured (containers/container-spec.ts), and
      // ContainerStatus gives the user a container runs as
      return { status: { conditions }, info, runtimeHandlers: handlers, features: { supplementalGroupsPolicy: true } };
    },
  };
}
