/**
 * Running containers through SDKs and plain HTTP: dockerode (attach before start, demux, wait
 * conditions, logs, list, remove), the API's status codes and stream shapes (204/304/409, the
 * wait headers sent at once, 8-byte frames, filters, query booleans, 404s and 400s), and the
 * Docker SDK for Python when it is installed.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import Docker from "dockerode";
import { request } from "node:http";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, ROOT, runCommand, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Frame {
  stream: number;
  data: string;
}

/** Splits Docker's multiplexed stream into frames; fails on a short or bad header. */
function parseFrames(buf: Buffer): Frame[] {
  const out: Frame[] = [];
  let at = 0;
  while (at < buf.length) {
    expect(buf.length - at, "a whole 8-byte header").to.be.at.least(8);
    const stream = buf[at];
    expect([0, 1, 2], `stream byte ${stream}`).to.include(stream);
    expect(buf.subarray(at + 1, at + 4).equals(Buffer.alloc(3)), "three zero bytes").to.equal(true);
    const len = buf.readUInt32BE(at + 4);
    expect(buf.length - at - 8, "a whole frame").to.be.at.least(len);
    out.push({ stream, data: buf.subarray(at + 8, at + 8 + len).toString() });
    at += 8 + len;
  }
  return out;
}

/** A raw HTTP request over the socket, with the body as bytes. */
function rawBytes(socketPath: string, method: string, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, timeout: 20_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}

