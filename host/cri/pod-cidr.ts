/**
 * UpdateRuntimeConfig: the node's pod CIDR the kubelet hands down (from the Node object's
 * `spec.podCIDRs`, joined by commas when the node is dual-stack). containerd templates it into
 * a CNI configuration when one is configured as a template; here it is kept (in
 * `<data-root>/cri/runtime-config.json`, so it outlives a restart of engined as the kubelet
 * sends it only when it changes), shown in Status's verbose info, and given to every CNI plugin
 * that declares the `ipRanges` capability (CNI's convention: host-local then allocates the
 * pods' addresses from it, one range set per CIDR). A network configuration without that
 * capability keeps its own ranges. An empty CIDR changes nothing (the CRI says "omit it").
 */
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { join } from "node:path";
import { errors } from "../../core/errors.js";
import { writeJsonDurably } from "../../core/fs/durable-file.js";
import type { CriHandlers } from "./cri-server.js";

const FIELD = "runtime_config.network_config.pod_cidr";

/** `10.244.1.0/24` or `fd00::/64`: an address of either family and a prefix that fits it. */
function checkCidr(cidr: string): string {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(cidr.trim());
  const family = m ? isIP(m[1]) : 0;
  if (!m || family === 0 || Number(m[2]) > (family === 4 ? 32 : 128)) throw errors.criInvalidArgument(FIELD, `${JSON.stringify(cidr)} is not a CIDR (such as 10.244.1.0/24)`);
  return `${m[1]}/${Number(m[2])}`;
}

export class PodCidrs {
  private cidrs: string[] = [];
  private readonly file: string;

  constructor(dataRoot: string) {
    this.file = join(dataRoot, "cri", "runtime-config.json");
    try {
      const kept = JSON.parse(readFileSync(this.file, "utf8")) as { podCidrs?: unknown };
      if (Array.isArray(kept.podCidrs)) this.cidrs = kept.podCidrs.filter((c): c is string => typeof c === "string");
    } catch {
      // none given yet
    }
  }

  /** The CIDRs, IPv4 first as the kubelet lists them. */
  list(): string[] {
    return [...this.cidrs];
  }

  /** What CNI's `ipRanges` capability takes: one range set per CIDR. */
  ipRanges(): { subnet: string }[][] | undefined {
    return this.cidrs.length ? this.cidrs.map((subnet) => [{ subnet }]) : undefined;
  }

  async update(podCidr: string): Promise<void> {
    if (!podCidr.trim()) return;
    const cidrs = podCidr.split(",").map(checkCidr);
    await writeJsonDurably(this.file, { podCidrs: cidrs });
    this.cidrs = cidrs;
  }

  handlers(): CriHandlers {
    return {
      UpdateRuntimeConfig: async (req: { runtimeConfig: { networkConfig: { podCidr: string } | null } | null }) => {
        await this.update(req.runtimeConfig?.networkConfig?.podCidr ?? "");
        return {};
      },
    };
  }
}
