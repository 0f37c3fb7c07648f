/**
 * cri-tools' critest, the security specs, mirrored against engined --cri-supervisor (conmon,
 * runc, CNI): one `it` per ginkgo `It` of pkg/validate/security_context_linux.go (the Describe
 * "Security Context"; security_context.go was its name before) and of
 * pkg/validate/cgroup_mount_mode_linux.go (the Describe "CgroupMountMode"), each sending what
 * the spec sends (the framework's pod and container configs: pkg/framework/util.go, the
 * commands of pkg/validate/consts.go) and asserting what it asserts, with critest's skips
 * (CgroupMountMode on a cgroup v1 node, SupplementalGroupsPolicy unless advertised). Specs
 * critest skips against engined whatever the node are not mirrored: UserNamespaces (no handler
 * advertises user_namespaces) and CgroupMountMode WRITABLE (cgroup_mount_mode not advertised);
 * what engined does with such requests is checked in the "(engined)" suites at the end.
 *
 * Images: critest pulls registry.k8s.io e2e images; there is no internet here, so the tests
 * load local equivalents (the content the specs depend on):
 * - `busybox` (critest's DefaultTestContainerImage): Debian's busybox (scripts/setup --test
 *   extracts it to /usr/local/lib/engine-test/busybox: its shell, as the e2e image's, runs a
 *   command found on PATH, where busybox-static's runs its applets without looking; MaskedPaths
 *   depends on it) with its libraries, a hard link per applet in /bin as in the e2e image (so
 *   masking /bin/ls masks that path, not the binary behind it), /tmp, and util-linux's `ipcs`
 *   (Debian's busybox has no ipcs applet);
 * - `critest/nginx` (e2e-test-images/nginx:1.14-2, for the PID specs): a static program as
 *   /usr/sbin/nginx that, as nginx's master does, writes its pid to /var/run/nginx.pid and has
 *   the title "nginx: master process nginx -g daemon off;", over the busybox layer;
 * - `critest/nonewprivs` (e2e-test-images/nonewprivs:1.3): a set-user-ID root static program,
 *   its entrypoint, printing "Effective uid: <euid>";
 * - `critest/test-image-predefined-group` (cri-tools' test-image-predefined-group): busybox
 *   whose user default-user (uid 1000, group 1000) is the image's user and a member of
 *   group-defined-in-image (gid 50000) in /etc/group.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dockerSaveTar, imageOf, makeTar, writeFixture, type TarEntry } from "./fixtures/images.js";
import { startCriBed, type CriBed } from "./helpers/cri-pods.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir } from "./helpers/engined.js";
import { eventually } from "./helpers/net-daemon.js";

const BUSYBOX = "busybox";
const NGINX = "critest/nginx";
const NONEWPRIVS = "critest/nonewprivs";
const PREDEFINED_GROUP = "critest/test-image-predefined-group";
/** consts.go: imagePredefinedGroupUID, imagePredefinedGroupGID. */
const PREDEFINED_UID = 1000;
const PREDEFINED_GID = 50000;
/** critest's pauseCmd (consts.go) and DefaultContainerCommand (framework). */
const PAUSE_CMD = ["sh", "-c", "top"];
const DEFAULT_CMD = ["top"];
/** critest's ExecSync timeout, seconds. */
const EXEC_TIMEOUT = 60;

const NGINX_C = `
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
  const char *title = "nginx: master process nginx -g daemon off;";
  if (strcmp(argv[0], title) != 0) {
    char *again[] = { (char *)title, NULL };
    execv("/usr/sbin/nginx", again);
    return 1;
  }
  FILE *f = fopen("/var/run/nginx.pid", "w");
  if (!f) return 2;
  fprintf(f, "%d\\n", (int)getpid());
  fclose(f);
  for (;;) pause();
}
`;

const NNP_C = `
#include <stdio.h>
#include <unistd.h>
int main(void) { printf("Effective uid: %d\\n", (int)geteuid()); return 0; }
`;

const TEST_BUSYBOX = "/usr/local/lib/engine-test/busybox";

/** The busybox root filesystem of the e2e image, as described above. */
function busyboxEntries(): TarEntry[] {
  if (!existsSync(TEST_BUSYBOX)) throw new Error(`${TEST_BUSYBOX} is missing: run scripts/setup --test`);
  const applets = execFileSync(TEST_BUSYBOX, ["--list"], { encoding: "utf8" }).split("\n").filter((a) => a && a !== "busybox");
  const lib = (path: string) => ({ name: path.slice(1), data: readFileSync(path), mode: 0o755 });
  return [
    { name: "bin", type: "directory" },
    { name: "bin/busybox", data: readFileSync(TEST_BUSYBOX), mode: 0o755 },
    ...applets.map((a) => ({ name: `bin/${a}`, type: "link" as const, linkname: "bin/busybox" })),
    { name: "etc", type: "directory" },
    { name: "etc/passwd", data: "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n" },
    { name: "etc/group", data: "root:x:0:\nnogroup:x:65534:\n" },
    { name: "tmp", type: "directory", mode: 0o1777 },
    { name: "var", type: "directory" },
    { name: "var/run", type: "directory" },
    { name: "usr", type: "directory" },
    { name: "usr/bin", type: "directory" },
    { name: "usr/bin/ipcs", data: readFileSync("/usr/bin/ipcs"), mode: 0o755 },
    { name: "lib", type: "directory" },
    { name: "lib/x86_64-linux-gnu", type: "directory" },
    lib("/lib/x86_64-linux-gnu/libc.so.6"),
    lib("/lib/x86_64-linux-gnu/libresolv.so.2"),
    { name: "lib64", type: "directory" },
    lib("/lib64/ld-linux-x86-64.so.2"),
  ];
}

