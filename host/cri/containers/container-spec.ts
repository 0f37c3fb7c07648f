/**
 * What a CRI container's spec gets from its pod, after the base spec (container-config.ts):
 * the pod's pinned namespaces joined by path (network and UTS unless the pod is on the node's
 * network, IPC unless the node's), the pod's hostname, resolv.conf and hosts files, and the
 * kubelet's mounts with their propagation. The PID namespace is the container's own, the
 * node's (no entry), or one joined by path: the pod's init's (pid POD, sandbox/pod-init.ts) or
 * another container's of the pod (pid TARGET), as container-service.ts resolves it.
 */
import type { OciMount, OciNamespace, OciSpec } from "../../../core/contracts/runtime.js";
import type { PinnedNamespaces } from "../sandbox/pinned-namespaces.js";
import type { SandboxRecord } from "../sandbox/sandbox-service.js";
import type { MountMsg } from "./container-config.js";

const PROPAGATION: Record<MountMsg["propagation"], string> = {
  PROPAGATION_PRIVATE: "rprivate",
  PROPAGATION_HOST_TO_CONTAINER: "rslave",
  PROPAGATION_BIDIRECTIONAL: "rshared",
};

/**
 * The base spec's namespaces with the pod's pinned ones joined by path (a kind the pod does not
 * own: the node's, its entry left out), and the PID namespace at `pidPath` when one is given.
 */
export function podNamespaces(spec: OciSpec, pinned: PinnedNamespaces, pidPath?: string): OciNamespace[] {
  const paths = pinned.paths;
  const byType: Partial<Record<OciNamespace["type"], string | undefined>> = { network: paths.net, uts: paths.uts, ipc: paths.ipc };
  const out: OciNamespace[] = [];
  for (const ns of spec.linux?.namespaces ?? []) {
    if (ns.type === "pid" && pidPath) {
      out.push({ type: "pid", path: pidPath });
      continue;
    }
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

/** `pidPath`: the PID namespace to join (the pod's, or a target container's); else the base spec's. */
export function podSpec(spec: OciSpec, pod: SandboxRecord, mounts: readonly MountMsg[], readonlyRootfs: boolean, pidPath?: string): OciSpec {
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
    // rro: read-only submounts too (recursive-read-only.ts)
    options: ["rbind", PROPAGATION[m.propagation] ?? "rprivate", m.readonly ? "ro" : "rw", ...(m.recursiveReadOnly ? ["rro"] : [])],
  }));
  const base = (spec.mounts ?? []).filter((m) => !wanted.has(m.destination));
  const { hostname: _baseHostname, ...rest } = spec;
  // runc makes the container's whole tree rslave by default: a bidirectional mount made inside
  // would then never reach the host. As containerd does: rshared when a mount is bidirectional
  const rootfsPropagation = mounts.some((m) => m.propagation === "PROPAGATION_BIDIRECTIONAL") ? { rootfsPropagation: "rshared" } : {};
  return {
    ...rest,
    // runc sets a hostname only in a UTS namespace of the container's (here: the pod's)
    ...(pod.pinned.paths.uts ? { hostname: pod.hostname } : {}),
    mounts: [...base, ...podFiles.filter((f) => !wanted.has(f.destination)), ...own],
    linux: { ...spec.linux, namespaces: podNamespaces(spec, pod.pinned, pidPath), ...rootfsPropagation },
  };
}

/**
 * CGROUP_MOUNT_MODE_READ_ONLY: the cgroup file system read-only even where the default is
 * writable (a privileged container's, as Docker's); the other modes keep the base spec's.
 */
export function cgroupMountMode(spec: OciSpec, mode: string | undefined): OciSpec {
  if (mode !== "CGROUP_MOUNT_MODE_READ_ONLY") return spec;
  const ro = (m: OciMount): OciMount => (m.type === "cgroup" ? { ...m, options: [...(m.options ?? []).filter((o) => o !== "rw" && o !== "ro"), "ro"] } : m);
  return { ...spec, mounts: (spec.mounts ?? []).map(ro) };
}

/**
 * SupplementalGroupsPolicy Strict: the process's groups are its primary group and the CRI's
 * supplemental_groups only, without the groups listing the user in the image's /etc/group,
 * which the base spec adds as Docker does (and as Merge, the default, keeps).
 */
export function supplementalGroupsPolicy(spec: OciSpec, policy: string | undefined, supplementalGroups: readonly string[]): OciSpec {
  const user = spec.process?.user;
  if (policy !== "Strict" || !user) return spec;
  const additionalGids = [...new Set([user.gid, ...supplementalGroups.map(Number)])];
  return { ...spec, process: { ...spec.process!, user: { ...user, additionalGids } } };
}
