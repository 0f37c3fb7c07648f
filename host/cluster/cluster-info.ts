/**
 * What this node would advertise to a cluster, in `/info` where Docker reports it: the
 * resources of `--node-generic-resource` (`GenericResources`, null when none) and the address
 * of `--cluster-default-advertise-addr` (`Swarm.NodeAddr`; the node stays `inactive`, this
 * engine joins no cluster itself: see docs/cluster.md). The address is resolved once, at start,
 * before anything is created (host/cluster/advertise-addr.ts).
 */
import { parseGenericResources } from "../../core/cluster/generic-resources.js";
import type { EngineHooks } from "../../core/hooks.js";
import type { DaemonConfig } from "../../core/options/table.js";

export function tapClusterInfo(hooks: EngineHooks, config: () => DaemonConfig, nodeAddr: string): void {
  hooks.processInfo.tap("cluster", (info) => {
    // Checked when the configuration was loaded (core/options/rules.ts): this does not throw.
    const resources = parseGenericResources(config()["node-generic-resource"]);
    return { ...info, GenericResources: resources.length > 0 ? resources : null, Swarm: { ...info.Swarm, NodeAddr: nodeAddr } };
  });
}
