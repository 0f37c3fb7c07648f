/**
 * Interactive containers against a real engined, with the Docker CLI: `docker run -it` as a
 * shell in a pseudo-terminal (typed input, the terminal's size, the exit code), detaching with
 * ctrl-p ctrl-q and `docker attach` again, stdin piped to `docker run -i`, the resize
 * endpoint, and `docker exec` in every form (plain, -i, -it, -d, -u, -w, -e).
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { inTerminal } from "./helpers/terminal.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

describe("interactive containers", function () {
  this.timeout(90_000);
  let d: TestDaemon;
  let host: string;
  let cliEnv: NodeJS.ProcessEnv;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const dockerInTerminal = (args: string[], size = { rows: 30, cols: 100 }) =>
    inTerminal(["docker", "-H", host, ...args], { ...size, env: cliEnv });

  before(async function () {
    const work = makeTempDir("engine-interactive-");
    cliEnv = { DOCKER_CONFIG: makeTempDir("engine-interactive-cli-"), DOCKER_HOST: undefined, DOCKER_CONTEXT: undefined };
    d = await startEngined();
    host = `unix://${d.socket}`;
    ok(await docker(host, ["import", writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
  });

  after(async () => d?.stop());

  it("docker run -it is a shell in a terminal of the client's size, and ends with its exit code", async () => {
    const t = dockerInTerminal(["run", "-it", "--rm", "--name", "shell-1", "busybox", "sh"]);
    try {
      await t.waitFor(/\/ # /);
      t.type("echo hello-$((6*7))\r");
      await t.waitFor(/hello-42/);
      t.type("stty size; tty\r");
      await t.waitFor(/30 100\r?\n.*\/dev\/(pts\/\d+|console)/s);
      t.type("exit 3\r");
      expect(await t.exited).to.equal(3);
    } finally {
      t.kill();
    }
  });

  it("ctrl-p ctrl-q detaches and leaves the container running; docker attach comes back to it", async () => {
    const first = dockerInTerminal(["run", "-it", "--name", "shell-2", "busybox", "sh"]);
    try {
      await first.waitFor(/\/ # /);
      first.type("echo before-detach\r");
      await first.waitFor(/before-detach\r?\n/);
      first.type("\x10\x11");
      expect(await first.exited).to.equal(0);
    } finally {
      first.kill();
    }
    expect(ok(await docker(host, ["inspect", "-f", "{{.State.Running}}", "shell-2"]), "inspect").trim()).to.equal("true");
    const again = dockerInTerminal(["attach", "shell-2"], { rows: 20, cols: 60 });
    try {
      again.type("echo attached-$((2+2)); stty size\r");
      await again.waitFor(/attached-4\r?\n20 60/);
      again.type("exit 0\r");
      expect(await again.exited).to.equal(0);
    } finally {
      again.kill();
    }
    expect(ok(await docker(host, ["inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", "shell-2"]), "inspect").trim()).to.equal("exited 0");
    ok(await docker(host, ["rm", "shell-2"]), "rm");
  });

  it("passes bytes through docker run -i, docker exec -i and their output as they are: ctrl-p ctrl-q and what is no UTF-8 too (TestRunReadAfterContainerExit)", async () => {
    const { spawnSync } = await import("node:child_process");
    // (the Docker CLI forwards SIGTERM to the container: only a KILL ends a stuck client)
    const raw = (args: string[], input?: Buffer) =>
      spawnSync("docker", ["-H", host, ...args], { input, timeout: 60_000, killSignal: "SIGKILL", maxBuffer: 64 << 20, env: { ...process.env, ...cliEnv, DOCKER_HOST: undefined } });
    // 300 KB of every byte value, the default detach keys among them many times
    const input = Buffer.alloc(300_000);
    for (let i = 0; i < input.length; i++) input[i] = (i * 7 + (i >> 8)) & 0xff;
    input.write("\x10\x11", 1000, "latin1");
    const through = raw(["run", "-i", "--rm", "busybox", "cat"], input);
    expect([through.status, through.stdout.length]).to.deep.equal([0, input.length]);
    expect(through.stdout.equals(input)).to.equal(true);
    ok(await docker(host, ["run", "-d", "--name", "bytes", "busybox", "sleep", "60"]), "run");
    const exec = raw(["exec", "-i", "bytes", "cat"], input);
    expect([exec.status, exec.stdout.equals(input)]).to.deep.equal([0, true]);
    const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x61, 0x0a]);
    const script = "printf '\\377\\376\\000\\001a\\n'";
    expect(raw(["exec", "bytes", "sh", "-c", script]).stdout.equals(bytes)).to.equal(true);
    expect(raw(["run", "--rm", "busybox", "sh", "-c", script]).stdout.equals(bytes)).to.equal(true);
    expect(raw(["run", "--rm", "-t", "busybox", "sh", "-c", script]).stdout.equals(Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x61, 0x0d, 0x0a]))).to.equal(true);
    ok(await docker(host, ["rm", "-f", "bytes"]), "rm");
  });

  it("stdin piped to docker run -i reaches the process, and its end closes the container's stdin", async () => {
    const r = await docker(host, ["run", "-i", "--rm", "busybox", "sh", "-c", "wc -l; echo done"], {}, { input: "one\ntwo\nthree\n" });
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout.trim().split(/\s+/)).to.deep.equal(["3", "done"]);
  });

  it("resizes a running container's terminal, and refuses a bad size or a stopped container", async () => {
    const id = ok(await docker(host, ["run", "-dit", "busybox", "sh"]), "run -dit").trim();
    try {
      const resize = (q: string) => httpRequest({ socketPath: d.socket }, "POST", `/containers/${id}/resize?${q}`);
      expect((await resize("h=41&w=132")).status).to.equal(200);
      const r = await docker(host, ["exec", id, "stty", "-F", "/dev/console", "size"]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout.trim()).to.equal("41 132");
      // Docker 28's words (its router's Uint32Value, h read first), each a 400
      for (const [q, message] of [
        ["h=x&w=1", 'invalid resize height "x": invalid syntax'],
        ["w=1", 'invalid resize height "": invalid syntax'],
        ["h=1&w=not-a-number", 'invalid resize width "not-a-number": invalid syntax'],
        ["h=-100&w=1", 'invalid resize height "-100": value out of range'],
        ["h=4294967296&w=1", 'invalid resize height "4294967296": value out of range'],
        ["h=%2B5&w=1", 'invalid resize height "+5": invalid syntax'],
      ]) {
        const bad = await resize(q);
        expect([bad.status, JSON.parse(bad.body).message], q).to.deep.equal([400, message]);
      }
    } finally {
      ok(await docker(host, ["rm", "-f", id]), "rm -f");
    }
  });

  describe("exec", () => {
    let id: string;
    before(async () => {
      id = ok(await docker(host, ["run", "-d", "--name", "exec-target", "busybox", "sleep", "600"]), "run -d").trim();
    });
    after(async () => {
      await docker(host, ["rm", "-f", "exec-target"]);
    });

    it("runs a command with its output, exit code, user, working directory and environment", async () => {
      expect(ok(await docker(host, ["exec", "exec-target", "echo", "hi", "there"]), "exec")).to.equal("hi there\n");
      expect((await docker(host, ["exec", "exec-target", "sh", "-c", "echo out; echo err >&2; exit 5"])).code).to.equal(5);
      const both = await docker(host, ["exec", "exec-target", "sh", "-c", "echo out; echo err >&2"]);
      expect([both.stdout, both.stderr]).to.deep.equal(["out\n", "err\n"]);
      expect(ok(await docker(host, ["exec", "-u", "nobody", "-w", "/tmp", "-e", "GREETING=hej", "exec-target", "sh", "-c", "id -u; pwd; echo $GREETING"]), "exec -u -w -e"))
        .to.equal("65534\n/tmp\nhej\n");
      // As Docker's: the runtime's refusal on the stream, and 127 (a command not found) from the instance's exit code.
      const missing = await docker(host, ["exec", "exec-target", "no-such-command"]);
      expect(missing.code).to.equal(127);
      expect(missing.stdout + missing.stderr).to.match(/no-such-command.*(not found|no such file)/i);
    });

    it("gives stdin to docker exec -i, and runs docker exec -d in the background", async () => {
      const r = await docker(host, ["exec", "-i", "exec-target", "sh", "-c", "tr a-z A-Z"], {}, { input: "shout\n" });
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal("SHOUT\n");
      ok(await docker(host, ["exec", "-d", "exec-target", "sh", "-c", "sleep 0.3; echo later > /tmp/detached"]), "exec -d");
      let content = "";
      for (let i = 0; i < 50 && content === ""; i++) {
        await new Promise((res) => setTimeout(res, 100));
        const cat = await docker(host, ["exec", "exec-target", "cat", "/tmp/detached"]);
        if (cat.code === 0) content = cat.stdout;
      }
      expect(content).to.equal("later\n");
    });

    it("docker exec -it is a shell in a terminal of the client's size", async () => {
      const t = dockerInTerminal(["exec", "-it", "exec-target", "sh"], { rows: 25, cols: 90 });
      try {
        await t.waitFor(/\/ # /);
        t.type("echo in-exec-$((3*3)); stty size\r");
        await t.waitFor(/in-exec-9\r?\n25 90/);
        t.type("exit 4\r");
        expect(await t.exited).to.equal(4);
      } finally {
        t.kill();
      }
    });

    it("inspects an exec instance with its exit code, and refuses what Docker refuses", async () => {
      const api = (method: string, path: string, body?: unknown) => httpRequest({ socketPath: d.socket }, method, path, body);
      const created = await api("POST", `/containers/${id}/exec`, { Cmd: ["sh", "-c", "exit 6"], AttachStdout: true });
      expect(created.status).to.equal(201);
      const execId = JSON.parse(created.body).Id as string;
      expect(execId).to.match(/^[0-9a-f]{64}$/);
      const before = JSON.parse((await api("GET", `/exec/${execId}/json`)).body);
      expect(before).to.include({ ID: execId, Running: false, ExitCode: null, ContainerID: id, OpenStdout: true, OpenStdin: false, Pid: 0 });
      // (user is omitempty in Docker's ExecProcessConfig)
      expect(before.ProcessConfig).to.deep.equal({ tty: false, entrypoint: "sh", arguments: ["-c", "exit 6"], privileged: false });
      expect((await api("POST", `/exec/${execId}/start`, { Detach: true })).status).to.equal(200);
      let after = before;
      for (let i = 0; i < 50 && after.ExitCode === null; i++) {
        await new Promise((res) => setTimeout(res, 100));
        after = JSON.parse((await api("GET", `/exec/${execId}/json`)).body);
      }
      expect(after).to.include({ Running: false, ExitCode: 6 });
      expect(after.Pid).to.be.greaterThan(0);
      const again = await api("POST", `/exec/${execId}/start`, { Detach: true });
      expect(again.status).to.equal(409);
      expect(JSON.parse(again.body).message).to.equal(`Error: Exec command ${execId} has already run`);
      const unknown = await api("GET", "/exec/0123456789ab/json");
      expect(unknown.status).to.equal(404);
      expect(JSON.parse(unknown.body).message).to.equal("No such exec instance: 0123456789ab");
      const empty = await api("POST", `/containers/${id}/exec`, { Cmd: [] });
      expect(empty.status).to.equal(400);
      expect(JSON.parse(empty.body).message).to.equal("No exec command specified");
      const stopped = ok(await docker(host, ["create", "busybox", "true"]), "create").trim();
      const refused = await docker(host, ["exec", stopped, "true"]);
      expect(refused.code).to.not.equal(0);
      expect(refused.stderr).to.include(`Container ${stopped} is not running`);
      ok(await docker(host, ["rm", stopped]), "rm");
    });
  });
});
