/**
 * Small API behaviours where engined answered differently from Docker's daemon, each checked
 * against Debian's dockerd (20.10) first and then here against `bin/engined` through the Docker
 * CLI, dockerode, the Docker SDK for Python and plain HTTP: the cluster-mode endpoints outside a
 * swarm, `/system/df` with containers, `/images/load` of what is not an image archive, and
 * `Config.Env` entries without `=`. (Network names are in network-api.test.ts: they need a
 * daemon with its bridge.)
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import Docker from "dockerode";
import { randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { eventually } from "./helpers/net-daemon.js";
import { request } from "node:http";
import { gzipSync } from "node:zlib";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, runCommand, startEngined, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, dockerSaveTar, imageOf, makeTar, writeFixture } from "./fixtures/images.js";

interface Answer {
  status: number;
  type: string | undefined;
  body: string;
}

/** One request over the socket with a raw body (or a JSON `{}`), no client library between. */
function call(socketPath: string, method: string, path: string, body?: Buffer, type = "application/x-tar"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body ?? (method === "GET" ? undefined : Buffer.from("{}"));
    const headers = payload ? { "content-type": body ? type : "application/json", "content-length": payload.length } : {};
    const req = request({ socketPath, method, path, headers, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, type: res.headers["content-type"], body: Buffer.concat(chunks).toString() }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: no answer`)));
    req.on("error", reject);
    req.end(payload);
  });
}

const NOT_MANAGER = 'This node is not a swarm manager. Use "docker swarm init" or "docker swarm join" to connect this node to swarm and try again.';
const NOT_MEMBER = "This node is not part of a swarm";

describe("API behaviours as Docker's daemon has them", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let host: string;
  const cli = async (...args: string[]) => {
    const r = await docker(host, args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const hasPythonSdk = async () => (await runCommand("python3", ["-c", "import docker"], { timeoutMs: 20_000 })).code === 0;

  before(async function () {
    d = await startEngined();
    host = `unix://${d.socket}`;
    const rootfs = writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs());
    await cli("import", "--change", 'CMD ["sh"]', rootfs, "busybox");
    await cli("import", "--change", "ENV X=1", "--change", "ENV Y=2", rootfs, "withenv");
  });
  after(async function () {
    await d?.stop();
  });

  describe("cluster-mode endpoints on a node outside a swarm", function () {
    // What dockerd 20.10 outside a swarm answered, byte for byte, for each of these (init and
    // join aside: there it would start a cluster, which engined never does).
    const table: [string, string, number, string][] = [
      ["GET", "/swarm", 503, NOT_MANAGER],
      ["POST", "/swarm/leave", 503, NOT_MEMBER],
      ["POST", "/swarm/leave?force=1", 503, NOT_MEMBER],
      ["POST", "/swarm/update", 400, `invalid swarm version '': strconv.ParseUint: parsing "": invalid syntax`],
      ["POST", "/swarm/update?version=3", 503, NOT_MANAGER],
      ["GET", "/swarm/unlockkey", 503, NOT_MANAGER],
      ["POST", "/swarm/unlock", 503, NOT_MANAGER],
      ["GET", "/nodes", 503, NOT_MANAGER],
      ["GET", "/nodes/n1", 503, NOT_MANAGER],
      ["DELETE", "/nodes/n1", 503, NOT_MANAGER],
      ["POST", "/nodes/n1/update", 400, `invalid node version '': strconv.ParseUint: parsing "": invalid syntax`],
      ["POST", "/nodes/n1/update?version=abc", 400, `invalid node version 'abc': strconv.ParseUint: parsing "abc": invalid syntax`],
      ["POST", "/nodes/n1/update?version=99999999999999999999", 400, `invalid node version '99999999999999999999': strconv.ParseUint: parsing "99999999999999999999": value out of range`],
      ["POST", "/nodes/n1/update?version=18446744073709551615", 503, NOT_MANAGER],
      ["GET", "/services", 503, NOT_MANAGER],
      ["POST", "/services/create", 503, NOT_MANAGER],
      ["GET", "/services/s1", 503, NOT_MANAGER],
      ["DELETE", "/services/s1", 503, NOT_MANAGER],
      ["POST", "/services/s1/update", 400, `invalid service version '': strconv.ParseUint: parsing "": invalid syntax`],
      ["POST", "/services/s1/update?version=1", 503, NOT_MANAGER],
      ["GET", "/services/s1/logs?stdout=1", 503, NOT_MANAGER],
      ["GET", "/tasks", 503, NOT_MANAGER],
      ["GET", "/tasks/t1", 503, NOT_MANAGER],
      ["GET", "/tasks/t1/logs?stderr=1", 503, NOT_MANAGER],
      ["GET", "/secrets", 503, NOT_MANAGER],
      ["POST", "/secrets/create", 503, NOT_MANAGER],
      ["GET", "/secrets/x1", 503, NOT_MANAGER],
      ["DELETE", "/secrets/x1", 503, NOT_MANAGER],
      ["POST", "/secrets/x1/update?version=abc", 400, "invalid secret version"],
      ["POST", "/secrets/x1/update?version=1", 503, NOT_MANAGER],
      ["GET", "/configs", 503, NOT_MANAGER],
      ["POST", "/configs/create", 503, NOT_MANAGER],
      ["GET", "/configs/c1", 503, NOT_MANAGER],
      ["DELETE", "/configs/c1", 503, NOT_MANAGER],
      ["POST", "/configs/c1/update", 400, "invalid config version"],
      ["POST", "/configs/c1/update?version=1", 503, NOT_MANAGER],
      ["GET", "/swarm/nosuch", 404, "page not found"],
    ];

    it("answers every method and path with Docker's status, body and Content-Type, with and without a version", async function () {
      for (const prefix of ["", "/v1.41", "/v1.51"]) {
        for (const [method, path, status, message] of table) {
          const r = await call(d.socket, method, `${prefix}${path}`);
          const what = `${method} ${prefix}${path}`;
          expect(r.status, what).to.equal(status);
          expect(r.type, what).to.equal("application/json");
          expect(r.body, what).to.equal(`${JSON.stringify({ message })}\n`);
        }
      }
    });

    it("refuses logs without a stream (a 400 where dockerd says 500), and init and join with a 501", async function () {
      for (const path of ["/services/s1/logs", "/tasks/t1/logs?stdout=0"]) {
        const r = await call(d.socket, "GET", path);
        expect(r, path).to.deep.include({ status: 400, body: '{"message":"Bad parameters: you must choose at least one stream"}\n' });
      }
      for (const path of ["/swarm/init", "/swarm/join"]) {
        const r = await call(d.socket, "POST", path, Buffer.from('{"ListenAddr":"0.0.0.0:2377"}'), "application/json");
        expect(r.status, path).to.equal(501);
        expect(JSON.parse(r.body).message).to.match(/^This node cannot be part of a swarm: /);
      }
    });

    it("gives the Docker CLI its errors: node ls, service ls, swarm leave --force", async function () {
      for (const args of [["node", "ls"], ["service", "ls"], ["secret", "ls"], ["config", "ls"]]) {
        expect(await docker(host, args), args.join(" ")).to.deep.include({ code: 1, stdout: "", stderr: `Error response from daemon: ${NOT_MANAGER}\n` });
      }
      expect(await docker(host, ["swarm", "leave", "--force"])).to.deep.include({ code: 1, stderr: `Error response from daemon: ${NOT_MEMBER}\n` });
    });

    it("lets SDK clean-ups leave: docker-py's swarm.leave(force=True) is done, dockerode's swarmLeave rejects with 503", async function () {
      const api = new Docker({ socketPath: d.socket });
      const left = await api.swarmLeave({ force: true }).then(
        () => undefined,
        (e: { statusCode?: number; json?: unknown }) => ({ statusCode: e.statusCode, json: e.json }),
      );
      expect(left).to.deep.equal({ statusCode: 503, json: { message: NOT_MEMBER } });
      const services = await api.listServices().then(() => undefined, (e: { statusCode?: number }) => e.statusCode);
      expect(services).to.equal(503);

      if (!(await hasPythonSdk())) this.skip(); // the Docker SDK for Python is not installed
      const script = [
        "import docker, json, sys",
        "c = docker.DockerClient(base_url='unix://' + sys.argv[1])",
        "out = {'leave_force': c.swarm.leave(force=True)}",
        "for name, f in [('leave', lambda: c.swarm.leave()), ('services', lambda: c.services.list())]:",
        "    try:",
        "        f(); out[name] = None",
        "    except docker.errors.APIError as e:",
        "        out[name] = [e.status_code, e.explanation]",
        "print(json.dumps(out))",
      ].join("\n");
      const r = await runCommand("python3", ["-c", script, d.socket], { timeoutMs: 30_000 });
      expect(r.code, r.stderr).to.equal(0);
      expect(JSON.parse(r.stdout)).to.deep.equal({ leave_force: true, leave: [503, NOT_MEMBER], services: [503, NOT_MANAGER] });
    });
  });

  describe("GET /system/df", function () {
    afterEach(async function () {
      await docker(host, ["rm", "-f", "dfwriter", "dfidle"]);
    });

    it("lists the containers with SizeRw and SizeRootFs, counts them per image, and docker system df [-v] shows them", async function () {
      await cli("run", "--name", "dfwriter", "--network", "none", "busybox", "sh", "-c", "dd if=/dev/zero of=/tmp/f bs=1k count=100 2>/dev/null");
      await cli("create", "--name", "dfidle", "--network", "none", "busybox", "true");
      const df = JSON.parse((await call(d.socket, "GET", "/v1.41/system/df")).body);
      const image = df.Images.find((i: { RepoTags: string[] }) => i.RepoTags.includes("busybox:latest"));
      expect(image.Containers).to.equal(2);
      expect(df.Images.find((i: { RepoTags: string[] }) => i.RepoTags.includes("withenv:latest")).Containers).to.equal(0);
      // newest first; SizeRw left out when the writable layer is empty, as Docker's daemon does
      expect(df.Containers.map((c: { Names: string[] }) => c.Names)).to.deep.equal([["/dfidle"], ["/dfwriter"]]);
      const [idle, writer] = df.Containers;
      expect(idle).to.not.have.property("SizeRw");
      expect(idle.SizeRootFs).to.equal(image.Size);
      expect(writer.SizeRw).to.equal(100 * 1024);
      expect(writer.SizeRootFs).to.equal(image.Size + 100 * 1024);
      expect(writer).to.deep.include({ State: "exited", Image: "busybox", Command: "sh -c 'dd if=/dev/zero of=/tmp/f bs=1k count=100 2>/dev/null'" });

      const summary = await cli("system", "df");
      expect(summary).to.match(/^Containers +2 +0 +102\.4kB +102\.4kB \(100%\)$/m);
      const verbose = await cli("system", "df", "-v");
      const section = verbose.split("Containers space usage:\n\n")[1].split("\n\n")[0].split("\n");
      expect(section[0]).to.match(/^CONTAINER ID +IMAGE +COMMAND +LOCAL VOLUMES +SIZE +CREATED +STATUS +NAMES$/);
      expect(section[1]).to.match(/^[0-9a-f]{12} +busybox +"true" +0 +0B +.+ago +Created +dfidle$/);
      expect(section[2]).to.match(/^[0-9a-f]{12} +busybox +"sh -c 'dd if=\/dev\/z…" +0 +102kB +.+ago +Exited \(0\) .+ago +dfwriter$/);
    });
  });

  describe("GraphDriver and sizes in inspect and the list", function () {
    afterEach(async function () {
      await docker(host, ["rm", "-f", "gdrun", "gdidle"]);
      await docker(host, ["rmi", "-f", "gdtwo"]);
    });

    it("shows the layer's folders as Docker's overlay2 does: the container's root where it is mounted, its upper and work folders, the image's layers below", async function () {
      await cli("run", "-d", "--name", "gdrun", "--network", "none", "busybox", "sh", "-c", "echo here > /marker; exec sleep 30");
      const c = JSON.parse((await call(d.socket, "GET", "/v1.41/containers/gdrun/json")).body);
      expect(c.GraphDriver.Name).to.equal("overlay2");
      expect(Object.keys(c.GraphDriver.Data)).to.deep.equal(["LowerDir", "MergedDir", "UpperDir", "WorkDir"]);
      const { LowerDir, MergedDir, UpperDir, WorkDir } = c.GraphDriver.Data as Record<string, string>;
      await eventually("the container's write", () => existsSync(join(UpperDir, "marker")));
      expect(readFileSync(join(UpperDir, "marker"), "utf8")).to.equal("here\n");
      expect(readFileSync(join(MergedDir, "marker"), "utf8")).to.equal("here\n");
      expect(readdirSync(MergedDir)).to.include("bin");
      expect(existsSync(WorkDir)).to.equal(true);
      // the one layer of the imported image
      expect(LowerDir.split(":")).to.have.length(1);
      expect(readdirSync(LowerDir)).to.include("bin");

      const base = JSON.parse((await call(d.socket, "GET", "/v1.41/images/busybox/json")).body);
      expect(base.GraphDriver.Data).to.deep.equal({ UpperDir: LowerDir });
      await cli("commit", "gdrun", "gdtwo");
      const two = JSON.parse((await call(d.socket, "GET", "/v1.41/images/gdtwo/json")).body);
      expect(two.GraphDriver.Data.LowerDir).to.equal(LowerDir);
      expect(readFileSync(join(two.GraphDriver.Data.UpperDir, "marker"), "utf8")).to.equal("here\n");
    });

    it("leaves a listed container's sizes out when they are 0 (Go's omitempty), and shows them in inspect", async function () {
      await cli("create", "--name", "gdidle", "--network", "none", "busybox", "true");
      const list = JSON.parse((await call(d.socket, "GET", "/v1.41/containers/json?all=1&size=1&filters=%7B%22name%22%3A%5B%22gdidle%22%5D%7D")).body);
      expect(list).to.have.length(1);
      expect(list[0]).to.not.have.property("SizeRw");
      expect(list[0].SizeRootFs).to.be.above(0);
      const c = JSON.parse((await call(d.socket, "GET", "/v1.41/containers/gdidle/json?size=1")).body);
      expect(c.SizeRw).to.equal(0);
    });
  });

  describe("POST /images/load with what is not an image archive", function () {
    it("answers 200 with the archive's fault as the stream's error line (as Docker's daemon does) for random bytes, a gzip of garbage, a cut archive, an empty body or a tar without a manifest", async function () {
      const save = await dockerSaveTar([{ image: imageOf([await makeTar([{ name: "f", data: "x" }])]), tags: ["cut:latest"] }]);
      const cases: [string, Buffer, string][] = [
        ["random bytes", randomBytes(4096), "invalid image archive: invalid tar header"],
        ["a gzip of garbage", gzipSync(randomBytes(4096)), "invalid image archive: invalid tar header"],
        ["a gzip of a few bytes", gzipSync(Buffer.from("hello")), "invalid image archive: unexpected EOF"],
        ["a tar cut short", save.subarray(0, 700), "invalid image archive: unexpected EOF"],
        ["an empty body", Buffer.alloc(0), "invalid image archive: neither manifest.json nor index.json found: not a docker save archive nor an OCI image layout"],
        ["a tar without a manifest", await makeTar([{ name: "hello", data: "hi" }]), "invalid image archive: neither manifest.json nor index.json found: not a docker save archive nor an OCI image layout"],
      ];
      for (const [what, body, message] of cases) {
        const r = await call(d.socket, "POST", "/v1.41/images/load", body);
        expect(r, what).to.deep.equal({ status: 200, type: "application/json", body: `${JSON.stringify({ errorDetail: { message }, error: message })}\n` });
      }
      const cut = await call(d.socket, "POST", "/images/load", gzipSync(save).subarray(0, 200));
      expect(cut.status).to.equal(200);
      expect(JSON.parse(cut.body).error).to.match(/^invalid image archive: corrupt compressed stream: /);
      // the Docker CLI prints the stream's error line as it is, and fails
      const r = await docker(host, ["load"], {}, { input: randomBytes(2048) });
      expect(r).to.deep.include({ code: 1, stderr: "invalid image archive: invalid tar header\n" });
    });

    it("loads a gzip-compressed docker save archive, as Docker's daemon does, with Env null in its configuration", async function () {
      const image = imageOf([await makeTar([{ name: "etc/", type: "directory" }, { name: "etc/gz", data: "zipped" }])], {
        config: { Cmd: null, Env: null, Entrypoint: null, Labels: null, Volumes: null },
      });
      const r = await call(d.socket, "POST", "/images/load", gzipSync(await dockerSaveTar([{ image, tags: ["zipped:latest"] }])));
      expect(r.status, r.body).to.equal(200);
      expect(r.body).to.equal('{"stream":"Loaded image: zipped:latest\\n"}\n');
      await cli("rmi", "zipped");
    });
  });

  describe("Config.Env entries without =", function () {
    afterEach(async function () {
      await docker(host, ["rm", "-f", "bare"]);
    });

    it("keeps them in Config.Env as given (before the image's), and unsets those names in the process", async function () {
      const created = await call(d.socket, "POST", "/v1.41/containers/create?name=bare", Buffer.from(JSON.stringify({ Image: "withenv", Cmd: ["env"], Env: ["FOO", "X", "BAR=1", "HOSTNAME", "Z="], HostConfig: { NetworkMode: "none" } })), "application/json");
      expect(created.status, created.body).to.equal(201);
      const [info] = JSON.parse(await cli("inspect", "bare"));
      expect(info.Config.Env).to.deep.equal(["FOO", "X", "BAR=1", "HOSTNAME", "Z=", "Y=2"]);
      // dockerd's container printed these: the image's X and the default HOSTNAME unset (HOME is
      // runc's, from the image's /etc/passwd)
      expect(await cli("start", "-a", "bare")).to.equal("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nBAR=1\nZ=\nY=2\nHOME=/root\n");
    });

    it("takes the CLI's -e NAME from its environment when set there, and keeps it bare when not", async function () {
      const r = await docker(host, ["run", "--rm", "--network", "none", "-h", "box", "-e", "FOO", "-e", "UNSET_HERE", "withenv", "env"], { FOO: "fromcli", UNSET_HERE: undefined });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nHOSTNAME=box\nFOO=fromcli\nX=1\nY=2\nHOME=/root\n");
      await cli("create", "--name", "bare", "-e", "UNSET_HERE", "-e", "X", "withenv", "true");
      // the request's entries first, then the image's it leaves (the Docker CLI's order of the two -e names varies from run to run)
      const env = JSON.parse(await cli("inspect", "bare"))[0].Config.Env as string[];
      expect([...env.slice(0, 2)].sort()).to.deep.equal(["UNSET_HERE", "X"]);
      expect(env.slice(2)).to.deep.equal(["Y=2"]);
    });
  });

  describe("HostConfig as Go decodes it", function () {
    afterEach(async function () {
      await docker(host, ["rm", "-f", "gokeys"]);
    });

    it("takes a field's name in another case (docker-py's CPURealtimeRuntime) and shows the fields left out at their zero values", async function () {
      const body = { Image: "busybox", Cmd: ["true"], HostConfig: { NetworkMode: "none", CPURealtimePeriod: 150000, CPURealtimeRuntime: 40000, Mounts: [{ Type: "tmpfs", Target: "/t", Source: null, ReadOnly: null }] } };
      const created = await call(d.socket, "POST", "/v1.41/containers/create?name=gokeys", Buffer.from(JSON.stringify(body)), "application/json");
      // the real-time budget is refused at create only by a kernel without the real-time scheduler, as Docker 28's daemon refuses it
      if (created.status === 400 && created.body.includes("CPU real-time scheduler")) this.skip();
      expect(created.status, created.body).to.equal(201);
      const [info] = JSON.parse(await cli("inspect", "gokeys"));
      expect(info.HostConfig).to.include({ CpuRealtimePeriod: 150000, CpuRealtimeRuntime: 40000, PidMode: "", UsernsMode: "", Privileged: false, ContainerIDFile: "" });
      expect(info.HostConfig).to.not.have.any.keys("CPURealtimePeriod", "CPURealtimeRuntime");
      expect(info.HostConfig.Mounts).to.have.length(1);
      expect(info.HostConfig.Mounts[0]).to.include({ Type: "tmpfs", Target: "/t" });
    });
  });

  describe("bodies and references in Docker 28's words (dockerd 20.10 words them otherwise, some with a 500)", function () {
    it("refuses a JSON body under another Content-Type, and takes a bodyless request without one", async () => {
      const create = (type: string) => call(d.socket, "POST", "/v1.51/containers/create", Buffer.from('{"Image":"busybox"}'), type);
      for (const [type, message] of [
        ["text/plain", "unsupported Content-Type header (text/plain): must be 'application/json'"],
        ["application/x-www-form-urlencoded", "unsupported Content-Type header (application/x-www-form-urlencoded): must be 'application/json'"],
      ]) {
        const r = await create(type);
        expect(r.status, type).to.equal(400);
        expect(JSON.parse(r.body).message).to.equal(message);
      }
      expect((await create("application/json; charset=utf-8")).status).to.equal(201);
      // an exec start with no body and no type is fine (Docker's CheckForJSON)
      const id = JSON.parse((await create("application/json")).body).Id as string;
      const update = await new Promise<number>((resolve, reject) => {
        const req = request({ socketPath: d.socket, method: "POST", path: `/v1.51/containers/${id}/update` }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on("error", reject);
        req.end();
      });
      expect(update).to.equal(200);
    });

    it("records a run the OOM killer ended (State.OOMKilled, an oom event before die); the next start clears it", async () => {
      const since = Math.floor(Date.now() / 1000);
      // no swap to reach past the limit: memory and memory-swap alike
      // the first run wants a 32 MiB buffer (once: bounded whatever happens); the next ones sleep
      const command = "if [ -e /ran ]; then exec sleep 60; fi; touch /ran; dd if=/dev/zero of=/dev/null bs=32M count=1";
      const r = await docker(host, ["run", "--name", "oomed", "--network", "none", "--memory", "8m", "--memory-swap", "8m", "busybox", "sh", "-c", command]);
      expect(r.code).to.equal(137);
      expect((await cli("inspect", "-f", "{{.State.OOMKilled}} {{.State.ExitCode}}", "oomed")).trim()).to.equal("true 137");
      const events = await cli("events", "--since", String(since), "--until", String(Math.floor(Date.now() / 1000) + 1), "--filter", "container=oomed", "--filter", "event=oom", "--filter", "event=die", "--format", "{{.Action}}");
      expect(events.trim().split("\n")).to.deep.equal(["oom", "die"]);
      // the next run goes on (it sleeps): its start cleared the mark
      await cli("start", "oomed");
      expect((await cli("inspect", "-f", "{{.State.OOMKilled}} {{.State.Running}}", "oomed")).trim()).to.equal("false true");
      await cli("rm", "-f", "oomed");
    });

    it("lists the default runtime among the version's components, as Docker lists runc: its binary's name, what its --version says", async () => {
      const body = JSON.parse((await call(d.socket, "GET", "/v1.51/version")).body) as { Components: { Name: string; Version: string; Details?: { GitCommit?: string } }[] };
      const said = execFileSync("runc", ["--version"], { encoding: "utf8" });
      // then docker-init, when an init binary is there (test/system-moby-expectations.test.ts)
      expect(body.Components.map((c) => c.Name).slice(0, 2)).to.deep.equal(["Engine", "runc"]);
      expect(body.Components[1]).to.deep.include({ Version: /version\s+(\S+)/.exec(said)![1] });
      expect(body.Components[1].Details?.GitCommit).to.equal(/^commit:\s*(\S+)/m.exec(said)![1]);
      // /info's commits, as Docker lists containerd's, runc's and docker-init's (`docker info` prints them)
      const info = JSON.parse((await call(d.socket, "GET", "/v1.51/info")).body) as Record<string, { ID: string }>;
      expect(info.RuncCommit).to.deep.equal({ ID: /^commit:\s*(\S+)/m.exec(said)![1] });
      expect(info.ContainerdCommit.ID).to.match(/^[0-9a-f]{7,40}$|^unknown$/);
      // (InitCommit: test/system-moby-expectations.test.ts)
    });

    it("records the daemon's defaults in a container's HostConfig at create, as Docker's daemon does", async () => {
      const create = async (HostConfig: Record<string, unknown>) => {
        const r = await call(d.socket, "POST", "/v1.51/containers/create", Buffer.from(JSON.stringify({ Image: "busybox", HostConfig })), "application/json");
        const id = JSON.parse(r.body).Id as string;
        const info = JSON.parse((await call(d.socket, "GET", `/v1.51/containers/${id}/json`)).body);
        await call(d.socket, "DELETE", `/v1.51/containers/${id}?force=1`);
        return info.HostConfig as Record<string, unknown>;
      };
      const plain = await create({});
      // the cgroup namespace mode Docker's daemon defaults to on this host: private on cgroup v2, host on v1
      const cgroupns = existsSync("/sys/fs/cgroup/cgroup.controllers") ? "private" : "host";
      expect(plain).to.include({ ShmSize: 64 * 1024 * 1024, IpcMode: "private", CgroupnsMode: cgroupns, Runtime: "ocirun" });
      expect(plain.MaskedPaths).to.include("/proc/kcore");
      expect(plain.ReadonlyPaths).to.include("/proc/sys");
      // what the request gave is kept; a privileged container has no masked paths to record
      const given = await create({ ShmSize: 1048576, IpcMode: "shareable", MaskedPaths: [], Privileged: false });
      expect(given).to.deep.include({ ShmSize: 1048576, IpcMode: "shareable", MaskedPaths: [] });
      const privileged = await create({ Privileged: true });
      expect(privileged).to.include({ MaskedPaths: null, ReadonlyPaths: null });
    });

    it("names the container whose network a start cannot join, and its state, as Docker 28 does", async () => {
      await cli("create", "--name", "netowner", "busybox", "true");
      try {
        const r = await docker(host, ["run", "--rm", "--network", "container:netowner", "busybox", "true"]);
        expect(r.code).to.equal(125);
        expect(r.stderr).to.include("cannot join network namespace of a non running container: container netowner is created");
      } finally {
        await docker(host, ["rm", "-f", "netowner"]);
      }
    });

    it("refuses a wait condition that is none of Docker's, in its words (20.10 took it as not-running)", async () => {
      const id = JSON.parse((await call(d.socket, "POST", "/v1.51/containers/create", Buffer.from('{"Image":"busybox"}'), "application/json")).body).Id as string;
      try {
        const r = await call(d.socket, "POST", `/v1.51/containers/${id}/wait?condition=bogus`, Buffer.alloc(0), "application/json");
        expect(r.status).to.equal(400);
        expect(JSON.parse(r.body).message).to.equal('invalid condition: "bogus"');
      } finally {
        await call(d.socket, "DELETE", `/v1.51/containers/${id}?force=1`);
      }
    });

    it("words a bad reference, a bad tag and capitals as Docker's reference package does", async () => {
      const post = (path: string) => call(d.socket, "POST", path, Buffer.alloc(0), "application/json");
      const answers = [
        [await post("/v1.51/images/busybox/tag?repo=UPPER"), "invalid reference format: repository name (library/UPPER) must be lowercase"],
        [await post("/v1.51/images/busybox/tag?repo=me/App"), "invalid reference format: repository name (me/App) must be lowercase"],
        [await post("/v1.51/images/busybox/tag?repo=ok&tag=bad:tag"), "invalid tag format"],
        [await post("/v1.51/images/busybox/tag?repo=a:b:c"), "invalid reference format"],
        [await post("/v1.51/images/create?fromImage=busybox&tag=bad:tag"), "invalid tag format"],
      ] as const;
      for (const [r, message] of answers) {
        expect(r.status, message).to.equal(400);
        expect(JSON.parse(r.body).message).to.equal(message);
      }
    });
  });
});
