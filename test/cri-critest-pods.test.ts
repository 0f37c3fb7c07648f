/**
 * critest (kubernetes-sigs/cri-tools, pkg/validate) for pods, networking, idempotence and runtime
 * info, run against a real `engined --cri-supervisor` (runc, conmon, the CNI plugins) in a network
 * namespace of its own. One `it` per ginkgo `It`, titled as critest titles it, sending the requests
 * critest's helpers (pkg/framework/util.go, pkg/common/pod_config.go) send, field by field, and
 * asserting what it asserts.
 *
 * Images: critest's busybox (registry.k8s.io/e2e-test-images/busybox:1.29-2) and web server
 * (registry.k8s.io/e2e-test-images/nginx:1.14-2) are made here instead from the host's busybox
 * (there is no internet), pushed to a registry on the loopback of the daemon's namespace under the
 * same paths, and named by that registry, as critest's `-test-images-file` names images of a
 * registry of one's own (defaultTestContainerImage, webServerTestImage). The daemon has neither
 * until critest's helper finds no ImageStatus and pulls it (with the pod's config), as on a fresh
 * node. The web server stand-in serves `/` with 200 on port 80 as root, as nginx does in that
 * image (busybox httpd, started by the image's CMD: critest gives the web server container no
 * command).
 *
 * critest's HTTP checks (the pod's IP and port 80; 127.0.0.1 and host port 12000) run from the
 * node, which here is the daemon's namespace: a Node process run there under nsenter does the GET.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runtimeCgroupParent } from "../host/cri/sandbox/sandbox-config.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir } from "./helpers/engined.js";
import { startCriBed, type CriBed } from "./helpers/cri-pods.js";

// framework/util.go and validate/consts.go
/** The registry in the daemon's namespace (its own loopback: no port of the host's is taken). */
const REGISTRY = "127.0.0.1:5000";
const BUSYBOX = `${REGISTRY}/e2e-test-images/busybox:1.29-2`;
const WEB_SERVER = `${REGISTRY}/e2e-test-images/nginx:1.14-2`;
const UID_PREFIX = "cri-test-uid";
const NAMESPACE_PREFIX = "cri-test-namespace";
const ATTEMPT = 2;
const DEFAULT_COMMAND = ["top"];
const PAUSE_COMMAND = ["sh", "-c", "top"];
const STOP_TIMEOUT = 60;
const EXEC_SYNC_TIMEOUT = 60;
const WEB_PORT = 80;
const HOST_PORT_FOR_PORT_MAPPING = 12000;

/** A GET from the node (the daemon's namespace), as Go's http.DefaultClient: the status code, or throws. */
function getFromNode(nsFile: string, url: string): Promise<number> {
  const script = `require("node:http").get(${JSON.stringify(url)}, { timeout: 5000 }, (r) => { console.log(r.statusCode); r.resume(); })
    .on("timeout", function () { this.destroy(new Error("timeout")); }).on("error", (e) => { console.error(e.message); process.exit(1); });`;
  return new Promise((resolve, reject) =>
    execFile("nsenter", [`--net=${nsFile}`, "--", process.execPath, "-e", script], { timeout: 20_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`GET ${url}: ${stderr || err.message}`)) : resolve(Number(stdout.trim()))));
}

