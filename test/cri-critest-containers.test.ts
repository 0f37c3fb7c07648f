/**
 * critest's container specs, mirrored one `it` per ginkgo `It`, against a real engined with
 * `--cri-supervisor` (conmon, runc, CNI): the same requests (every field critest's framework
 * sends: pod and container configs, metadata attempt 2, the image's user_specified_image, the
 * pod's cgroup parent from RuntimeConfig, the verbose ContainerStatus) and the same assertions.
 * The cri-tools file each block mirrors is named above it (kubernetes-sigs/cri-tools,
 * pkg/validate/).
 *
 * Images: critest pulls registry.k8s.io/e2e-test-images/busybox:1.29-2 (and httpd:2.4.39-4, and
 * gcr.io/k8s-staging-cri-tools/test-image-tag:test) from the internet; there is none here, so the
 * same names are imported locally from the busybox root filesystem of test/fixtures (what the
 * specs use of them: sh, top, sleep, echo, ls, mount, dd, touch; busybox 1.29's `pgrep`, which
 * Debian's busybox lacks, as a small script; for httpd, a server answering 200 on port 80 that
 * logs httpd's own start line `Command line: 'httpd -D FOREGROUND'` to stderr). critest's
 * framework asks ImageStatus first and pulls only what is missing, which this does too.
 */
import { expect } from "chai";
import { execFileSync, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tarStream from "tar-stream";
import { busyboxRootfs, makeTar, writeFixture, type TarEntry } from "./fixtures/images.js";
import { grpc } from "./helpers/cri-client.js";
import { startCriBed, type CriBed } from "./helpers/cri-pods.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir } from "./helpers/engined.js";
// run alone too, the bed's folders go when the run ends
import "./helpers/root-hooks.js";

const BUSYBOX = "registry.k8s.io/e2e-test-images/busybox:1.29-2";
const HTTPD = "registry.k8s.io/e2e-test-images/httpd:2.4.39-4";
const TEST_IMAGE_WITH_TAG = "gcr.io/k8s-staging-cri-tools/test-image-tag:test";
const DEFAULT_ATTEMPT = 2;
const DEFAULT_LOG = "hello World";
const EXEC_TIMEOUT = 30;

/** busybox 1.29's pgrep as far as `pgrep sleep` goes: the pids whose command name is the pattern, exit 1 for none. */
const PGREP = `#!/bin/sh
found=1
for d in /proc/[0-9]*; do
  if [ "$(cat "$d/comm" 2>/dev/null)" = "$1" ]; then echo "\${d#/proc/}"; found=0; fi
done
exit $found
`;

/** httpd-foreground's part that matters: the start line httpd logs, then a server on port 80 in the foreground. */
const HTTPD_FOREGROUND = `#!/bin/sh
echo "[core:notice] [pid 1] AH00094: Command line: 'httpd -D FOREGROUND'" >&2
exec httpd -f -p 80 -h /usr/local/apache2/htdocs
`;

/** The fixture's busybox root filesystem with `files` added (and the folders they need). */
async function withFiles(files: { name: string; data: string; mode?: number }[]): Promise<Buffer> {
  const entries: TarEntry[] = [];
  const extract = tarStream.extract();
  const done = new Promise<void>((resolve, reject) => {
    extract.on("entry", (h, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c) => chunks.push(c as Buffer));
      stream.on("end", () => {
        entries.push({ name: h.name, type: h.type as TarEntry["type"], mode: h.mode, linkname: h.linkname ?? undefined, data: Buffer.concat(chunks) });
        next();
      });
    });
    extract.on("finish", resolve);
    extract.on("error", reject);
  });
  extract.end(await busyboxRootfs());
  await done;
  const have = new Set(entries.map((e) => e.name.replace(/\/$/, "")));
  const dirs: TarEntry[] = [];
  for (const f of files) {
    const parts = f.name.split("/").slice(0, -1);
    for (let i = 1; i <= parts.length; i++) {
      const d = parts.slice(0, i).join("/");
      if (!have.has(d)) {
        have.add(d);
        dirs.push({ name: `${d}/`, type: "directory" });
      }
    }
  }
  const added = new Set(files.map((f) => f.name));
  return makeTar([...entries.filter((e) => !added.has(e.name)), ...dirs, ...files.map((f) => ({ name: f.name, data: f.data, mode: f.mode ?? 0o644 }))]);
}

