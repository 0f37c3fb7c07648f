/**
 * CDI devices (Container Device Interface) with the real Docker CLI against a real engined: the
 * tests write their own spec files (YAML and JSON) into temporary spec directories, exposing
 * harmless devices (/dev/null and /dev/loop-control under other names, an environment variable,
 * a bind mount of a temporary file, a hook that writes the container's state to a file), run
 * busybox containers with `--device vendor.test/class=name` and through the API's
 * DeviceRequests, and look inside the container. Also: unknown and unqualified names refused as
 * Docker refuses them, `docker info`'s devices, directories and warnings, specs seen again
 * without a restart, later directories overriding earlier ones, and `--feature cdi=false`.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

/** A daemon with busybox imported, and the Docker CLI against it. */
async function daemonWithBusybox(args: string[]): Promise<{ d: TestDaemon; run: (...a: string[]) => Promise<RunResult>; cli: (...a: string[]) => Promise<string> }> {
  const d = await startEngined({ args });
  const host = `unix://${d.socket}`;
  const run = (...a: string[]) => docker(host, a);
  const cli = async (...a: string[]) => {
    const r = await run(...a);
    expect(r.code, `docker ${a.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  await cli("import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs()), "busybox");
  return { d, run, cli };
}

describe("CDI devices (Docker CLI and API)", function () {
  this.timeout(120_000);

  let d: TestDaemon;
  let run: (...a: string[]) => Promise<RunResult>;
  let cli: (...a: string[]) => Promise<string>;
  let work: string;
  let staticDir: string;
  let dynamicDir: string;
  let payload: string;
  const api = (method: string, path: string, body?: unknown) => httpRequest({ socketPath: d.socket }, method, `/v1.51${path}`, body);
  const info = async () => {
    const r = await api("GET", "/info");
    expect(r.status, r.body).to.equal(200);
    return JSON.parse(r.body);
  };

  before(async function () {
    work = makeTempDir("engine-cdi-");
    staticDir = join(work, "etc-cdi");
    dynamicDir = join(work, "run-cdi");
    mkdirSync(staticDir);
    mkdirSync(dynamicDir);
    payload = join(work, "payload.txt");
    writeFileSync(payload, "hello from the host\n");
    // YAML, with spec-level edits and one device of each kind of edit.
    writeFileSync(
      join(staticDir, "vendor-test.yaml"),
      [
        'cdiVersion: "0.7.0"',
        "kind: vendor.test/class",
        "containerEdits:",
        '  env: ["ENGINE_CDI_SPEC=vendor-test"]',
        "devices:",
        '  - name: "null"',
        "    containerEdits:",
        '      env: ["ENGINE_CDI_DEVICE=null"]',
        "      deviceNodes:",
        "        - path: /dev/engine-test-null",
        "          hostPath: /dev/null",
        "      mounts:",
        `        - hostPath: ${payload}`,
        "          containerPath: /opt/engine-test/payload.txt",
        '          options: ["ro", "nosuid", "nodev", "bind"]',
        "      additionalGids: [4242]",
        "  - name: loopctl-ro",
        "    containerEdits:",
        "      deviceNodes:",
        "        - path: /dev/engine-test-loopctl",
        "          hostPath: /dev/loop-control",
        '          permissions: "r"',
        "",
      ].join("\n"),
    );
    // JSON, in the same directory: a device whose hook writes the OCI state it gets on stdin.
    writeFileSync(
      join(staticDir, "hooks.json"),
      JSON.stringify({
        cdiVersion: "0.5.0",
        kind: "vendor.test/hook",
        devices: [{ name: "state", containerEdits: { hooks: [{ hookName: "createRuntime", path: "/bin/sh", args: ["sh", "-c", `cat > ${join(work, "hook-state.json")}`] }] } }],
      }),
    );
    ({ d, run, cli } = await daemonWithBusybox(["--cdi-spec-dir", staticDir, "--cdi-spec-dir", dynamicDir]));
  });
  afterEach(async function () {
    const ids = (await cli("ps", "-aq")).split("\n").filter(Boolean);
    if (ids.length) await run("rm", "-f", ...ids);
    rmSync(join(dynamicDir), { recursive: true, force: true });
    mkdirSync(dynamicDir);
  });
  after(async function () {
    await d?.stop();
  });

  it("docker run --device vendor.test/class=null: the node, the env of the spec and of the device, the mount, the extra group", async function () {
    const r = await run(
      "run", "--rm", "--network", "none", "--device", "vendor.test/class=null", "busybox", "sh", "-c",
      "ls -l /dev/engine-test-null; echo written > /dev/engine-test-null && echo write-ok; env | grep ENGINE_CDI | sort; cat /opt/engine-test/payload.txt; id -G",
    );
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.split("\n");
    // A character device 1,3 (the host's /dev/null), writable: its cgroup rule is in place.
    expect(lines[0]).to.match(/^crw-rw-rw- +1 root +root +1, +3 .* \/dev\/engine-test-null$/);
    expect(lines.slice(1, 5)).to.deep.equal(["write-ok", "ENGINE_CDI_DEVICE=null", "ENGINE_CDI_SPEC=vendor-test", "hello from the host"]);
    expect(lines[5].split(" ")).to.include("4242");
  });

  it("sends what the Docker CLI sends for a CDI name, and inspect shows it back", async function () {
    await cli("create", "--name", "asked", "--device", "vendor.test/class=null", "busybox", "true");
    const requests = JSON.parse(await cli("inspect", "--format", "{{json .HostConfig.DeviceRequests}}", "asked"));
    expect(requests).to.deep.equal([{ Driver: "cdi", Count: 0, DeviceIDs: ["vendor.test/class=null"], Capabilities: null, Options: null }]);
  });

  it("the device node belongs to the container's user, and a node with permissions r can be opened for reading only", async function () {
    const owned = await cli("run", "--rm", "--network", "none", "--user", "65534:65534", "--device", "vendor.test/class=null", "busybox", "ls", "-ln", "/dev/engine-test-null");
    expect(owned).to.match(/^crw-rw-rw- +1 65534 +65534 +1, +3 /);
    // loop-control is outside the default device allow list: only the spec's rule lets it be opened.
    const r = await run(
      "run", "--rm", "--network", "none", "--device", "vendor.test/class=loopctl-ro", "busybox", "sh", "-c",
      "(exec 3</dev/engine-test-loopctl) && echo read-open; (exec 4<>/dev/engine-test-loopctl) || echo rw-refused",
    );
    expect(r.stdout).to.equal("read-open\nrw-refused\n");
    expect(r.stderr).to.match(/engine-test-loopctl.*(Operation not permitted|Permission denied)/i);
  });

  it("runs the spec's hooks with the container's state", async function () {
    const id = (await cli("run", "-d", "--network", "none", "--device", "vendor.test/hook=state", "busybox", "true")).trim();
    const state = JSON.parse(readFileSync(join(work, "hook-state.json"), "utf8"));
    expect(state.id).to.equal(id);
    expect(state.status).to.equal("creating");
    rmSync(join(work, "hook-state.json"));
  });

  it("DeviceRequests over the API: create, start, and the container sees the device", async function () {
    const created = await api("POST", "/containers/create", {
      Image: "busybox",
      Cmd: ["sh", "-c", "test -c /dev/engine-test-null && echo $ENGINE_CDI_DEVICE"],
      HostConfig: { NetworkMode: "none", DeviceRequests: [{ Driver: "cdi", DeviceIDs: ["vendor.test/class=null"] }] },
    });
    expect(created.status, created.body).to.equal(201);
    const { Id } = JSON.parse(created.body);
    expect((await api("POST", `/containers/${Id}/start`)).status).to.equal(204);
    const waited = await api("POST", `/containers/${Id}/wait`);
    expect(JSON.parse(waited.body).StatusCode).to.equal(0);
    expect(await cli("logs", Id)).to.equal("null\n");
  });

  it("refuses an unknown device at start as Docker does, naming it", async function () {
    const r = await run("run", "--network", "none", "--name", "unknown-dev", "--device", "vendor.test/class=nope", "busybox", "true");
    expect(r.code).to.equal(125);
    expect(r.stderr).to.include("Error response from daemon: CDI device injection failed: unresolvable CDI devices vendor.test/class=nope");
    expect(await cli("inspect", "--format", "{{.State.Status}} {{.State.Error}}", "unknown-dev")).to.equal(
      "created CDI device injection failed: unresolvable CDI devices vendor.test/class=nope\n",
    );
  });

  it("refuses an unqualified name, a count and options in a CDI request over the API, with 500 at start", async function () {
    const startWith = async (request: Record<string, unknown>) => {
      const created = await api("POST", "/containers/create", { Image: "busybox", Cmd: ["true"], HostConfig: { NetworkMode: "none", DeviceRequests: [request] } });
      expect(created.status, created.body).to.equal(201);
      const started = await api("POST", `/containers/${JSON.parse(created.body).Id}/start`);
      expect(started.status).to.equal(500);
      return JSON.parse(started.body).message as string;
    };
    expect(await startWith({ Driver: "cdi", DeviceIDs: ["engine-test-null"] })).to.equal(
      'CDI device injection failed: unresolvable CDI devices engine-test-null ("engine-test-null" is not a qualified CDI device name (<vendor>/<class>=<name>))',
    );
    expect(await startWith({ Driver: "cdi", DeviceIDs: ["vendor.test/cl@ss=x"] })).to.include("class \"cl@ss\" holds the character '@'");
    expect(await startWith({ Driver: "cdi", Count: 1, DeviceIDs: ["vendor.test/class=null"] })).to.equal("unexpected count in CDI device request");
    expect(await startWith({ Driver: "cdi", Options: { a: "b" }, DeviceIDs: ["vendor.test/class=null"] })).to.equal("unexpected options in CDI device request");
    // `--gpus` asks a driver this engine does not have.
    const gpus = await run("run", "--rm", "--network", "none", "--gpus", "all", "busybox", "true");
    expect(gpus.stderr).to.include('could not select device driver "" with capabilities: [[gpu]]');
    // A malformed request is refused at create.
    const bad = await api("POST", "/containers/create", { Image: "busybox", HostConfig: { DeviceRequests: [{ Driver: "cdi", DeviceIDs: "x" }] } });
    expect(bad.status).to.equal(400);
    expect(JSON.parse(bad.body).message).to.include("HostConfig.DeviceRequests[0].DeviceIDs");
  });

  it("docker info lists the discovered devices and the spec directories", async function () {
    expect(JSON.parse(await cli("info", "--format", "{{json .CDISpecDirs}}"))).to.deep.equal([staticDir, dynamicDir]);
    expect(JSON.parse(await cli("info", "--format", "{{json .DiscoveredDevices}}"))).to.deep.equal([
      { Source: "cdi", ID: "vendor.test/class=loopctl-ro" },
      { Source: "cdi", ID: "vendor.test/class=null" },
      { Source: "cdi", ID: "vendor.test/hook=state" },
    ]);
    const text = await cli("info");
    expect(text).to.include(` CDI spec directories:\n  ${staticDir}\n  ${dynamicDir}\n`);
    expect(text).to.include(" Discovered Devices:\n  cdi: vendor.test/class=loopctl-ro\n  cdi: vendor.test/class=null\n  cdi: vendor.test/hook=state\n");
  });

  it("sees a spec written after the start; a later directory overrides an earlier one; a removed spec is gone", async function () {
    const late = join(dynamicDir, "late.json");
    writeFileSync(
      late,
      JSON.stringify({
        cdiVersion: "0.3.0",
        kind: "vendor.test/class",
        devices: [
          { name: "late", containerEdits: { env: ["ENGINE_CDI_LATE=1"] } },
          { name: "null", containerEdits: { env: ["ENGINE_CDI_DEVICE=overridden"] } },
        ],
      }),
    );
    const ids = (await info()).DiscoveredDevices.map((x: { ID: string }) => x.ID);
    expect(ids).to.include("vendor.test/class=late");
    // dev "null" now comes from the dynamic directory: its edits only (no node, no spec-level env).
    const r = await cli("run", "--rm", "--network", "none", "--device", "vendor.test/class=late", "--device", "vendor.test/class=null", "busybox", "sh", "-c", "env | grep ENGINE_CDI | sort; test -e /dev/engine-test-null || echo no-node");
    expect(r).to.equal("ENGINE_CDI_DEVICE=overridden\nENGINE_CDI_LATE=1\nno-node\n");
    rmSync(late);
    const gone = await run("run", "--rm", "--network", "none", "--device", "vendor.test/class=late", "busybox", "true");
    expect(gone.stderr).to.include("unresolvable CDI devices vendor.test/class=late");
  });

  it("a spec that fails its checks, and one device defined twice in one directory, give warnings and no device", async function () {
    writeFileSync(join(dynamicDir, "bad-version.yaml"), "cdiVersion: 0.3.0\nkind: vendor.test/other\nannotations: {a: b}\ndevices: [{name: x, containerEdits: {env: [A=1]}}]\n");
    writeFileSync(join(dynamicDir, "unknown-field.json"), JSON.stringify({ cdiVersion: "0.6.0", kind: "vendor.test/other", devices: [{ name: "y", containerEdits: { env: ["A=1"] }, extra: 1 }] }));
    const twice = { cdiVersion: "0.6.0", kind: "vendor.test/twice", devices: [{ name: "z", containerEdits: { env: ["Z=1"] } }] };
    writeFileSync(join(dynamicDir, "twice-a.json"), JSON.stringify(twice));
    writeFileSync(join(dynamicDir, "twice-b.json"), JSON.stringify(twice));
    const i = await info();
    const ids = i.DiscoveredDevices.map((x: { ID: string }) => x.ID);
    expect(ids).to.not.include.members(["vendor.test/other=x", "vendor.test/other=y", "vendor.test/twice=z"]);
    const warnings = (i.Warnings as string[]).filter((w) => w.startsWith("CDI: "));
    expect(warnings).to.include(`CDI: Error associated with spec file ${join(dynamicDir, "bad-version.yaml")}: invalid CDI spec: cdiVersion 0.3.0 is too old for the fields this spec uses: they need 0.6.0`);
    expect(warnings.find((w) => w.includes("unknown-field.json"))).to.match(/devices\[0\]\.extra/);
    expect(warnings.filter((w) => w.includes('conflicting device "vendor.test/twice=z"'))).to.have.length(2);
    // The Docker CLI prints them at the end of `docker info`.
    expect((await run("info")).stderr).to.include(`CDI: Error associated with spec file ${join(dynamicDir, "twice-a.json")}: conflicting device`);
  });
});

describe("CDI with --feature cdi=false", function () {
  this.timeout(120_000);

  let d: TestDaemon;
  let run: (...a: string[]) => Promise<RunResult>;
  let cli: (...a: string[]) => Promise<string>;

  before(async function () {
    const dir = makeTempDir("engine-cdi-off-");
    writeFileSync(join(dir, "spec.json"), JSON.stringify({ cdiVersion: "0.3.0", kind: "vendor.test/class", devices: [{ name: "null", containerEdits: { env: ["X=1"] } }] }));
    ({ d, run, cli } = await daemonWithBusybox(["--feature", "cdi=false", "--cdi-spec-dir", dir]));
  });
  after(async function () {
    const ids = d ? (await cli("ps", "-aq")).split("\n").filter(Boolean) : [];
    if (ids.length) await run("rm", "-f", ...ids);
    await d?.stop();
  });

  it("refuses CDI requests as Docker does, and reports no directory and no device", async function () {
    const r = await run("run", "--rm", "--network", "none", "--device", "vendor.test/class=null", "busybox", "true");
    expect(r.code).to.equal(125);
    expect(r.stderr).to.include('Error response from daemon: could not select device driver "cdi" with capabilities: []');
    expect(JSON.parse(await cli("info", "--format", "{{json .CDISpecDirs}}"))).to.deep.equal([]);
    expect(await cli("info", "--format", "{{json .DiscoveredDevices}}")).to.equal("null\n");
  });
});
