/**
 * What the CRI pod tests share: a daemon with `--cri-supervisor` in a network namespace of its
 * own (made as net-daemon.ts makes one: the CNI bridge, its veths and the iptables rules of the bridge and
 * portmap plugins are made in that namespace and go with it), a CNI configuration folder of the
 * test's own (never the host's /etc/cni), IPAM state in the test's folder, pod configs.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { criClient, type CriClient } from "./cri-client.js";
import { makeTempDir, startEngined, type TestDaemon } from "./engined.js";
import { makeNetns, type Netns } from "./net-daemon.js";

/** The pod subnet: only inside the daemon's namespace, never routed anywhere else. */
export const POD_SUBNET = "10.213.0.0/24";
export const POD_GATEWAY = "10.213.0.1";

export interface CriBed {
  d: TestDaemon;
  ns: Netns;
  cri: CriClient;
  cniConf: string;
  ipamDir: string;
  /** Replaces the pod network's configuration (a file named `10-pods.conflist`). */
  writeNetwork(plugins?: object[]): void;
  stop(): Promise<void>;
}

export function bridgePlugins(ipamDir: string): object[] {
  return [
    {
      type: "bridge",
      bridge: "cri-test0",
      isGateway: true,
      ipMasq: true,
      hairpinMode: true,
      ipam: { type: "host-local", dataDir: ipamDir, ranges: [[{ subnet: POD_SUBNET, gateway: POD_GATEWAY }]], routes: [{ dst: "0.0.0.0/0" }] },
    },
    { type: "portmap", capabilities: { portMappings: true } },
    // the daemon's own bridge driver sets the FORWARD policy to DROP (as Docker's does): the
    // firewall plugin lets the pods' traffic through it
    { type: "firewall", backend: "iptables" },
  ];
}

export async function startCriBed(extraArgs: string[] = []): Promise<CriBed> {
  const cniConf = makeTempDir("engine-cri-cni-");
  const ipamDir = join(makeTempDir("engine-cri-ipam-"), "networks");
  const writeNetwork = (plugins = bridgePlugins(ipamDir)) =>
    writeFileSync(join(cniConf, "10-pods.conflist"), JSON.stringify({ cniVersion: "1.0.0", name: "pods", plugins }));
  writeNetwork();
  const ns = makeNetns();
  let d: TestDaemon;
  try {
    d = await startEngined({ netns: ns.file, args: ["--cri-supervisor", "--cri-cni-conf-dir", cniConf, "--group", "", ...extraArgs] });
  } catch (err) {
    ns.remove();
    throw err;
  }
  const cri = criClient(join(d.dir, "exec", "cri.sock"));
  return {
    d,
    ns,
    cri,
    cniConf,
    ipamDir,
    writeNetwork,
    stop: async () => {
      // every pod the test left: their CNI attachments are released before the namespace goes
      const pods = await cri.call("runtime", "ListPodSandbox", {}).catch(() => ({ items: [] }));
      for (const p of pods.items) await cri.call("runtime", "RemovePodSandbox", { podSandboxId: p.id }).catch(() => {});
      cri.close();
      await d.stop();
      ns.remove();
    },
  };
}

let counter = 0;

/** A pod sandbox config with a unique name; `extra` is merged over it. */
export function podConfig(extra: Record<string, any> = {}): Record<string, any> {
  const n = ++counter;
  return {
    metadata: { name: `pod-${n}`, uid: `uid-${process.pid}-${n}`, namespace: "cri-test", attempt: 0 },
    hostname: `pod-${n}`,
    labels: { app: "cri-test", n: String(n) },
    annotations: { "example.com/note": `pod ${n}` },
    linux: { securityContext: { namespaceOptions: { network: "POD", pid: "CONTAINER", ipc: "POD" } } },
    ...extra,
  };
}
