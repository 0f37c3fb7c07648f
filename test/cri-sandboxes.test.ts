/**
 * CRI pod sandboxes on `engined --cri-supervisor` over gRPC: namespaces pinned by bind mounts,
 * the pod network through Debian's CNI plugins (bridge, host-local, portmap, loopback) with the
 * test's own configuration, in the daemon's own network namespace. Mirrors cri-tools' validate
 * specs for pods (run, status, list with filters, stop twice, remove twice, hostname, DNS
 * config, host network) and for networking (two pods reach each other, a host port reaches a
 * pod), and checks that a failed RunPodSandbox leaves nothing behind.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { grpc } from "./helpers/cri-client.js";
import { bridgePlugins, podConfig, POD_GATEWAY, startCriBed, type CriBed } from "./helpers/cri-pods.js";
import { eventually } from "./helpers/net-daemon.js";

const mountsUnder = (dir: string) =>
  readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")[4]).filter((m) => m && m.startsWith(`${dir}/`));

describe("CRI: pod sandboxes (engined --cri-supervisor, CNI)", function () {
  this.timeout(120_000);
  let bed: CriBed;
  const rt = (method: string, req: object = {}) => bed.cri.call("runtime", method, req);
  const info = async (id: string) => JSON.parse((await rt("PodSandboxStatus", { podSandboxId: id, verbose: true })).info.info);
  const sandboxDirs = () => readdirSync(join(bed.d.dir, "exec", "cri", "sandboxes")).filter((n) => !n.startsWith("."));

  before(async function () {
    bed = await startCriBed();
  });

  after(async function () {
    await bed?.stop();
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed") console.log(`--- engined output (last 4000 chars):\n${bed.d.output().slice(-4000)}`);
  });

  it("runs a pod: READY with an address of the pod network, its hostname, DNS config, labels and annotations as given", async function () {
    const config = podConfig({ dnsConfig: { servers: ["10.213.0.53"], searches: ["cri.test"], options: ["ndots:2"] } });
    const { podSandboxId: id } = await rt("RunPodSandbox", { config });
    expect(id).to.match(/^[0-9a-f]{64}$/);
    const { status } = await rt("PodSandboxStatus", { podSandboxId: id });
    expect(status).to.include({ id, state: "SANDBOX_READY" });
    expect(status.metadata).to.deep.equal(config.metadata);
    expect(status.labels).to.deep.equal(config.labels);
    expect(status.annotations).to.deep.equal(config.annotations);
    expect(status.network.ip).to.match(/^10\.213\.0\.\d+$/);
    expect(Number(status.createdAt)).to.be.greaterThan(1.6e18);
    expect(status.linux.namespaces.options).to.include({ network: "POD", ipc: "POD" });
    const details = await info(id);
    expect(execFileSync("nsenter", [`--uts=${details.namespaces.uts}`, "hostname"], { encoding: "utf8" }).trim()).to.equal(config.hostname);
    const addrs = execFileSync("nsenter", [`--net=${details.namespaces.net}`, "ip", "-o", "-4", "addr"], { encoding: "utf8" });
    expect(addrs).to.include(`${status.network.ip}/24`);
    expect(addrs).to.match(/\blo\b.*127\.0\.0\.1/);
    expect(readFileSync(details.files.resolvConf, "utf8")).to.equal("nameserver 10.213.0.53\nsearch cri.test\noptions ndots:2\n");
    expect(readFileSync(details.files.hosts, "utf8")).to.include(`${status.network.ip}\t${config.hostname}`);
    // the stop releases the network: the address, the netns; twice is fine
    await rt("StopPodSandbox", { podSandboxId: id });
    await rt("StopPodSandbox", { podSandboxId: id });
    const stopped = (await rt("PodSandboxStatus", { podSandboxId: id })).status;
    expect(stopped.state).to.equal("SANDBOX_NOTREADY");
    expect(stopped.network.ip).to.equal("");
    expect(existsSync(details.namespaces.net)).to.equal(false);
    expect(readdirSync(join(bed.ipamDir, "pods")).filter((n) => n.startsWith("10."))).to.deep.equal([]);
    await rt("RemovePodSandbox", { podSandboxId: id });
    await rt("RemovePodSandbox", { podSandboxId: id });
    expect((await bed.cri.fails("runtime", "PodSandboxStatus", { podSandboxId: id })).code).to.equal(grpc.status.NOT_FOUND);
    expect(mountsUnder(join(bed.d.dir, "exec", "cri"))).to.deep.equal([]);
    expect(sandboxDirs()).to.deep.equal([]);
  });

  it("lists pods with the id (or a prefix), state and label filters", async function () {
    const a = (await rt("RunPodSandbox", { config: podConfig({ labels: { tier: "a" } }) })).podSandboxId;
    const b = (await rt("RunPodSandbox", { config: podConfig({ labels: { tier: "b" } }) })).podSandboxId;
    await rt("StopPodSandbox", { podSandboxId: b });
    const ids = async (filter: object | null) => (await rt("ListPodSandbox", { filter })).items.map((i: any) => i.id);
    expect(await ids(null)).to.have.members([a, b]);
    expect(await ids({ id: a.slice(0, 13) })).to.deep.equal([a]);
    expect(await ids({ state: { state: "SANDBOX_READY" } })).to.deep.equal([a]);
    expect(await ids({ state: { state: "SANDBOX_NOTREADY" } })).to.deep.equal([b]);
    expect(await ids({ labelSelector: { tier: "b" } })).to.deep.equal([b]);
    expect(await ids({ labelSelector: { tier: "c" } })).to.deep.equal([]);
    // a short id works for the other calls too
    expect((await rt("PodSandboxStatus", { podSandboxId: a.slice(0, 13) })).status.id).to.equal(a);
    for (const id of [a, b]) await rt("RemovePodSandbox", { podSandboxId: id });
  });

  it("two pods reach each other over the pod network, and a host port reaches a pod", async function () {
    const one = (await rt("RunPodSandbox", { config: podConfig({ portMappings: [{ protocol: "TCP", containerPort: 8080, hostPort: 18080, hostIp: "" }] }) })).podSandboxId;
    const two = (await rt("RunPodSandbox", { config: podConfig() })).podSandboxId;
    const [i1, i2] = [await info(one), await info(two)];
    const ip1 = (await rt("PodSandboxStatus", { podSandboxId: one })).status.network.ip;
    execFileSync("nsenter", [`--net=${i2.namespaces.net}`, "busybox", "ping", "-c", "1", "-W", "5", ip1], { timeout: 20_000 });
    // a one-shot server in the first pod, reached at the gateway's host port from the daemon's namespace
    const server = spawn("nsenter", [`--net=${i1.namespaces.net}`, "busybox", "sh", "-c", "echo from-pod | busybox nc -l -p 8080"], { stdio: "ignore" });
    try {
      let got = "";
      await eventually("the host port answers", () => {
        try {
          got = bed.ns.run("busybox", "sh", "-c", `busybox nc -w 2 ${POD_GATEWAY} 18080 </dev/null`);
        } catch {
          return false;
        }
        return got.includes("from-pod");
      });
      expect(bed.ns.run("iptables-save")).to.include("18080");
    } finally {
      server.kill();
    }
    for (const id of [one, two]) await rt("RemovePodSandbox", { podSandboxId: id });
    // the portmap plugin's rules for the port went with the pod
    expect(bed.ns.run("iptables-save")).to.not.include("18080");
  });

  it("a pod on the node's network has no address and no network namespace of its own, and the node's hostname", async function () {
    const config = podConfig({ linux: { securityContext: { namespaceOptions: { network: "NODE", pid: "CONTAINER", ipc: "POD" } } } });
    const id = (await rt("RunPodSandbox", { config })).podSandboxId;
    const { status } = await rt("PodSandboxStatus", { podSandboxId: id });
    expect(status.network.ip).to.equal("");
    const details = await info(id);
    expect(details.namespaces).to.have.keys(["ipc"]);
    expect(details.hostname).to.equal(hostname());
    await rt("RemovePodSandbox", { podSandboxId: id });
  });

  it("bad input is InvalidArgument naming the field; a name in use is AlreadyExists; unknown ids NotFound", async function () {
    const cases: [object, string][] = [
      [{}, "config"],
      [{ config: podConfig({ metadata: { name: "", uid: "u", namespace: "n" } }) }, "config.metadata.name"],
      [{ config: podConfig({ metadata: { name: "x", uid: "", namespace: "n" } }) }, "config.metadata.uid"],
      [{ config: podConfig({ hostname: "not_a host" }) }, "config.hostname"],
      [{ config: podConfig({ dnsConfig: { servers: ["dns.example"], searches: [], options: [] } }) }, "config.dns_config.servers[0]"],
      [{ config: podConfig({ portMappings: [{ protocol: "TCP", containerPort: 0, hostPort: 80 }] }) }, "config.port_mappings[0].container_port"],
      [{ config: podConfig({ linux: { sysctls: { "kernel.panic": "1" } } }) }, "config.linux.sysctls[kernel.panic]"],
      [{ config: podConfig({ logDirectory: "relative/logs" }) }, "config.log_directory"],
      [{ config: podConfig(), runtimeHandler: "no-such-runtime" }, "no-such-runtime"],
    ];
    for (const [req, field] of cases) {
      const err = await bed.cri.fails("runtime", "RunPodSandbox", req);
      expect(err.code, field).to.equal(grpc.status.INVALID_ARGUMENT);
      expect(err.details, field).to.include(field);
    }
    const config = podConfig();
    const id = (await rt("RunPodSandbox", { config })).podSandboxId;
    const dup = await bed.cri.fails("runtime", "RunPodSandbox", { config });
    expect(dup.code).to.equal(grpc.status.ALREADY_EXISTS);
    expect(dup.details).to.include(id);
    await rt("RemovePodSandbox", { podSandboxId: id });
    expect((await bed.cri.fails("runtime", "PodSandboxStatus", { podSandboxId: "f".repeat(64) })).code).to.equal(grpc.status.NOT_FOUND);
    // StopPodSandbox is idempotent (CRI): an unknown pod is no error
    await rt("StopPodSandbox", { podSandboxId: "f".repeat(64) });
    expect((await rt("ListPodSandbox", {})).items).to.deep.equal([]);
  });

  it("a RunPodSandbox whose network fails half way leaves nothing: no record, namespace, address, veth or name", async function () {
    // the bridge plugin attaches the pod, then tuning fails on a sysctl that does not exist
    bed.writeNetwork([...bridgePlugins(bed.ipamDir).slice(0, 1), { type: "tuning", sysctl: { "net.ipv4.conf.eth0.no_such_knob": "1" } }]);
    const config = podConfig({ sysctls: undefined, linux: { securityContext: { namespaceOptions: { network: "POD", pid: "CONTAINER", ipc: "POD" } }, sysctls: { "net.ipv4.ip_forward": "1" } } });
    try {
      const err = await bed.cri.fails("runtime", "RunPodSandbox", { config });
      expect(err.code).to.equal(grpc.status.INTERNAL);
      expect(err.details).to.include("tuning");
    } finally {
      bed.writeNetwork();
    }
    expect((await rt("ListPodSandbox", {})).items).to.deep.equal([]);
    expect(sandboxDirs()).to.deep.equal([]);
    expect(mountsUnder(join(bed.d.dir, "exec", "cri"))).to.deep.equal([]);
    expect(readdirSync(join(bed.ipamDir, "pods")).filter((n) => n.startsWith("10."))).to.deep.equal([]);
    expect(bed.ns.run("ip", "-o", "link")).to.not.match(/veth/);
    // the name was released: the same pod runs now, and its sysctl is set in its own namespace
    const id = (await rt("RunPodSandbox", { config })).podSandboxId;
    const details = await info(id);
    expect(execFileSync("nsenter", [`--net=${details.namespaces.net}`, "sysctl", "-n", "net.ipv4.ip_forward"], { encoding: "utf8" }).trim()).to.equal("1");
    await rt("RemovePodSandbox", { podSandboxId: id });
  });
});