function compile(dir: string, name: string, source: string): Buffer {
  const c = join(dir, `${name}.c`);
  writeFileSync(c, source);
  execFileSync("gcc", ["-static", "-O2", "-o", join(dir, name), c]);
  return readFileSync(join(dir, name));
}

interface LogMessage {
  stream: string;
  log: string;
}

/** critest's parseLogLine: each CRI log line as `<time> <stream> <tag> <log>`, the log with a newline. */
function logMessages(logDirectory: string, logPath: string): LogMessage[] {
  return readFileSync(join(logDirectory, logPath), "utf8").split("\n").filter(Boolean).map((line) => {
    const [time, stream, _tag, ...rest] = line.split(" ");
    expect(Number.isNaN(Date.parse(time!)), `a time first in ${JSON.stringify(line)}`).to.equal(false);
    return { stream: stream!, log: `${rest.join(" ")}\n` };
  });
}

describe("critest: Security Context and CgroupMountMode (engined --cri-supervisor)", function () {
  this.timeout(300_000);
  let bed: CriBed;
  let work: string;
  let n = 0;
  /** What a spec's AfterEach removes: its pod (stopped, removed), its folders, its shm segment. */
  let podId = "";
  let cleanupDirs: string[] = [];
  let shmId = "";
  const rt = (method: string, req: object = {}, timeoutMs?: number) => bed.cri.call("runtime", method, req, timeoutMs);
  const uuid = () => `${process.pid}-${++n}-${Date.now()}`;

  before(async function () {
    bed = await startCriBed();
    work = makeTempDir("engine-critest-sec-");
    const host = `unix://${bed.d.socket}`;
    const base = await makeTar(busyboxEntries());
    const nginx = await makeTar([
      { name: "usr", type: "directory" },
      { name: "usr/sbin", type: "directory" },
      { name: "usr/sbin/nginx", data: compile(work, "nginx", NGINX_C), mode: 0o755 },
    ]);
    const nnp = await makeTar([
      { name: "usr", type: "directory" },
      { name: "usr/local", type: "directory" },
      { name: "usr/local/bin", type: "directory" },
      { name: "usr/local/bin/nnp", data: compile(work, "nnp", NNP_C), mode: 0o4755, uid: 0, gid: 0 },
    ]);
    const groups = await makeTar([
      { name: "etc", type: "directory" },
      { name: "etc/passwd", data: "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\ndefault-user:x:1000:1000:Linux User,,,:/home/default-user:/bin/sh\n" },
      { name: "etc/group", data: "root:x:0:\nnogroup:x:65534:\ngroup-defined-in-image:x:50000:default-user\ndefault-user:x:1000:\n" },
    ]);
    const env = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"];
    const archive = await dockerSaveTar([
      { image: imageOf([base], { config: { Cmd: ["sh"], Env: env } }), tags: [`${BUSYBOX}:latest`] },
      { image: imageOf([base, nginx], { config: { Cmd: ["nginx", "-g", "daemon off;"], Env: env } }), tags: [`${NGINX}:latest`] },
      { image: imageOf([base, nnp], { config: { Entrypoint: ["/usr/local/bin/nnp"], Env: env } }), tags: [`${NONEWPRIVS}:latest`] },
      { image: imageOf([base, groups], { config: { Cmd: ["sh"], Env: env, User: "default-user" } }), tags: [`${PREDEFINED_GROUP}:latest`] },
    ]);
    const loaded = await docker(host, ["load", "-i", writeFixture(work, "images.tar", archive)]);
    expect(loaded.code, loaded.stderr).to.equal(0);
  });

  after(async function () {
    await bed?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  afterEach(async function () {
    if (this.currentTest?.state === "failed" && bed) console.log(`--- engined output (last 4000 chars):\n${bed.d.output().slice(-4000)}`);
    if (podId) {
      await rt("StopPodSandbox", { podSandboxId: podId });
      await rt("RemovePodSandbox", { podSandboxId: podId });
      podId = "";
    }
    for (const dir of cleanupDirs) rmSync(dir, { recursive: true, force: true });
    cleanupDirs = [];
    if (shmId) execFileSync("ipcrm", ["-m", shmId]);
    shmId = "";
  });

  // --- the framework's helpers, as critest's --------------------------------------------------

  const metadata = (name: string) => ({ name, uid: `cri-test-uid${uuid()}`, namespace: `cri-test-namespace${uuid()}`, attempt: 2 });
  const containerMeta = (name: string) => ({ name, attempt: 2 });

  /** common.GetCgroupParent: "" with the cgroupfs driver, else (systemd) "/test.slice". */
  async function cgroupParent(): Promise<string> {
    const rc = await rt("RuntimeConfig", {});
    return rc.linux?.cgroupDriver === "CGROUPFS" ? "" : "/test.slice";
  }
  async function runPod(config: Record<string, any>): Promise<string> {
    podId = (await rt("RunPodSandbox", { config, runtimeHandler: "" })).podSandboxId;
    return podId;
  }
  /** framework.CreatePodSandboxForContainer: metadata, an empty linux part. */
  async function podForContainer() {
    const config = { metadata: metadata(`create-PodSandbox-for-container-${uuid()}`), linux: {}, labels: {} };
    return { id: await runPod(config), config };
  }
  /** createLogTempDir: a temporary folder, the pod's log directory a folder in it. */
  function logTempDir(podName: string) {
    const hostPath = makeTempDir("podLogTest");
    cleanupDirs.push(hostPath);
    const podLogPath = join(hostPath, podName);
    mkdirSync(podLogPath, { recursive: true, mode: 0o777 });
    return podLogPath;
  }
  /** createPodSandboxWithLogDirectory. */
  async function podWithLogDirectory() {
    const name = `PodSandbox-with-log-directory-${uuid()}`;
    const config = { metadata: metadata(name), logDirectory: logTempDir(name), linux: { cgroupParent: await cgroupParent() } };
    return { id: await runPod(config), config };
  }
  /** createNamespacePodSandbox. */
  async function namespacePod(namespaceOptions: object, name: string, logDirectory = "") {
    const config = {
      metadata: metadata(name),
      dnsConfig: {},
      linux: { securityContext: { namespaceOptions }, cgroupParent: await cgroupParent() },
      logDirectory,
      labels: {},
    };
    return { id: await runPod(config), config };
  }
  /** createPrivilegedPodSandbox. */
  async function privilegedPod(privileged: boolean) {
    const config = { metadata: metadata(`create-Privileged-PodSandbox-for-container-${uuid()}`), linux: { securityContext: { privileged }, cgroupParent: await cgroupParent() }, labels: {} };
    return { id: await runPod(config), config };
  }
  /** framework.CreateContainer (the image is there: ImageStatus finds it, no pull). */
  async function createContainer(pod: { id: string; config: object }, config: Record<string, any>): Promise<string> {
    const image = (await bed.cri.call("image", "ImageStatus", { image: { image: config.image.image } })).image;
    expect(image, `image ${config.image.image}`).to.not.equal(null);
    return (await rt("CreateContainer", { podSandboxId: pod.id, config, sandboxConfig: pod.config })).containerId;
  }
  const state = async (id: string) => (await rt("ContainerStatus", { containerId: id })).status.state as string;
  async function startAndWait(id: string, want = "CONTAINER_RUNNING") {
    await rt("StartContainer", { containerId: id });
    await eventually(`container ${id.slice(0, 12)} ${want}`, async () => (await state(id)) === want, 60_000);
  }
  async function exec(id: string, cmd: string[]) {
    const r = await rt("ExecSync", { containerId: id, cmd, timeout: EXEC_TIMEOUT }, (EXEC_TIMEOUT + 10) * 1000);
    return { stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode as number };
  }
  /** critest's execSyncContainer: no error (exit 0), nothing on stderr; the stdout. */
  async function execOk(id: string, cmd: string[]): Promise<string> {
    const r = await exec(id, cmd);
    expect(r.exitCode, `${cmd.join(" ")}: ${r.stderr}`).to.equal(0);
    expect(r.stderr).to.equal("");
    return r.stdout;
  }
  /** verifyLogContents: a line of the stream with exactly this text. */
  function expectLog(pod: { config: { logDirectory?: string } }, logPath: string, log: string, stream: "stdout" | "stderr") {
    const msgs = logMessages(pod.config.logDirectory!, logPath);
    expect(msgs.some((m) => m.log === log && m.stream === stream), `${JSON.stringify(log)} on ${stream} in ${JSON.stringify(msgs)}`).to.equal(true);
  }
  async function checkNetworkManagement(id: string, manageable: boolean) {
    const r = await exec(id, ["brctl", "addbr", "foobar"]);
    if (manageable) expect(r.exitCode, r.stderr).to.equal(0);
    else expect(r.exitCode, r.stdout).to.not.equal(0);
  }
  async function checkSetHostname(id: string, settable: boolean) {
    const r = await exec(id, ["hostname", "ANewHostName"]);
    if (settable) expect(r.exitCode, r.stderr).to.equal(0);
    else expect(r.exitCode, r.stdout).to.not.equal(0);
  }

  // --- security_context_linux.go: Context "NamespaceOption" -----------------------------------

  describe("NamespaceOption", function () {
    const podSandboxName = `NamespaceOption-PodSandbox-${uuid()}`;

    it("runtime should support HostPID", async function () {
      const ns = { pid: "NODE", ipc: "POD", network: "POD" };
      const pod = await namespacePod(ns, podSandboxName);
      const nginxId = await createContainer(pod, { metadata: containerMeta(`nginx-container-hostpid-${uuid()}`), image: { image: NGINX }, command: [], linux: { securityContext: { namespaceOptions: ns } }, logPath: "" });
      await startAndWait(nginxId);
      const nginxPid = (await execOk(nginxId, ["sh", "-c", "while [ ! -f /var/run/nginx.pid ]; do sleep 1; done && cat /var/run/nginx.pid"])).trim();
      const id = await createContainer(pod, { metadata: containerMeta(`container-with-HostPID-test-${uuid()}`), image: { image: BUSYBOX }, command: ["sh", "-c", "sleep 1000"], linux: { securityContext: { namespaceOptions: ns } }, logPath: "" });
      await startAndWait(id);
      // critest's command, as it sends it: pidof gets "||" and "true" as names too
      const pids = (await execOk(id, ["pidof", "nginx", "||", "true"])).trim();
      expect(pids, "nginx's pid should be seen by hostpid containers").to.not.equal("");
      expect(pids).to.include(nginxPid);
    });

    async function testHostIpc(mode: "NODE" | "POD") {
      const out = execFileSync("ipcmk", ["-M", "1048576"], { encoding: "utf8" });
      const segmentId = out.trim().replace(/^Shared memory id: /, "");
      shmId = segmentId;
      const ns = { pid: "POD", ipc: mode, network: "POD" };
      const pod = await namespacePod(ns, podSandboxName);
      const id = await createContainer(pod, { metadata: containerMeta(`namespace-container-${uuid()}`), image: { image: BUSYBOX }, command: PAUSE_CMD, linux: { securityContext: { namespaceOptions: ns } }, logPath: "" });
      await startAndWait(id);
      const o = await execOk(id, ["ipcs", "-m"]);
      if (mode === "NODE") expect(o, "The shared memory segment should be included in the container").to.include(segmentId);
      else expect(o, "The shared memory segment should not be included in the container").to.not.include(segmentId);
    }

    it("runtime should support HostIpc is true", async function () {
      await testHostIpc("NODE");
    });

    it("runtime should support HostIpc is false", async function () {
      await testHostIpc("POD");
    });

    it("runtime should support PodPID", async function () {
      const ns = { pid: "POD" };
      const pod = await namespacePod(ns, podSandboxName);
      const id = await createContainer(pod, { metadata: containerMeta(`nginx-container-process-namespace-${uuid()}`), image: { image: NGINX }, command: [], linux: { securityContext: { namespaceOptions: ns } }, logPath: "" });
      await startAndWait(id);
      await new Promise((r) => setTimeout(r, 1000));
      const o = await execOk(id, ["cat", "/proc/1/cmdline"]);
      expect(o).to.not.include("master process");
    });

    it("runtime should support ContainerPID", async function () {
      const ns = { pid: "CONTAINER" };
      const pod = await namespacePod(ns, podSandboxName);
      const id = await createContainer(pod, { metadata: containerMeta(`nginx-container-pid-${uuid()}`), image: { image: NGINX }, command: [], linux: { securityContext: { namespaceOptions: ns } }, logPath: "" });
      await startAndWait(id);
      await execOk(id, ["sh", "-c", 'while ! cat /proc/1/cmdline | grep "master process"; do sleep 1; done']);
    });

    /**
     * createAndCheckHostNetwork: a TCP listener on the node (here the node is the bed's network
     * namespace, where engined and its runtime run: a listener in it, by nsenter), a pod on the
     * node's network or its own, `netstat -ln` in a container, its log searched for the port.
     */
    async function hostNetwork(onNode: boolean) {
      const listener: ChildProcess = spawn("nsenter", [`--net=${bed.ns.file}`, process.execPath, "-e", "const s=require('net').createServer(c=>c.end('hello')).listen(0,()=>console.log(s.address().port))"], { stdio: ["ignore", "pipe", "inherit"] });
      try {
        const port = await new Promise<string>((resolve, reject) => {
          listener.stdout!.once("data", (d) => resolve(String(d).trim()));
          listener.once("exit", () => reject(new Error("the listener ended")));
        });
        const ns = { pid: "POD", ipc: "POD", network: onNode ? "NODE" : "POD" };
        const logDirectory = logTempDir(podSandboxName);
        const pod = await namespacePod(ns, podSandboxName, logDirectory);
        const name = `container-with-HostNetwork-test-${uuid()}`;
        const logPath = `${name}.log`;
        const id = await createContainer(pod, { metadata: containerMeta(name), image: { image: BUSYBOX }, command: ["sh", "-c", "netstat -ln"], linux: { securityContext: { namespaceOptions: ns } }, logPath });
        await rt("StartContainer", { containerId: id });
        const seen = () => logMessages(logDirectory, logPath).some((m) => m.log.includes(`:${port}`));
        if (onNode) await eventually(`host port ${port} in the container's port list`, () => seen(), 60_000);
        else {
          await eventually("netstat done", async () => (await state(id)) === "CONTAINER_EXITED", 60_000);
          expect(logMessages(logDirectory, logPath).length, "netstat's output").to.be.greaterThan(0);
          expect(seen(), `host port ${port} should not be in the container's port list`).to.equal(false);
        }
      } finally {
        listener.kill();
      }
    }

    it("runtime should support HostNetwork is true", async function () {
      await hostNetwork(true);
    });

    it("runtime should support HostNetwork is false", async function () {
      await hostNetwork(false);
    });
  });

  // --- security_context_linux.go: Context "bucket" --------------------------------------------

  describe("bucket", function () {
    it("runtime should support SupplementalGroups", async function () {
      const pod = await podForContainer();
      const id = await createContainer(pod, { metadata: containerMeta(`container-with-SupplementalGroups-test-${uuid()}`), image: { image: BUSYBOX }, command: PAUSE_CMD, linux: { securityContext: { supplementalGroups: ["1234", "5678"] } } });
      await startAndWait(id);
      const groups = (await execOk(id, ["id", "-G"])).trim().split(" ");
      expect(groups).to.include("1234");
      expect(groups).to.include("5678");
    });

    it("runtime should support RunAsUser", async function () {
      const pod = await podForContainer();
      const id = await createContainer(pod, { metadata: containerMeta(`container-with-RunAsUser-test-${uuid()}`), image: { image: BUSYBOX }, command: PAUSE_CMD, linux: { securityContext: { runAsUser: { value: "1001" } } } });
      await startAndWait(id);
      expect(await execOk(id, ["id", "-u"])).to.equal("1001\n");
    });

    it("runtime should support RunAsUserName", async function () {
      const pod = await podForContainer();
      const id = await createContainer(pod, { metadata: containerMeta(`container-with-RunAsUserName-test-${uuid()}`), image: { image: BUSYBOX }, command: PAUSE_CMD, linux: { securityContext: { runAsUsername: "nobody" } } });
      await startAndWait(id);
      expect(await execOk(id, ["id", "-nu"])).to.equal("nobody\n");
    });

    it("runtime should support RunAsGroup", async function () {
      const pod = await podWithLogDirectory();
      const name = `container-with-RunAsGroup-test-${uuid()}`;
      const id = await createContainer(pod, { metadata: containerMeta(name), image: { image: BUSYBOX }, command: ["sh", "-c", "echo $(id -u):$(id -g)"], linux: { securityContext: { runAsUser: { value: "1001" }, runAsGroup: { value: "1002" } } }, logPath: `${name}.log` });
      await startAndWait(id, "CONTAINER_EXITED");
      expectLog(pod, `${name}.log`, "1001:1002\n", "stdout");
    });

    it("runtime should return error if RunAsGroup is set without RunAsUser", async function () {
      const pod = await podForContainer();
      const name = `container-with-RunAsGroup-without-RunAsUser-test-${uuid()}`;
      const err = await bed.cri.fails("runtime", "CreateContainer", { podSandboxId: pod.id, config: { metadata: containerMeta(name), image: { image: BUSYBOX }, command: ["sh", "-c", "echo $(id -u):$(id -g)"], linux: { securityContext: { runAsGroup: { value: "1002" } } } }, sandboxConfig: pod.config });
      expect(err.details).to.include("run_as_group");
    });

    async function readOnlyRootfs(readonly: boolean) {
      const pod = await podWithLogDirectory();
      const name = `container-with-ReadOnlyRootfs-${readonly}-test-${uuid()}`;
      const logPath = `${name}.log`;
      const id = await createContainer(pod, { metadata: containerMeta(name), image: { image: BUSYBOX }, command: ["sh", "-c", "touch test.go && [ -f test.go ] && echo 'Found'"], linux: { securityContext: { readonlyRootfs: readonly } }, logPath });
      await startAndWait(id, "CONTAINER_EXITED");
      if (readonly) expectLog(pod, logPath, "touch: test.go: Read-only file system\n", "stderr");
      else expectLog(pod, logPath, "Found\n", "stdout");
    }

    it("runtime should support that ReadOnlyRootfs is false", async function () {
      await readOnlyRootfs(false);
    });

    it("runtime should support that ReadOnlyRootfs is true", async function () {
      await readOnlyRootfs(true);
    });

    async function privileged(isPrivileged: boolean) {
      const pod = await privilegedPod(isPrivileged);
      const id = await createContainer(pod, { metadata: containerMeta(`container-with-${isPrivileged ? "isPrivileged" : "notPrivileged"}-test-${uuid()}`), image: { image: BUSYBOX }, command: PAUSE_CMD, linux: { securityContext: { privileged: isPrivileged } } });
      await startAndWait(id);
      await checkNetworkManagement(id, isPrivileged);
    }

    it("runtime should support Privileged is true", async function () {
      await privileged(true);
    });

    it("runtime should support Privileged is false", async function () {
      await privileged(false);
    });

    const capabilityContainer = (pod: { id: string; config: object }, prefix: string, add: string[], drop: string[]) =>
      createContainer(pod, { metadata: containerMeta(`${prefix}${uuid()}`), image: { image: BUSYBOX }, command: PAUSE_CMD, linux: { securityContext: { capabilities: { addCapabilities: add, dropCapabilities: drop } } } });

    it("runtime should support adding capability", async function () {
      const pod = await podForContainer();
      const id = await capabilityContainer(pod, "container-with-added-capability-test-", ["NET_ADMIN"], []);
      await startAndWait(id);
      await checkNetworkManagement(id, true);
      // framework.CreateDefaultContainer
      const plain = await createContainer(pod, { metadata: containerMeta(`container-with-notCapability-test-${uuid()}`), image: { image: BUSYBOX }, command: DEFAULT_CMD, linux: {} });
      await startAndWait(plain);
      await checkNetworkManagement(plain, false);
    });

    it("runtime should support dropping capability", async function () {
      const pod = await podForContainer();
      const id = await capabilityContainer(pod, "container-with-dropped-capability-test-", [], ["NET_RAW"]);
      await startAndWait(id);
      const r = await exec(id, ["ping", "127.0.0.1"]);
      expect(r.exitCode).to.not.equal(0);
      expect(r.stdout).to.not.equal("");
      expect(r.stderr).to.include("permission denied");
    });

    it("runtime should support adding ALL capabilities", async function () {
      const pod = await podForContainer();
      const id = await capabilityContainer(pod, "container-with-added-all-capability-test-", ["ALL"], []);
      await startAndWait(id);
      const r = await exec(id, ["cat", "/proc/self/status"]);
      expect(r.exitCode).to.equal(0);
      expect(r.stderr).to.equal("");
      expect(r.stdout).to.not.match(/CapBnd:\s0000000000000000/);
    });

    it("runtime should support dropping ALL capabilities", async function () {
      const pod = await podForContainer();
      const id = await capabilityContainer(pod, "container-with-dropped-all-capability-test-", [], ["ALL"]);
      await startAndWait(id);
      const r = await exec(id, ["cat", "/proc/self/status"]);
      expect(r.exitCode).to.equal(0);
      expect(r.stderr).to.equal("");
      expect(r.stdout).to.match(/CapBnd:\s0000000000000000/);
    });

    it("runtime should support MaskedPaths", async function () {
      const pod = await podForContainer();
      const id = await createContainer(pod, { metadata: containerMeta(`container-with-maskedpaths${uuid()}`), image: { image: BUSYBOX }, command: PAUSE_CMD, linux: { securityContext: { maskedPaths: ["/bin/ls"] } } });
      await startAndWait(id);
      const r = await exec(id, ["/bin/sh", "-c", "ls"]);
      expect(r.exitCode).to.not.equal(0);
      expect(r.stderr).to.equal("/bin/sh: ls: Permission denied\n");
    });

    it("runtime should support ReadonlyPaths", async function () {
      const pod = await podForContainer();
      const id = await createContainer(pod, { metadata: containerMeta(`container-with-readonlypaths${uuid()}`), image: { image: BUSYBOX }, command: PAUSE_CMD, linux: { securityContext: { readonlyPaths: ["/tmp"] } } });
      await startAndWait(id);
      const r = await exec(id, ["touch", "/tmp/test"]);
      expect(r.exitCode).to.not.equal(0);
      expect(r.stderr).to.equal("touch: /tmp/test: Read-only file system\n");
    });
  });

  // --- security_context_linux.go: Context "SupplementalGroupsPolicy" ----------------------------
  // (critest runs it only when Status advertises features.supplemental_groups_policy)

  describe("SupplementalGroupsPolicy", function () {
    beforeEach(async function () {
      const st = await rt("Status", { verbose: false });
      if (!st.features?.supplementalGroupsPolicy) this.skip();
    });

    /** Both specs: `id -G` as the first process and as an exec, and ContainerStatus.user. */
    async function policy(strict: boolean, want: number[]) {
      const pod = await podWithLogDirectory();
      const name = `container-with-SupplementalGroupsPolicyMerge-${uuid()}`;
      const logPath = `${name}.log`;
      const securityContext: Record<string, unknown> = { runAsUser: { value: String(PREDEFINED_UID) }, supplementalGroups: ["1234"] };
      if (strict) securityContext.supplementalGroupsPolicy = "Strict";
      const id = await createContainer(pod, { metadata: containerMeta(name), image: { image: PREDEFINED_GROUP }, command: ["sh", "-c", "id -G; sleep infinity"], linux: { securityContext }, logPath });
      await rt("StartContainer", { containerId: id });
      await eventually("running, its user reported, a first line logged", async () => {
        const st = (await rt("ContainerStatus", { containerId: id })).status;
        if (st.state !== "CONTAINER_RUNNING") return false;
        const linux = st.user?.linux;
        const sorted = linux ? { ...linux, supplementalGroups: [...linux.supplementalGroups].sort((a: string, b: string) => Number(a) - Number(b)) } : null;
        expect(sorted).to.deep.equal({ uid: String(PREDEFINED_UID), gid: String(PREDEFINED_UID), supplementalGroups: want.map(String) });
        return logMessages(pod.config.logDirectory, logPath).length > 0;
      }, 60_000);
      const expected = `${want.join(" ")}\n`;
      expectLog(pod, logPath, expected, "stdout");
      expect(await execOk(id, ["id", "-G"])).to.equal(expected);
    }

    it("if the container's primary UID belongs to some groups in the image, runtime should add SupplementalGroups to them", async function () {
      await policy(false, [PREDEFINED_UID, 1234, PREDEFINED_GID]);
    });

    it("even if the container's primary UID belongs to some groups in the image, runtime should not add SupplementalGroups to them", async function () {
      await policy(true, [PREDEFINED_UID, 1234]);
    });
  });

  // --- security_context_linux.go: Context "SeccompProfilePath" --------------------------------

  describe("SeccompProfilePath", function () {
    let blockHostNamePath = "";
    let blockChmodPath = "";
    const SYS_ADMIN = ["SYS_ADMIN"];
    const grepSeccomp = ["grep", "Seccomp:", "/proc/self/status"];

    beforeEach(function () {
      const dir = makeTempDir("seccomp-tests");
      cleanupDirs.push(dir);
      blockHostNamePath = join(dir, "block-host-name.json");
      writeFileSync(blockHostNamePath, JSON.stringify({ defaultAction: "SCMP_ACT_ALLOW", syscalls: [{ names: ["sethostname"], action: "SCMP_ACT_ERRNO" }] }));
      blockChmodPath = join(dir, "block-chmod.json");
      writeFileSync(blockChmodPath, JSON.stringify({ defaultAction: "SCMP_ACT_ALLOW", syscalls: [{ names: ["chmod", "fchmodat"], action: "SCMP_ACT_ERRNO" }] }));
      chmodSync(blockHostNamePath, 0o644);
      chmodSync(blockChmodPath, 0o644);
    });

    /** seccompTestContainer: the profile on the pod and on its container (null: the field unset). */
    async function seccompTestContainer(profile: object | null) {
      const config = { metadata: metadata(`seccomp-sandbox-${uuid()}`), linux: { securityContext: { seccomp: profile }, cgroupParent: await cgroupParent() }, labels: {} };
      const pod = { id: await runPod(config), config };
      const id = await createContainer(pod, { metadata: containerMeta(`seccomp-container-${uuid()}${uuid()}`), image: { image: BUSYBOX }, command: PAUSE_CMD, linux: { securityContext: { seccomp: profile } } });
      await startAndWait(id);
      return id;
    }
    async function verifySeccomp(id: string, cmd: string[], expectError: boolean, output: string) {
      const r = await exec(id, cmd);
      if (expectError) {
        expect(r.exitCode, JSON.stringify(r)).to.not.equal(0);
        expect(r.stderr).to.include(output);
      } else {
        expect(r.exitCode, JSON.stringify(r)).to.equal(0);
        expect(r.stdout).to.include(output);
      }
    }
    /** createSeccompContainer (created, expected to pass or fail). */
    async function seccompContainer(pod: { id: string; config: object }, profile: object, caps: string[], isPrivileged: boolean) {
      return createContainer(pod, {
        metadata: containerMeta(`container-with-block-hostname-seccomp-profile-test-${uuid()}`),
        image: { image: BUSYBOX, userSpecifiedImage: BUSYBOX },
        command: ["sleep", "60"],
        linux: { securityContext: { privileged: isPrivileged, capabilities: { addCapabilities: caps }, seccomp: profile } },
      });
    }

    it("should support seccomp unconfined on the container", async function () {
      const id = await seccompTestContainer({ profileType: "Unconfined" });
      await verifySeccomp(id, grepSeccomp, false, "0");
    });

    it("should support seccomp localhost profile on the container", async function () {
      const id = await seccompTestContainer({ profileType: "Localhost", localhostRef: blockChmodPath });
      await verifySeccomp(id, ["chmod", "400", "/"], true, "Operation not permitted");
    });

    it("should support seccomp default on the container", async function () {
      const id = await seccompTestContainer({});
      await verifySeccomp(id, grepSeccomp, false, "2");
    });

    it("should support nil profile, which is unconfined", async function () {
      const id = await seccompTestContainer(null);
      await verifySeccomp(id, grepSeccomp, false, "0");
    });

    it("runtime should not block setting host name with unconfined seccomp and SYS_ADMIN", async function () {
      const pod = await podForContainer();
      const id = await seccompContainer(pod, { profileType: "Unconfined" }, SYS_ADMIN, false);
      await startAndWait(id);
      await checkSetHostname(id, true);
    });

    it("runtime should support an seccomp profile that blocks setting hostname with SYS_ADMIN", async function () {
      const pod = await podForContainer();
      const id = await seccompContainer(pod, { profileType: "Localhost", localhostRef: blockHostNamePath }, SYS_ADMIN, false);
      await startAndWait(id);
      await checkSetHostname(id, false);
    });

    it("runtime should ignore a seccomp profile that blocks setting hostname when privileged", async function () {
      const pod = await privilegedPod(true);
      const id = await seccompContainer(pod, { profileType: "Localhost", localhostRef: blockHostNamePath }, [], true);
      await startAndWait(id);
      await checkSetHostname(id, true);
    });
  });

  // --- security_context_linux.go: Context "NoNewPrivs" ----------------------------------------

  describe("NoNewPrivs", function () {
    async function noNewPrivs(name: string, nnp: boolean, uid: string) {
      const pod = await podWithLogDirectory();
      const id = await createContainer(pod, { metadata: containerMeta(name), image: { image: NONEWPRIVS }, linux: { securityContext: { noNewPrivs: nnp, runAsUser: { value: uid } } }, logPath: `${name}.log` });
      await startAndWait(id, "CONTAINER_EXITED");
      return pod;
    }

    it("should not allow privilege escalation when true", async function () {
      const name = `alpine-nnp-true-${uuid()}`;
      const pod = await noNewPrivs(name, true, "1000");
      expectLog(pod, `${name}.log`, "Effective uid: 1000\n", "stdout");
    });

    it("should allow privilege escalation when false", async function () {
      const name = `alpine-nnp-false-${uuid()}`;
      const pod = await noNewPrivs(name, false, "1000");
      expectLog(pod, `${name}.log`, "Effective uid: 0\n", "stdout");
    });
  });

  // --- cgroup_mount_mode_linux.go ---------------------------------------------------------------
  // critest's BeforeEach skips the whole Describe unless /sys/fs/cgroup is cgroup2 (this machine's
  // is cgroup v1: a tmpfs with a mount per controller); mirrored with the same skip. The WRITABLE
  // specs run only when Status advertises features.cgroup_mount_mode, which engined does not.

  describe("CgroupMountMode", function () {
    beforeEach(function () {
      const v2 = readFileSync("/proc/self/mounts", "utf8").split("\n").some((l) => {
        const f = l.split(" ");
        return f[1] === "/sys/fs/cgroup" && f[2] === "cgroup2";
      });
      if (!v2) this.skip();
    });

    const cgroupContainer = (securityContext: object | null) => ({
      metadata: containerMeta(`cgroup-mount-mode-${uuid()}`),
      image: { image: BUSYBOX },
      command: DEFAULT_CMD,
      linux: { securityContext },
    });

    it("runtime should start a container with its default cgroup mount mode [Conformance] without a security context", async function () {
      const pod = await podForContainer();
      const id = await createContainer(pod, cgroupContainer(null));
      await startAndWait(id);
    });

    it("runtime should start a container with its default cgroup mount mode [Conformance] with CGROUP_MOUNT_MODE_UNSPECIFIED", async function () {
      const pod = await podForContainer();
      const id = await createContainer(pod, cgroupContainer({ cgroupMountMode: "CGROUP_MOUNT_MODE_UNSPECIFIED" }));
      await startAndWait(id);
    });

    it("runtime should mount cgroups read-only with CGROUP_MOUNT_MODE_READ_ONLY [Conformance]", async function () {
      const pod = await podForContainer();
      const id = await createContainer(pod, cgroupContainer({ cgroupMountMode: "CGROUP_MOUNT_MODE_READ_ONLY" }));
      await rt("StartContainer", { containerId: id });
      const r = await exec(id, ["mkdir", "/sys/fs/cgroup/critest"]);
      expect(r.exitCode).to.not.equal(0);
      expect(r.stderr).to.include("Read-only file system");
    });
  });

  // --- security_context_linux.go: Context "UserNamespaces" ---------------------------------------
  // critest skips it: Status gives no runtime handler with features.user_namespaces. What engined
  // does with a pod asking for a user namespace all the same (not a critest spec):

  describe("UserNamespaces (engined)", function () {
    it("a pod asking for a user namespace of its own (POD, CONTAINER, TARGET) is refused: InvalidArgument naming the field; NODE runs", async function () {
      const st = await rt("Status", { verbose: false });
      expect(st.runtimeHandlers.every((h: any) => h.features?.userNamespaces === false)).to.equal(true);
      const mapping = [{ containerId: 0, hostId: 1000, length: 100000 }];
      for (const mode of ["POD", "CONTAINER", "TARGET"]) {
        const config = { metadata: metadata(`user-namespaces-pod-${uuid()}`), linux: { securityContext: { namespaceOptions: { usernsOptions: { mode, uids: mapping, gids: mapping } } } }, labels: {} };
        const err = await bed.cri.fails("runtime", "RunPodSandbox", { config });
        expect(err.code, mode).to.equal(3);
        expect(err.details).to.include("userns_options.mode");
      }
      const config = { metadata: metadata(`user-namespaces-pod-${uuid()}`), linux: { securityContext: { namespaceOptions: { usernsOptions: { mode: "NODE" } } } }, labels: {} };
      await runPod(config);
    });
  });

  // --- engined's own checks of cgroup_mount_mode (not critest specs): the field reaches engined -----

  describe("cgroup_mount_mode (engined)", function () {
    it("CGROUP_MOUNT_MODE_WRITABLE, which Status does not advertise, is refused: InvalidArgument naming the field", async function () {
      const st = await rt("Status", { verbose: false });
      expect(st.features?.cgroupMountMode ?? false).to.equal(false);
      const pod = await podForContainer();
      const err = await bed.cri.fails("runtime", "CreateContainer", { podSandboxId: pod.id, config: { metadata: containerMeta(`cgroup-writable-${uuid()}`), image: { image: BUSYBOX }, command: DEFAULT_CMD, linux: { securityContext: { cgroupMountMode: "CGROUP_MOUNT_MODE_WRITABLE" } } }, sandboxConfig: pod.config });
      expect(err.code).to.equal(3);
      expect(err.details).to.include("cgroup_mount_mode");
    });

    it("CGROUP_MOUNT_MODE_READ_ONLY mounts a privileged container's cgroups read-only (writable by default)", async function () {
      const pod = await privilegedPod(true);
      const cgroupMounts = async (mode: string) => {
        const id = await createContainer(pod, { metadata: containerMeta(`cgroup-ro-${uuid()}`), image: { image: BUSYBOX }, command: PAUSE_CMD, linux: { securityContext: { privileged: true, cgroupMountMode: mode } } });
        await startAndWait(id);
        const out = await execOk(id, ["cat", "/proc/self/mounts"]);
        return out.split("\n").filter((l) => / cgroup2? /.test(l)).map((l) => l.split(" ")[3]!.split(",")[0]);
      };
      const dflt = await cgroupMounts("CGROUP_MOUNT_MODE_UNSPECIFIED");
      expect(dflt.length).to.be.greaterThan(0);
      expect(dflt.every((o) => o === "rw"), `default: ${dflt}`).to.equal(true);
      const ro = await cgroupMounts("CGROUP_MOUNT_MODE_READ_ONLY");
      expect(ro.length).to.be.greaterThan(0);
      expect(ro.every((o) => o === "ro"), `READ_ONLY: ${ro}`).to.equal(true);
    });
  });
});
