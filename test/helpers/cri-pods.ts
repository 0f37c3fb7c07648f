/**
 * What the CRI pod tests share: a daemon with `--cri-supervisor` in a network namespace of its
 * own (made as net-daemon.ts makes one: the CNI bridge, its veths and the iptables rules of the bridge and
 * portmap plugins are made in that namespace and go with it), a CNI configuration folder of the
 * test's own (never the host's /etc/cni), IPAM state in the test's folder, pod configs.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { busyboxRootfs, writeFixture } from "../fixtures/images.js";
import { criClient, type CriClient } from "./cri-client.js";
import { docker } from "./docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./engined.js";
import { makeNetns, type Netns } from "./net-daemon.js";

/** The pod subnet: only inside the daemon's namespace, never routed anywhere else. */
export const POD_SUBNET = "10.213.0.0/24";
export const POD_GATEWAY = "10.213.0.1";

export interface CriBed {
  d: TestDaemon;
  ns: Netns;
  cri: CriClient;
  /** SIGTERM to engined and a new one on the same roots (with `roots` only); `d` and `cri` are the new ones after. */
  restart(): Promise<void>;
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

/**
 * `roots`: keep the data root, exec root and pid file in this folder (a temporary folder of the
 * caller's), so that `restart` finds the pods again; the root hook ends the CRI supervisor
 * left running there.
 */
export async function startCriBed(extraArgs: string[] = [], opts: { roots?: string } = {}): Promise<CriBed> {
  const cniConf = makeTempDir("engine-cri-cni-");
  const ipamDir = join(makeTempDir("engine-cri-ipam-"), "networks");
  const writeNetwork = (plugins = bridgePlugins(ipamDir)) =>
    writeFileSync(join(cniConf, "10-pods.conflist"), JSON.stringify({ cniVersion: "1.0.0", name: "pods", plugins }));
  writeNetwork();
  const ns = makeNetns();
  const roots = opts.roots ? ["--data-root", join(opts.roots, "data"), "--exec-root", join(opts.roots, "exec"), "--pidfile", join(opts.roots, "engine.pid")] : [];
  const start = () => startEngined({ netns: ns.file, args: ["--cri-supervisor", "--cri-cni-conf-dir", cniConf, "--group", "", ...extraArgs, ...roots] });
  const socketOf = (d: TestDaemon) => join(opts.roots ?? d.dir, "exec", "cri.sock");
  let d: TestDaemon;
  try {
    d = await start();
  } catch (err) {
    ns.remove();
    throw err;
  }
  const bed: CriBed = {
    d,
    ns,
    cri: criClient(socketOf(d)),
    cniConf,
    ipamDir,
    writeNetwork,
    restart: async () => {
      if (!opts.roots) throw new Error("a restart needs roots that outlive the daemon");
      bed.cri.close();
      await bed.d.stop();
      bed.d = await start();
      bed.cri = criClient(socketOf(bed.d));
    },
    stop: async () => {
      // every pod the test left: their CNI attachments are released before the namespace goes
      const pods = await bed.cri.call("runtime", "ListPodSandbox", {}).catch(() => ({ items: [] }));
      for (const p of pods.items) await bed.cri.call("runtime", "RemovePodSandbox", { podSandboxId: p.id }).catch(() => {});
      bed.cri.close();
      await bed.d.stop();
      ns.remove();
    },
  };
  return bed;
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

/**
 * A suite's bed: started (with busybox imported as `busybox` through the Docker API) before its
 * tests, stopped after them, engined's output printed after a failed test. `current()` is the bed.
 * `extraArgs` may be a function, called when the bed starts (for arguments made by a `before`).
 */
export function useCriBed(extraArgs: string[] | (() => string[]) = []): { current(): CriBed } {
  let bed: CriBed | undefined;
  before(async function () {
    bed = await startCriBed(typeof extraArgs === "function" ? extraArgs() : extraArgs);
    const rootfs = writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs());
    const imported = await docker(`unix://${bed.d.socket}`, ["import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", rootfs, "busybox"]);
    if (imported.code !== 0) throw new Error(`importing busybox failed: ${imported.stderr}`);
  });
  after(async function () {
    await bed?.stop();
  });
  afterEach(function () {
    if (this.currentTest?.state === "failed" && bed) console.log(`--- engined output (last 4000 chars):\n${bed.d.output().slice(-4000)}`);
  });
  return {
    current() {
      if (!bed) throw new Error("the CRI bed is not started");
      return bed;
    },
  };
}
