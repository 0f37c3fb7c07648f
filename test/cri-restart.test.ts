/**
 * CRI pods and containers across a restart of engined: the pod's namespaces stay pinned and
 * its containers run on under their own supervisor while engined is down; the restarted
 * engined serves them again, follows the exits, and removes them. A pod's shared PID namespace
 * (pid POD) lives on with its init, and containers started after the restart join it.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { podConfig, startCriBed, type CriBed } from "./helpers/cri-pods.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir } from "./helpers/engined.js";
import { eventually } from "./helpers/net-daemon.js";

describe("CRI: pods and containers across a restart of engined", function () {
  this.timeout(180_000);
  let bed: CriBed;
  const rt = (method: string, req: object = {}) => bed.cri.call("runtime", method, req);

  before(async function () {
    bed = await startCriBed([], { roots: makeTempDir("engine-cri-roots-") });
    const rootfs = writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs());
    const imported = await docker(`unix://${bed.d.socket}`, ["import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", rootfs, "busybox"]);
    expect(imported.code, imported.stderr).to.equal(0);
  });

  after(async function () {
    await bed?.stop();
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed") console.log(`--- engined output (last 4000 chars):\n${bed.d.output().slice(-4000)}`);
  });

  it("keeps the pod READY with its address and the container RUNNING; an exit while engined was down is recorded", async function () {
    const pod = podConfig({ logDirectory: join(makeTempDir("engine-cri-logs-"), "p") });
    const podId = (await rt("RunPodSandbox", { config: pod })).podSandboxId;
    const ip = (await rt("PodSandboxStatus", { podSandboxId: podId })).status.network.ip;
    const base = { image: { image: "busybox" }, command: ["sh", "-c"] };
    const long = (await rt("CreateContainer", { podSandboxId: podId, config: { ...base, metadata: { name: "long" }, args: ["exec sleep 120"], logPath: "long.log" } })).containerId;
    const short = (await rt("CreateContainer", { podSandboxId: podId, config: { ...base, metadata: { name: "short" }, args: ["sleep 3; exit 7"], logPath: "short.log" } })).containerId;
    await rt("StartContainer", { containerId: long });
    await rt("StartContainer", { containerId: short });
    const pid = JSON.parse((await rt("ContainerStatus", { containerId: long, verbose: true })).info.info).pid;
    expect(pid).to.be.greaterThan(0);

    await bed.restart();
    const { status } = await rt("PodSandboxStatus", { podSandboxId: podId });
    expect(status).to.include({ state: "SANDBOX_READY" });
    expect(status.network.ip).to.equal(ip);
    expect((await rt("ContainerStatus", { containerId: long })).status.state).to.equal("CONTAINER_RUNNING");
    // the same process, never restarted
    execFileSync("kill", ["-0", String(pid)]);
    await eventually("the short one's exit is recorded", async () => (await rt("ContainerStatus", { containerId: short })).status.state === "CONTAINER_EXITED", 30_000);
    expect((await rt("ContainerStatus", { containerId: short })).status.exitCode).to.equal(7);

    await rt("StopContainer", { containerId: long, timeout: 0 });
    expect((await rt("ContainerStatus", { containerId: long })).status).to.include({ state: "CONTAINER_EXITED", exitCode: 137 });
    await rt("RemovePodSandbox", { podSandboxId: podId });
    expect((await rt("ListContainers", {})).containers).to.deep.equal([]);
  });

  it("keeps a pod's shared PID namespace (pid POD): the same init, a container started after the restart joins it; gone with the pod; a pod whose init died is NOTREADY", async function () {
    const shared = () => podConfig({ linux: { securityContext: { namespaceOptions: { network: "POD", ipc: "POD", pid: "POD" } } } });
    const podId = (await rt("RunPodSandbox", { config: shared() })).podSandboxId;
    const doomed = (await rt("RunPodSandbox", { config: shared() })).podSandboxId;
    const initPid = async (id = podId) => JSON.parse((await rt("PodSandboxStatus", { podSandboxId: id, verbose: true })).info.info).init?.pid ?? 0;
    const init = await initPid();
    const doomedInit = await initPid(doomed);
    expect(init).to.be.greaterThan(0);
    const sleeper = (name: string, seconds: number) => ({ metadata: { name }, image: { image: "busybox" }, command: ["sleep", String(seconds)] });
    const before = (await rt("CreateContainer", { podSandboxId: podId, config: sleeper("before", 3701) })).containerId;
    await rt("StartContainer", { containerId: before });

    // killed just before the restart: the old engined or the new one learns of it
    process.kill(doomedInit, "SIGKILL");
    await bed.restart();
    expect((await rt("PodSandboxStatus", { podSandboxId: podId })).status.state).to.equal("SANDBOX_READY");
    await eventually("the pod whose init died is NOTREADY", async () => (await rt("PodSandboxStatus", { podSandboxId: doomed })).status.state === "SANDBOX_NOTREADY", 10_000);
    await rt("RemovePodSandbox", { podSandboxId: doomed });
    expect(await initPid()).to.equal(init);
    const after = (await rt("CreateContainer", { podSandboxId: podId, config: sleeper("after", 3702) })).containerId;
    await rt("StartContainer", { containerId: after });
    const ps = await rt("ExecSync", { containerId: after, cmd: ["ps", "-o", "args"], timeout: 20 });
    expect(ps.stdout.toString()).to.match(/sleep 3701/).and.to.match(/sleep 3702/);
    const afterPid = JSON.parse((await rt("ContainerStatus", { containerId: after, verbose: true })).info.info).pid;
    expect(readlinkSync(`/proc/${afterPid}/ns/pid`)).to.equal(readlinkSync(`/proc/${init}/ns/pid`));

    await rt("RemovePodSandbox", { podSandboxId: podId });
    const gone = (pid: number) => {
      try {
        return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
      } catch {
        return true;
      }
    };
    await eventually("the init and the containers are gone", () => gone(init) && gone(afterPid), 10_000);
  });
});
