/**
 * CRI containers on `engined --cri-supervisor` over gRPC: created, started, stopped and removed
 * in a pod through the supervisor + conmon + runc path, in the supervisor namespace of their
 * own (not in `docker ps`), their output in the CRI log format at the kubelet's log path, the
 * pod's namespaces and files inside. Mirrors cri-tools' validate specs for containers
 * (lifecycle, list filters, stop and remove twice, exit codes, log path, hostname, DNS config)
 * and checks bad input and that a failed create leaves nothing.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { grpc } from "./helpers/cri-client.js";
import { podConfig, startCriBed, type CriBed } from "./helpers/cri-pods.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir } from "./helpers/engined.js";
import { eventually } from "./helpers/net-daemon.js";

/** `<RFC3339Nano> <stream> <P|F> <text>`, the CRI log line. */
const CRI_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d) (stdout|stderr) (P|F) (.*)$/;

describe("CRI: containers (engined --cri-supervisor, conmon, runc)", function () {
  this.timeout(180_000);
  let bed: CriBed;
  let logDir: string;
  const rt = (method: string, req: object = {}) => bed.cri.call("runtime", method, req);
  const host = () => `unix://${bed.d.socket}`;
  const status = async (id: string) => (await rt("ContainerStatus", { containerId: id })).status;
  const logLines = (path: string) =>
    readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => {
      const m = CRI_LINE.exec(l);
      if (!m) throw new Error(`not a CRI log line: ${JSON.stringify(l)}`);
      return { stream: m[3], tag: m[4], text: m[5] };
    });
  const container = (name: string, args: string[], extra: Record<string, unknown> = {}) => ({
    metadata: { name, attempt: 0 },
    image: { image: "busybox" },
    command: ["sh", "-c"],
    args,
    logPath: `${name}/0.log`,
    labels: { c: name },
    annotations: { "example.com/c": name },
    ...extra,
  });

  before(async function () {
    bed = await startCriBed();
    const rootfs = writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs());
    const imported = await docker(host(), ["import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", rootfs, "busybox"]);
    expect(imported.code, imported.stderr).to.equal(0);
    logDir = makeTempDir("engine-cri-logs-");
  });

  after(async function () {
    await bed?.stop();
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed") console.log(`--- engined output (last 4000 chars):\n${bed.d.output().slice(-4000)}`);
  });

  it("runs a container in its pod: created, running, its output in the CRI log format, the pod's hostname and DNS inside; stopped; removed", async function () {
    const pod = podConfig({ logDirectory: join(logDir, "p1"), dnsConfig: { servers: ["10.213.0.53"], searches: ["svc.test"], options: [] } });
    const podId = (await rt("RunPodSandbox", { config: pod })).podSandboxId;
    const script = "echo hello; echo oops >&2; hostname; cat /etc/resolv.conf; echo env=$GREETING; exec sleep 60";
    const config = container("main", [script], { envs: [{ key: "GREETING", value: "hi there" }] });
    const { containerId: id } = await rt("CreateContainer", { podSandboxId: podId, config, sandboxConfig: pod });
    expect(id).to.match(/^[0-9a-f]{64}$/);
    const created = await status(id);
    expect(created).to.include({ id, state: "CONTAINER_CREATED", logPath: join(logDir, "p1", "main/0.log") });
    expect(created.metadata).to.deep.equal(config.metadata);
    expect(created.labels).to.deep.equal(config.labels);
    expect(created.annotations).to.deep.equal(config.annotations);
    expect(created.imageId).to.match(/^sha256:/);

    await rt("StartContainer", { containerId: id });
    const running = await status(id);
    expect(running.state).to.equal("CONTAINER_RUNNING");
    expect(Number(running.startedAt)).to.be.greaterThan(Number(running.createdAt) - 1);
    await eventually("the log has the output", () => {
      try {
        return logLines(created.logPath).some((l) => l.text.startsWith("env="));
      } catch {
        return false;
      }
    });
    const lines = logLines(created.logPath);
    expect(lines).to.deep.include({ stream: "stdout", tag: "F", text: "hello" });
    expect(lines).to.deep.include({ stream: "stderr", tag: "F", text: "oops" });
    expect(lines).to.deep.include({ stream: "stdout", tag: "F", text: pod.hostname });
    expect(lines).to.deep.include({ stream: "stdout", tag: "F", text: "nameserver 10.213.0.53" });
    expect(lines).to.deep.include({ stream: "stdout", tag: "F", text: "search svc.test" });
    expect(lines).to.deep.include({ stream: "stdout", tag: "F", text: "env=hi there" });
    // Docker's side sees none of it, and cannot remove the image it runs
    expect((await docker(host(), ["ps", "-aq"])).stdout.trim()).to.equal("");
    const rmi = await docker(host(), ["rmi", "busybox"]);
    expect(rmi.code).to.not.equal(0);

    // sh as PID 1 ignores SIGTERM: killed after the timeout
    await rt("StopContainer", { containerId: id, timeout: 1 });
    const stopped = await status(id);
    expect(stopped).to.include({ state: "CONTAINER_EXITED", exitCode: 137 });
    expect(Number(stopped.finishedAt)).to.be.greaterThan(Number(stopped.startedAt));
    await rt("StopContainer", { containerId: id, timeout: 0 });
    await rt("RemoveContainer", { containerId: id });
    await rt("RemoveContainer", { containerId: id });
    expect((await bed.cri.fails("runtime", "ContainerStatus", { containerId: id })).code).to.equal(grpc.status.NOT_FOUND);
    await rt("RemovePodSandbox", { podSandboxId: podId });
  });

  it("an exit is recorded with its code; the list filters by pod, state, labels and id", async function () {
    const pod = podConfig({ logDirectory: join(logDir, "p2") });
    const podId = (await rt("RunPodSandbox", { config: pod })).podSandboxId;
    const quick = (await rt("CreateContainer", { podSandboxId: podId, config: container("quick", ["exit 3"]), sandboxConfig: pod })).containerId;
    const idle = (await rt("CreateContainer", { podSandboxId: podId, config: container("idle", ["exec sleep 60"]), sandboxConfig: pod })).containerId;
    await rt("StartContainer", { containerId: quick });
    await eventually("the quick one exited", async () => (await status(quick)).state === "CONTAINER_EXITED", 20_000);
    expect(await status(quick)).to.include({ exitCode: 3, reason: "Error" });
    const ids = async (filter: object) => (await rt("ListContainers", { filter })).containers.map((c: any) => c.id);
    expect(await ids({ podSandboxId: podId })).to.have.members([quick, idle]);
    expect(await ids({ state: { state: "CONTAINER_CREATED" } })).to.deep.equal([idle]);
    expect(await ids({ state: { state: "CONTAINER_EXITED" } })).to.deep.equal([quick]);
    expect(await ids({ labelSelector: { c: "idle" } })).to.deep.equal([idle]);
    expect(await ids({ id: quick.slice(0, 13) })).to.deep.equal([quick]);
    const listed = (await rt("ListContainers", { filter: { id: idle } })).containers[0];
    expect(listed).to.include({ podSandboxId: podId, state: "CONTAINER_CREATED" });
    expect(listed.image.image).to.equal("busybox");
    // the pod's status lists its containers; removing the pod removes them
    expect((await rt("PodSandboxStatus", { podSandboxId: podId })).containersStatuses.map((c: any) => c.id)).to.have.members([quick, idle]);
    await rt("StartContainer", { containerId: idle });
    await rt("RemovePodSandbox", { podSandboxId: podId });
    expect(await ids({})).to.deep.equal([]);
  });

  it("ReopenContainerLog starts a new log file after the kubelet's rotation; ExecSync; UpdateContainerResources changes the running container's limits", async function () {
    const pod = podConfig({ logDirectory: join(logDir, "p4") });
    const podId = (await rt("RunPodSandbox", { config: pod })).podSandboxId;
    const id = (await rt("CreateContainer", { podSandboxId: podId, config: container("ticker", ["i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done"]) })).containerId;
    const notYet = await bed.cri.fails("runtime", "ReopenContainerLog", { containerId: id });
    expect(notYet.code).to.equal(grpc.status.FAILED_PRECONDITION);
    await rt("StartContainer", { containerId: id });
    const { logPath } = await status(id);
    await eventually("ticks in the log", () => logLines(logPath).length >= 3);
    renameSync(logPath, `${logPath}.1`);
    await rt("ReopenContainerLog", { containerId: id });
    await eventually("ticks in the new log", () => logLines(logPath).length >= 2);
    const old = logLines(`${logPath}.1`).map((l) => Number(l.text.split(" ")[1]));
    const fresh = logLines(logPath).map((l) => Number(l.text.split(" ")[1]));
    // no tick lost or written twice across the rotation (the old file is no longer written)
    expect(fresh[0]).to.be.at.most(old.at(-1)! + 2);
    expect(fresh[0]).to.be.greaterThan(old.at(-1)!);
    expect(logLines(`${logPath}.1`).length).to.equal(old.length);

    // ExecSync: both streams apart, the exit code, the pod's namespaces; a timeout is DEADLINE_EXCEEDED
    const ran = await rt("ExecSync", { containerId: id, cmd: ["sh", "-c", "echo out; echo err >&2; hostname; exit 4"], timeout: 10 });
    expect(ran.stdout.toString()).to.equal(`out\n${pod.hostname}\n`);
    expect(ran.stderr.toString()).to.equal("err\n");
    expect(ran.exitCode).to.equal(4);
    const slow = await bed.cri.fails("runtime", "ExecSync", { containerId: id, cmd: ["sleep", "30"], timeout: 1 });
    expect(slow.code).to.equal(grpc.status.DEADLINE_EXCEEDED);
    expect((await bed.cri.fails("runtime", "ExecSync", { containerId: id, cmd: [] })).details).to.include("cmd");

    await rt("UpdateContainerResources", { containerId: id, linux: { memoryLimitInBytes: String(96 * 1024 * 1024), cpuShares: "512" } });
    const pid = JSON.parse((await rt("ContainerStatus", { containerId: id, verbose: true })).info.info).pid;
    const memoryCgroup = readFileSync(`/proc/${pid}/cgroup`, "utf8").split("\n").find((l) => /^\d+:memory:/.test(l));
    if (memoryCgroup) {
      const limit = readFileSync(`/sys/fs/cgroup/memory${memoryCgroup.split(":")[2]}/memory.limit_in_bytes`, "utf8").trim();
      expect(Number(limit)).to.equal(96 * 1024 * 1024);
    }
    expect((await status(id)).resources.linux).to.include({ memoryLimitInBytes: String(96 * 1024 * 1024), cpuShares: "512" });
    await rt("RemovePodSandbox", { podSandboxId: podId });
  });

  it("bad input is InvalidArgument naming the field; unknown ids NotFound; a second start FailedPrecondition; nothing half-made", async function () {
    const pod = podConfig({ logDirectory: join(logDir, "p3") });
    const podId = (await rt("RunPodSandbox", { config: pod })).podSandboxId;
    const cases: [object, string][] = [
      [{ podSandboxId: podId }, "config"],
      [{ podSandboxId: podId, config: container("", ["true"]) }, "config.metadata.name"],
      [{ podSandboxId: podId, config: container("x", ["true"], { image: { image: "" } }) }, "config.image.image"],
      [{ podSandboxId: podId, config: container("x", ["true"], { logPath: "../escape.log" }) }, "config.log_path"],
      [{ podSandboxId: podId, config: container("x", ["true"], { mounts: [{ containerPath: "/data", hostPath: "/no/such/dir" }] }) }, "config.mounts[0].host_path"],
      [{ podSandboxId: podId, config: container("x", ["true"], { envs: [{ key: "", value: "v" }] }) }, "config.envs[0].key"],
    ];
    for (const [req, field] of cases) {
      const err = await bed.cri.fails("runtime", "CreateContainer", req);
      expect(err.code, field).to.equal(grpc.status.INVALID_ARGUMENT);
      expect(err.details, field).to.include(field);
    }
    const noImage = await bed.cri.fails("runtime", "CreateContainer", { podSandboxId: podId, config: container("x", ["true"], { image: { image: "never-pulled:1" } }) });
    expect(noImage.code).to.equal(grpc.status.NOT_FOUND);
    const noPod = await bed.cri.fails("runtime", "CreateContainer", { podSandboxId: "e".repeat(64), config: container("x", ["true"]) });
    expect(noPod.code).to.equal(grpc.status.NOT_FOUND);
    for (const m of ["StartContainer", "ContainerStatus"]) expect((await bed.cri.fails("runtime", m, { containerId: "e".repeat(64) })).code, m).to.equal(grpc.status.NOT_FOUND);
    // StopContainer is idempotent (CRI): an unknown container is no error
    await rt("StopContainer", { containerId: "e".repeat(64), timeout: 0 });
    expect((await rt("ListContainers", {})).containers).to.deep.equal([]);

    const id = (await rt("CreateContainer", { podSandboxId: podId, config: container("once", ["exec sleep 60"]) })).containerId;
    const dup = await bed.cri.fails("runtime", "CreateContainer", { podSandboxId: podId, config: container("once", ["true"]) });
    expect(dup.code).to.equal(grpc.status.ALREADY_EXISTS);
    await rt("StartContainer", { containerId: id });
    expect((await bed.cri.fails("runtime", "StartContainer", { containerId: id })).code).to.equal(grpc.status.FAILED_PRECONDITION);
    // a stopped pod takes no new container
    await rt("StopPodSandbox", { podSandboxId: podId });
    expect((await status(id)).state).to.equal("CONTAINER_EXITED");
    expect((await bed.cri.fails("runtime", "CreateContainer", { podSandboxId: podId, config: container("late", ["true"]) })).code).to.equal(grpc.status.FAILED_PRECONDITION);
    await rt("RemovePodSandbox", { podSandboxId: podId });
  });
});
