/**
 * The CRI's stats calls, its container events stream and UpdateRuntimeConfig, on a real
 * `engined --cri-supervisor` with conmon, runc and the CNI plugins (test/helpers/cri-pods.ts):
 * CPU, memory and the writable layer from a running container's cgroup and layer, a pod's sums,
 * processes and network counters; the list filters; the CREATED/STARTED/STOPPED/DELETED events
 * a kubelet's evented PLEG follows, with the pod's and containers' statuses; a listener freed
 * when its client goes; the pod CIDR kept, shown and handed to CNI's ipRanges.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { grpc } from "./helpers/cri-client.js";
import { bridgePlugins, podConfig, useCriBed } from "./helpers/cri-pods.js";
import { makeTempDir } from "./helpers/engined.js";
import { eventually } from "./helpers/net-daemon.js";

const MiB = 1024 * 1024;

describe("CRI: stats, container events, runtime config (engined --cri-supervisor)", function () {
  this.timeout(180_000);
  const beds = useCriBed();
  const logDir = makeTempDir("engine-cri-logs-");
  const rt = (method: string, req: object = {}) => beds.current().cri.call("runtime", method, req);
  const fails = (method: string, req: object = {}) => beds.current().cri.fails("runtime", method, req);
  const container = (name: string, script: string, extra: Record<string, unknown> = {}) => ({
    metadata: { name, attempt: 0 },
    image: { image: "busybox" },
    command: ["sh", "-c"],
    args: [script],
    labels: { c: name },
    annotations: { "example.com/c": name },
    ...extra,
  });
  const runPod = async (extra: Record<string, unknown> = {}) => {
    const config = podConfig({ logDirectory: join(logDir, String(Date.now())), ...extra });
    return { config, id: (await rt("RunPodSandbox", { config })).podSandboxId as string };
  };
  const n = (v: { value: string } | null | undefined) => Number(v?.value ?? NaN);

  it("ContainerStats: CPU, memory under a limit and the writable layer of a running container; a created one has its layer only", async function () {
    const pod = await runPod();
    // some CPU (a counted loop), then 4 MiB written into the writable layer
    const busy = container("busy", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; dd if=/dev/zero of=/tmp/blob bs=1M count=4 2>/dev/null; touch /tmp/done; exec sleep 60", {
      linux: { resources: { memoryLimitInBytes: String(64 * MiB) } },
    });
    const id = (await rt("CreateContainer", { podSandboxId: pod.id, config: busy })).containerId;
    const idle = (await rt("CreateContainer", { podSandboxId: pod.id, config: container("idle", "exec sleep 60") })).containerId;
    await rt("StartContainer", { containerId: id });
    await eventually("the container wrote its file", async () => (await rt("ExecSync", { containerId: id, cmd: ["test", "-e", "/tmp/done"], timeout: 5 })).exitCode === 0, 30_000);

    const first = (await rt("ContainerStats", { containerId: id })).stats;
    expect(first.attributes).to.deep.include({ id, labels: busy.labels, annotations: busy.annotations });
    expect(first.attributes.metadata).to.deep.equal(busy.metadata);
    expect(n(first.cpu.usageCoreNanoSeconds)).to.be.greaterThan(0);
    expect(Number(first.cpu.timestamp)).to.be.greaterThan(0);
    const mem = first.memory;
    expect(n(mem.usageBytes)).to.be.greaterThan(0);
    expect(n(mem.workingSetBytes)).to.be.greaterThan(0).and.at.most(n(mem.usageBytes));
    expect(n(mem.availableBytes)).to.equal(64 * MiB - n(mem.workingSetBytes));
    expect(n(mem.pageFaults)).to.be.greaterThan(0);
    expect(n(mem.rssBytes)).to.be.at.least(0);
    const layer = first.writableLayer;
    expect(n(layer.usedBytes)).to.be.at.least(4 * MiB);
    expect(n(layer.inodesUsed)).to.be.at.least(2);
    // the same filesystem ImageFsInfo names, so the kubelet counts the layer on the image filesystem
    const fs = (await beds.current().cri.call("image", "ImageFsInfo", {})).imageFilesystems[0];
    expect(layer.fsId.mountpoint).to.equal(fs.fsId.mountpoint);

    // a second sample has a rate; the cumulative usage does not go back
    const second = (await rt("ContainerStats", { containerId: id })).stats;
    expect(n(second.cpu.usageCoreNanoSeconds)).to.be.at.least(n(first.cpu.usageCoreNanoSeconds));
    expect(second.cpu.usageNanoCores.value).to.match(/^\d+$/);
    expect(BigInt(second.cpu.timestamp) > BigInt(first.cpu.timestamp)).to.equal(true);

    const created = (await rt("ContainerStats", { containerId: idle })).stats;
    expect(created.cpu).to.equal(null);
    expect(created.memory).to.equal(null);
    expect(n(created.writableLayer.usedBytes)).to.be.at.least(0);

    expect((await fails("ContainerStats", { containerId: "e".repeat(64) })).code).to.equal(grpc.status.NOT_FOUND);
    expect((await fails("ContainerStats", { containerId: "" })).code).to.equal(grpc.status.INVALID_ARGUMENT);
    await rt("RemovePodSandbox", { podSandboxId: pod.id });
  });

  it("ListContainerStats filters by id, pod and labels; PodSandboxStats sums the pod's containers and reads its network; ListPodSandboxStats filters", async function () {
    const a = await runPod();
    const b = await runPod();
    const inA = (await rt("CreateContainer", { podSandboxId: a.id, config: container("one", "exec sleep 60") })).containerId;
    const inA2 = (await rt("CreateContainer", { podSandboxId: a.id, config: container("two", "exec sleep 60") })).containerId;
    const inB = (await rt("CreateContainer", { podSandboxId: b.id, config: container("one", "exec sleep 60") })).containerId;
    for (const id of [inA, inA2]) await rt("StartContainer", { containerId: id });
    const ids = async (filter: object | null) => (await rt("ListContainerStats", { filter })).stats.map((s: any) => s.attributes.id);
    expect(await ids(null)).to.have.members([inA, inA2, inB]);
    expect(await ids({ id: inA })).to.deep.equal([inA]);
    expect(await ids({ id: inA2.slice(0, 13) })).to.deep.equal([inA2]);
    expect(await ids({ podSandboxId: a.id })).to.have.members([inA, inA2]);
    expect(await ids({ labelSelector: { c: "one" } })).to.have.members([inA, inB]);
    expect(await ids({ podSandboxId: b.id, labelSelector: { c: "two" } })).to.deep.equal([]);
    expect(await ids({ id: "f".repeat(64) })).to.deep.equal([]);

    // traffic out of pod a's eth0 (the gateway answers or not: the packets are counted either way)
    await rt("ExecSync", { containerId: inA, cmd: ["ping", "-c", "2", "-W", "1", "10.213.0.1"], timeout: 10 });
    const podA = (await rt("PodSandboxStats", { podSandboxId: a.id })).stats;
    expect(podA.attributes).to.deep.include({ id: a.id, labels: a.config.labels, annotations: a.config.annotations });
    expect(podA.linux.containers.map((c: any) => c.attributes.id)).to.have.members([inA, inA2]);
    const [c1, c2] = podA.linux.containers;
    expect(n(podA.linux.cpu.usageCoreNanoSeconds)).to.be.at.least(n(c1.cpu.usageCoreNanoSeconds));
    expect(n(podA.linux.cpu.usageCoreNanoSeconds)).to.be.at.least(n(c2.cpu.usageCoreNanoSeconds));
    expect(n(podA.linux.memory.usageBytes)).to.be.at.least(n(c1.memory.usageBytes));
    expect(n(podA.linux.process.processCount)).to.equal(2);
    const net = podA.linux.network;
    expect(net.defaultInterface.name).to.equal("eth0");
    expect(n(net.defaultInterface.txBytes)).to.be.greaterThan(0);
    expect(net.interfaces.map((i: any) => i.name)).to.not.include("lo");

    // a pod with no running container: read in its pinned network namespace
    const podB = (await rt("PodSandboxStats", { podSandboxId: b.id })).stats;
    expect(podB.linux.containers.map((c: any) => c.attributes.id)).to.deep.equal([inB]);
    expect(n(podB.linux.process.processCount)).to.equal(0);
    expect(n(podB.linux.cpu.usageCoreNanoSeconds)).to.equal(0);
    expect(podB.linux.network.defaultInterface.name).to.equal("eth0");

    const podIds = async (filter: object | null) => (await rt("ListPodSandboxStats", { filter })).stats.map((s: any) => s.attributes.id);
    expect(await podIds(null)).to.have.members([a.id, b.id]);
    expect(await podIds({ id: b.id.slice(0, 13) })).to.deep.equal([b.id]);
    expect(await podIds({ labelSelector: { n: a.config.labels.n } })).to.deep.equal([a.id]);
    expect(await podIds({ labelSelector: { n: "nobody" } })).to.deep.equal([]);
    expect((await fails("PodSandboxStats", { podSandboxId: "e".repeat(64) })).code).to.equal(grpc.status.NOT_FOUND);

    // a stopped pod has no network to read
    await rt("StopPodSandbox", { podSandboxId: b.id });
    expect((await rt("PodSandboxStats", { podSandboxId: b.id })).stats.linux.network).to.equal(null);
    for (const pod of [a, b]) await rt("RemovePodSandbox", { podSandboxId: pod.id });
    expect(await podIds(null)).to.deep.equal([]);
  });

  it("GetContainerEvents: CREATED, STARTED, STOPPED, DELETED with the pod's status and its containers'; a listener is freed when its client cancels or goes", async function () {
    const listeners = async () => JSON.parse((await rt("Status", { verbose: true })).info.containerEvents).listeners as number;
    const events: any[] = [];
    const stream = beds.current().cri.stream("runtime", "GetContainerEvents", {});
    stream.on("data", (e) => events.push(e));
    stream.on("error", () => {}); // the cancel below ends it with CANCELLED
    await eventually("the stream is listening", async () => (await listeners()) === 1);

    const pod = await runPod();
    const id = (await rt("CreateContainer", { podSandboxId: pod.id, config: container("main", "exec sleep 60") })).containerId;
    const quick = (await rt("CreateContainer", { podSandboxId: pod.id, config: container("quick", "exit 3") })).containerId;
    await rt("StartContainer", { containerId: id });
    await rt("StartContainer", { containerId: quick });
    await eventually("the quick one's exit is sent", () => events.some((e) => e.containerId === quick && e.containerEventType === "CONTAINER_STOPPED_EVENT"), 20_000);
    await rt("StopContainer", { containerId: id, timeout: 0 });
    await rt("RemoveContainer", { containerId: id });
    await eventually("the removal is sent", () => events.some((e) => e.containerId === id && e.containerEventType === "CONTAINER_DELETED_EVENT"));

    const of = (cid: string) => events.filter((e) => e.containerId === cid);
    expect(of(id).map((e) => e.containerEventType)).to.deep.equal(["CONTAINER_CREATED_EVENT", "CONTAINER_STARTED_EVENT", "CONTAINER_STOPPED_EVENT", "CONTAINER_DELETED_EVENT"]);
    expect(of(quick).map((e) => e.containerEventType)).to.deep.equal(["CONTAINER_CREATED_EVENT", "CONTAINER_STARTED_EVENT", "CONTAINER_STOPPED_EVENT"]);
    for (const e of events) {
      expect(Number(e.createdAt)).to.be.greaterThan(0);
      expect(e.podSandboxStatus).to.deep.include({ id: pod.id, state: "SANDBOX_READY" });
      expect(e.podSandboxStatus.metadata).to.deep.equal(pod.config.metadata);
    }
    const stateIn = (e: any, cid: string) => e.containersStatuses.find((c: any) => c.id === cid)?.state;
    const [created, started, stopped, deleted] = of(id);
    expect(stateIn(created, id)).to.equal("CONTAINER_CREATED");
    expect(stateIn(started, id)).to.equal("CONTAINER_RUNNING");
    expect(stateIn(stopped, id)).to.equal("CONTAINER_EXITED");
    expect(stateIn(deleted, id)).to.equal(undefined);
    expect(deleted.containersStatuses.map((c: any) => c.id)).to.deep.equal([quick]);
    const quickStopped = of(quick)[2].containersStatuses.find((c: any) => c.id === quick);
    expect(quickStopped).to.include({ state: "CONTAINER_EXITED", exitCode: 3 });
    expect(Number(of(id)[1].createdAt)).to.be.at.least(Number(of(id)[0].createdAt));

    // removing the pod removes its last container: sent too
    await rt("RemovePodSandbox", { podSandboxId: pod.id });
    await eventually("the pod's container is deleted", () => of(quick).at(-1)?.containerEventType === "CONTAINER_DELETED_EVENT");

    // a client that cancels, and one whose connection goes, leave no listener behind
    stream.cancel();
    await eventually("the cancelled listener is freed", async () => (await listeners()) === 0);
    // a client process killed mid-stream (a kubelet that dies): its connection goes, and its listener with it
    const proto = fileURLToPath(new URL("../host/cri/cri-proto.js", import.meta.url));
    const socket = join(beds.current().d.dir, "exec", "cri.sock");
    const script = `
      const grpc = await import("@grpc/grpc-js");
      const { criDefinitions } = await import(${JSON.stringify(proto)});
      const client = new (criDefinitions().RuntimeClient)(${JSON.stringify(`unix://${socket}`)}, grpc.credentials.createInsecure());
      const events = client.GetContainerEvents({});
      events.on("data", () => {});
      events.on("error", () => {});
      setTimeout(() => process.exit(0), 60_000);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "ignore" });
    try {
      await eventually("the other process's stream is listening", async () => (await listeners()) === 1, 20_000);
    } finally {
      child.kill("SIGKILL");
    }
    await eventually("the killed client's listener is freed", async () => (await listeners()) === 0);
  });

  it("UpdateRuntimeConfig keeps the pod CIDR (in Status's verbose info), refuses a bad one, and gives it to CNI plugins with the ipRanges capability", async function () {
    const bed = beds.current();
    const cidrs = async () => JSON.parse((await rt("Status", { verbose: true })).info.config).podCidrs as string[];
    const update = (podCidr: string) => rt("UpdateRuntimeConfig", { runtimeConfig: { networkConfig: { podCidr } } });
    expect(await cidrs()).to.deep.equal([]);
    await update("10.213.0.128/25,fd00:213::/64");
    expect(await cidrs()).to.deep.equal(["10.213.0.128/25", "fd00:213::/64"]);
    // empty: "omit it", nothing changes; a call without a config neither
    await update("");
    await rt("UpdateRuntimeConfig", {});
    expect(await cidrs()).to.deep.equal(["10.213.0.128/25", "fd00:213::/64"]);
    for (const bad of ["10.0.0.0", "10.0.0.0/33", "fd00::/129", "pods/24", "10.0.0.0/24,"]) {
      const err = await fails("UpdateRuntimeConfig", { runtimeConfig: { networkConfig: { podCidr: bad } } });
      expect(err.code, bad).to.equal(grpc.status.INVALID_ARGUMENT);
      expect(err.details, bad).to.include("runtime_config.network_config.pod_cidr");
    }
    await update("10.213.0.128/25");
    expect(await cidrs()).to.deep.equal(["10.213.0.128/25"]);

    // a network whose bridge plugin takes ipRanges: host-local allocates from the node's pod CIDR
    const plugins = bridgePlugins(bed.ipamDir) as any[];
    // a bridge of its own: the first one already has the gateway address of the /24
    plugins[0] = { ...plugins[0], bridge: "cri-cidr0", capabilities: { ipRanges: true }, ipam: { type: "host-local", dataDir: bed.ipamDir, routes: [{ dst: "0.0.0.0/0" }] } };
    bed.writeNetwork(plugins);
    try {
      const pod = await runPod();
      const ip = (await rt("PodSandboxStatus", { podSandboxId: pod.id })).status.network.ip as string;
      expect(ip).to.match(/^10\.213\.0\.\d+$/);
      expect(Number(ip.split(".")[3])).to.be.greaterThan(128);
      await rt("RemovePodSandbox", { podSandboxId: pod.id });
    } finally {
      bed.writeNetwork();
    }
  });
});