describe("critest: pods, networking, idempotence, runtime info (engined --cri-supervisor)", function () {
  this.timeout(180_000);
  let bed: CriBed;
  let registry: ChildProcess | undefined;
  const rt = (method: string, req: object = {}) => bed.cri.call("runtime", method, req);
  const img = (method: string, req: object = {}) => bed.cri.call("image", method, req);

  before(async function () {
    bed = await startCriBed();
    const rootfs = writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs());
    const host = `unix://${bed.d.socket}`;
    const imports: [string, string[]][] = [
      [BUSYBOX, ["--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin"]],
      [WEB_SERVER, ["--change", "ENV PATH=/bin", "--change", 'CMD ["sh", "-c", "mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p 80 -h /www"]']],
    ];
    // docker-registry (Debian's) in the daemon's namespace, on its loopback
    const regDir = makeTempDir("engine-critest-registry-");
    const registryLog = join(regDir, "registry.log");
    writeFileSync(join(regDir, "config.yml"), [
      "version: 0.1",
      "log:\n  level: warn",
      `storage:\n  filesystem:\n    rootdirectory: ${join(regDir, "storage")}`,
      `http:\n  addr: ${REGISTRY}\n  secret: engine-critest-registry`,
      "",
    ].join("\n"));
    const fd = openSync(registryLog, "a");
    registry = spawn("nsenter", [`--net=${bed.ns.file}`, "--", "/usr/bin/docker-registry", "serve", join(regDir, "config.yml")], { stdio: ["ignore", fd, fd] });
    closeSync(fd);
    const until = Date.now() + 20_000;
    while ((await getFromNode(bed.ns.file, `http://${REGISTRY}/v2/`).catch(() => 0)) !== 200) {
      if (Date.now() > until) throw new Error(`the registry did not start: ${readFileSync(registryLog, "utf8")}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // made, pushed, and removed from the daemon: critest's helper pulls them
    for (const [name, changes] of imports) {
      for (const args of [["import", ...changes, rootfs, name], ["push", name], ["rmi", name]]) {
        const done = await docker(host, args);
        if (done.code !== 0) throw new Error(`docker ${args[0]} ${name} failed: ${done.stderr}`);
      }
    }
  });

  after(async function () {
    await bed?.stop();
    // nsenter execs the registry: this pid is the registry's
    if (registry?.pid && registry.exitCode === null && registry.signalCode === null) {
      const gone = new Promise((r) => registry!.once("exit", r));
      process.kill(registry.pid, "SIGTERM");
      await gone;
    }
  });

  afterEach(function () {
    if (this.currentTest?.state === "failed" && bed) console.log(`--- engined output (last 4000 chars):\n${bed.d.output().slice(-4000)}`);
  });

  // --- framework helpers, as critest's --------------------------------------------------------

  /** common.GetCgroupParent: "" when the runtime says cgroupfs, else "/test.slice". */
  const cgroupParent = async () => {
    const answer = await rt("RuntimeConfig", {}).catch(() => undefined);
    return answer?.linux?.cgroupDriver === "CGROUPFS" ? "" : "/test.slice";
  };
  const metadata = (name: string) => ({ name, uid: UID_PREFIX + randomUUID(), namespace: NAMESPACE_PREFIX + randomUUID(), attempt: ATTEMPT });
  // critest's client (k8s.io/cri-client) refuses answers that lack what it needs: an empty id from
  // RunPodSandbox or CreateContainer, an image status without id or size, a pod or container status
  // without id, metadata, creation time (and image, image ref), a Version field or a condition unset
  const runPodSandbox = async (config: object): Promise<string> => {
    const { podSandboxId } = await rt("RunPodSandbox", { config, runtimeHandler: "" });
    expect(podSandboxId, "RunPodSandbox's pod_sandbox_id").to.be.a("string").and.not.equal("");
    return podSandboxId;
  };
  /** RunDefaultPodSandbox and CreatePodSandboxForContainer (DefaultPodLabels is empty on Linux). */
  const defaultPodConfig = async (prefix: string) => ({ metadata: metadata(prefix + randomUUID()), linux: { cgroupParent: await cgroupParent() }, labels: {} });
  /** CreateContainer: the image's status, a pull only when it has none, user_specified_image set, then the create. */
  const createContainer = async (config: any, podId: string, podConfig: object): Promise<string> => {
    let name: string = config.image.image;
    if (!name.includes(":")) name += ":latest";
    const status = await img("ImageStatus", { image: { image: name }, verbose: false });
    if (status.image) expect(status.image.id !== "" && Number(status.image.size) > 0, "the image status's id and size").to.equal(true);
    if (!status.image) {
      const { imageRef } = await img("PullImage", { image: { image: name }, auth: null, sandboxConfig: podConfig });
      expect(imageRef, "PullImage's image_ref").to.be.a("string").and.not.equal("");
    }
    if (!config.image.userSpecifiedImage) config.image.userSpecifiedImage = name;
    const { containerId } = await rt("CreateContainer", { podSandboxId: podId, config, sandboxConfig: podConfig });
    expect(containerId, "CreateContainer's container_id").to.be.a("string").and.not.equal("");
    return containerId;
  };
  const containerConfig = (prefix: string, image: string, command?: string[]) => ({
    metadata: { name: prefix + randomUUID(), attempt: ATTEMPT },
    image: { image },
    ...(command ? { command } : {}),
    linux: {},
  });
  const createDefaultContainer = (podId: string, podConfig: object, prefix: string) => createContainer(containerConfig(prefix, BUSYBOX, DEFAULT_COMMAND), podId, podConfig);
  const podState = async (id: string) => {
    const { status } = await rt("PodSandboxStatus", { podSandboxId: id, verbose: false });
    expect(status.id).to.not.equal("");
    expect(status.metadata.name && status.metadata.namespace && status.metadata.uid, "the status's metadata").to.not.equal("");
    expect(status.createdAt).to.not.equal("0");
    return status;
  };
  const containerState = async (id: string) => {
    const { status } = await rt("ContainerStatus", { containerId: id, verbose: false });
    expect(status.id).to.not.equal("");
    expect(status.metadata.name).to.not.equal("");
    expect(status.createdAt).to.not.equal("0");
    expect(status.image?.image, "the status's image").to.be.a("string").and.not.equal("");
    expect(status.imageRef, "the status's image_ref").to.not.equal("");
    return status;
  };
  const listForId = async (id: string) => (await rt("ListPodSandbox", { filter: { id } })).items as { id: string }[];
  const execSync = async (containerId: string, cmd: string[]) => {
    const r = await rt("ExecSync", { containerId, cmd, timeout: EXEC_SYNC_TIMEOUT });
    // the remote client answers an error for a non-zero exit
    if (r.exitCode !== 0) throw new Error(`command ${cmd.join(" ")} exited ${r.exitCode}: ${Buffer.from(r.stderr).toString()}`);
    return { stdout: Buffer.from(r.stdout).toString(), stderr: Buffer.from(r.stderr).toString() };
  };
  /** The specs' AfterEach: stop and remove the pod, both without error. */
  const cleanUp = async (podId: string) => {
    await rt("StopPodSandbox", { podSandboxId: podId });
    await rt("RemovePodSandbox", { podSandboxId: podId });
  };

  // --- pkg/validate/pod.go ----------------------------------------------------------------------

  describe("PodSandbox: runtime should support basic operations on PodSandbox", function () {
    // pod.go
    it("runtime should support running PodSandbox [Conformance]", async function () {
      const id = await runPodSandbox(await defaultPodConfig("PodSandbox-for-create-test-"));
      expect((await podState(id)).state).to.equal("SANDBOX_READY");
      expect((await listForId(id)).map((p) => p.id)).to.include(id);
      await cleanUp(id);
    });

    // pod.go
    it("runtime should support stopping PodSandbox [Conformance]", async function () {
      const id = await runPodSandbox(await defaultPodConfig("PodSandbox-for-test-stop-"));
      await rt("StopPodSandbox", { podSandboxId: id });
      expect((await podState(id)).state).to.equal("SANDBOX_NOTREADY");
      await cleanUp(id);
    });

    // pod.go
    it("runtime should support removing PodSandbox [Conformance]", async function () {
      const id = await runPodSandbox(await defaultPodConfig("PodSandbox-for-test-remove-"));
      await rt("StopPodSandbox", { podSandboxId: id });
      await rt("RemovePodSandbox", { podSandboxId: id });
      expect((await listForId(id)).map((p) => p.id)).to.not.include(id);
    });
  });

  // --- pkg/validate/pod_linux.go ----------------------------------------------------------------

  describe("PodSandbox: runtime should support sysctls", function () {
    const withSysctls = async (sysctls: Record<string, string>) => {
      const config = { metadata: metadata("pod-sandbox-with-sysctls-" + randomUUID()), linux: { cgroupParent: await cgroupParent(), sysctls } };
      return { id: await runPodSandbox(config), config };
    };

    // pod_linux.go
    it("should support safe sysctls", async function () {
      const { id, config } = await withSysctls({ "kernel.shm_rmid_forced": "1" });
      const c = await createDefaultContainer(id, config, "container-shm-rmid-forced");
      await rt("StartContainer", { containerId: c });
      expect((await execSync(c, ["cat", "/proc/sys/kernel/shm_rmid_forced"])).stdout.trim()).to.equal("1");
      await cleanUp(id);
    });

    // pod_linux.go
    it("should support unsafe sysctls", async function () {
      const { id, config } = await withSysctls({ "fs.mqueue.msg_max": "100" });
      const c = await createDefaultContainer(id, config, "container-fs-mqueue-msg-max");
      await rt("StartContainer", { containerId: c });
      expect((await execSync(c, ["cat", "/proc/sys/fs/mqueue/msg_max"])).stdout.trim()).to.equal("100");
      await cleanUp(id);
    });
  });

  // --- pkg/validate/networking.go (networking_linux.go holds only a helper for streaming's host-network spec) --

  describe("Networking: runtime should support networking", function () {
    // networking.go
    it("runtime should support DNS config [Conformance]", async function () {
      const config = {
        metadata: metadata("create-PodSandbox-with-DNS-config" + randomUUID()),
        dnsConfig: { servers: ["10.10.10.10"], searches: ["google.com"], options: ["ndots:8"] },
        linux: { cgroupParent: await cgroupParent() },
        labels: {},
      };
      const id = await runPodSandbox(config);
      const c = await createDefaultContainer(id, config, "container-for-DNS-config-test-");
      await rt("StartContainer", { containerId: c });
      const { stdout, stderr } = await execSync(c, ["cat", "/etc/resolv.conf"]);
      for (const line of ["nameserver 10.10.10.10", "search google.com", "options ndots:8"]) expect(stdout).to.include(line);
      expect(stderr).to.equal("");
      await cleanUp(id);
    });

    // networking.go
    it("runtime should support set hostname [Conformance]", async function () {
      const config = {
        metadata: metadata("create-PodSandbox-with-hostname" + randomUUID()),
        hostname: "test-hostname",
        labels: {},
        linux: { cgroupParent: await cgroupParent() },
      };
      const id = await runPodSandbox(config);
      const c = await createDefaultContainer(id, config, "container-for-hostname-test-");
      await rt("StartContainer", { containerId: c });
      const { stdout, stderr } = await execSync(c, ["hostname"]);
      expect(stdout.trim().toLowerCase()).to.equal("test-hostname");
      expect(stderr).to.equal("");
      await cleanUp(id);
    });

    const withPortMappings = async (portMappings: object[]) => {
      const config = {
        metadata: metadata("create-PodSandbox-with-port-mapping" + randomUUID()),
        portMappings,
        linux: { cgroupParent: await cgroupParent() },
        labels: {},
      };
      return { id: await runPodSandbox(config), config };
    };
    /** checkMainPage: GETs retried each second for a minute, then a 200. */
    const checkMainPage = async (url: string) => {
      const end = Date.now() + 60_000;
      for (;;) {
        try {
          expect(await getFromNode(bed.ns.file, url)).to.equal(200);
          return;
        } catch (err) {
          if (Date.now() > end) throw err;
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
    };

    // networking.go
    it("runtime should support port mapping with only container port [Conformance]", async function () {
      const { id, config } = await withPortMappings([{ containerPort: WEB_PORT }]);
      const c = await createContainer(containerConfig("container-for-container-port", WEB_SERVER), id, config);
      await rt("StartContainer", { containerId: c });
      const { network } = await podState(id);
      expect(network?.ip).to.be.a("string").and.not.equal("");
      await checkMainPage(`http://${network.ip}:${WEB_PORT}`);
      await cleanUp(id);
    });

    // networking.go
    it("runtime should support port mapping with host port and container port [Conformance]", async function () {
      const { id, config } = await withPortMappings([{ containerPort: WEB_PORT, hostPort: HOST_PORT_FOR_PORT_MAPPING }]);
      const c = await createContainer(containerConfig("container-for-host-port", WEB_SERVER), id, config);
      await rt("StartContainer", { containerId: c });
      await checkMainPage(`http://127.0.0.1:${HOST_PORT_FOR_PORT_MAPPING}`);
      await cleanUp(id);
    });
  });

  // --- pkg/validate/idempotence.go ----------------------------------------------------------------

  describe("Idempotence", function () {
    describe("StopPodSandbox", function () {
      // idempotence.go
      it("should not return an error if not found", async function () {
        await rt("StopPodSandbox", { podSandboxId: randomUUID() });
      });

      // idempotence.go
      it("should not return an error if already stopped", async function () {
        const id = await runPodSandbox(await defaultPodConfig("idempotence-pod-"));
        await rt("StopPodSandbox", { podSandboxId: id });
        expect((await podState(id)).state).to.equal("SANDBOX_NOTREADY");
        await rt("StopPodSandbox", { podSandboxId: id });
        expect((await podState(id)).state).to.equal("SANDBOX_NOTREADY");
        await rt("RemovePodSandbox", { podSandboxId: id });
      });
    });

    describe("RemovePodSandbox", function () {
      // idempotence.go
      it("should not return an error if not found", async function () {
        await rt("RemovePodSandbox", { podSandboxId: randomUUID() });
      });
    });

    describe("StopContainer", function () {
      // idempotence.go
      it("should not return an error if not found", async function () {
        await rt("StopContainer", { containerId: randomUUID(), timeout: 0 });
      });

      // idempotence.go
      it("should not return an error if already stopped", async function () {
        const podConfig = { ...(await defaultPodConfig("create-PodSandbox-for-container-")) };
        const id = await runPodSandbox(podConfig);
        const c = await createContainer(containerConfig("idempotence-container-", BUSYBOX, PAUSE_COMMAND), id, podConfig);
        await rt("StartContainer", { containerId: c });
        // testStopContainer: the stop within its timeout, then EXITED
        const started = Date.now();
        await rt("StopContainer", { containerId: c, timeout: STOP_TIMEOUT });
        expect(Date.now() - started).to.be.below(STOP_TIMEOUT * 1000);
        expect((await containerState(c)).state).to.equal("CONTAINER_EXITED");
        await rt("RemoveContainer", { containerId: c });
        await rt("RemoveContainer", { containerId: c });
        await rt("StopPodSandbox", { podSandboxId: id });
        await rt("RemovePodSandbox", { podSandboxId: id });
      });
    });

    describe("RemoveContainer", function () {
      // idempotence.go
      it("should not return an error if not found", async function () {
        await rt("RemoveContainer", { containerId: randomUUID() });
      });
    });

    describe("RemoveImage", function () {
      // idempotence.go
      it("should not return an error if not found", async function () {
        const fakeImageId = "0".repeat(64);
        await img("RemoveImage", { image: { image: fakeImageId } });
        await img("RemoveImage", { image: { image: fakeImageId } });
      });
    });
  });

  // --- pkg/validate/runtime_info.go and status.go -------------------------------------------------

  describe("Runtime info: runtime should support returning runtime info", function () {
    // runtime_info.go (critest asks with the API version "0.1.0"; its Not(BeNil()) on strings only
    // asserts the call answered: the fields are checked as set, as a kubelet would read them)
    it("runtime should return version info [Conformance]", async function () {
      const v = await rt("Version", { version: "0.1.0" });
      for (const field of ["version", "runtimeName", "runtimeVersion", "runtimeApiVersion"]) expect(v[field]).to.be.a("string").and.not.equal("");
    });

    // runtime_info.go
    it("runtime should return runtime conditions [Conformance]", async function () {
      const { status } = await rt("Status", { verbose: false });
      // the client itself wants both conditions present
      expect(status.conditions.length).to.be.at.least(2);
      const ready = status.conditions.filter((c: any) => (c.type === "RuntimeReady" || c.type === "NetworkReady") && c.status === true);
      expect(ready.length).to.be.at.least(2);
    });
  });

  describe("Status", function () {
    // status.go: the 2017 file of the same spec (the old API package), kept in the index as one
    // version; what it sends and asserts is runtime_info.go's
    it("runtime should return runtime conditions [Conformance]", async function () {
      const { status } = await rt("Status", {});
      const types = status.conditions.filter((c: any) => c.status === true).map((c: any) => c.type);
      expect(types).to.include.members(["RuntimeReady", "NetworkReady"]);
    });
  });
});

