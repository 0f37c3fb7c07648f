/**
 * `engine completion bash|zsh|fish`, driven through the shells themselves (helpers/
 * shell-completion.ts): bash and zsh in a terminal with TAB typed, fish by `complete -C`,
 * against a real engined (in a network namespace of its own) holding known containers
 * (running, paused, created, exited), images, networks and volumes. Commands, a group's
 * subcommands, flags, names per command and flag values must be what the daemon and the
 * registry hold; with no daemon, or one that never answers, commands still complete and names
 * give nothing within about a second.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { createServer, type Server, type Socket } from "node:net";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { engine, ENGINE } from "./helpers/engine-cli.js";
import { makeTempDir, ROOT, runCommand } from "./helpers/engined.js";
import { startNetDaemon, type NetDaemon } from "./helpers/net-daemon.js";
import { fishCompletions, shellSession, type ShellSession } from "./helpers/shell-completion.js";

describe("engine completion: bash, zsh and fish against a real daemon", function () {
  this.timeout(300_000);
  let n: NetDaemon;
  let env: NodeJS.ProcessEnv;
  /** The folder the shells run in: one file, so that file completion has a known answer. */
  let cwd: string;
  let bash: ShellSession;
  let logDrivers: string[];
  let runtimes: string[];

  /** The long flags of `args`' help that start with `prefix`: what the registry says the command takes. */
  const helpFlags = async (args: string[], prefix: string): Promise<string[]> => {
    const help = (await engine(n.host, [...args, "--help"])).stdout;
    return [...help.matchAll(/^ {2}(?:-\w, | {4})(--[a-z0-9-]+)/gm)].map((m) => m[1]).filter((f) => f.startsWith(prefix)).sort();
  };

  before(async function () {
    n = await startNetDaemon();
    cwd = makeTempDir("engine-completion-cwd-");
    writeFileSync(join(cwd, "notes.txt"), "");
    env = { ENGINE_HOST: n.host, ENGINE_CONFIG: makeTempDir("engine-completion-config-"), ENGINE_TLS_VERIFY: undefined, ENGINE_API_VERSION: undefined };
    await n.cli("tag", "busybox", "busybox:v2");
    await n.cli("tag", "busybox", "tools:1.0");
    await n.cli("run", "-d", "--name", "web", "busybox", "sleep", "600");
    await n.cli("run", "-d", "--name", "held", "busybox", "sleep", "600");
    await n.cli("pause", "held");
    await n.cli("create", "--name", "fresh", "busybox");
    await n.cli("run", "--name", "done", "busybox", "true");
    await n.cli("network", "create", "backend");
    await n.cli("volume", "create", "data1");
    await n.cli("volume", "create", "logs");
    // the daemon's log drivers, as dockerd lists them (without `none`): those the engine ships
    logDrivers = JSON.parse(await n.cli("info", "--format", "{{json .Plugins.Log}}")) as string[];
    const shipped = readdirSync(join(ROOT, "plugins")).filter((p) => p.startsWith("log-")).map((p) => p.slice(4));
    expect(logDrivers).to.deep.equal(shipped.filter((d) => d !== "none").sort());
    logDrivers.push("none");
    runtimes = Object.keys(JSON.parse(await n.cli("info", "--format", "{{json .Runtimes}}")) as object);
    bash = await shellSession("bash", env, cwd);
  });
  after(async function () {
    bash?.close();
    await n?.stop();
  });

  const names = async (line: string) => (await bash.complete(line)).candidates;

  it("bash: commands, a group's subcommands, global flags", async function () {
    expect(await names("engine sto")).to.deep.equal(["stop"]);
    expect(await names("engine st")).to.deep.equal(["start", "stats", "stop"]);
    expect(await names("engine netw")).to.deep.equal(["network"]);
    expect(await names("engine network ")).to.deep.equal(["connect", "create", "disconnect", "inspect", "ls", "prune", "rm"]);
    expect(await names("engine volume c")).to.deep.equal(["create"]);
    expect(await names("engine completion ")).to.deep.equal(["bash", "fish", "zsh"]);
    expect(await names("engine --tls")).to.deep.equal(["--tls", "--tlscacert", "--tlscert", "--tlskey", "--tlsverify"]);
    expect(await names("engine --log-level ")).to.deep.equal(["debug", "error", "fatal", "info", "warn"]);
    // the hidden command is nobody's to type
    expect(await names("engine __")).to.deep.equal([]);
  });

  it("bash: a command's flags, from the command's own flag list", async function () {
    expect(await names("engine run --net")).to.deep.equal(await helpFlags(["run"], "--net"));
    expect(await names("engine run --net")).to.include("--network");
    // every flag of the help, and --help
    expect(await names("engine network create --")).to.deep.equal([...(await helpFlags(["network", "create"], "--")), "--help"].sort());
    expect(await names("engine rm -")).to.include.members(["-f", "-v", "--force", "--volumes", "--help"]);
    // past the image, `run`'s words are the container's command: no flags of engine's
    expect(await names("engine run busybox --")).to.deep.equal([]);
  });

  it("bash: container names as each command takes them", async function () {
    expect(await names("engine exec ")).to.deep.equal(["web"]);
    expect(await names("engine attach ")).to.deep.equal(["web"]);
    expect(await names("engine pause ")).to.deep.equal(["web"]);
    expect(await names("engine stop ")).to.deep.equal(["held", "web"]);
    expect(await names("engine kill ")).to.deep.equal(["held", "web"]);
    expect(await names("engine unpause ")).to.deep.equal(["held"]);
    expect(await names("engine start ")).to.deep.equal(["done", "fresh"]);
    expect(await names("engine rm ")).to.deep.equal(["done", "fresh"]);
    expect(await names("engine rm -f ")).to.deep.equal(["done", "fresh", "held", "web"]);
    expect(await names("engine logs ")).to.deep.equal(["done", "fresh", "held", "web"]);
    expect(await names("engine container stop w")).to.deep.equal(["web"]);
    expect(await names("engine start done ")).to.deep.equal(["done", "fresh"]);
    // exec CONTAINER COMMAND: the command is the container's
    expect(await names("engine exec web ")).to.deep.equal([]);
    expect(await names("engine attach web ")).to.deep.equal([]);
  });

  it("bash: image, network and volume names, and inspect's objects", async function () {
    expect(await names("engine run ")).to.deep.equal(["busybox:latest", "busybox:v2", "tools:1.0"]);
    expect(await names("engine run -it --rm bu")).to.deep.equal(["busybox:latest", "busybox:v2"]);
    // bash splits at ":" and replaces only what follows it
    expect(await names("engine tag busybox:")).to.deep.equal([":latest", ":v2"]);
    expect(await names("engine tag busybox:l")).to.deep.equal(["latest"]);
    expect(await names("engine image rm t")).to.deep.equal(["tools:1.0"]);
    expect(await names("engine network connect ")).to.deep.equal(["backend", "bridge", "host", "none"]);
    expect(await names("engine network connect backend ")).to.deep.equal(["done", "fresh", "held", "web"]);
    expect(await names("engine network rm b")).to.deep.equal(["backend", "bridge"]);
    // a new network's name is not an existing one's
    expect(await names("engine network create ")).to.deep.equal([]);
    expect(await names("engine volume rm ")).to.deep.equal(["data1", "logs"]);
    expect(await names("engine volume create ")).to.deep.equal([]);
    expect(await names("engine inspect --type volume ")).to.deep.equal(["data1", "logs"]);
    expect(await names("engine inspect d")).to.deep.equal(["data1", "done"]);
  });

  it("bash: flag values, from the daemon where it has them", async function () {
    expect(await names("engine run --network ")).to.deep.equal(["backend", "bridge", "host", "none"]);
    expect(await names("engine run --network=b")).to.deep.equal(["backend", "bridge"]);
    expect(await names("engine run --restart ")).to.deep.equal(["always", "no", "on-failure", "unless-stopped"]);
    expect(await names("engine run --restart=on")).to.deep.equal(["on-failure"]);
    expect(await names("engine run --log-driver ")).to.deep.equal([...logDrivers].sort()).and.include("json-file");
    expect(await names("engine run --runtime ")).to.deep.equal([...runtimes].sort()).and.not.be.empty;
    expect(await names("engine run --link ")).to.deep.equal(["web"]);
    expect(await names("engine kill -s SIGKI")).to.deep.equal(["SIGKILL"]);
    expect(await names("engine inspect --type ")).to.deep.equal(["container", "image", "network", "volume"]);
    expect(await names("engine network create -d ")).to.include("bridge");
  });

  it("bash: paths where a command takes a path, and no space where more follows", async function () {
    const build = await bash.complete("engine build ");
    expect(build.candidates).to.deep.equal([]);
    expect(build.options).to.include("default"); // bash's own file names
    const cp = await bash.complete("engine cp ");
    expect(cp.candidates).to.deep.equal(["done:", "fresh:", "held:", "notes.txt", "web:"]);
    expect(cp.options).to.include("nospace");
    expect((await bash.complete("engine cp web:/et")).candidates).to.deep.equal([]);
    const volume = await bash.complete("engine run -v d");
    expect(volume.candidates).to.deep.equal(["data1:"]);
    expect(volume.options).to.include("nospace");
    expect((await bash.complete("engine run --env-file ")).options).to.include("default");
  });

  it("bash: context names from the client's own store, for --context and the context commands", async function () {
    const made = await engine(n.host, ["context", "create", "work", "--docker", "host=unix:///nowhere/engine.sock"], { configDir: env.ENGINE_CONFIG });
    expect(made.code, made.stderr).to.equal(0);
    try {
      expect(await names("engine --context ")).to.deep.equal(["default", "work"]);
      expect(await names("engine -c w")).to.deep.equal(["work"]);
      expect(await names("engine context use ")).to.deep.equal(["default", "work"]);
      expect(await names("engine context rm w")).to.deep.equal(["work"]);
      // a new context's name is not one that exists
      expect(await names("engine context create ")).to.deep.equal([]);
    } finally {
      await engine(n.host, ["context", "rm", "work"], { configDir: env.ENGINE_CONFIG });
    }
  });

  it("bash: -H on the line is the daemon asked, not ENGINE_HOST", async function () {
    const elsewhere = await shellSession("bash", { ...env, ENGINE_HOST: "unix:///nonexistent/engine.sock" }, cwd);
    try {
      expect((await elsewhere.complete("engine stop ")).candidates).to.deep.equal([]);
      expect((await elsewhere.complete(`engine -H ${n.host} stop `)).candidates).to.deep.equal(["held", "web"]);
      expect((await elsewhere.complete(`engine --host=${n.host} volume rm `)).candidates).to.deep.equal(["data1", "logs"]);
    } finally {
      elsewhere.close();
    }
  });

  it("zsh: the same answers through compinit and compadd", async function () {
    const zsh = await shellSession("zsh", env, cwd);
    try {
      const zc = async (line: string) => (await zsh.complete(line)).candidates;
      expect(await zc("engine sto")).to.deep.equal(["stop"]);
      expect(await zc("engine network ")).to.deep.equal(["connect", "create", "disconnect", "inspect", "ls", "prune", "rm"]);
      expect(await zc("engine run --net")).to.deep.equal(await helpFlags(["run"], "--net"));
      expect(await zc("engine exec ")).to.deep.equal(["web"]);
      expect(await zc("engine start ")).to.deep.equal(["done", "fresh"]);
      expect(await zc("engine run bu")).to.deep.equal(["busybox:latest", "busybox:v2"]);
      expect(await zc("engine run --network ")).to.deep.equal(["backend", "bridge", "host", "none"]);
      expect(await zc("engine volume rm ")).to.deep.equal(["data1", "logs"]);
      expect(await zc("engine run --restart ")).to.deep.equal(["always", "no", "on-failure", "unless-stopped"]);
      expect(await zc("engine build n")).to.deep.equal(["notes.txt"]);
    } finally {
      zsh.close();
    }
  });

  it("fish: the same answers through complete -C", async function () {
    const lines = ["engine sto", "engine network ", "engine run --net", "engine exec ", "engine start ", "engine run bu", "engine run --network ", "engine volume rm ", "engine run --restart ", "engine build n"];
    const got = await fishCompletions(lines, env, cwd);
    expect(got).to.deep.equal([
      ["stop"],
      ["connect", "create", "disconnect", "inspect", "ls", "prune", "rm"],
      await helpFlags(["run"], "--net"),
      ["web"],
      ["done", "fresh"],
      ["busybox:latest", "busybox:v2"],
      ["backend", "bridge", "host", "none"],
      ["data1", "logs"],
      ["always", "no", "on-failure", "unless-stopped"],
      ["notes.txt"],
    ]);
  });

  it("the scripts parse in their shells, and completion's own help", async function () {
    for (const [shell, check] of [["bash", ["bash", "-n"]], ["zsh", ["zsh", "-n"]], ["fish", ["fish", "--no-config", "-n"]]] as const) {
      const script = join(cwd, `engine.${shell}`);
      writeFileSync(script, (await engine(n.host, ["completion", shell])).stdout);
      const r = await runCommand(check[0], [...check.slice(1), script]);
      expect(r, shell).to.include({ code: 0, stderr: "" });
    }
    const group = await engine(n.host, ["completion", "--help"]);
    expect(group.stdout).to.match(/Commands:\n {2}bash +Generate the autocompletion script for bash\n {2}fish .*\n {2}zsh /);
    expect((await engine(n.host, ["completion", "bash", "extra"])).code).to.equal(1);
    expect((await engine(n.host, ["--help"])).stdout).to.not.include("__complete");
  });

  describe("without a daemon that answers", function () {
    let hung: Server;
    const held: Socket[] = [];
    let hungSocket: string;

    before(async function () {
      // accepts every connection and never answers
      hungSocket = join(makeTempDir("engine-completion-hung-"), "hung.sock");
      hung = createServer((s) => void held.push(s));
      await new Promise<void>((resolve) => hung.listen(hungSocket, resolve));
    });
    after(async function () {
      for (const s of held) s.destroy();
      await new Promise((resolve) => hung?.close(resolve));
    });

    for (const [what, host] of [
      ["no daemon", () => "unix:///nonexistent/engine.sock"],
      ["a daemon that never answers", () => `unix://${hungSocket}`],
    ] as const) {
      it(`${what}: commands and flags complete, names give nothing within about a second`, async function () {
        // the daemon has 0.7 s; the rest is a client's start on a machine the suite keeps busy
        const started = Date.now();
        const r = await runCommand(ENGINE, ["__complete", "--", "stop", ""], { env: { ...env, ENGINE_HOST: host() } });
        expect(Date.now() - started).to.be.below(1500);
        expect(r).to.include({ code: 0, stdout: ":\n", stderr: "" });
        const shell = await shellSession("bash", { ...env, ENGINE_HOST: host() }, cwd);
        try {
          expect((await shell.complete("engine sto")).candidates).to.deep.equal(["stop"]);
          expect((await shell.complete("engine run --rest")).candidates).to.deep.equal(["--restart"]);
          const t0 = Date.now();
          expect((await shell.complete("engine exec ")).candidates).to.deep.equal([]);
          expect(Date.now() - t0).to.be.below(1500);
        } finally {
          shell.close();
        }
      });
    }
  });
});
