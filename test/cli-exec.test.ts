/**
 * `engine exec` against a real engined, side by side with the Docker CLI on the same daemon:
 * output and exit statuses (the command's own, 127 when it is not found, 126 when it cannot be run, as
 * Docker's daemon answers both), the create body both clients send for the same flags (through
 * a logging proxy), stdin, detached runs, the errors before anything is created, and `-it` in a
 * real pseudo-terminal: typed input, the terminal's size, and the detach keys.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { comparer } from "./helpers/cli-compare.js";
import { docker } from "./helpers/docker-cli.js";
import { engine, engineInPty, inPty } from "./helpers/engine-cli.js";
import { makeTempDir, startEngined, type TestDaemon } from "./helpers/engined.js";
import { startRequestLog, type RequestLog } from "./helpers/request-log.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("engine CLI: exec", function () {
  this.timeout(90_000);
  let d: TestDaemon;
  let host: string;
  let work: string;
  let log: RequestLog;
  const { same, sameWith } = comparer(() => host);
  const ok = async (...args: string[]) => {
    const r = await docker(host, args);
    expect(r.code, `docker ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };

  before(async function () {
    work = makeTempDir("engine-cli-exec-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    await ok("import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox");
    await ok("run", "-d", "--name", "box", "busybox", "sleep", "600");
    log = await startRequestLog(d.socket, join(work, "proxy.sock"));
  });
  after(async function () {
    await log?.close();
    if (d) {
      const ids = (await docker(host, ["ps", "-aq"])).stdout.split("\n").filter(Boolean);
      if (ids.length) await docker(host, ["rm", "-f", ...ids]);
    }
    await d?.stop();
  });

  it("passes the command's output (stdout and stderr apart) and exit status through, as docker exec", async function () {
    const r = await same("exec", "box", "sh", "-c", "echo out; echo err >&2; exit 7");
    expect(r).to.include({ stdout: "out\n", stderr: "err\n", code: 7 });
    // the flags end at the container: what follows is the command's, even when it looks like one
    expect(await same("exec", "box", "echo", "-d", "--user", "x")).to.include({ stdout: "-d --user x\n", code: 0 });
    expect((await same("exec", "-t", "box", "echo", "tty")).stdout).to.match(/^tty\r?\n$/);
  });

  it("127 for a command not found, 126 for one that cannot be run, with the daemon's message", async function () {
    expect((await same("exec", "box", "nosuch")).code).to.equal(127);
    expect((await same("exec", "box", "/nosuch")).code).to.equal(127);
    expect((await same("exec", "box", "/etc/passwd")).code).to.equal(126);
    expect((await same("exec", "-w", "/nosuchdir", "box", "pwd")).code).to.equal(126);
  });

  it("sends the same create and start bodies as the Docker CLI for the same flags", async function () {
    const env = join(work, "exec.env");
    writeFileSync(env, "# a comment\nFROM_FILE=1\n  INDENTED=2\nFROM_CLIENT\n");
    const args = ["exec", "-e", "A=1", "-e", "FROM_CLIENT", "--env-file", env, "-w", "/tmp", "-u", "nobody", "--detach-keys", "ctrl-x", "box", "sh", "-c", "pwd; id -u; env | sort"];
    const proxied = `unix://${log.socket}`;
    const opts = { env: { FROM_CLIENT: "from-env" } };
    const e = await engine(proxied, args, opts);
    const ours = log.take();
    const t = await docker(proxied, args, opts.env);
    const theirs = log.take();
    expect(e).to.deep.include({ code: t.code, stdout: t.stdout, stderr: t.stderr });
    expect(e.stdout).to.include("/tmp\n65534\n").and.include("A=1\n").and.include("FROM_FILE=1\n").and.include("INDENTED=2\n").and.include("FROM_CLIENT=from-env\n");
    const bodies = (reqs: typeof ours) => reqs.filter((r) => r.method === "POST").map((r) => ({ path: r.path.replace(/[0-9a-f]{64}/, "<id>"), json: r.json }));
    expect(bodies(ours)).to.deep.equal(bodies(theirs));
    expect(ours.map((r) => `${r.method} ${r.path.replace(/[0-9a-f]{64}/, "<id>")}`)).to.deep.equal([
      "GET /containers/box/json",
      "POST /containers/box/exec",
      "POST /exec/<id>/start",
      "GET /exec/<id>/json",
    ]);
    // -d and -t change the bodies (no streams attached; a console size); the same again
    for (const flags of [["-d"], ["-t"], ["-i"], ["--privileged", "-d"]]) {
      await engine(proxied, ["exec", ...flags, "box", "true"], { input: "" });
      const mine = bodies(log.take());
      await docker(proxied, ["exec", ...flags, "box", "true"], {}, { input: "" });
      expect(mine, flags.join(" ")).to.deep.equal(bodies(log.take()));
    }
  });

  it("-d returns at once and the command runs on; -i passes piped stdin and its end", async function () {
    const r = await engine(host, ["exec", "-d", "box", "sh", "-c", "sleep 0.3; echo done > /tmp/detached"]);
    expect(r).to.include({ code: 0, stdout: "", stderr: "" });
    let seen = "";
    for (let i = 0; i < 50 && seen !== "done\n"; i++) {
      await sleep(100);
      seen = (await engine(host, ["exec", "box", "cat", "/tmp/detached"])).stdout;
    }
    expect(seen).to.equal("done\n");
    const piped = await sameWith({ input: "line one\nline two\n" }, "exec", "-i", "box", "sh", "-c", "cat; echo eof; exit 4");
    expect(piped).to.include({ stdout: "line one\nline two\neof\n", code: 4 });
    // without -i the command's stdin is closed, whatever the client's is
    expect(await sameWith({ input: "ignored\n" }, "exec", "box", "cat")).to.include({ stdout: "", code: 0 });
  });

  it("refuses as the Docker CLI does: no container, a stopped or paused one, missing arguments, bad values, -it without a terminal", async function () {
    await ok("create", "--name", "idle", "-i", "busybox");
    await ok("run", "-d", "--name", "frozen", "busybox", "sleep", "600");
    await ok("pause", "frozen");
    try {
      for (const args of [
        ["exec", "nosuch", "true"],
        ["exec", "idle", "true"],
        ["exec", "frozen", "true"],
        ["exec", "box"],
        ["exec"],
        ["exec", "-e", "=x", "box", "true"],
        ["exec", "--env-file", join(work, "missing.env"), "box", "true"],
        ["exec", "--bogus", "box", "true"],
        ["exec", "-it", "box", "true"],
      ]) {
        const r = await sameWith({ input: "" }, ...args);
        expect(r.code, args.join(" ")).to.not.equal(0);
      }
    } finally {
      await ok("unpause", "frozen");
    }
    // -it refused before anything was created: no exec left behind on the container
    const execIds = async () => (JSON.parse(await ok("inspect", "--format", "{{json .ExecIDs}}", "idle")) ?? []).length;
    await ok("start", "idle");
    try {
      const before = await execIds();
      expect((await engine(host, ["exec", "-it", "idle", "true"], { input: "" })).stderr).to.equal("the input device is not a TTY\n");
      expect(await execIds()).to.equal(before);
    } finally {
      await ok("rm", "-f", "idle");
    }
  });

  it("-it in a terminal: typed input reaches the command, its terminal has the client's size, its status comes back", async function () {
    const script = 'read line; echo "got $line"; stty size; exit 3';
    const keys = [1500, "hello\r", 500];
    const ours = await engineInPty(host, ["exec", "-it", "box", "sh", "-c", script], { keys, rows: 33, cols: 101 });
    expect(ours.code).to.equal(3);
    expect(ours.output).to.include("got hello").and.include("33 101");
    const theirs = await inPty(["docker", "-H", host, "exec", "-it", "box", "sh", "-c", script], { keys, rows: 33, cols: 101, env: { DOCKER_CONFIG: makeTempDir("engine-docker-config-") } });
    expect(theirs.code).to.equal(3);
    expect(ours.output.replace(/\r/g, "")).to.equal(theirs.output.replace(/\r/g, "").replace(/^\0/, ""));
  });

  it("the detach keys (ctrl-p ctrl-q, or --detach-keys) leave the command running and end the client with 0", async function () {
    const marker = (name: string) => `while true; do echo alive > /tmp/${name}; sleep 0.2; done`;
    const plain = await engineInPty(host, ["exec", "-it", "box", "sh", "-c", marker("plain")], { keys: [1500, "\x10\x11", 500] });
    expect(plain.code).to.equal(0);
    const custom = await engineInPty(host, ["exec", "-it", "--detach-keys", "ctrl-a,x", "box", "sh", "-c", marker("custom")], { keys: [1500, "\x01x", 500] });
    expect(custom.code).to.equal(0);
    // both loops still run in the container: their processes are listed by top
    const top = await engine(host, ["top", "box"]);
    expect(top.stdout.match(/while true/g) ?? []).to.have.length(2);
    await engine(host, ["exec", "box", "pkill", "-f", "while true"]);
  });
});