describe("container run (dockerode, python3-docker)", function () {
  this.timeout(60_000);

  let d: TestDaemon;
  let client: Docker;
  const sock = () => ({ socketPath: d.socket });
  const api = (method: string, path: string, body?: unknown) => httpRequest(sock(), method, `/v1.51${path}`, body);
  const create = async (cmd: string[], extra: Record<string, unknown> = {}) => {
    const r = await api("POST", "/containers/create", { Image: "busybox", Cmd: cmd, ...extra });
    expect(r.status, r.body).to.equal(201);
    return JSON.parse(r.body).Id as string;
  };
  const state = async (id: string) => JSON.parse((await api("GET", `/containers/${id}/json`)).body).State;
  const waitExit = async (id: string) => {
    const r = await api("POST", `/containers/${id}/wait`);
    expect(r.status).to.equal(200);
    return JSON.parse(r.body).StatusCode as number;
  };

  before(async function () {
    const dir = makeTempDir();
    d = await startEngined();
    client = new Docker({ socketPath: d.socket });
    const r = await docker(`unix://${d.socket}`, ["import", "--change", 'CMD ["sh"]', writeFixture(dir, "rootfs.tar", await busyboxRootfs()), "busybox"]);
    expect(r.code, r.stderr).to.equal(0);
  });
  afterEach(async function () {
    if (!d) return;
    const list = await client.listContainers({ all: true }).catch(() => []);
    await Promise.all(list.map((c) => client.getContainer(c.Id).remove({ force: true }).catch(() => {})));
  });
  after(async function () {
    await d?.stop();
  });

  describe("dockerode", function () {
    it("attach before start, demux, start, wait {StatusCode: 5}, logs, list, remove", async function () {
      const container = await client.createContainer({ Image: "busybox", Cmd: ["sh", "-c", "echo hi; exit 5"] });
      const stream = await container.attach({ stream: true, stdout: true, stderr: true });
      const out = new PassThrough();
      const err = new PassThrough();
      let stdout = "";
      let stderr = "";
      out.on("data", (c: Buffer) => (stdout += c.toString()));
      err.on("data", (c: Buffer) => (stderr += c.toString()));
      container.modem.demuxStream(stream, out, err);
      const ended = new Promise<void>((resolve) => {
        stream.once("end", resolve);
        stream.once("close", resolve);
      });
      await container.start();
      const result = await container.wait();
      expect(result.StatusCode).to.equal(5);
      await Promise.race([ended, sleep(5000)]);
      expect(stdout).to.equal("hi\n");
      expect(stderr).to.equal("");

      const logs = (await container.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
      expect(Buffer.isBuffer(logs)).to.equal(true);
      expect(parseFrames(logs)).to.deep.equal([{ stream: 1, data: "hi\n" }]);

      const list = await client.listContainers({ all: true });
      const item = list.find((c) => c.Id === container.id);
      expect(item, "the container in the list").to.not.equal(undefined);
      expect(item!.State).to.equal("exited");
      expect(item!.Status).to.match(/^Exited \(5\) /);

      const info = await container.inspect();
      expect(info.State.ExitCode).to.equal(5);
      await container.remove({ force: true });
      expect((await client.listContainers({ all: true })).map((c) => c.Id)).to.not.include(container.id);
    });

    it("wait with condition next-exit before start, and removed with AutoRemove", async function () {
      const a = await client.createContainer({ Image: "busybox", Cmd: ["sh", "-c", "exit 9"] });
      const nextExit = a.wait({ condition: "next-exit" });
      await sleep(300); // the wait request is in before the start
      await a.start();
      expect((await nextExit).StatusCode).to.equal(9);

      const b = await client.createContainer({ Image: "busybox", Cmd: ["sh", "-c", "sleep 0.3; exit 4"], HostConfig: { AutoRemove: true } });
      const removed = b.wait({ condition: "removed" });
      await sleep(300);
      await b.start();
      expect((await removed).StatusCode).to.equal(4);
      const gone = await api("GET", `/containers/${b.id}/json`);
      expect(gone.status).to.equal(404);
    });

    it("stop, restart and kill with a signal through dockerode", async function () {
      const c = await client.createContainer({ Image: "busybox", Cmd: ["sleep", "60"] });
      await c.start();
      expect((await c.inspect()).State.Running).to.equal(true);
      await c.stop({ t: 0 });
      expect((await c.inspect()).State.ExitCode).to.equal(137);
      await c.restart({ t: 0 });
      expect((await c.inspect()).State.Running).to.equal(true);
      await c.kill({ signal: "SIGKILL" });
      expect((await c.wait()).StatusCode).to.equal(137);
      await c.remove();
    });

    it("kill (no signal, or SIGKILL) answers once the container has stopped: remove right after it succeeds, 20 times; another signal answers at once", async function () {
      this.timeout(120_000);
      for (let i = 0; i < 20; i++) {
        const c = await client.createContainer({ Image: "busybox", Cmd: ["sleep", "60"], HostConfig: { NetworkMode: "none" } });
        await c.start();
        await c.kill(i % 2 ? { signal: "SIGKILL" } : {});
        expect((await c.inspect()).State, `inspect right after kill ${i}`).to.include({ Running: false, Status: "exited", ExitCode: 137 });
        await c.remove(); // a 409 rejects
      }
      // A signal other than KILL is only sent: sleep, as the container's init, ignores TERM and runs on (as with dockerd).
      const c = await client.createContainer({ Image: "busybox", Cmd: ["sleep", "60"], HostConfig: { NetworkMode: "none" } });
      await c.start();
      await c.kill({ signal: "SIGTERM" });
      expect((await c.inspect()).State.Running).to.equal(true);
      const refused = await api("DELETE", `/containers/${c.id}`);
      expect(refused.status).to.equal(409);
    });
  });

  describe("HTTP details", function () {
    it("start twice: 204 then 304; stop of a stopped one: 304; kill of a stopped one: 409", async function () {
      const id = await create(["sleep", "60"]);
      expect((await api("POST", `/containers/${id}/start`)).status).to.equal(204);
      const again = await api("POST", `/containers/${id}/start`);
      expect(again.status).to.equal(304);
      expect(again.body).to.equal("");
      expect((await api("POST", `/containers/${id}/stop?t=0`)).status).to.equal(204);
      expect((await api("POST", `/containers/${id}/stop`)).status).to.equal(304);
      const kill = await api("POST", `/containers/${id}/kill`);
      expect(kill.status).to.equal(409);
      expect(JSON.parse(kill.body).message).to.equal(`Cannot kill container: ${id}: Container ${id} is not running`);
      // Stop of a created (never started) container: 304 too.
      const fresh = await create(["true"]);
      expect((await api("POST", `/containers/${fresh}/stop`)).status).to.equal(304);
    });

    it("DELETE of a running container: 409 with Docker's message; force=1 removes it", async function () {
      const id = await create(["sleep", "60"]);
      expect((await api("POST", `/containers/${id}/start`)).status).to.equal(204);
      const refused = await api("DELETE", `/containers/${id}`);
      expect(refused.status).to.equal(409);
      expect(JSON.parse(refused.body).message).to.match(/^cannot remove container "\/[^"]+": container is running: stop the container before removing or force remove$/);
      expect((await api("DELETE", `/containers/${id}?force=1`)).status).to.equal(204);
      expect((await api("GET", `/containers/${id}/json`)).status).to.equal(404);
    });

    it("wait sends its headers at once, and the body when the container exits", async function () {
      const id = await create(["sleep", "2"]);
      expect((await api("POST", `/containers/${id}/start`)).status).to.equal(204);
      const t0 = Date.now();
      const result = await new Promise<{ headersAt: number; runningAtHeaders: boolean; status: number; body: string; bodyAt: number; type: unknown }>((resolve, reject) => {
        const req = request({ socketPath: d.socket, method: "POST", path: `/v1.51/containers/${id}/wait`, timeout: 20_000 }, (res) => {
          const headersAt = Date.now() - t0;
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => (body += c));
          // Whether the container still runs when the headers are in.
          const running = state(id).then((s) => s.Running as boolean);
          res.on("end", () => {
            const bodyAt = Date.now() - t0;
            running.then((runningAtHeaders) => resolve({ headersAt, runningAtHeaders, status: res.statusCode ?? 0, body, bodyAt, type: res.headers["content-type"] }), reject);
          });
        });
        req.on("timeout", () => req.destroy(new Error("timed out")));
        req.on("error", reject);
        req.end();
      });
      expect(result.status).to.equal(200);
      expect(result.type).to.match(/^application\/json/);
      expect(result.runningAtHeaders, "the container ran when the headers came").to.equal(true);
      expect(result.headersAt).to.be.below(1000);
      expect(result.bodyAt).to.be.at.least(1000);
      const body = JSON.parse(result.body);
      expect(body.StatusCode).to.equal(0);
      expect(body.Error ?? null).to.equal(null);
    });

    it("logs without a TTY: 8-byte frames, one per line, stderr on stream 2", async function () {
      // Pauses between the writes: stdout and stderr are separate pipes, so only time orders them.
      const id = await create(["sh", "-c", "echo a; sleep 0.2; echo b >&2; sleep 0.2; echo c; printf 'no newline'"]);
      expect((await api("POST", `/containers/${id}/start`)).status).to.equal(204);
      expect(await waitExit(id)).to.equal(0);
      const r = await rawBytes(d.socket, "GET", `/v1.51/containers/${id}/logs?stdout=1&stderr=1`);
      expect(r.status).to.equal(200);
      expect(r.headers["content-type"]).to.equal("application/vnd.docker.multiplexed-stream");
      expect(parseFrames(r.body)).to.deep.equal([
        { stream: 1, data: "a\n" },
        { stream: 2, data: "b\n" },
        { stream: 1, data: "c\n" },
        { stream: 1, data: "no newline" },
      ]);
      // An older API version: the raw-stream content type, same frames.
      const old = await rawBytes(d.socket, "GET", `/v1.41/containers/${id}/logs?stdout=1&stderr=1`);
      expect(old.headers["content-type"]).to.equal("application/vnd.docker.raw-stream");
      expect(parseFrames(old.body)).to.have.length(4);

      // Query booleans: 0, no, false are off; unknown parameters are ignored.
      for (const off of ["0", "no", "false", "NO", "False"]) {
        const only = await rawBytes(d.socket, "GET", `/v1.51/containers/${id}/logs?stdout=${off}&stderr=1&whatever=7`);
        expect(only.status, `stdout=${off}`).to.equal(200);
        expect(parseFrames(only.body), `stdout=${off}`).to.deep.equal([{ stream: 2, data: "b\n" }]);
      }
      const outOnly = await rawBytes(d.socket, "GET", `/v1.51/containers/${id}/logs?stdout=true&stderr=false`);
      expect(parseFrames(outOnly.body).map((f) => f.stream)).to.deep.equal([1, 1, 1]);
      // Neither stream: 400.
      const none = await api("GET", `/containers/${id}/logs?stdout=0&stderr=0`);
      expect(none.status).to.equal(400);
      expect(JSON.parse(none.body).message).to.equal("Bad parameters: you must choose at least one stream");
      // tail=1
      const tail = await rawBytes(d.socket, "GET", `/v1.51/containers/${id}/logs?stdout=1&stderr=1&tail=1`);
      expect(parseFrames(tail.body)).to.deep.equal([{ stream: 1, data: "no newline" }]);
    });

    it("inspect fills HostConfig.LogConfig with the daemon's log driver when the request had none", async function () {
      // Docker always shows it; the Docker SDK for Python reads HostConfig.LogConfig.Type in containers.run().
      const id = await create(["true"]);
      const info = JSON.parse((await api("GET", `/containers/${id}/json`)).body);
      expect(info.HostConfig.LogConfig).to.deep.equal({ Type: "json-file", Config: {} });
      const withOpts = await create(["true"], { HostConfig: { LogConfig: { Type: "json-file", Config: { "max-size": "1m" } } } });
      const info2 = JSON.parse((await api("GET", `/containers/${withOpts}/json`)).body);
      expect(info2.HostConfig.LogConfig).to.deep.equal({ Type: "json-file", Config: { "max-size": "1m" } });
    });

    it("lists by status in both filter forms", async function () {
      const exited = await create(["true"]);
      expect((await api("POST", `/containers/${exited}/start`)).status).to.equal(204);
      expect(await waitExit(exited)).to.equal(0);
      const running = await create(["sleep", "60"]);
      expect((await api("POST", `/containers/${running}/start`)).status).to.equal(204);
      const created = await create(["true"]);

      const ids = async (filters: unknown, all = true) => {
        const r = await api("GET", `/containers/json?all=${all ? 1 : 0}&filters=${encodeURIComponent(JSON.stringify(filters))}`);
        expect(r.status, r.body).to.equal(200);
        return (JSON.parse(r.body) as { Id: string }[]).map((c) => c.Id).sort();
      };
      expect(await ids({ status: ["exited"] })).to.deep.equal([exited]);
      expect(await ids({ status: { exited: true } })).to.deep.equal([exited]);
      expect(await ids({ status: ["running"] })).to.deep.equal([running]);
      expect(await ids({ status: ["created"] })).to.deep.equal([created]);
      expect(await ids({ status: ["exited", "created"] })).to.deep.equal([exited, created].sort());
      // Without all, only the running ones are listed.
      const plain = JSON.parse((await api("GET", "/containers/json")).body) as { Id: string; State: string; Status: string }[];
      expect(plain.map((c) => c.Id)).to.deep.equal([running]);
      expect(plain[0].State).to.equal("running");
      expect(plain[0].Status).to.match(/^Up /);
    });

    it("unknown query parameters are ignored by start, stop, kill and wait", async function () {
      const id = await create(["sleep", "60"]);
      expect((await api("POST", `/containers/${id}/start?nonsense=1`)).status).to.equal(204);
      expect((await api("POST", `/containers/${id}/kill?signal=KILL&other=x`)).status).to.equal(204);
      const w = await api("POST", `/containers/${id}/wait?foo=bar`);
      expect(w.status).to.equal(200);
      expect(JSON.parse(w.body).StatusCode).to.equal(137);
      expect((await api("POST", `/containers/${id}/stop?zzz=1`)).status).to.equal(304);
    });

    it("404 'No such container' for start, stop, restart, kill (which says the kill failed), wait, logs, attach of a missing one", async function () {
      for (const [method, path] of [
        ["POST", "start"],
        ["POST", "stop"],
        ["POST", "restart"],
        ["POST", "kill"],
        ["POST", "wait"],
        ["GET", "logs?stdout=1"],
        ["POST", "attach?stream=1&stdout=1"],
      ]) {
        const r = await api(method, `/containers/nosuch/${path}`);
        expect(r.status, path).to.equal(404);
        // an attach is refused raw on the connection it took, as Docker's daemon writes it
        const message = path.startsWith("attach") ? r.body.replace(/\r\n$/, "") : JSON.parse(r.body).message;
        // Docker's daemon says that the kill failed (its router wraps the daemon's refusal)
        expect(message, path).to.equal(`${path === "kill" ? "Cannot kill container: nosuch: " : ""}No such container: nosuch`);
      }
    });

    it("a bad signal and a bad wait condition: 400", async function () {
      const id = await create(["sleep", "60"]);
      expect((await api("POST", `/containers/${id}/start`)).status).to.equal(204);
      const kill = await api("POST", `/containers/${id}/kill?signal=NOPE`);
      expect(kill.status).to.equal(400);
      expect(JSON.parse(kill.body).message).to.equal("Invalid signal: NOPE");
      const stop = await api("POST", `/containers/${id}/stop?signal=NOPE`);
      expect(stop.status).to.equal(400);
      const wait = await api("POST", `/containers/${id}/wait?condition=bogus`);
      expect(wait.status).to.equal(400);
      expect(JSON.parse(wait.body).message).to.include("bogus");
      // Still running after the refused requests.
      expect((await state(id)).Running).to.equal(true);
      // Signal names and numbers Docker takes.
      expect((await api("POST", `/containers/${id}/kill?signal=SIGKILL`)).status).to.equal(204);
      expect(await waitExit(id)).to.equal(137);
    });
  });

  describe("python3-docker", function () {
    it("containers.run returns the output; detach + wait() gives the code", async function () {
      const probe = await runCommand("python3", ["-c", "import docker"], { timeoutMs: 20_000 });
      if (probe.code !== 0) {
        this.skip(); // the Docker SDK for Python is not installed: `python3 -c 'import docker'` fails
      }
      const r = await runCommand("python3", [join(ROOT, "test/fixtures/python-docker-flow.py"), d.socket], { timeoutMs: 50_000 });
      expect(r.code, `${r.stderr}\n${r.stdout}`).to.equal(0);
      const out = JSON.parse(r.stdout.trim().split("\n").pop()!);
      expect(out, r.stderr).to.deep.equal({
        run_output: "hi\n",
        left_after_remove: 0,
        run_output_logconfig: "hi\n",
        detached: { id_len: 64, wait: 3, status: "exited", exit_code: 3, logs: "out\n" },
        container_error: { exit_status: 2, stderr: "bad\n" },
        killed: { status: "running", wait: 137 },
        not_found: true,
        left_at_end: 0,
      });
    });
  });
});
