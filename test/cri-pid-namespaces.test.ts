/**
 * CRI PID namespaces and stop signals on `engined --cri-supervisor` (runc, conmon, CNI), as
 * cri-tools' validate specs PodPID, ContainerPID and TargetPID check them: a pod with pid POD
 * holds one PID namespace (its init, catatonit, PID 1) that its containers share, and that goes
 * with the pod; a pod with pid CONTAINER does not; a container with pid TARGET joins another
 * running container's of its pod, and a bad target is refused naming the field. StopContainer
 * sends the container's stop signal (ContainerConfig.stop_signal, else the image's StopSignal,
 * else SIGTERM; ContainerStatus.stop_signal says which), then SIGKILL after the timeout.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { grpc } from "./helpers/cri-client.js";
import { podConfig, useCriBed } from "./helpers/cri-pods.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir } from "./helpers/engined.js";
import { eventually } from "./helpers/net-daemon.js";

/** Whether a host process runs (and is not a zombie). */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

describe("CRI: PID namespaces (pid POD, CONTAINER, TARGET) and stop signals", function () {
  this.timeout(180_000);
  const bed = useCriBed();
  const rt = (method: string, req: object = {}) => bed.current().cri.call("runtime", method, req);
  const ns = (pid: string) => ({ network: "POD", ipc: "POD", pid });
  const sleeper = (name: string, seconds: number, pid?: string, extra: Record<string, unknown> = {}) => ({
    metadata: { name, attempt: 0 },
    image: { image: "busybox" },
    command: ["sleep", String(seconds)],
    ...(pid ? { linux: { securityContext: { namespaceOptions: pid === "TARGET" ? { ...ns(pid), targetId: extra.targetId } : ns(pid) } } } : {}),
  });
  const run = async (podSandboxId: string, config: Record<string, unknown>) => {
    const { containerId } = await rt("CreateContainer", { podSandboxId, config, sandboxConfig: {} });
    await rt("StartContainer", { containerId });
    return containerId;
  };
  const exec = async (containerId: string, cmd: string[]) => {
    const r = await rt("ExecSync", { containerId, cmd, timeout: 20 });
    return { ...r, stdout: Buffer.from(r.stdout).toString(), stderr: Buffer.from(r.stderr).toString() };
  };
  const podWith = async (pid: string) => {
    const config = podConfig({ linux: { securityContext: { namespaceOptions: ns(pid) } } });
    return (await rt("RunPodSandbox", { config })).podSandboxId as string;
  };
  const initPid = async (podSandboxId: string): Promise<number> => JSON.parse((await rt("PodSandboxStatus", { podSandboxId, verbose: true })).info.info).init?.pid ?? 0;
  /** The zombies a container sees (from /proc/<pid>/stat: `pid (comm) Z ...`). */
  const zombies = async (containerId: string) =>
    (await exec(containerId, ["sh", "-c", "cat /proc/[0-9]*/stat"])).stdout.split("\n").filter((l: string) => /\) Z /.test(l));
  const containerPid = async (containerId: string): Promise<number> => JSON.parse((await rt("ContainerStatus", { containerId, verbose: true })).info.info).pid;

  it("pid POD: the pod's containers see each other's processes under the pod's init (PID 1), which reaps orphans; it and they go at StopPodSandbox", async function () {
    const podId = await podWith("POD");
    const init = await initPid(podId);
    expect(init).to.be.greaterThan(0);
    expect(readFileSync(`/proc/${init}/cmdline`, "utf8")).to.match(/catatonit/);
    // a: its shell leaves an orphan that exits at once; the init, not the shell, is its parent then, and reaps it
    const a = await run(podId, { ...sleeper("a", 3601, "POD"), command: ["sh", "-c", "(sleep 0.2 &); exec sleep 3601"] });
    const b = await run(podId, sleeper("b", 3602, "POD"));
    const seen = await exec(b, ["ps", "-o", "pid,args"]);
    expect(seen.exitCode, seen.stderr).to.equal(0);
    expect(seen.stdout).to.match(/sleep 3601/).and.to.match(/sleep 3602/);
    expect((await exec(a, ["cat", "/proc/1/cmdline"])).stdout).to.match(/catatonit/);
    await sleep(500);
    expect(await zombies(b)).to.deep.equal([]);
    // the host sees both in one PID namespace, the init's
    const pidA = await containerPid(a);
    expect(readlinkSync(`/proc/${pidA}/ns/pid`)).to.equal(readlinkSync(`/proc/${init}/ns/pid`));

    // a process left by an exec (kept running) dies with the namespace
    await exec(a, ["sh", "-c", "setsid sleep 3603 </dev/null >/dev/null 2>&1 &"]);
    expect((await exec(b, ["ps", "-o", "args"])).stdout).to.match(/sleep 3603/);
    await rt("StopPodSandbox", { podSandboxId: podId });
    await eventually("the init and every process of the namespace are gone", () => !alive(init) && !alive(pidA), 10_000);
    expect(await initPid(podId)).to.equal(0);
    await rt("RemovePodSandbox", { podSandboxId: podId });
  });

  it("pid CONTAINER: each container has its own PID namespace, its command PID 1; no init", async function () {
    const podId = await podWith("CONTAINER");
    expect(await initPid(podId)).to.equal(0);
    // the same orphan as above: its parent is now the container's PID 1, sleep, which never reaps it
    const a = await run(podId, { ...sleeper("a", 3611, "CONTAINER"), command: ["sh", "-c", "(sleep 0.2 &); exec sleep 3611"] });
    const b = await run(podId, sleeper("b", 3612, "CONTAINER"));
    await eventually("the orphan is a zombie in a's own namespace", async () => (await zombies(a)).length === 1, 10_000);
    const seen = await exec(b, ["ps", "-o", "args"]);
    expect(seen.stdout).to.match(/sleep 3612/).and.not.to.match(/sleep 3611/);
    expect((await exec(b, ["cat", "/proc/1/cmdline"])).stdout).to.match(/^sleep\x003612/);
    await rt("RemovePodSandbox", { podSandboxId: podId });
  });

  it("the init is gone after RemovePodSandbox of a running pod (no StopPodSandbox before)", async function () {
    const podId = await podWith("POD");
    const init = await initPid(podId);
    const a = await run(podId, sleeper("a", 3621, "POD"));
    const pidA = await containerPid(a);
    await rt("RemovePodSandbox", { podSandboxId: podId });
    await eventually("the init and the container are gone", () => !alive(init) && !alive(pidA), 10_000);
    expect((await rt("ListPodSandbox", { filter: { id: podId } })).items).to.deep.equal([]);
  });

  it("the init killed from outside makes the pod NOTREADY; its containers cannot start any more", async function () {
    const podId = await podWith("POD");
    const init = await initPid(podId);
    const created = (await rt("CreateContainer", { podSandboxId: podId, config: sleeper("late", 3631, "POD"), sandboxConfig: {} })).containerId;
    process.kill(init, "SIGKILL");
    await eventually("the pod is NOTREADY", async () => (await rt("PodSandboxStatus", { podSandboxId: podId })).status.state === "SANDBOX_NOTREADY", 10_000);
    expect((await bed.current().cri.fails("runtime", "StartContainer", { containerId: created })).code).to.equal(grpc.status.FAILED_PRECONDITION);
    await rt("RemovePodSandbox", { podSandboxId: podId });
  });

  it("pid TARGET joins a running container of the pod; an unknown, another pod's or a stopped target is refused naming target_id", async function () {
    const podId = await podWith("CONTAINER");
    const target = await run(podId, sleeper("target", 3641, "CONTAINER"));
    const debug = await run(podId, sleeper("debug", 3642, "TARGET", { targetId: target }));
    const seen = await exec(debug, ["ps", "-o", "args"]);
    expect(seen.stdout).to.match(/sleep 3641/).and.to.match(/sleep 3642/);
    expect((await exec(debug, ["cat", "/proc/1/cmdline"])).stdout).to.match(/^sleep\x003641/);

    const refused = async (config: object, pod = podId) => {
      const err = await bed.current().cri.fails("runtime", "CreateContainer", { podSandboxId: pod, config, sandboxConfig: {} });
      expect(err.details).to.include("config.linux.security_context.namespace_options.target_id");
      return err.code;
    };
    expect(await refused(sleeper("t1", 1, "TARGET", { targetId: "0123456789ab" }))).to.equal(grpc.status.NOT_FOUND);
    expect(await refused(sleeper("t2", 1, "TARGET", { targetId: "" }))).to.equal(grpc.status.INVALID_ARGUMENT);
    const other = await podWith("CONTAINER");
    expect(await refused(sleeper("t3", 1, "TARGET", { targetId: target }), other)).to.equal(grpc.status.INVALID_ARGUMENT);
    const idle = (await rt("CreateContainer", { podSandboxId: podId, config: sleeper("idle", 1), sandboxConfig: {} })).containerId;
    expect(await refused(sleeper("t4", 1, "TARGET", { targetId: idle }))).to.equal(grpc.status.INVALID_ARGUMENT);
    // nothing half-made: only the containers made on purpose are there
    expect((await rt("ListContainers", { filter: { podSandboxId: podId } })).containers.map((c: { metadata: { name: string } }) => c.metadata.name).sort()).to.deep.equal(["debug", "idle", "target"]);
    await rt("RemovePodSandbox", { podSandboxId: podId });
    await rt("RemovePodSandbox", { podSandboxId: other });
  });

  it("StopContainer sends the kubelet's stop_signal, else the image's StopSignal, else SIGTERM, and SIGKILL after the timeout; ContainerStatus names it", async function () {
    const rootfs = writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs());
    const imported = await docker(`unix://${bed.current().d.socket}`, ["import", "--change", "STOPSIGNAL SIGUSR1", "--change", "ENV PATH=/bin", rootfs, "busybox-usr1"]);
    expect(imported.code, imported.stderr).to.equal(0);
    const logDir = makeTempDir("engine-cri-logs-");
    const podId = (await rt("RunPodSandbox", { config: podConfig({ logDirectory: logDir }) })).podSandboxId;
    // sh as PID 1 takes only the signals it traps: each trap names the signal and exits with its own code
    const script = "trap 'echo got USR1; exit 11' USR1; trap 'echo got TERM; exit 15' TERM; echo ready; while true; do sleep 0.1; done";
    const trapper = (name: string, image: string) => ({ metadata: { name, attempt: 0 }, image: { image }, command: ["sh", "-c", script], logPath: `${name}.log` });
    const ready = (name: string) => eventually(`${name} is ready`, () => readFileSync(join(logDir, `${name}.log`), "utf8").includes("ready"), 10_000);
    const stopped = async (id: string) => (await rt("ContainerStatus", { containerId: id })).status;

    const usr1 = await run(podId, trapper("usr1", "busybox-usr1"));
    await ready("usr1");
    await rt("StopContainer", { containerId: usr1, timeout: 10 });
    expect(await stopped(usr1)).to.include({ state: "CONTAINER_EXITED", exitCode: 11, stopSignal: "SIGUSR1" });
    expect(readFileSync(join(logDir, "usr1.log"), "utf8")).to.include("got USR1");

    // the kubelet's stop_signal over the image's
    const overridden = await run(podId, { ...trapper("overridden", "busybox-usr1"), stopSignal: "SIGTERM" });
    await ready("overridden");
    expect((await stopped(overridden)).stopSignal).to.equal("SIGTERM");
    await rt("StopContainer", { containerId: overridden, timeout: 10 });
    expect(await stopped(overridden)).to.include({ state: "CONTAINER_EXITED", exitCode: 15 });
    expect(readFileSync(join(logDir, "overridden.log"), "utf8")).to.include("got TERM").and.not.to.include("got USR1");

    const term = await run(podId, trapper("term", "busybox"));
    await ready("term");
    await rt("StopContainer", { containerId: term, timeout: 10 });
    expect(await stopped(term)).to.include({ state: "CONTAINER_EXITED", exitCode: 15, stopSignal: "SIGTERM" });

    // a stop signal it ignores: SIGKILL once the timeout is over
    const deaf = await run(podId, { ...trapper("deaf", "busybox-usr1"), command: ["sh", "-c", "trap '' USR1; echo ready; while true; do sleep 0.1; done"] });
    await ready("deaf");
    const began = Date.now();
    await rt("StopContainer", { containerId: deaf, timeout: 2 });
    expect(Date.now() - began).to.be.within(1500, 8000);
    expect(await stopped(deaf)).to.include({ state: "CONTAINER_EXITED", exitCode: 137 });
    await rt("RemovePodSandbox", { podSandboxId: podId });
  });
});
