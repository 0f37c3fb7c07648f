/**
 * The `none` log driver through a real engined, with the Docker CLI and dockerode, and the
 * json-file option rules as Docker 20.10 answers them (names at create, values at start).
 * Every expected message and status here was measured with dockerd 20.10.
 */
import "./helpers/root-hooks.js";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { expect } from "chai";
import Docker from "dockerode";
import { createNoneLogDriver } from "../plugins/log-none/none.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

describe("log drivers none and json-file's options, through engined", function () {
  this.timeout(60_000);
  let d: TestDaemon;
  let host: string;
  let client: Docker;
  const api = (method: string, path: string, body?: unknown) => httpRequest({ socketPath: d.socket }, method, `/v1.41${path}`, body);

  before(async function () {
    d = await startEngined();
    host = `unix://${d.socket}`;
    client = new Docker({ socketPath: d.socket });
    const r = await docker(host, ["import", "--change", 'CMD ["sh"]', writeFixture(makeTempDir(), "rootfs.tar", await busyboxRootfs()), "busybox"]);
    expect(r.code, r.stderr).to.equal(0);
  });
  afterEach(async function () {
    const list = await client.listContainers({ all: true }).catch(() => []);
    await Promise.all(list.map((c) => client.getContainer(c.Id).remove({ force: true }).catch(() => {})));
  });
  after(async function () {
    await d?.stop();
  });

  describe("none", () => {
    it("docker run without -d shows the output (attach does not need the driver); docker logs is Docker's error", async () => {
      const run = await docker(host, ["run", "--name", "quiet", "--log-driver", "none", "busybox", "sh", "-c", "echo hello; echo err >&2; exit 3"]);
      expect([run.code, run.stdout, run.stderr]).to.deep.equal([3, "hello\n", "err\n"]);
      const logs = await docker(host, ["logs", "quiet"]);
      expect(logs.code).to.equal(1);
      expect(logs.stderr.trim()).to.equal("Error response from daemon: configured logging driver does not support reading");
      const res = await api("GET", "/containers/quiet/logs?stdout=1&stderr=1");
      expect(res.status).to.equal(501);
      expect(JSON.parse(res.body)).to.deep.equal({ message: "configured logging driver does not support reading" });
      // Nothing stored: the container's folder has no log file.
      const id = (await docker(host, ["inspect", "-f", "{{.Id}}", "quiet"])).stdout.trim();
      const files = readdirSync(join(d.dir, "data", "containers", id));
      expect(files.filter((f) => /log/.test(f))).to.deep.equal([]);
      expect(existsSync(join(d.dir, "data", "containers", id, `${id}-json.log`))).to.equal(false);
    });

    it("dockerode: attach before start gets both streams", async () => {
      const c = await client.createContainer({ Image: "busybox", Cmd: ["sh", "-c", "echo out; echo err >&2"], HostConfig: { LogConfig: { Type: "none", Config: {} } } });
      const stream = await c.attach({ stream: true, stdout: true, stderr: true });
      const out = new PassThrough();
      const err = new PassThrough();
      let so = "";
      let se = "";
      out.on("data", (x: Buffer) => (so += x.toString()));
      err.on("data", (x: Buffer) => (se += x.toString()));
      c.modem.demuxStream(stream, out, err);
      const ended = new Promise<void>((resolve) => stream.once("end", resolve));
      await c.start();
      expect((await c.wait()).StatusCode).to.equal(0);
      await ended;
      expect([so, se]).to.deep.equal(["out\n", "err\n"]);
    });

    it("takes options through the API unchecked, as Docker's daemon (its CLI refuses them itself)", async () => {
      const res = await api("POST", "/containers/create", { Image: "busybox", Cmd: ["true"], HostConfig: { LogConfig: { Type: "none", Config: { "max-size": "1m", foo: "bar" } } } });
      expect(res.status, res.body).to.equal(201);
      const id = JSON.parse(res.body).Id as string;
      expect((await api("POST", `/containers/${id}/start`)).status).to.equal(204);
      expect(JSON.parse((await api("POST", `/containers/${id}/wait`)).body).StatusCode).to.equal(0);
      const cli = await docker(host, ["run", "--log-driver", "none", "--log-opt", "max-size=1m", "busybox", "true"]);
      expect(cli.code).to.equal(125);
      expect(cli.stderr).to.contain("invalid logging opts for driver none");
      expect(createNoneLogDriver().capabilities).to.deep.equal([]);
    });
  });

  describe("json-file options", () => {
    it("runs with max-file without max-size, as Docker does", async () => {
      const run = await docker(host, ["run", "--rm", "--log-opt", "max-file=3", "busybox", "echo", "ok"]);
      expect([run.code, run.stdout, run.stderr]).to.deep.equal([0, "ok\n", ""]);
    });

    it("creates with a bad value (201) and fails the start with Docker's 500; the container stays created with 128", async () => {
      const res = await api("POST", "/containers/create", { Image: "busybox", Cmd: ["true"], HostConfig: { LogConfig: { Type: "json-file", Config: { "max-size": "abc" } } } });
      expect(res.status, res.body).to.equal(201);
      const id = JSON.parse(res.body).Id as string;
      const start = await api("POST", `/containers/${id}/start`);
      expect(start.status).to.equal(500);
      expect(JSON.parse(start.body)).to.deep.equal({ message: "failed to initialize logging driver: invalid size: 'abc'" });
      const state = JSON.parse((await api("GET", `/containers/${id}/json`)).body).State;
      expect(state).to.include({ Status: "created", ExitCode: 128, Error: "failed to initialize logging driver: invalid size: 'abc'" });
    });

    it("refuses an unknown option at create with Docker's 400 and words", async () => {
      const res = await api("POST", "/containers/create", { Image: "busybox", Cmd: ["true"], HostConfig: { LogConfig: { Type: "json-file", Config: { foo: "1" } } } });
      expect(res.status).to.equal(400);
      expect(JSON.parse(res.body)).to.deep.equal({ message: "unknown log opt 'foo' for json-file log driver" });
    });

    const cases: [string[], string][] = [
      [["--log-opt", "compress=true"], "failed to initialize logging driver: compress cannot be true when max-file is less than 2 or max-size is not set"],
      [["--log-opt", "max-file=x"], 'failed to initialize logging driver: strconv.Atoi: parsing "x": invalid syntax'],
      [["--log-opt", "max-size=0"], "failed to initialize logging driver: max-size must be a positive number"],
      [["--log-opt", "tag={{.ID"], "failed to initialize logging driver: template: log-tag:1: unclosed action"],
      [["--log-opt", "cache-disabled=x"], "invalid value for option cache-disabled: x"],
      [["--log-opt", "mode=bogus"], "logger: logging mode not supported: bogus"],
    ];
    for (const [args, message] of cases) {
      it(`docker run ${args.join(" ")}: ${message}`, async () => {
        const run = await docker(host, ["run", "--rm", ...args, "busybox", "true"]);
        expect(run.code).to.equal(125);
        expect(run.stderr.split("\n")[0]).to.equal(`docker: Error response from daemon: ${message}`);
      });
    }
  });
});
