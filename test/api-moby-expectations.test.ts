/**
 * What moby's own integration tests (its `integration/container` suite, current tree) expect of
 * a daemon, where engined answered otherwise: an image reference that is no reference, an
 * environment variable without a name, an empty User that is the image's, a body's type and JSON
 * read before the container or exec they name, a removal of a running or paused container in
 * Docker 28's words, an exec of a command not found (127), an exec's TERM from its own terminal,
 * a pids limit an old client's update cannot carry, annotations in the list, an exec resize's
 * order and waits, and the two sysctls a container's own network namespace gets. Against a real engined.
 */
import "./helpers/root-hooks.js";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { dockerChecks } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest, rawHead } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

describe("what moby's integration tests expect of a daemon", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let host: string;
  const { ok: cli, run } = dockerChecks(() => host);
  const api = (method: string, path: string, body?: unknown) => httpRequest({ socketPath: d.socket }, method, path, body);
  const message = (r: { body: string }) => JSON.parse(r.body).message as string;

  before(async () => {
    const dir = makeTempDir("engine-moby-expect-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    const rootfs = writeFixture(dir, "rootfs.tar", await busyboxRootfs());
    await cli("import", "--change", 'CMD ["sh"]', rootfs, "busybox");
    await cli("import", "--change", 'CMD ["sh"]', "--change", "USER nobody", rootfs, "as-nobody");
  });
  afterEach(async () => {
    const ids = (await run("ps", "-aq")).stdout.split("\n").filter(Boolean);
    if (ids.length) await run("rm", "-f", ...ids);
  });
  after(async () => d?.stop());

  it("refuses an image reference that is no reference with 400 'invalid reference format' (TestCreateByImageID)", async () => {
    const id = (await cli("image", "inspect", "-f", "{{.Id}}", "busybox")).trim();
    const create = await api("POST", "/v1.51/containers/create", { Image: `busybox:${id}` });
    expect([create.status, message(create)]).to.deep.equal([400, "invalid reference format"]);
    const remove = await api("DELETE", `/v1.51/images/busybox:${id}`);
    expect(remove.status).to.equal(400);
  });

  it("creates a container whose command is an empty word, which the runtime refuses at start (TestRemoveImageOrphaning)", async () => {
    const r = await api("POST", "/v1.51/containers/create?name=emptyword", { Image: "busybox", Cmd: [""] });
    expect(r.status, r.body).to.equal(201);
    const start = await api("POST", "/v1.51/containers/emptyword/start");
    expect(start.status).to.equal(400);
    expect(message(start)).to.contain('exec: "": executable file not found in $PATH');
    expect((await cli("inspect", "-f", "{{.State.ExitCode}}", "emptyword")).trim()).to.equal("127");
    const onlyEntrypoint = await api("POST", "/v1.51/containers/create", { Image: "busybox", Entrypoint: [""] });
    expect([onlyEntrypoint.status, message(onlyEntrypoint)]).to.deep.equal([400, "no command specified"]);
  });

  it("refuses an environment variable without a name (TestCreateWithInvalidEnv)", async () => {
    for (const env of ["", "=", "=foo"]) {
      const r = await api("POST", "/v1.51/containers/create", { Image: "busybox", Env: [env] });
      expect([r.status, message(r)], JSON.stringify(env)).to.deep.equal([400, `invalid environment variable: ${env}`]);
    }
  });

  it("makes a read-only bind recursively read-only from API 1.44, as its BindOptions ask (TestContainerBindMountReadOnlyDefault)", async () => {
    // a bind source with a submount of its own: writable on the host
    const top = makeTempDir("engine-rro-");
    mkdirSync(join(top, "sub"));
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", join(top, "sub")]);
    try {
      const probe = ["sh", "-c", "touch /t/sub/probe 2>/dev/null && echo writable || echo read-only"];
      const run = async (version: string, hostConfig: object) => {
        const r = await api("POST", `/${version}/containers/create`, { Image: "busybox", Cmd: probe, HostConfig: hostConfig });
        if (r.status !== 201) return `${r.status} ${message(r)}`;
        const id = JSON.parse(r.body).Id as string;
        const start = await api("POST", `/${version}/containers/${id}/start`);
        if (start.status !== 204) return `${start.status} ${message(start)}`;
        await api("POST", `/${version}/containers/${id}/wait`);
        return (await cli("logs", id)).trim();
      };
      const bind = (options: object, readOnly = true) => ({ Mounts: [{ Type: "bind", Source: top, Target: "/t", ReadOnly: readOnly, BindOptions: options }] });
      expect(await run("v1.51", { Binds: [`${top}:/t:ro`] })).to.equal("read-only");
      expect(await run("v1.43", { Binds: [`${top}:/t:ro`] })).to.equal("writable");
      expect(await run("v1.51", bind({}))).to.equal("read-only");
      expect(await run("v1.43", bind({}))).to.equal("writable");
      expect(await run("v1.51", bind({ ReadOnlyNonRecursive: true }))).to.equal("writable");
      expect(await run("v1.51", bind({ ReadOnlyForceRecursive: true }))).to.equal("read-only");
      expect(await run("v1.51", { Binds: [`${top}:/t`] })).to.equal("writable");
      expect(await run("v1.51", bind({ ReadOnlyNonRecursive: true }, false))).to.equal(
        '400 invalid mount config for type "bind": options conflict: Writable && ReadOnlyNonRecursive',
      );
      expect(await run("v1.51", bind({ ReadOnlyNonRecursive: true, ReadOnlyForceRecursive: true }))).to.equal(
        '400 invalid mount config for type "bind": options conflict: ReadOnlyNonRecursive && ReadOnlyForceRecursive',
      );
    } finally {
      execFileSync("umount", [join(top, "sub")]);
    }
  });

  it("gives a copy with -a the container's user, an empty part being root's (TestCopyToContainerCopyUIDGID)", async () => {
    const src = join(makeTempDir("engine-cp-owner-"), "empty-file.txt");
    writeFileSync(src, "");
    for (const [user, owner] of [["7777:", "7777/0"], [":7777", "0/7777"], ["7777", "7777/0"], ["7777:8888", "7777/8888"], ["nobody", "65534/65534"]]) {
      const id = (await cli("create", "-u", user, "busybox")).trim();
      await cli("cp", "-a", src, `${id}:/empty-file.txt`);
      const listing = execFileSync("tar", ["-tv", "--numeric-owner"], { input: execFileSync("docker", ["-H", host, "cp", `${id}:/empty-file.txt`, "-"]) }).toString();
      expect(listing.split(/\s+/)[1], user).to.equal(owner);
    }
  });

  it("refuses a tar to copy in whose entry's size is no number as an invalid tar header (400), as Go's tar reader does", async () => {
    await cli("create", "--name", "badtar", "busybox");
    // one header: a valid checksum over a size field of letters
    const header = Buffer.alloc(512);
    header.write("f.txt", 0);
    header.write("0000644\0", 100);
    header.write("0000000\0", 108);
    header.write("0000000\0", 116);
    header.write("zzzzzzzzzzz\0", 124);
    header.write("00000000000\0", 136);
    header.write("0", 156);
    header.write("ustar\u000000", 257);
    header.fill(" ", 148, 156);
    const sum = header.reduce((a, b) => a + b, 0);
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    const r = await httpRequest({ socketPath: d.socket }, "PUT", "/v1.51/containers/badtar/archive?path=/tmp", Buffer.concat([header, Buffer.alloc(1024)]), "application/x-tar");
    expect([r.status, message(r)]).to.deep.equal([400, "invalid tar header"]);
  });

  it("takes an empty User as the image's, as the Go client always sends the field (TestCopyToContainerCopyUIDGID)", async () => {
    const r = await api("POST", "/v1.51/containers/create?name=whoami", { Image: "as-nobody", User: "", Cmd: ["id", "-u"] });
    expect(r.status, r.body).to.equal(201);
    expect((await cli("inspect", "-f", "{{.Config.User}}", "whoami")).trim()).to.equal("nobody");
    expect(await cli("start", "-a", "whoami")).to.equal("65534\n");
  });

  it("reads a body's type and JSON before the container or exec it names (TestContainerInvalidJSON)", async () => {
    const plain = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        import("node:http").then(({ request }) => {
          const req = request({ socketPath: d.socket, method: "POST", path, headers: { "content-type": "text/plain", "content-length": 2 } }, (res) => {
            let body = "";
            res.on("data", (c: Buffer) => (body += c.toString()));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
          });
          req.on("error", reject);
          req.end("{}");
        }, reject);
      });
    for (const path of ["/v1.51/commit", "/v1.51/containers/create", "/v1.51/containers/foobar/exec", "/v1.51/containers/foobar/update", "/v1.51/exec/foobar/start"]) {
      const r = await plain(path);
      expect([r.status, message(r)], path).to.deep.equal([400, "unsupported Content-Type header (text/plain): must be 'application/json'"]);
    }
  });

  it("refuses to remove a running or paused container in Docker 28's words (TestRemoveContainerRunning)", async () => {
    await cli("run", "-d", "--name", "busy", "busybox", "sleep", "60");
    const running = await api("DELETE", "/v1.51/containers/busy");
    expect([running.status, message(running)]).to.deep.equal([409, 'cannot remove container "/busy": container is running: stop the container before removing or force remove']);
    await cli("pause", "busy");
    const paused = await api("DELETE", "/v1.51/containers/busy");
    expect([paused.status, message(paused)]).to.deep.equal([409, 'cannot remove container "/busy": container is paused and must be unpaused first']);
    await cli("unpause", "busy");
  });

  it("records 127 for an exec of a command not found (TestFailedExecExitCode), and gives an exec TERM only with its own terminal", async () => {
    await cli("run", "-d", "-t", "--name", "term", "busybox", "sleep", "60");
    const created = await api("POST", "/v1.51/containers/term/exec", { Cmd: ["nonexistent"], AttachStdout: true, AttachStderr: true });
    const id = JSON.parse(created.body).Id as string;
    await api("POST", `/v1.51/exec/${id}/start`, { Detach: false });
    expect(JSON.parse((await api("GET", `/v1.51/exec/${id}/json`)).body).ExitCode).to.equal(127);
    expect((await run("exec", "term", "sh", "-c", "echo ${TERM:-none}")).stdout).to.equal("none\n");
  });

  it("writes the heads of attach and exec start by hand, as Docker's routes do: the daemon's headers sorted after an exec's, none after an attach's", async () => {
    await cli("run", "-d", "--name", "heads", "busybox", "sleep", "60");
    const head = async (path: string, body: string, upgrade: boolean) => {
      const extra = upgrade ? "Upgrade: tcp\r\nConnection: Upgrade\r\n" : "";
      const lines = await rawHead(d.socket, `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n${extra}\r\n${body}`);
      return lines.map((l) => l.replace(/^(Api-Version|Server): .*/, "$1: *"));
    };
    const execId = async () => JSON.parse((await api("POST", "/v1.51/containers/heads/exec", { Cmd: ["true"], AttachStdout: true })).body).Id as string;
    const daemon = ["Api-Version: *", "Docker-Experimental: false", "Ostype: linux", "Server: *"];
    expect(await head("/v1.51/containers/heads/attach?stream=1&stdout=1", "", true)).to.deep.equal(["HTTP/1.1 101 UPGRADED", "Content-Type: application/vnd.docker.multiplexed-stream", "Connection: Upgrade", "Upgrade: tcp"]);
    expect(await head("/v1.51/containers/heads/attach?stream=1&stdout=1", "", false)).to.deep.equal(["HTTP/1.1 200 OK", "Content-Type: application/vnd.docker.raw-stream"]);
    expect(await head(`/v1.51/exec/${await execId()}/start`, "{}", true)).to.deep.equal(["HTTP/1.1 101 UPGRADED", "Content-Type: application/vnd.docker.multiplexed-stream", "Connection: Upgrade", "Upgrade: tcp", ...daemon]);
    expect(await head(`/v1.41/exec/${await execId()}/start`, "{}", false)).to.deep.equal(["HTTP/1.1 200 OK", "Content-Type: application/vnd.docker.raw-stream", ...daemon]);
  });

  it("answers a start whose pids limit the kernel refuses with 400, the runtime's words and exit code 128 (the API fuzz, seed 47)", async () => {
    const created = await api("POST", "/v1.51/containers/create?name=manypids", { Image: "busybox", Cmd: ["true"], HostConfig: { PidsLimit: 5_000_000 } });
    expect(created.status, created.body).to.equal(201);
    const start = await api("POST", "/v1.51/containers/manypids/start");
    expect(start.status, start.body).to.equal(400);
    expect(message(start)).to.match(/^failed to create task for container: .*failed to write "5000000".*invalid argument/);
    expect((await cli("inspect", "-f", "{{.State.ExitCode}}", "manypids")).trim()).to.equal("128");
  });

  it("answers a start whose real-time budget the kernel refuses (cgroup v1, no budget above) as it answers a refused pids limit: 400, Docker's words, exit code 128", async function () {
    // Where the kernel has no real-time scheduler for cgroups, create refuses the budget (cli-run-flags.test.ts).
    if (!existsSync("/sys/fs/cgroup/cpu/cpu.rt_runtime_us")) this.skip();
    const created = await api("POST", "/v1.51/containers/create?name=realtime", { Image: "busybox", Cmd: ["true"], HostConfig: { CpuRealtimePeriod: 1_000_000, CpuRealtimeRuntime: 10_000 } });
    expect(created.status, created.body).to.equal(201);
    const start = await api("POST", "/v1.51/containers/realtime/start");
    expect(start.status, start.body).to.equal(400);
    expect(message(start)).to.match(/^failed to create task for container: failed to create shim task: OCI runtime create failed: .*unable to apply cgroup configuration: failed to write "10000": write \/sys\/fs\/cgroup\/\S+\/cpu\.rt_runtime_us: invalid argument: unknown$/);
    expect((await cli("inspect", "-f", "{{.State.ExitCode}} {{.State.Status}}", "realtime")).trim()).to.equal("128 created");
  });

  it("leaves the pids limit alone on an update of a client before API 1.40 (TestUpdatePidsLimit)", async () => {
    await cli("run", "-d", "--name", "limited", "--pids-limit", "32", "busybox", "sleep", "60");
    expect((await api("POST", "/v1.24/containers/limited/update", { PidsLimit: 16 })).status).to.equal(200);
    expect((await cli("inspect", "-f", "{{.HostConfig.PidsLimit}}", "limited")).trim()).to.equal("32");
    expect((await api("POST", "/v1.40/containers/limited/update", { PidsLimit: 16 })).status).to.equal(200);
    expect((await cli("inspect", "-f", "{{.HostConfig.PidsLimit}}", "limited")).trim()).to.equal("16");
  });

  it("shows a container's annotations in the list from API 1.46 (TestContainerList_Annotations)", async () => {
    const r = await api("POST", "/v1.46/containers/create?name=annotated", { Image: "busybox", HostConfig: { Annotations: { foo: "bar", "io.kubernetes.docker.type": "container" } } });
    expect(r.status, r.body).to.equal(201);
    const list = async (version: string) => JSON.parse((await api("GET", `/v${version}/containers/json?all=1&filters=${encodeURIComponent(JSON.stringify({ name: ["annotated"] }))}`)).body);
    expect((await list("1.46"))[0].HostConfig.Annotations).to.deep.equal({ foo: "bar", "io.kubernetes.docker.type": "container" });
    // (the route leaves them out for older clients, as Docker's does)
    expect((await list("1.45"))[0].HostConfig).to.not.have.property("Annotations");
  });

  it("reads an exec resize's size first, waits for the exec's start, and answers one that could not start as Docker 28 does (TestExecResizeAPIHeightWidthNoInt, TestExecResizeImmediatelyAfterExecStart)", async () => {
    const bad = await api("POST", "/v1.51/exec/nosuch/resize?h=foo&w=bar");
    expect([bad.status, message(bad)]).to.deep.equal([400, 'invalid resize height "foo": invalid syntax']);
    await cli("run", "-d", "-t", "--name", "sized", "busybox", "sleep", "60");
    const exec = async (cmd: string) => JSON.parse((await api("POST", "/v1.51/containers/sized/exec", { Cmd: [cmd], Tty: true })).body).Id as string;
    // a resize sent at once after the start, before it is answered, waits for the process
    const running = await exec("sh");
    const [started, resized] = await Promise.all([api("POST", `/v1.51/exec/${running}/start`, { Detach: true, Tty: true }), api("POST", `/v1.51/exec/${running}/resize?h=24&w=80`)]);
    expect([started.status, resized.status, resized.body]).to.deep.equal([200, 200, ""]);
    const failed = await exec("nonexistent");
    expect((await api("POST", `/v1.51/exec/${failed}/start`, { Detach: true })).status).to.equal(400);
    const refused = await api("POST", `/v1.51/exec/${failed}/resize?h=24&w=80`);
    expect([refused.status, message(refused)]).to.deep.equal([400, "exec process is not started"]);
    // one never started: Docker's daemon waits 10 s for it, then says so (its 500; engined's 409)
    const late = await httpRequest({ socketPath: d.socket }, "POST", `/v1.51/exec/${await exec("true")}/resize?h=24&w=80`, undefined, "application/json", 60_000);
    expect([late.status, message(late)]).to.deep.equal([409, "timeout waiting for exec session ready"]);
  });

  it("lets every user ping and bind low ports in a container's own network namespace (TestUnprivilegedPortsAndPing)", async () => {
    const out = await cli("run", "--rm", "-u", "1000:1000", "busybox", "sh", "-c", "cat /proc/sys/net/ipv4/ping_group_range /proc/sys/net/ipv4/ip_unprivileged_port_start");
    expect(out).to.equal("0\t2147483647\n0\n");
  });
});
