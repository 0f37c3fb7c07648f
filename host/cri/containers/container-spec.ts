/**
 * What a CRI container's spec gets from its pod, after the base spec (container-config.ts):
 * the pod's pinned namespaces joined by path (network and UTS unless the pod is on the node's
 * network, IPC unless the node's), the pod's hostname, resolv.conf and hosts files, and the
 * kubelet's mounts with their propagation. The PID namespace is the container's own (or the
 * node's); a pod-wide one is not made yet.
 */
import type { OciMount, OciNamespace, OciSpec } from "../../../core/contracts/runtime.js";
import type { SandboxRecord } from "../sandbox/sandbox-service.js";
import type { MountMsg } from "./container-config.js";

const PROPAGATION: Record<MountMsg["propagation"], string> = {
  PROPAGATION_PRIVATE: "rprivate",
  PROPAGATION_HOST_TO_CONTAINER: "rslave",
  PROPAGATION_BIDIRECTIONAL: "rshared",
};

function podNamespaces(spec: OciSpec, pod: SandboxRecord): OciNamespace[] {
  const paths = pod.pinned.paths;
  const byType: Partial<Record<OciNamespace["type"], string | undefined>> = { network: paths.net, uts: paths.uts, ipc: paths.ipc };
  const out: OciNamespace[] = [];
  for (const ns of spec.linux?.namespaces ?? []) {
    if (!(ns.type in byType)) {
      out.push(ns);
      continue;
    }
    const path = byType[ns.type];
    // the pod's own namespace, joined; none of its own: the node's (the entry is left out)
    if (path) out.push({ type: ns.type, path });
  }
  return out;
}

export function podSpec(spec: OciSpec, pod: SandboxRecord, mounts: readonly MountMsg[], readonlyRootfs: boolean): OciSpec {
  const fileOpts = ["rbind", "rprivate", readonlyRootfs ? "ro" : "rw"];
  const podFiles: OciMount[] = [
    { destination: "/etc/hostname", type: "bind", source: pod.files.hostname, options: fileOpts },
    { destination: "/etc/resolv.conf", type: "bind", source: pod.files.resolvConf, options: fileOpts },
    { destination: "/etc/hosts", type: "bind", source: pod.files.hosts, options: fileOpts },
  ];
  const wanted = new Set(mounts.map((m) => m.containerPath));
  const own: OciMount[] = mounts.map((m) => ({
    destination: m.containerPath,
    type: "bind",
    source: m.hostPath,
    options: ["rbind", PROPAGATION[m.propagation] ?? "rprivate", m.readonly ? "ro" : "rw"],
  }));
  const base = (spec.mounts ?? []).filter((m) => !wanted.has(m.destination));
  const { hostname: _baseHostname, ...rest } = spec;
  return {
    ...rest,
    // runc sets a hostname only in a UTS namespace of the container's (here: the pod's)
    ...(pod.pinned.paths.uts ? { hostname: pod.hostname } : {}),
    mounts: [...base, ...podFiles.filter((f) => !wanted.has(f.destination)), ...own],
    linux: { ...spec.linux, namespaces: podNamespaces(spec, pod) },
  };
}