/** critest's parseCRILog: time, stream, tag (skipped), the rest with a newline. */
function parseLogLine(path: string): { timestamp: Date; stream: string; log: string }[] {
  return readFileSync(path, "utf8").split("\n").filter((l) => l !== "").map((line) => {
    const parts = line.split(" ");
    if (parts.length < 4) throw new Error(`invalid CRI log line ${JSON.stringify(line)}`);
    const [ts, stream, , ...rest] = parts;
    if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?(Z|[+-]\d\d:\d\d)$/.test(ts!)) throw new Error(`not an RFC3339Nano time: ${ts}`);
    return { timestamp: new Date(ts!), stream: stream!, log: `${rest.join(" ")}\n` };
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** gomega's Eventually: polls `fn` until `ok(value)`, failing with the last value after `timeoutMs`. */
async function eventually<T>(what: string, fn: () => Promise<T> | T, ok: (v: T) => boolean, timeoutMs = 60_000, everyMs = 1000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastErr: unknown;
  for (;;) {
    try {
      last = await fn();
      if (ok(last)) return last;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > end) throw new Error(`${what}: gave up; last ${JSON.stringify(last)}${lastErr ? ` (${(lastErr as Error).message})` : ""}`);
    await sleep(everyMs);
  }
}

describe("critest: containers (cri-tools pkg/validate: container.go, container_linux.go, multi_container_linux.go, image_volume.go)", function () {
  this.timeout(240_000);
  let bed: CriBed;
  const rt = (method: string, req: object = {}, timeoutMs?: number) => bed.cri.call("runtime", method, req, timeoutMs);
  const img = (method: string, req: object = {}) => bed.cri.call("image", method, req);
  const cleanups: (() => void | Promise<void>)[] = [];

  before(async function () {
    bed = await startCriBed();
    const host = `unix://${bed.d.socket}`;
    const dir = makeTempDir();
    const busybox = writeFixture(dir, "busybox.tar", await withFiles([{ name: "bin/pgrep", data: PGREP, mode: 0o755 }]));
    let r = await docker(host, ["import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", busybox, BUSYBOX]);
    expect(r.code, r.stderr).to.equal(0);
    r = await docker(host, ["tag", BUSYBOX, TEST_IMAGE_WITH_TAG]);
    expect(r.code, r.stderr).to.equal(0);
    const httpd = writeFixture(dir, "httpd.tar", await withFiles([
      { name: "usr/local/bin/httpd-foreground", data: HTTPD_FOREGROUND, mode: 0o755 },
      { name: "usr/local/apache2/htdocs/index.html", data: "<html><body><h1>It works!</h1></body></html>\n" },
    ]));
    r = await docker(host, ["import", "--change", 'CMD ["httpd-foreground"]', "--change", "ENV PATH=/usr/local/apache2/bin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", httpd, HTTPD]);
    expect(r.code, r.stderr).to.equal(0);
  });

  after(async function () {
    await bed?.stop();
  });

  afterEach(async function () {
    while (cleanups.length) await cleanups.pop()!();
    if (this.currentTest?.state === "failed") console.log(`--- engined output (last 4000 chars):\n${bed.d.output().slice(-4000)}`);
  });

  // --- what critest's framework (pkg/framework/util.go, pkg/common/pod_config.go) sends ---------

  /** common.GetCgroupParent: "" for the cgroupfs driver, "/test.slice" otherwise. */
  const cgroupParent = async () => {
    const conf = await rt("RuntimeConfig", {}).catch(() => null);
    return conf?.linux?.cgroupDriver === "CGROUPFS" ? "" : "/test.slice";
  };
  const metadata = (prefix: string) => ({ name: prefix + randomUUID(), uid: "cri-test-uid" + randomUUID(), namespace: "cri-test-namespace" + randomUUID(), attempt: DEFAULT_ATTEMPT });

  /** A pod, stopped and removed after the test as critest's AfterEach does (both must succeed). */
  async function runPod(config: Record<string, any>): Promise<string> {
    const { podSandboxId } = await rt("RunPodSandbox", { config, runtimeHandler: "" });
    cleanups.push(async () => {
      await rt("StopPodSandbox", { podSandboxId });
      await rt("RemovePodSandbox", { podSandboxId });
    });
    return podSandboxId;
  }

  /** framework.CreatePodSandboxForContainer */
  async function podForContainer() {
    const config = { metadata: metadata("create-PodSandbox-for-container-"), linux: { cgroupParent: await cgroupParent() }, labels: {} };
    return { podId: await runPod(config), podConfig: config };
  }

  /** createPrivilegedPodSandbox(rc, true) */
  async function privilegedPod() {
    const config = {
      metadata: metadata("create-Privileged-PodSandbox-for-container-"),
      linux: { securityContext: { privileged: true }, cgroupParent: await cgroupParent() },
      labels: {},
    };
    return { podId: await runPod(config), podConfig: config };
  }

  /** createPodSandboxWithLogDirectory: a temporary folder holding `<pod name>/`, the log directory. */
  async function podWithLogDirectory() {
    const md = metadata("PodSandbox-with-log-directory-");
    const hostPath = mkdtempSync(join(tmpdir(), "podLogTest"));
    cleanups.push(() => rmSync(hostPath, { recursive: true, force: true }));
    const logDirectory = join(hostPath, md.name);
    mkdirSync(logDirectory, { recursive: true, mode: 0o777 });
    const config = { metadata: md, logDirectory, linux: { cgroupParent: await cgroupParent() } };
    return { podId: await runPod(config), podConfig: config };
  }

  /** framework.CreateContainerWithError: ImageStatus, a pull only when missing, user_specified_image, CreateContainer. */
  async function createContainerWithError(podId: string, config: Record<string, any>, podConfig: object): Promise<string> {
    let name: string = config.image.image;
    if (!name.includes(":")) name += ":latest";
    const st = await img("ImageStatus", { image: { image: name }, verbose: false });
    if (!st.image) await img("PullImage", { image: { image: name }, sandboxConfig: podConfig });
    if (!config.image.userSpecifiedImage) config.image.userSpecifiedImage = name;
    return (await rt("CreateContainer", { podSandboxId: podId, config, sandboxConfig: podConfig })).containerId;
  }

  const buildMeta = (prefix: string) => ({ name: prefix + randomUUID(), attempt: DEFAULT_ATTEMPT });

  /** framework.CreateDefaultContainerWithLabels: `top`. */
  const createDefault = (podId: string, podConfig: object, prefix: string, labels?: Record<string, string>) =>
    createContainerWithError(podId, { metadata: buildMeta(prefix), image: { image: BUSYBOX }, command: ["top"], linux: {}, ...(labels ? { labels } : {}) }, podConfig);

  /** framework.CreatePauseContainer: `sh -c top`. */
  const createPause = (podId: string, podConfig: object, prefix: string) =>
    createContainerWithError(podId, { metadata: buildMeta(prefix), image: { image: BUSYBOX }, command: ["sh", "-c", "top"], linux: {} }, podConfig);

  // --- container.go's helpers ------------------------------------------------------------------

  const status = async (id: string) => (await rt("ContainerStatus", { containerId: id, verbose: false })).status;
  const start = (id: string) => rt("StartContainer", { containerId: id });
  const waitState = (id: string, state: string) => eventually(`container ${id} ${state}`, async () => (await status(id)).state, (s) => s === state, 60_000, 4000);
  const testStart = async (id: string) => {
    await start(id);
    await waitState(id, "CONTAINER_RUNNING");
  };
  /** testStopContainer: StopContainer(60) must answer within 60 s, then EXITED. */
  const testStop = async (id: string) => {
    const began = Date.now();
    await rt("StopContainer", { containerId: id, timeout: 60 }, 60_000);
    expect(Date.now() - began).to.be.below(60_000);
    await waitState(id, "CONTAINER_EXITED");
  };
  const listForId = async (id: string) => (await rt("ListContainers", { filter: { id } })).containers as { id: string }[];
  const found = (list: { id: string }[], id: string) => list.some((c) => c.id === id);

  /** The Go client's ExecSync: an error for a gRPC error and for a non-zero exit code. */
  async function execSync(id: string, cmd: string[], timeout = EXEC_TIMEOUT) {
    const res = await rt("ExecSync", { containerId: id, cmd, timeout }, (timeout + 30) * 1000);
    const stdout = Buffer.from(res.stdout ?? "").toString();
    const stderr = Buffer.from(res.stderr ?? "").toString();
    if (res.exitCode !== 0) throw Object.assign(new Error(`command terminated with exit code ${res.exitCode}: ${stderr}`), { stdout, stderr });
    return { stdout, stderr };
  }
  /** execSyncContainer: no error, stderr empty; the stdout. */
  async function execSyncContainer(id: string, cmd: string[]) {
    const { stdout, stderr } = await execSync(id, cmd);
    expect(stderr, "The stderr should be empty.").to.equal("");
    return stdout;
  }

  // ============ container.go: "Container" / "runtime should support basic operations on container"

  it("runtime should support creating container [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const id = await createDefault(podId, podConfig, "container-for-create-");
    expect(found(await listForId(id), id), "Container should be created").to.equal(true);
  });

  it("runtime should support starting container [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const id = await createDefault(podId, podConfig, "container-for-start-test-");
    await testStart(id);
  });

  it("runtime should support stopping container [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const id = await createDefault(podId, podConfig, "container-for-stop-test-");
    await start(id);
    await testStop(id);
  });

  it("runtime should support removing created container [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const id = await createPause(podId, podConfig, "container-for-remove-created-test-");
    await rt("RemoveContainer", { containerId: id });
    expect(found(await listForId(id), id), "Container should be removed").to.equal(false);
  });

  it("runtime should support removing running container [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const id = await createPause(podId, podConfig, "container-for-remove-running-test-");
    await start(id);
    await rt("RemoveContainer", { containerId: id });
    expect(found(await listForId(id), id), "Container should be removed").to.equal(false);
  });

  it("runtime should support removing stopped container [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const id = await createPause(podId, podConfig, "container-for-remove-stopped-test-");
    await start(id);
    await testStop(id);
    await rt("RemoveContainer", { containerId: id });
    expect(found(await listForId(id), id), "Container should be removed").to.equal(false);
  });

  it("runtime should support execSync [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const id = await createDefault(podId, podConfig, "container-for-execSync-test-");
    await start(id);
    expect(await execSyncContainer(id, ["echo", "-n", "hello"])).to.equal("hello");
  });

  it("runtime should support execSync with timeout [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const id = await createDefault(podId, podConfig, "container-for-execSync-timeout-test-");
    await start(id);
    // the Go client sends timeout 1 and gives the call its service timeout (critest's default
    // 300 s; 60 s here) plus that second: the runtime itself must end the command
    const timedOut = await rt("ExecSync", { containerId: id, cmd: ["sleep", "4321"], timeout: 1 }, 60_000 + 1000).then(
      (res: any) => (res.exitCode !== 0 ? null : res),
      () => null,
    );
    expect(timedOut, "execSync should timeout").to.equal(null);
    const { stdout, stderr } = await execSync(id, ["sh", "-c", "pgrep sleep || true"]);
    expect(stderr).to.equal("");
    expect(stdout.trim(), "timeout exec process should be gone").to.equal("");
  });

  it("runtime should support listing container stats [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const id = await createDefault(podId, podConfig, "container-for-stats-");
    await start(id);
    const { stats } = await rt("ContainerStats", { containerId: id });
    expect(stats.attributes.id).to.equal(id);
    expect(stats.attributes.metadata.name).to.include("container-for-stats-");
    expect(Number(stats.cpu?.timestamp ?? 0)).to.not.equal(0);
    expect(Number(stats.memory?.timestamp ?? 0)).to.not.equal(0);
  });

  const statFound = (stats: any[], id: string) => stats.some((s) => s.attributes?.id === id);

  it("runtime should support listing stats for started containers [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const id = await createDefault(podId, podConfig, "container-for-stats-");
    await start(id);
    const { stats } = await rt("ListContainerStats", { filter: { id } });
    expect(statFound(stats, id), "Container should be created").to.equal(true);
  });

  it("runtime should support listing stats for started containers when filter is nil [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const id = await createDefault(podId, podConfig, "container-for-stats-with-nil-filter-");
    await start(id);
    const { stats } = await rt("ListContainerStats", {});
    expect(statFound(stats, id), "Stats should be found").to.equal(true);
  });

  it("runtime should support listing stats for three created containers when filter is nil. [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await createDefault(podId, podConfig, "container-for-stats-with-nil-filter-"));
    for (const id of ids) await start(id);
    const { stats } = await rt("ListContainerStats", {});
    for (const id of ids) expect(statFound(stats, id), "Stats should be found").to.equal(true);
  });

  it("runtime should support listing stats for containers filtered by labels [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const labels = { foo: "bar" };
    const id = await createDefault(podId, podConfig, "container-for-stats-with-labels-", labels);
    await start(id);
    let { stats } = await rt("ListContainerStats", { filter: { labelSelector: labels } });
    expect(statFound(stats, id), "Container should be found").to.equal(true);
    ({ stats } = await rt("ListContainerStats", { filter: { labelSelector: { foo: "baz" } } }));
    expect(statFound(stats, id), "Container should be filtered").to.equal(false);
  });

  // ============ container.go: "runtime should support adding volume and device"

  /** createHostPath: a temporary folder `test<pod id>*` with the flag file testVolume.file. */
  function createHostPath(podId: string): string {
    const hostPath = mkdtempSync(join(tmpdir(), `test${podId}`));
    writeFileSync(join(hostPath, "testVolume.file"), "");
    cleanups.push(() => rmSync(hostPath, { recursive: true, force: true }));
    return hostPath;
  }
  /** createVolumeContainer: `sh -c top` with the host path at the same path inside, selinux_relabel set. */
  const createVolumeContainer = (podId: string, podConfig: object, prefix: string, hostPath: string) =>
    createContainerWithError(podId, {
      metadata: buildMeta(prefix), image: { image: BUSYBOX }, command: ["sh", "-c", "top"],
      mounts: [{ hostPath, containerPath: hostPath, selinuxRelabel: true }],
    }, podConfig);

  it("runtime should support starting container with volume [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const hostPath = createHostPath(podId);
    const id = await createVolumeContainer(podId, podConfig, "container-with-volume-test-", hostPath);
    await testStart(id);
    expect(await execSyncContainer(id, ["ls", "-A", hostPath]), "len(output) should not be zero.").to.not.equal("");
  });

  it("runtime should support starting container with volume when host path is a symlink [Conformance]", async function () {
    const { podId, podConfig } = await podForContainer();
    const hostPath = createHostPath(podId);
    const symlinkPath = `${hostPath}-symlink`;
    symlinkSync(hostPath, symlinkPath);
    cleanups.push(() => rmSync(symlinkPath, { force: true }));
    const id = await createVolumeContainer(podId, podConfig, "container-with-symlink-host-path-test-", symlinkPath);
    await testStart(id);
    expect(await execSyncContainer(id, ["ls", "-A", symlinkPath]), "len(output) should not be zero.").to.not.equal("");
  });

  // ============ container.go: "runtime should support log"

  it("runtime should support starting container with log [Conformance]", async function () {
    const { podId, podConfig } = await podWithLogDirectory();
    const name = "container-with-log-test-" + randomUUID();
    const logPath = `${name}.log`;
    const id = await createContainerWithError(podId, { metadata: { name, attempt: DEFAULT_ATTEMPT }, image: { image: BUSYBOX }, command: ["echo", DEFAULT_LOG], logPath }, podConfig);
    await start(id);
    await waitState(id, "CONTAINER_EXITED");
    const msgs = parseLogLine(join(podConfig.logDirectory, logPath));
    expect(msgs.some((m) => m.log === `${DEFAULT_LOG}\n` && m.stream === "stdout"), `expected log ${JSON.stringify(DEFAULT_LOG)} in ${JSON.stringify(msgs)}`).to.equal(true);
  });

  it("runtime should support reopening container log [Conformance]", async function () {
    const { podId, podConfig } = await podWithLogDirectory();
    const name = "container-reopen-log-test-" + randomUUID();
    const logPath = `${name}.log`;
    const id = await createContainerWithError(podId, {
      metadata: { name, attempt: DEFAULT_ATTEMPT }, image: { image: BUSYBOX },
      command: ["sh", "-c", `while true; do echo ${DEFAULT_LOG}; sleep 1; done`], logPath,
    }, podConfig);
    await start(id);
    const path = join(podConfig.logDirectory, logPath);
    await eventually("container log should be generated", () => parseLogLine(path), (m) => m.length > 0);
    const newLogPath = `${path}.new`;
    renameSync(path, newLogPath);
    await rt("ReopenContainerLog", { containerId: id });
    expect(existsSync(path), "new container log file should be created").to.equal(true);
    await eventually("new container log should be generated", () => parseLogLine(path), (m) => m.length > 0);
    const oldLength = parseLogLine(newLogPath).length;
    for (let i = 0; i < 5; i++) {
      await sleep(1000);
      expect(parseLogLine(newLogPath).length, "old container log should not change").to.equal(oldLength);
    }
  });

  // ============ container_linux.go: "Container Mount Propagation"

  const sh = (cmd: string, ...args: string[]) => execFileSync(cmd, args, { encoding: "utf8" });

  async function testMountPropagation(propagation: "PROPAGATION_PRIVATE" | "PROPAGATION_BIDIRECTIONAL" | "PROPAGATION_HOST_TO_CONTAINER") {
    const { podId, podConfig } = await privilegedPod();
    // createHostPathForMountPropagation
    const hostPath = mkdtempSync(join(tmpdir(), `test${podId}`));
    const mntSource = join(hostPath, "mnt");
    const propagationMntPoint = join(mntSource, "propagationMnt");
    mkdirSync(propagationMntPoint, { recursive: true, mode: 0o700 });
    const propagationSrcDir = join(hostPath, "propagationSrcDir");
    mkdirSync(propagationSrcDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(propagationSrcDir, "flagFile"), "");
    sh("mount", "--rbind", mntSource, mntSource);
    sh("mount", propagation === "PROPAGATION_PRIVATE" ? "--make-rprivate" : "--make-rshared", mntSource);
    cleanups.push(() => {
      spawnSync("umount", ["--lazy", propagationMntPoint]);
      spawnSync("umount", ["--lazy", join(mntSource, "containerMntPoint")]);
      spawnSync("umount", ["--lazy", mntSource]);
      rmSync(hostPath, { recursive: true, force: true });
    });

    // createMountPropagationContainer
    const id = await createContainerWithError(podId, {
      metadata: buildMeta("mount-propagation-test-"), image: { image: BUSYBOX }, command: ["sh", "-c", "top"],
      linux: { securityContext: { privileged: true } },
      mounts: [{ hostPath: mntSource, containerPath: mntSource, propagation }],
    }, podConfig);
    const resp = await rt("ContainerStatus", { containerId: id, verbose: true });
    expect(resp.status.mounts).to.have.length(1);
    expect(resp.status.mounts[0].containerPath).to.equal(mntSource);
    expect(resp.status.mounts[0].hostPath).to.equal(mntSource);
    expect(resp.status.mounts[0].readonly).to.equal(false);
    expect(resp.status.mounts[0].selinuxRelabel).to.equal(false);
    expect(resp.status.mounts[0].propagation).to.equal(propagation);

    await testStart(id);
    // a mount on the host, after the container started
    sh("mount", "--rbind", propagationSrcDir, propagationMntPoint);
    const output = await execSyncContainer(id, ["ls", "-A", propagationMntPoint]);
    if (propagation === "PROPAGATION_PRIVATE") expect(output, "len(output) should be zero.").to.equal("");
    else expect(output, "len(output) should not be zero.").to.not.equal("");

    // a mount in the container
    const containerMntPoint = join(mntSource, "containerMntPoint");
    await execSyncContainer(id, ["sh", "-c", `mkdir -p ${containerMntPoint}`]);
    await execSyncContainer(id, ["sh", "-c", `mount --bind /etc ${containerMntPoint}`]);
    const fileInfo = readdirSync(containerMntPoint);
    if (propagation === "PROPAGATION_BIDIRECTIONAL") expect(fileInfo, "len(fileInfo) should not be zero.").to.not.be.empty;
    else expect(fileInfo, "len(fileInfo) should be zero.").to.be.empty;
  }

  it("mount with 'rprivate' should not support propagation", async function () {
    await testMountPropagation("PROPAGATION_PRIVATE");
  });

  it("mount with 'rshared' should support propagation from host to container and vice versa", async function () {
    await testMountPropagation("PROPAGATION_BIDIRECTIONAL");
  });

  it("mount with 'rslave' should support propagation from host to container", async function () {
    await testMountPropagation("PROPAGATION_HOST_TO_CONTAINER");
  });

  // ============ container_linux.go: "Container OOM"

  it("should terminate with exitCode 137 and reason OOMKilled", async function () {
    const { podId, podConfig } = await privilegedPod();
    const limit = String(15 * 1024 * 1024);
    const id = await createContainerWithError(podId, {
      metadata: buildMeta("OOM-test-"), image: { image: BUSYBOX }, command: ["sh", "-c", "dd if=/dev/zero of=/dev/null bs=20M"],
      linux: { resources: { memoryLimitInBytes: limit, memorySwapLimitInBytes: limit } },
    }, podConfig);
    await rt("ContainerStatus", { containerId: id, verbose: true });
    await start(id);
    await waitState(id, "CONTAINER_EXITED");
    await eventually("reason OOMKilled", async () => (await status(id)).reason, (r) => r === "OOMKilled", 60_000, 4000);
    expect((await status(id)).exitCode).to.equal(137);
    // conmon notes the OOM kill in a file of its working folder too: its own, not the daemon's (ours)
    expect(existsSync(join(process.cwd(), "oom")), "an oom file in the daemon's working folder").to.equal(false);
  });

  // not a critest spec: what its OOM spec sends and the runtime had no sign of using
  it("(beyond critest) the OOM spec's memory_swap_limit_in_bytes reaches the runtime's spec; below the memory limit it is InvalidArgument", async function () {
    const { podId, podConfig } = await privilegedPod();
    const limit = String(15 * 1024 * 1024);
    const id = await createContainerWithError(podId, {
      metadata: buildMeta("swap-test-"), image: { image: BUSYBOX }, command: ["sh", "-c", "top"],
      linux: { resources: { memoryLimitInBytes: limit, memorySwapLimitInBytes: limit } },
    }, podConfig);
    await testStart(id);
    const spec = JSON.parse(readFileSync(join(bed.d.dir, "exec", "cri", "containers", id, "bundle", "config.json"), "utf8"));
    expect(spec.linux.resources.memory).to.include({ limit: Number(limit), swap: Number(limit) });
    const err = await bed.cri.fails("runtime", "CreateContainer", {
      podSandboxId: podId, sandboxConfig: podConfig,
      config: { metadata: buildMeta("swap-test-"), image: { image: BUSYBOX }, command: ["top"], linux: { resources: { memoryLimitInBytes: limit, memorySwapLimitInBytes: "1048576" } } },
    });
    expect(err.code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect(err.details).to.include("config.linux.resources.memory_swap_limit_in_bytes");
  });

  // ============ container_linux.go: "Container Mount Readonly"

  /** runtimeSupportsRRO: the default handler's (critest's --runtime-handler is "") claim in Status. */
  const supportsRRO = async () => {
    const st = await rt("Status", { verbose: false });
    return (st.runtimeHandlers as any[]).find((h) => h.name === "")?.features?.recursiveReadOnlyMounts === true;
  };

  /** createHostPathForRROMount: a temporary folder with a tmpfs mounted at tmpfs/. */
  function createHostPathForRROMount(podId: string): string {
    const hostPath = mkdtempSync(join(tmpdir(), `test${podId}`));
    const tmpfs = join(hostPath, "tmpfs");
    mkdirSync(tmpfs, { mode: 0o700 });
    sh("mount", "-t", "tmpfs", "none", tmpfs);
    cleanups.push(() => {
      spawnSync("umount", ["--lazy", tmpfs]);
      rmSync(hostPath, { recursive: true, force: true });
    });
    return hostPath;
  }

  /** createMountContainer: `sh -c top` with the mounts; with expectErr, the create must fail. */
  async function createMountContainer(podId: string, podConfig: object, mounts: object[], expectErr: boolean): Promise<string | grpc.ServiceError> {
    const config = { metadata: buildMeta("test-mount-"), image: { image: BUSYBOX }, command: ["sh", "-c", "top"], mounts };
    if (expectErr) {
      const err = await createContainerWithError(podId, config, podConfig).then(() => null, (e: grpc.ServiceError) => e);
      expect(err, "CreateContainer should fail").to.not.equal(null);
      return err!;
    }
    const id = await createContainerWithError(podId, config, podConfig);
    const resp = await rt("ContainerStatus", { containerId: id, verbose: true });
    expect(resp.status.mounts).to.have.length(mounts.length);
    return id;
  }

  async function testRRO(rro: boolean, ctx: Mocha.Context) {
    if (rro && !(await supportsRRO())) return ctx.skip(); // critest: Skip("runtime does not implement recursive readonly mounts")
    const { podId, podConfig } = await privilegedPod();
    const hostPath = createHostPathForRROMount(podId);
    const id = (await createMountContainer(podId, podConfig, [{ hostPath, containerPath: "/mnt", readonly: true, recursiveReadOnly: rro, selinuxRelabel: true }], false)) as string;
    await testStart(id);
    const command = rro ? ["sh", "-c", 'touch /mnt/tmpfs/foo 2>&1 | grep -q "Read-only file system"'] : ["touch", "/mnt/tmpfs/file"];
    await execSyncContainer(id, command);
  }

  it("should support non-recursive readonly mounts", async function () {
    await testRRO(false, this);
  });

  it("should support recursive readonly mounts", async function () {
    await testRRO(true, this);
  });

  async function testRROInvalid(mount: Record<string, unknown>, ctx: Mocha.Context) {
    if (!(await supportsRRO())) return ctx.skip(); // as critest
    const { podId, podConfig } = await privilegedPod();
    const hostPath = createHostPathForRROMount(podId);
    const err = await createMountContainer(podId, podConfig, [{ hostPath, containerPath: "/mnt", recursiveReadOnly: true, selinuxRelabel: true, ...mount }], true);
    // critest asks only for an error; ours is InvalidArgument naming the field
    expect((err as grpc.ServiceError).code).to.equal(grpc.status.INVALID_ARGUMENT);
    expect((err as grpc.ServiceError).details).to.include("config.mounts[0].recursive_read_only");
  }

  it("should reject a recursive readonly mount with PROPAGATION_HOST_TO_CONTAINER", async function () {
    await testRROInvalid({ readonly: true, propagation: "PROPAGATION_HOST_TO_CONTAINER" }, this);
  });

  it("should reject a recursive readonly mount with PROPAGATION_BIDIRECTIONAL", async function () {
    await testRROInvalid({ readonly: true, propagation: "PROPAGATION_BIDIRECTIONAL" }, this);
  });

  it("should reject a recursive readonly mount with ReadOnly: false", async function () {
    await testRROInvalid({ readonly: false }, this);
  });

  // ============ multi_container_linux.go: "Multiple Containers [Conformance]" / "when running multiple containers in a pod"

  async function multiContainerPod() {
    // createMultiContainerTestPodSandbox: a log directory, port 80 mapped without a host port
    const md = metadata("PodSandbox-for-multi-container-test-");
    const logDir = mkdtempSync(join(tmpdir(), "podLogTest"));
    const podLogPath = join(logDir, md.name);
    mkdirSync(podLogPath, { recursive: true, mode: 0o777 });
    const podConfig = { metadata: md, logDirectory: podLogPath, portMappings: [{ containerPort: 80 }], labels: {}, linux: { cgroupParent: await cgroupParent() } };
    const { podSandboxId: podId } = await rt("RunPodSandbox", { config: podConfig, runtimeHandler: "" });
    cleanups.push(async () => {
      await rt("StopPodSandbox", { podSandboxId: podId });
      await rt("RemovePodSandbox", { podSandboxId: podId });
      rmSync(logDir, { recursive: true, force: true });
    });
    const httpdName = "httpd" + randomUUID();
    const httpdId = await createContainerWithError(podId, { metadata: { name: httpdName, attempt: DEFAULT_ATTEMPT }, image: { image: HTTPD }, linux: {}, logPath: `${httpdName}.log` }, podConfig);
    await testStart(httpdId);
    const busyboxName = "busybox" + randomUUID();
    const busyboxId = await createContainerWithError(podId, {
      metadata: { name: busyboxName, attempt: DEFAULT_ATTEMPT }, image: { image: BUSYBOX },
      command: ["sh", "-c", `echo ${DEFAULT_LOG}; sleep 1000`], logPath: `${busyboxName}.log`,
    }, podConfig);
    await testStart(busyboxId);
    return { podId, httpdId, busyboxId };
  }

  it("should support network", async function () {
    const { podId } = await multiContainerPod();
    // checkMainPage(rc, podID, 0, 80): GET http://<pod IP>:80/ until it answers, then 200; from the
    // bed's network namespace, where the pod network is (critest runs on the node)
    const st = (await rt("PodSandboxStatus", { podSandboxId: podId, verbose: false })).status;
    expect(st.network, "The network in status should not be nil.").to.not.equal(null);
    expect(st.network.ip, "The IP should not be nil.").to.be.a("string").and.not.equal("");
    const url = `http://${st.network.ip}:80`;
    const code = await eventually(`GET ${url}`, () => bed.ns.run("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "60", url), (c) => /^\d{3}$/.test(c));
    expect(code, "The status code of response should be 200.").to.equal("200");
  });

  it("should support container log", async function () {
    const { httpdId, busyboxId } = await multiContainerPod();
    const contains = (path: string, text: string) => () => readFileSync(path, "utf8").includes(text);
    const httpdStatus = await status(httpdId);
    await eventually("httpd's log", contains(httpdStatus.logPath, "httpd -D FOREGROUND"), (v) => v, 60_000, 100);
    const busyboxStatus = await status(busyboxId);
    await eventually("busybox's log", contains(busyboxStatus.logPath, DEFAULT_LOG), (v) => v, 60_000, 100);
  });

  it("should support container exec", async function () {
    const { httpdId, busyboxId } = await multiContainerPod();
    expect(await execSyncContainer(httpdId, ["echo", "httpd"])).to.equal("httpd\n");
    expect(await execSyncContainer(busyboxId, ["echo", "busybox"])).to.equal("busybox\n");
  });

  // ============ image_volume.go: "Image Volume [Feature:ImageVolume]"
  // critest skips each spec when CreateContainer answers UNIMPLEMENTED ("Runtimes signal lack of
  // support via gRPC Unimplemented"); engined does not serve image volumes yet and says so. These
  // check that answer, which is what makes critest skip (the pull of test-image-tag:test is the
  // local import above; its ID stands for the pulled image's ref).

  async function imageVolumeCreate(prefix: string, mount: Record<string, unknown>, image = TEST_IMAGE_WITH_TAG) {
    const imageRef = (await img("ImageStatus", { image: { image }, verbose: false })).image.id;
    const { podId, podConfig } = await podForContainer();
    const config = {
      metadata: buildMeta(prefix), image: { image: imageRef, userSpecifiedImage: image }, command: ["sh", "-c", "top"],
      mounts: [{ containerPath: "/mnt/image-volume", image: { image: imageRef, userSpecifiedImage: image }, ...mount }],
    };
    return bed.cri.fails("runtime", "CreateContainer", { podSandboxId: podId, config, sandboxConfig: podConfig });
  }

  it("should return image digest in ContainerStatus mounts", async function () {
    const err = await imageVolumeCreate("image-volume-digest-test-", { readonly: true });
    expect(err.code, err.details).to.equal(grpc.status.UNIMPLEMENTED);
    expect(err.details).to.include("config.mounts[0].image");
  });

  it("should correctly mount image and enforce read-only", async function () {
    const err = await imageVolumeCreate("image-volume-mount-test-", { readonly: true });
    expect(err.code, err.details).to.equal(grpc.status.UNIMPLEMENTED);
  });

  it("should reject Image Volume with Readonly set to false", async function () {
    const err = await imageVolumeCreate("image-volume-readonly-test-", { readonly: false });
    expect(err.code, err.details).to.equal(grpc.status.UNIMPLEMENTED);
  });

  it("should succeed when using a valid subPath", async function () {
    // critest: testImagePreDefinedGroup; the spec skips at the create, before the image matters
    const err = await imageVolumeCreate("image-volume-subpath-test-", { readonly: true, imageSubPath: "etc" }, BUSYBOX);
    expect(err.code, err.details).to.equal(grpc.status.UNIMPLEMENTED);
  });

  it("should fail when subPath does not exist in the image", async function () {
    const err = await imageVolumeCreate("image-volume-subpath-fail-test-", { readonly: true, imageSubPath: "not-existing" });
    expect(err.code, err.details).to.equal(grpc.status.UNIMPLEMENTED);
  });
});
