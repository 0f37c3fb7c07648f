/**
 * The container-lifecycle commands of the `engine` client (run, create, start, stop, kill,
 * restart, rm, wait, attach, logs) against a real engined, side by side with the real Docker
 * CLI on the same daemon: outputs, messages and exit statuses where they are deterministic,
 * what the create request carried (read back through the API), a real pseudo-terminal for
 * Ctrl-C and -t, a local registry for the pull of a missing image, and a connection cut under
 * an attached run.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { rmSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { docker } from "./helpers/docker-cli.js";
import { engine, engineInPty, inPty } from "./helpers/engine-cli.js";
import { makeTempDir, runCommand, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { startRegistry } from "./helpers/registry.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Docker's words made the engine's, and ids (which differ run to run) made alike. */
const normalize = (text: string) =>
  text
    .replace(/^docker: /gm, "engine: ")
    .replace(/'docker (\w+) --help'/g, "'engine $1 --help'")
    .replace(/Usage: {2}docker /g, "Usage:  engine ")
    .replace(/\b[0-9a-f]{64}\b/g, "<id>");

describe("engine CLI: container lifecycle", function () {
  this.timeout(60_000);

  let d: TestDaemon;
  let host: string;
  let work: string;
  const dk = (...args: string[]): Promise<RunResult> => docker(host, args);
  const eng = (...args: string[]): Promise<RunResult> => engine(host, args);
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}:\n${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  /** The daemon's own view of a container, straight from the API. */
  const inspect = async (ref: string) => {
    const res = await httpRequest({ socketPath: d.socket }, "GET", `/containers/${ref}/json`);
    expect(res.status, res.body).to.equal(200);
    return JSON.parse(res.body);
  };
  const exists = async (ref: string) => (await httpRequest({ socketPath: d.socket }, "GET", `/containers/${ref}/json`)).status === 200;
  const eventually = async (what: string, check: () => Promise<boolean>, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting: ${what}`);
      await sleep(100);
    }
  };
  /** Both clients' results agree: stdout, stderr (normalized) and the exit status. */
  const same = (ours: RunResult, theirs: RunResult, what: string) => {
    expect({ code: ours.code, stdout: normalize(ours.stdout), stderr: normalize(ours.stderr) }, what).to.deep.equal({
      code: theirs.code,
      stdout: normalize(theirs.stdout),
      stderr: normalize(theirs.stderr),
    });
  };

  before(async function () {
    work = makeTempDir("engine-cli-containers-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    ok(await dk("import", "--change", 'CMD ["sh"]', "--change", "ENV PATH=/bin", writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"), "docker import");
  });
  afterEach(async function () {
    if (!d) return;
    const ids = (await dk("ps", "-aq")).stdout.split("\n").filter(Boolean);
    if (ids.length) await dk("rm", "-f", ...ids);
  });
  after(async function () {
    await d?.stop();
  });

  it("run attached: stdout and stderr apart, the container's exit code, as docker run", async function () {
    const script = "echo out; echo err >&2; exit 3";
    const ours = await eng("run", "--name", "split-e", "busybox", "sh", "-c", script);
    expect(ours).to.include({ stdout: "out\n", stderr: "err\n", code: 3 });
    same(ours, await dk("run", "--name", "split-d", "busybox", "sh", "-c", script), "run");
    // flags end at the image: what follows is the container's, even when it looks like a flag
    const after = await eng("run", "--rm", "busybox", "echo", "-l", "--rm", "-d");
    expect(after).to.include({ stdout: "-l --rm -d\n", code: 0 });
  });

  it("run -d prints the full id; logs -f follows until the exit; logs --tail and wait as docker's", async function () {
    const script = "for i in 1 2 3; do echo line$i; echo e$i >&2; sleep 0.2; done; exit 4";
    const id = ok(await eng("run", "-d", "--name", "bg-e", "busybox", "sh", "-c", script), "run -d").trim();
    expect(id).to.match(/^[0-9a-f]{64}$/);
    expect((await inspect("bg-e")).Id).to.equal(id);
    const followed = await eng("logs", "-f", "bg-e");
    expect(followed).to.include({ stdout: "line1\nline2\nline3\n", stderr: "e1\ne2\ne3\n", code: 0 });
    expect((await inspect("bg-e")).State.Running).to.equal(false);
    ok(await dk("run", "-d", "--name", "bg-d", "busybox", "sh", "-c", script), "docker run -d");
    ok(await dk("wait", "bg-d"), "docker wait");
    for (const args of [["logs", "--tail", "2"], ["logs", "-n", "1"], ["logs"], ["wait"]]) {
      same(await eng(...args, "bg-e"), await dk(...args, "bg-d"), args.join(" "));
    }
    expect((await eng("wait", "bg-e")).stdout).to.equal("4\n");
    // timestamps: RFC 3339 with nanoseconds before each line (the last two lines: line3 and e3)
    const stamped = await eng("logs", "-t", "--tail", "2", "bg-e");
    expect(stamped.stdout).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z line3\n$/);
    expect(stamped.stderr).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z e3\n$/);
    same(await eng("logs", "nosuch"), await dk("logs", "nosuch"), "logs of a missing container");
    same(await eng("wait", "bg-e", "nosuch", "bg-e"), await dk("wait", "bg-d", "nosuch", "bg-d"), "wait with a missing container");
  });

  it("--rm removes the container, attached and detached", async function () {
    const r = await eng("run", "--rm", "--name", "gone", "busybox", "echo", "hi");
    expect(r).to.include({ stdout: "hi\n", stderr: "", code: 0 });
    expect(await exists("gone")).to.equal(false);
    ok(await eng("run", "-d", "--rm", "--name", "gone-d", "busybox", "sleep", "0.3"), "run -d --rm");
    await eventually("the detached --rm container to go", async () => !(await exists("gone-d")));
    // a start that fails still removes it, and the client does not hang waiting for that
    const failed = await eng("run", "--rm", "--name", "gone-f", "busybox", "nope");
    expect(failed.code).to.equal(127);
    expect(await exists("gone-f")).to.equal(false);
  });

  it("-e, --env-file, -w, -u, --entrypoint, -l, -h take effect in the container and in its configuration", async function () {
    const envFile = writeFixture(work, "env.list", Buffer.from("# a comment\nFROM_FILE=yes\n\nFROM_CLIENT\n"));
    const r = await engine(
      host,
      ["run", "--name", "cfg", "-e", "A=1", "-e", "FROM_CLIENT2", "--env-file", envFile, "-w", "/tmp", "-u", "65534", "--entrypoint", "/bin/sh", "-l", "k=v", "-l", "flag", "-h", "box", "busybox", "-c", 'echo "$A $FROM_FILE $FROM_CLIENT $FROM_CLIENT2 $(pwd) $(id -u) $(hostname)"'],
      { env: { FROM_CLIENT: "c1", FROM_CLIENT2: "c2" } },
    );
    expect(r).to.include({ stdout: "1 yes c1 c2 /tmp 65534 box\n", code: 0 });
    const c = await inspect("cfg");
    expect(c.Config.Env).to.include.members(["A=1", "FROM_FILE=yes", "FROM_CLIENT=c1", "FROM_CLIENT2=c2"]);
    expect(c.Config).to.deep.include({ WorkingDir: "/tmp", User: "65534", Entrypoint: ["/bin/sh"], Hostname: "box" });
    expect(c.Config.Labels).to.deep.equal({ k: "v", flag: "" });
    expect(c.Config.Cmd).to.deep.equal(["-c", 'echo "$A $FROM_FILE $FROM_CLIENT $FROM_CLIENT2 $(pwd) $(id -u) $(hostname)"']);
    // an empty --entrypoint resets the image's: the command alone runs
    expect(await eng("run", "--rm", "--entrypoint", "", "busybox", "echo", "reset")).to.include({ stdout: "reset\n", code: 0 });
  });

  it("create with the common flags: the daemon records the same configuration as for docker create", async function () {
    const flags = ["-p", "8080:80", "-p", "127.0.0.1:9000-9001:9000-9001/udp", "--expose", "7000", "-v", `${work}:/data:ro`, "-v", "/anon", "--log-opt", "max-size=1m", "--init", "--ulimit", "nofile=100:200", "-m", "64m", "--cpus", "1.5", "--restart", "on-failure:3", "-e", "X=1", "-l", "a=b", "--stop-signal", "SIGUSR1", "--network", "none"];
    const id = ok(await eng("create", "--name", "full-e", ...flags, "busybox", "true"), "engine create").trim();
    expect(id).to.match(/^[0-9a-f]{64}$/);
    ok(await dk("create", "--name", "full-d", ...flags, "busybox", "true"), "docker create");
    const ours = await inspect("full-e");
    const theirs = await inspect("full-d");
    expect(ours.HostConfig.PortBindings).to.deep.equal({
      "80/tcp": [{ HostIp: "", HostPort: "8080" }],
      "9000/udp": [{ HostIp: "127.0.0.1", HostPort: "9000" }],
      "9001/udp": [{ HostIp: "127.0.0.1", HostPort: "9001" }],
    });
    expect(Object.keys(ours.Config.ExposedPorts).sort()).to.deep.equal(["7000/tcp", "80/tcp", "9000/udp", "9001/udp"]);
    expect(ours.HostConfig).to.deep.include({ Memory: 64 * 1024 * 1024, NanoCpus: 1_500_000_000, Init: true, NetworkMode: "none", Binds: [`${work}:/data:ro`] });
    expect(ours.HostConfig.RestartPolicy).to.deep.equal({ Name: "on-failure", MaximumRetryCount: 3 });
    expect(ours.HostConfig.Ulimits).to.deep.equal([{ Name: "nofile", Hard: 200, Soft: 100 }]);
    expect(ours.HostConfig.LogConfig.Config).to.deep.equal({ "max-size": "1m" });
    // everything else as the Docker CLI's request left it
    expect(ours.HostConfig).to.deep.equal(theirs.HostConfig);
    const { Hostname: _h1, ...ourConfig } = ours.Config;
    const { Hostname: _h2, ...theirConfig } = theirs.Config;
    expect(ourConfig).to.deep.equal(theirConfig);
  });

  it("125 for a bad flag value, a bad port, a missing env file and an unknown network; 127 for a missing command; as docker run", async function () {
    for (const args of [
      ["-m", "foo"],
      ["--cpus", "x"],
      ["--ulimit", "nofile"],
      ["-p", "foo"],
      ["-p", "99999:80"],
      ["--restart", "on-failure:x"],
      ["--rm", "--restart", "always"],
      ["--pull", "bogus"],
      ["--env-file", join(work, "nonexistent")],
      ["--network", "nosuch"],
      ["--pull", "never", "nosuchimage:1"],
    ]) {
      const image = args.includes("nosuchimage:1") ? [] : ["busybox"];
      const ours = await eng("run", ...args, ...image, "true");
      expect(ours.code, args.join(" ")).to.equal(125);
      same(ours, await dk("run", ...args, ...image, "true"), `run ${args.join(" ")}`);
    }
    const missing = await eng("run", "--name", "nope-e", "busybox", "nope");
    expect(missing.code).to.equal(127);
    expect(missing.stderr).to.match(/^engine: Error response from daemon: .*executable file not found/);
    same(missing, await dk("run", "--name", "nope-d", "busybox", "nope"), "missing command");
    same(await eng("run", "busybox", "/etc/passwd"), await dk("run", "busybox", "/etc/passwd"), "not executable (126)");
    same(await eng("run", "-d", "-a", "stdout", "busybox", "true"), await dk("run", "-d", "-a", "stdout", "busybox", "true"), "-a with -d");
    // create: its own checks are 125, the daemon's refusal 1 (the Docker CLI's statuses)
    same(await eng("create", "-p", "foo", "busybox"), await dk("create", "-p", "foo", "busybox"), "create -p foo");
    same(await eng("create", "--runtime", "bogus", "busybox"), await dk("create", "--runtime", "bogus", "busybox"), "create --runtime bogus");
  });

  it("stop, kill, restart, rm, start: each name as given, the failures reported and exit 1, as docker's", async function () {
    for (const [cli, tag] of [[eng, "e"], [dk, "d"]] as const) {
      ok(await cli("run", "-d", "--name", `s1-${tag}`, "busybox", "sleep", "60"), "run -d");
      ok(await cli("create", "--name", `s2-${tag}`, "busybox", "sleep", "60"), "create");
    }
    /** The same command on each client's own containers (`NAME-e`, `NAME-d`), the outputs alike but for the names. */
    const both = async (args: (tag: string) => string[], what: string) => {
      const ours = await eng(...args("e"));
      const theirs = await dk(...args("d"));
      const rename = (t: string) => t.replace(/\b(s\d)-d\b/g, "$1-e");
      same(ours, { ...theirs, stdout: rename(theirs.stdout), stderr: rename(theirs.stderr) }, what);
      return ours;
    };
    expect((await both((t) => ["start", `s2-${t}`, "nosuch"], "start")).stderr).to.include("failed to start containers: nosuch");
    expect((await inspect("s2-e")).State.Running).to.equal(true);
    expect((await both((t) => ["restart", "-t", "0", `s2-${t}`], "restart")).stdout).to.equal("s2-e\n");
    expect((await both((t) => ["stop", "-t", "1", `s1-${t}`, "nosuch"], "stop")).code).to.equal(1);
    expect((await inspect("s1-e")).State).to.include({ Running: false, ExitCode: 137 });
    await both((t) => ["kill", `s2-${t}`, `s1-${t}`], "kill of a stopped one");
    await eventually("the killed container to stop", async () => !(await inspect("s2-e")).State.Running);
    await both((t) => ["kill", "-s", "bogus", `s1-${t}`], "kill with a bad signal");
    const rm = await both((t) => ["rm", `s1-${t}`, "nosuch", `s2-${t}`], "rm");
    expect(rm.stdout).to.equal("s1-e\ns2-e\n");
    await both(() => ["rm", "-f", "nosuch"], "rm -f of a missing container");
    // stop -s: the signal the container's trap sees
    ok(await eng("run", "-d", "--name", "trap", "busybox", "sh", "-c", 'trap "exit 9" USR1; while true; do sleep 0.1; done'), "run -d");
    expect(await eng("stop", "-s", "USR1", "trap")).to.include({ stdout: "trap\n", code: 0 });
    expect((await inspect("trap")).State.ExitCode).to.equal(9);
    ok(await eng("start", "trap"), "start");
    expect(await eng("kill", "-s", "USR1", "trap")).to.include({ stdout: "trap\n", code: 0 });
    expect((await eng("wait", "trap")).stdout).to.equal("9\n");
    expect(await eng("rm", "-f", "trap")).to.include({ stdout: "trap\n", code: 0 });
    expect(await exists("trap")).to.equal(false);
  });

  it("start -a: the output and the container's exit code; refuses several containers", async function () {
    const script = "echo started; echo oops >&2; exit 5";
    ok(await eng("create", "--name", "sa-e", "busybox", "sh", "-c", script), "create");
    ok(await dk("create", "--name", "sa-d", "busybox", "sh", "-c", script), "create");
    const ours = await eng("start", "-a", "sa-e");
    expect(ours).to.include({ stdout: "started\n", stderr: "oops\n", code: 5 });
    same(ours, await dk("start", "-a", "sa-d"), "start -a");
    same(await eng("start", "-a", "sa-e", "sa-e"), await dk("start", "-a", "sa-d", "sa-d"), "start -a of two");
    same(await eng("attach", "sa-e"), await dk("attach", "sa-d"), "attach to a stopped container");
  });

  it("attach to a running container: its output from then on and its exit code", async function () {
    ok(await eng("run", "-d", "--name", "att", "busybox", "sh", "-c", "sleep 3; echo later; echo err >&2; exit 6"), "run -d");
    const r = await eng("attach", "att");
    expect(r).to.include({ stdout: "later\n", stderr: "err\n", code: 6 });
  });

  it("Ctrl-C in a terminal reaches an attached container as SIGINT (--sig-proxy), as with docker", async function () {
    const script = 'trap "echo got INT; exit 7" INT; echo ready; while true; do sleep 0.1; done';
    const keys = [{ after: "ready" }, 300, "\x03", 3000];
    const ours = await engineInPty(host, ["run", "--rm", "busybox", "sh", "-c", script], { keys });
    expect(ours).to.deep.equal({ output: "ready\r\n^Cgot INT\r\n", code: 7 });
    const theirs = await inPty(["docker", "-H", host, "run", "--rm", "busybox", "sh", "-c", script], { keys, env: { DOCKER_CONFIG: makeTempDir("engine-docker-config-") } });
    expect(theirs).to.deep.equal(ours);
  });

  it("--sig-proxy=false: Ctrl-C ends the client and leaves the container running", async function () {
    const r = await engineInPty(host, ["run", "--sig-proxy=false", "--name", "keep", "busybox", "sh", "-c", 'trap "exit 7" INT; echo ready; while true; do sleep 0.1; done'], { keys: [{ after: "ready" }, 300, "\x03", 1000] });
    expect(r.output).to.equal("ready\r\n^C");
    expect(r.code).to.equal(130);
    expect((await inspect("keep")).State.Running).to.equal(true);
  });

  it("-t in a terminal and -i with piped stdin, as docker run shows them", async function () {
    const ours = await engineInPty(host, ["run", "--rm", "-t", "busybox", "echo", "hi"]);
    const theirs = await inPty(["docker", "-H", host, "run", "--rm", "-t", "busybox", "echo", "hi"], { env: { DOCKER_CONFIG: makeTempDir("engine-docker-config-") } });
    expect(ours).to.include({ code: 0 }).and.to.have.property("output").that.matches(/^hi\r+\n$/);
    // The Docker CLI resizes the terminal after the start; a container that has already exited
    // refuses (409, as Docker's daemon does) and the CLI may say so: a matter of timing.
    const noResize = (text: string) => normalize(text).replace("failed to resize tty, using default size\r\n", "");
    expect({ ...ours, output: noResize(ours.output) }).to.deep.equal({ ...theirs, output: noResize(theirs.output) });
    const stdin = await engine(host, ["run", "--rm", "-i", "busybox", "cat"], { input: "piped\n" });
    const dockerStdin = await runCommand("docker", ["-H", host, "run", "--rm", "-i", "busybox", "cat"], { input: "piped\n", env: { DOCKER_CONFIG: makeTempDir("engine-docker-config-") }, timeoutMs: 30_000 });
    same(stdin, dockerStdin, "run -i with piped stdin");
    // -t with -i needs a terminal on stdin, checked before anything is created
    const notTty = await engine(host, ["run", "--rm", "-it", "busybox", "true"], { input: "" });
    expect(notTty).to.include({ stderr: "the input device is not a TTY\n", code: 1 });
  });

  it("run -it is a shell in the terminal, with the terminal's size and the shell's exit code, as with docker", async function () {
    const keys = [1500, "echo hi-$((1+1)); stty size\r", 1000, "exit 3\r", 1000];
    const ours = await engineInPty(host, ["run", "-it", "--rm", "busybox", "sh"], { keys, rows: 33, cols: 101 });
    const theirs = await inPty(["docker", "-H", host, "run", "-it", "--rm", "busybox", "sh"], { keys, rows: 33, cols: 101, env: { DOCKER_CONFIG: makeTempDir("engine-docker-config-") } });
    for (const [who, r] of [["engine", ours], ["docker", theirs]] as const) {
      expect(r.code, `${who}: ${r.output}`).to.equal(3);
      expect(r.output, who).to.match(/hi-2\r\n33 101\r\n/);
    }
  });

  it("a missing image is pulled from a local registry (--pull missing), and not with --pull never", async function () {
    const reg = await startRegistry();
    try {
      const ref = `${reg.host}/cli-containers/busybox:1`;
      ok(await dk("tag", "busybox", ref), "docker tag");
      ok(await dk("push", ref), "docker push");
      ok(await dk("rmi", ref), "docker rmi");
      const never = await eng("run", "--rm", "--pull", "never", ref, "true");
      expect(never.code).to.equal(125);
      expect(never.stderr).to.equal(`engine: Error response from daemon: No such image: ${ref}\n\nRun 'engine run --help' for more information\n`);
      const r = await eng("run", "--rm", ref, "echo", "pulled");
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.equal("pulled\n");
      const lines = r.stderr.trimEnd().split("\n");
      expect(lines[0]).to.equal(`Unable to find image '${ref}' locally`);
      expect(lines[1]).to.equal("1: Pulling from cli-containers/busybox");
      expect(lines.at(-1)).to.equal(`Status: Downloaded newer image for ${ref}`);
      ok(await dk("rmi", ref), "docker rmi");
    } finally {
      await reg.stop();
    }
  });

  it("a connection to the daemon lost under an attached run: a message on stderr and a non-zero exit", async function () {
    // A relay between the client and the daemon, cut while the container runs.
    const relay = join(work, "relay.sock");
    const open = new Set<Socket>();
    const server: Server = createServer((client) => {
      const upstream = connect(d.socket);
      open.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
    });
    await new Promise<void>((r) => server.listen(relay, r));
    try {
      const running = engine(`unix://${relay}`, ["run", "--name", "cut", "busybox", "sh", "-c", "echo before; sleep 30"]);
      await eventually("the container to run", async () => (await exists("cut")) && (await inspect("cut")).State.Running);
      await sleep(300);
      for (const s of open) s.destroy();
      const r = await running;
      expect(r.stdout).to.equal("before\n");
      expect(r.code).to.not.equal(0);
      expect(r.stderr).to.match(/connection/);
      expect((await inspect("cut")).State.Running).to.equal(true);
    } finally {
      server.close();
      rmSync(relay, { force: true });
    }
  });
});

