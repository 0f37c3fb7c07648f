/**
 * A pod's network through CNI: the loopback plugin brings `lo` up in the pod's network
 * namespace, then the pod network (cni-config.ts) attaches `eth0`. What DEL needs later is
 * kept with the sandbox (as libcni keeps its cache): the network configuration as it was at
 * ADD (a config changed or removed since must not keep a pod's addresses and port rules from
 * being released) and the result.
 */
import { errors } from "../../../core/errors.js";
import { cniAdd, cniDel, type CniAttachment, type CniResult } from "./cni-exec.js";
import { loadPodNetwork, type CniDirs, type CniNetwork } from "./cni-config.js";

export interface PodAttachment {
  network: CniNetwork;
  attachment: CniAttachment;
  result: CniResult;
  binDirs: string[];
}

const LOOPBACK: CniNetwork = { file: "", name: "cni-loopback", cniVersion: "1.0.0", plugins: [{ type: "loopback" }] };

export interface PodIdentity {
  sandboxId: string;
  name: string;
  namespace: string;
  uid: string;
}

/** Attaches the pod's network namespace; undoes what it made when a step fails. */
export async function attachPod(dirs: CniDirs, netns: string, pod: PodIdentity, capabilities: Record<string, unknown>): Promise<PodAttachment> {
  const found = loadPodNetwork(dirs);
  if (!("network" in found)) throw errors.criNetworkConfig(found.problem);
  const attachment: CniAttachment = {
    containerId: pod.sandboxId,
    netns,
    ifName: "eth0",
    args: { K8S_POD_NAMESPACE: pod.namespace, K8S_POD_NAME: pod.name, K8S_POD_INFRA_CONTAINER_ID: pod.sandboxId, K8S_POD_UID: pod.uid },
    capabilities,
  };
  const binDirs = [...dirs.binDirs];
  const lo = { ...attachment, ifName: "lo", capabilities: {} };
  await cniAdd(LOOPBACK, binDirs, lo);
  try {
    const result = await cniAdd(found.network, binDirs, attachment);
    return { network: found.network, attachment, result, binDirs };
  } catch (err) {
    await cniDel(LOOPBACK, binDirs, lo).catch(() => {});
    throw err;
  }
}

/** Releases the pod's attachment (addresses, port rules, veth); safe to repeat. */
export async function detachPod(a: PodAttachment): Promise<void> {
  await cniDel(a.network, a.binDirs, a.attachment, a.result);
  await cniDel(LOOPBACK, a.binDirs, { ...a.attachment, ifName: "lo", capabilities: {} }).catch(() => {});
}

/** The pod's addresses from the result: the first IPv4 one first, as the kubelet takes the first as the pod IP. */
export function podIps(result: CniResult | undefined): string[] {
  const ips = (result?.ips ?? []).map((i) => i.address.split("/")[0]);
  return [...ips.filter((ip) => !ip.includes(":")), ...ips.filter((ip) => ip.includes(":"))];
}