/**
 * critest's pods under the systemd cgroup driver: common.GetCgroupParent sends `/test.slice` (a
 * kubelet a path of slices). This host runs no systemd, so the driver cannot be had here end to
 * end: what the pod's init and containers are given for it is checked as a function.
 */
describe("critest: the pod's cgroup parent under the systemd driver", function () {
  it("a path of slices is given to the runtime as its last slice; cgroupfs keeps the path; none stays none", function () {
    expect(runtimeCgroupParent("/test.slice", "systemd")).to.equal("test.slice");
    expect(runtimeCgroupParent("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1234.slice", "systemd")).to.equal("kubepods-besteffort-pod1234.slice");
    expect(runtimeCgroupParent("machine.slice", "systemd")).to.equal("machine.slice");
    expect(runtimeCgroupParent("", "systemd")).to.equal("");
    // not a slice: left as given, for the runtime's own refusal to name it
    expect(runtimeCgroupParent("/kubepods/besteffort", "systemd")).to.equal("/kubepods/besteffort");
    expect(runtimeCgroupParent("/test.slice", "cgroupfs")).to.equal("/test.slice");
    expect(runtimeCgroupParent("/kubepods/besteffort/pod1234", "cgroupfs")).to.equal("/kubepods/besteffort/pod1234");
  });
});