describe("engine CLI: container streams (detach keys, multiplexed frames)", function () {
  it("detach keys read as the Docker CLI reads them; the matcher holds back a prefix and lets through what is not the sequence", async function () {
    const { DEFAULT_DETACH_KEYS, DetachMatcher, parseDetachKeys } = await import("../cli/container/detach-keys.js");
    expect([...parseDetachKeys("ctrl-p,ctrl-q")]).to.deep.equal([...DEFAULT_DETACH_KEYS]);
    expect([...parseDetachKeys("a,ctrl-@,ctrl-[,ctrl-_,CTRL-Z")]).to.deep.equal([97, 0, 27, 31, 26]);
    expect(() => parseDetachKeys("ctrl-1")).to.throw("Unknown character: 'ctrl-1'");
    const m = new DetachMatcher(DEFAULT_DETACH_KEYS);
    expect(m.feed(Buffer.from("ab\x10"))).to.deep.equal({ pass: Buffer.from("ab"), detach: false });
    // ctrl-p then not ctrl-q: the held ctrl-p goes through with it
    expect(m.feed(Buffer.from("c"))).to.deep.equal({ pass: Buffer.from("\x10c"), detach: false });
    expect(m.feed(Buffer.from("\x10\x10"))).to.deep.equal({ pass: Buffer.from("\x10"), detach: false });
    expect(m.feed(Buffer.from("\x11rest"))).to.deep.equal({ pass: Buffer.alloc(0), detach: true });
    expect(new DetachMatcher(Buffer.from("q")).feed(Buffer.from("xq"))).to.deep.equal({ pass: Buffer.from("x"), detach: true });
  });

  it("frames split anywhere are put back together; type 3 is the daemon's error", async function () {
    const { Demuxer } = await import("../cli/container/stdcopy.js");
    const frame = (type: number, text: string) => {
      const head = Buffer.alloc(8);
      head[0] = type;
      head.writeUInt32BE(Buffer.byteLength(text), 4);
      return Buffer.concat([head, Buffer.from(text)]);
    };
    const all = Buffer.concat([frame(1, "out ü\n"), frame(2, "err\n"), frame(1, "")]);
    for (let cut = 0; cut <= all.length; cut++) {
      const got = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
      const demux = new Demuxer({ stdout: (b) => got.stdout.push(b), stderr: (b) => got.stderr.push(b) });
      demux.write(all.subarray(0, cut));
      demux.write(all.subarray(cut));
      expect(Buffer.concat(got.stdout).toString()).to.equal("out ü\n");
      expect(Buffer.concat(got.stderr).toString()).to.equal("err\n");
    }
    expect(() => new Demuxer({ stdout: () => undefined, stderr: () => undefined }).write(frame(3, "boom"))).to.throw("error from daemon in stream: boom");
  });
});
