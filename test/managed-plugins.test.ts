/**
 * Docker's managed plugins (`docker plugin ...`, `/plugins`; host/managed-plugins/), with the
 * Docker CLI against a real engined, a real plugin built here: a busybox root filesystem and a
 * small Node server speaking the plugin protocol (an authorization plugin) on its socket. Node
 * is not in the root filesystem: the plugin's configuration binds the host's node binary and
 * its libraries in, read-only, with two Mounts entries (busybox has no server for a unix
 * socket, and no static binary that could be one is on this machine). Where practical the CLI's
 * output and exit codes are compared with Debian's dockerd 20.10.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync, symlinkSync, writeFileSync, copyFileSync } from "node:fs";
import { join } from "node:path";
import { request } from "node:http";
import { expect } from "chai";
import { connectUnix } from "../host/remote-plugins/unix-connect.js";
import { docker, dockerChecks } from "./helpers/docker-cli.js";
import { compareDaemons } from "./helpers/daemon-compare.js";
import { have, startDockerd, type Dockerd } from "./helpers/dockerd.js";
import { makeTempDir, ROOT, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { REGISTRY_BIN, startRegistry, type TestRegistry } from "./helpers/registry.js";
import { makeNetns, type Netns } from "./helpers/net-daemon.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

const LIBS = "/usr/lib/x86_64-linux-gnu";
const LOADER = `${LIBS}/ld-linux-x86-64.so.2`;

/** The plugin's server: answers Plugin.Activate, and denies the requests whose URI holds $DENY. */
const SERVER = `
const http = require("http"), fs = require("fs");
const sock = "/run/docker/plugins/authz.sock";
try { fs.unlinkSync(sock); } catch {}
const deny = process.env.DENY || "";
http.createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    res.setHeader("Content-Type", "application/vnd.docker.plugins.v1.2+json");
    if (req.url === "/Plugin.Activate") return res.end(JSON.stringify({ Implements: ["authz"] }));
    if (req.url === "/AuthZPlugin.AuthZReq") {
      const r = JSON.parse(body || "{}");
      const denied = deny !== "" && String(r.RequestUri || "").includes(deny);
      return res.end(JSON.stringify(denied ? { Allow: false, Msg: "denied by the test plugin" } : { Allow: true }));
    }
    if (req.url === "/AuthZPlugin.AuthZRes") return res.end(JSON.stringify({ Allow: true }));
    res.statusCode = 404;
    res.end("{}");
  });
}).listen(sock);
process.on("SIGTERM", () => process.exit(0));
`;

/** A plugin folder as `docker plugin create` takes it: config.json and rootfs/. */
function makePluginDir(extra: Record<string, unknown> = {}): string {
  const dir = join(makeTempDir("engine-mplugin-"), "plugin");
  const rootfs = join(dir, "rootfs");
  for (const d of ["bin", "lib64", "usr/local/bin", LIBS.slice(1), "etc", "tmp"]) mkdirSync(join(rootfs, d), { recursive: true });
  copyFileSync("/usr/bin/busybox", join(rootfs, "bin/busybox"));
  execFileSync("chmod", ["755", join(rootfs, "bin/busybox")]);
  symlinkSync("busybox", join(rootfs, "bin/sh"));
  symlinkSync(LOADER, join(rootfs, "lib64/ld-linux-x86-64.so.2"));
  writeFileSync(join(rootfs, "usr/local/bin/node"), "");
  writeFileSync(join(rootfs, "plugin.js"), SERVER);
  const config = {
    description: "test authz plugin",
    documentation: "none",
    entrypoint: ["/usr/local/bin/node", "/plugin.js"],
    interface: { types: ["docker.authz/1.0"], socket: "authz.sock" },
    network: { type: "none" },
    env: [{ name: "DENY", description: "deny URIs with this", settable: ["value"], value: "" }],
    args: { name: "args", description: "extra", settable: ["value"], value: [] },
    mounts: [
      { name: "node", source: realpathSync(process.execPath), destination: "/usr/local/bin/node", type: "bind", options: ["rbind", "ro"] },
      { name: "libs", source: LIBS, destination: LIBS, type: "bind", options: ["rbind", "ro"], settable: ["source"] },
    ],
  };
  writeFileSync(join(dir, "config.json"), JSON.stringify({ ...config, ...extra }));
  return dir;
}

/** A volume plugin as `docker plugin create` takes it: the example dir-volumes server, its volumes under its PropagatedMount /data. */
function makeVolumePluginDir(): string {
  const dir = makePluginDir();
  copyFileSync(join(ROOT, "host/remote-plugins/examples/dir-volumes/server.mjs"), join(dir, "rootfs/server.mjs"));
  const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
  writeFileSync(
    join(dir, "config.json"),
    JSON.stringify({
      ...config,
      description: "test volume plugin",
      entrypoint: ["/usr/local/bin/node", "/server.mjs", "--root", "/data", "--socket", "/run/docker/plugins/dirs.sock"],
      interface: { types: ["docker.volumedriver/1.0"], socket: "dirs.sock" },
      propagatedmount: "/data",
      env: [],
    }),
  );
  return dir;
}

const usable = () => existsSync(LOADER) && existsSync("/usr/bin/busybox") && have("runc") && have("conmon");

/** Processes whose command line holds `token` (the plugin's Args carry one per test). */
function processesWith(token: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(token)) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** `Plugin.Activate` at the socket (its path is longer than an address holds: reached through its folder). */
function activate(socket: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request({ createConnection: () => connectUnix(socket), method: "POST", path: "/Plugin.Activate" }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve(JSON.parse(text)));
    });
    req.on("error", reject);
    req.end();
  });
}

const mountsUnder = (dir: string) => readFileSync("/proc/self/mountinfo", "utf8").split("\n").filter((l) => l.split(" ")[4]?.startsWith(`${dir}/`));

/** A daemon on roots of the test's own, so that it can be started again on them. */
async function engined(roots: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<TestDaemon> {
  return startEngined({ args: ["--data-root", join(roots, "data"), "--exec-root", join(roots, "exec"), ...args], env });
}

describe("managed plugins (docker plugin)", function () {
  this.timeout(180_000);
  let pluginDir: string;

  before(function () {
    if (!usable()) this.skip();
    pluginDir = makePluginDir();
  });

  describe("the store: create, ls, inspect, set, rm", () => {
    let d: TestDaemon;
    let roots: string;
    const cli = dockerChecks(() => `unix://${d.socket}`);
    before(async () => {
      roots = makeTempDir("engine-mplugin-roots-");
      d = await engined(roots);
    });
    after(async () => d?.stop());

    it("lists none as Docker does, then the created plugin, with Docker's JSON", async () => {
      expect(await cli.ok("plugin", "ls")).to.equal("ID        NAME      DESCRIPTION   ENABLED\n");
      expect(await cli.ok("plugin", "create", "p1", pluginDir)).to.equal("p1\n");
      expect(await cli.ok("plugin", "ls", "--format", "{{.Name}}|{{.Description}}|{{.Enabled}}")).to.equal("p1:latest|test authz plugin|false\n");
      const [p] = JSON.parse(await cli.ok("plugin", "inspect", "p1"));
      expect(Object.keys(p)).to.deep.equal(["Config", "Enabled", "Id", "Name", "PluginReference", "Settings"]);
      expect(Object.keys(p.Config)).to.deep.equal([
        "Args", "Description", "DockerVersion", "Documentation", "Entrypoint", "Env", "Interface", "IpcHost", "Linux", "Mounts", "Network", "PidHost", "PropagatedMount", "User", "WorkDir", "rootfs",
      ]);
      expect(p.Id).to.match(/^[a-f0-9]{64}$/);
      expect(p).to.include({ Name: "p1:latest", PluginReference: "p1:latest", Enabled: false });
      expect(p.Config.Interface).to.deep.equal({ Socket: "authz.sock", Types: ["docker.authz/1.0"] });
      expect(p.Config.Linux).to.deep.equal({ AllowAllDevices: false, Capabilities: null, Devices: null });
      expect(p.Config.User).to.deep.equal({});
      expect(p.Config.Args).to.deep.equal({ Description: "extra", Name: "args", Settable: ["value"], Value: [] });
      expect(p.Config.Mounts[0]).to.deep.equal({ Description: "", Destination: "/usr/local/bin/node", Name: "node", Options: ["rbind", "ro"], Settable: null, Source: realpathSync(process.execPath), Type: "bind" });
      expect(p.Config.rootfs.type).to.equal("layers");
      expect(p.Config.rootfs.diff_ids[0]).to.match(/^sha256:[a-f0-9]{64}$/);
      expect(p.Settings).to.deep.equal({ Args: [], Devices: [], Env: ["DENY="], Mounts: p.Config.Mounts });
      // by name:tag, full name, id and id prefix
      for (const ref of ["p1:latest", "docker.io/library/p1", p.Id, p.Id.slice(0, 5)]) expect((await cli.ok("plugin", "inspect", "-f", "{{.Id}}", ref)).trim()).to.equal(p.Id);
      // private to root, whole
      expect(statSync(join(roots, "data/plugins")).mode & 0o777).to.equal(0o700);
      expect(statSync(join(roots, "data/plugins", p.Id, "plugin.json")).mode & 0o777).to.equal(0o600);
      expect(readdirSync(join(roots, "data/plugins/tmp"))).to.deep.equal([]);
    });

    it("answers Docker's errors: unknown names, a name in use, bad filters, bad folders", async () => {
      const socketPath = d.socket;
      expect(await cli.fails("plugin", "inspect", "nope")).to.contain('Error response from daemon: plugin "nope" not found');
      expect(await cli.fails("plugin", "create", "p1", pluginDir)).to.contain("plugin p1:latest already exists");
      expect(await cli.fails("plugin", "ls", "--filter", "foo=bar")).to.contain("invalid filter 'foo'");
      expect(await cli.fails("plugin", "ls", "--filter", "enabled=maybe")).to.contain("invalid filter 'enabled=[maybe]'");
      expect(await cli.ok("plugin", "ls", "-q", "--filter", "capability=authz")).to.match(/^[a-f0-9]{12}\n$/);
      expect(await cli.ok("plugin", "ls", "-q", "--filter", "capability=volumedriver")).to.equal("");
      expect(await cli.ok("plugin", "ls", "-q", "--filter", "enabled=true")).to.equal("");
      const notFound = await httpRequest({ socketPath }, "GET", "/plugins/nope/json");
      expect(notFound.status).to.equal(404);
      expect(JSON.parse(notFound.body).message).to.equal('plugin "nope" not found');
      const digest = await httpRequest({ socketPath }, "POST", `/plugins/create?name=p9@sha256:${"a".repeat(64)}`, Buffer.alloc(0), "application/x-tar");
      expect([digest.status, JSON.parse(digest.body).message]).to.deep.equal([400, "canonical references are not permitted"]);
      const empty = await httpRequest({ socketPath }, "POST", "/plugins/create?name=p9", Buffer.alloc(1024), "application/x-tar");
      expect([empty.status, JSON.parse(empty.body).message]).to.deep.equal([400, "no rootfs found: EOF"]);
      // the tar's own entries only: a symlink to the host's / or to a host file is no rootfs or config
      const evil = makeTempDir("engine-mplugin-evil-");
      mkdirSync(join(evil, "a"));
      symlinkSync("/", join(evil, "a/rootfs"));
      mkdirSync(join(evil, "b/rootfs"), { recursive: true });
      symlinkSync("/etc/shadow", join(evil, "b/config.json"));
      for (const [dir, message] of [["a", "no rootfs found: EOF"], ["b", "config not found"]]) {
        const tar = execFileSync("tar", ["-C", join(evil, dir), "-cf", "-", "."]);
        const r = await httpRequest({ socketPath }, "POST", `/plugins/create?name=evil-${dir}`, tar, "application/x-tar");
        expect([r.status, JSON.parse(r.body).message]).to.deep.equal([400, message]);
      }
      const noTimeout = await httpRequest({ socketPath }, "POST", "/plugins/p1/enable");
      expect([noTimeout.status, JSON.parse(noTimeout.body).message]).to.deep.equal([400, 'strconv.Atoi: parsing "": invalid syntax']);
      // nothing of the refused creates is left
      expect(readdirSync(join(roots, "data/plugins/tmp"))).to.deep.equal([]);
      expect(await cli.ok("plugin", "ls", "-q")).to.match(/^[a-f0-9]{12}\n$/);
    });

    it("sets what the configuration lets set, and refuses the rest in Docker's words", async () => {
      await cli.ok("plugin", "set", "p1", "DENY=/volumes", "args=a b", "libs.source=/usr/lib/x86_64-linux-gnu");
      const s = JSON.parse(await cli.ok("plugin", "inspect", "-f", "{{json .Settings}}", "p1"));
      expect(s.Env).to.deep.equal(["DENY=/volumes"]);
      expect(s.Args).to.deep.equal(["a", "b"]);
      expect(await cli.fails("plugin", "set", "p1", "node=/x")).to.contain('"node" is not settable');
      expect(await cli.fails("plugin", "set", "p1", "libs.destination=/x")).to.contain('"libs.destination" is not settable');
      expect(await cli.fails("plugin", "set", "p1", "zz=1")).to.contain('setting "zz" not found in the plugin configuration');
      expect(await cli.fails("plugin", "set", "p1", "=x")).to.contain("invalid format, must be <name>[.<field>][=<value>]");
      const bad = await httpRequest({ socketPath: d.socket }, "POST", "/plugins/p1/set", ["zz=1"]);
      expect(bad.status).to.equal(400);
      // kept across a restart of the daemon
      await d.stop();
      d = await engined(roots);
      expect(JSON.parse(await cli.ok("plugin", "inspect", "-f", "{{json .Settings.Env}}", "p1"))).to.deep.equal(["DENY=/volumes"]);
    });

    it("removes a disabled plugin whole", async () => {
      const id = (await cli.ok("plugin", "inspect", "-f", "{{.Id}}", "p1")).trim();
      await cli.ok("plugin", "rm", "p1");
      expect(await cli.ok("plugin", "ls", "-q")).to.equal("");
      expect(existsSync(join(roots, "data/plugins", id))).to.equal(false);
      expect(readdirSync(join(roots, "data/plugins/tmp"))).to.deep.equal([]);
      expect(await cli.fails("plugin", "rm", "p1")).to.contain('plugin "p1" not found');
    });

    it("leaves no half plugin when the daemon is killed at a create or a removal", async () => {
      for (const point of ["plugin-create.staged", "plugin-remove.renamed"]) {
        await d.stop();
        d = await engined(roots);
        if (point === "plugin-remove.renamed") await cli.ok("plugin", "create", "k1", pluginDir);
        await d.stop();
        d = await engined(roots, [], { ENGINE_DAEMON_KILL_POINT: point });
        const r = await docker(`unix://${d.socket}`, point.startsWith("plugin-create") ? ["plugin", "create", "k1", pluginDir] : ["plugin", "rm", "k1"]);
        expect(r.code, `${point}: ${r.stdout}`).to.not.equal(0);
        for (let i = 0; i < 100 && d.proc.exitCode === null && d.proc.signalCode === null; i++) await new Promise((res) => setTimeout(res, 50));
        expect(d.proc.signalCode, point).to.equal("SIGKILL");
        await d.stop();
        d = await engined(roots);
        expect(await cli.ok("plugin", "ls", "-q"), point).to.equal("");
        expect(readdirSync(join(roots, "data/plugins")).sort(), point).to.deep.equal(["tmp"]);
        expect(readdirSync(join(roots, "data/plugins/tmp")), point).to.deep.equal([]);
      }
    });
  });

  describe("enable and disable: the plugin runs as a container of the plugins' supervisor namespace", () => {
    let d: TestDaemon;
    let roots: string;
    const token = `tok${process.pid}x${Date.now()}`;
    const cli = dockerChecks(() => `unix://${d.socket}`);
    const since = String(Math.floor(Date.now() / 1000) - 1);
    before(async () => {
      roots = makeTempDir("engine-mplugin-run-");
      d = await engined(roots, ["--supervisor-plugins-namespace", "plugtest"]);
      await cli.ok("plugin", "create", "team/authz:1", pluginDir);
      await cli.ok("plugin", "set", "team/authz:1", `args=${token}`);
    });
    after(async () => d?.stop());

    const runtimeRoot = () => join(roots, "exec/managed-plugins/supervisor/plugtest/runtime");
    const runcList = () => JSON.parse(execFileSync("runc", ["--root", runtimeRoot(), "list", "--format", "json"], { encoding: "utf8" }) || "[]") ?? [];

    it("enables: the plugin answers on its socket, not among containers", async () => {
      expect(await cli.ok("plugin", "enable", "team/authz:1")).to.equal("team/authz:1\n");
      const id = (await cli.ok("plugin", "inspect", "-f", "{{.Id}}", "team/authz:1")).trim();
      expect(await cli.ok("plugin", "ls", "--format", "{{.Name}} {{.Enabled}}")).to.equal("team/authz:1 true\n");
      expect(await cli.ok("ps", "-aq")).to.equal("");
      expect(processesWith(token)).to.have.length(1);
      expect(runcList().map((c: { id: string; status: string }) => [c.id, c.status])).to.deep.equal([[id, "running"]]);
      // the socket in the plugin's folder answers the plugin protocol
      expect(await activate(join(roots, "exec/plugins", id, "authz.sock"))).to.deep.equal({ Implements: ["authz"] });
      expect(await cli.fails("plugin", "enable", "team/authz:1")).to.contain("plugin already enabled: plugin team/authz:1 is enabled");
      expect(await cli.fails("plugin", "set", "team/authz:1", "DENY=x")).to.contain("cannot set on an active plugin, disable plugin before setting");
      expect(await cli.fails("plugin", "rm", "team/authz:1")).to.contain("plugin team/authz:1 is enabled");
    });

    it("runs again when the daemon starts again", async () => {
      await d.stop();
      expect(processesWith(token), "stopped with the daemon").to.deep.equal([]);
      d = await engined(roots, ["--supervisor-plugins-namespace", "plugtest"]);
      expect(await cli.ok("plugin", "ls", "--format", "{{.Name}} {{.Enabled}}")).to.equal("team/authz:1 true\n");
      expect(processesWith(token)).to.have.length(1);
    });

    it("starts again a plugin whose process was killed", async () => {
      const [before] = processesWith(token);
      process.kill(before, "SIGKILL");
      let after: number[] = [];
      for (let i = 0; i < 100 && !(after.length === 1 && after[0] !== before); i++) {
        await new Promise((res) => setTimeout(res, 100));
        after = processesWith(token);
      }
      expect(after).to.have.length(1);
      expect(after[0]).to.not.equal(before);
      expect(await cli.ok("plugin", "ls", "--format", "{{.Enabled}}")).to.equal("true\n");
    });

    it("runs on across a stop of the daemon with --live-restore, and is taken up, not started twice", async () => {
      await d.stop();
      d = await engined(roots, ["--supervisor-plugins-namespace", "plugtest", "--live-restore"]);
      const [before] = processesWith(token);
      await d.stop();
      expect(processesWith(token)).to.deep.equal([before]);
      d = await engined(roots, ["--supervisor-plugins-namespace", "plugtest"]);
      expect(processesWith(token)).to.deep.equal([before]);
      expect(await cli.ok("plugin", "ls", "--format", "{{.Enabled}}")).to.equal("true\n");
    });

    it("runs with the host's namespaces, added capabilities and a propagated mount when the configuration says so", async () => {
      const dir = makePluginDir({ network: { type: "host" }, pidhost: true, ipchost: true, propagatedmount: "/data", linux: { capabilities: ["CAP_SYS_ADMIN"] }, workdir: "/tmp" });
      mkdirSync(join(dir, "rootfs/data"));
      await cli.ok("plugin", "create", "hostly", dir);
      const mine = `${token}h`;
      await cli.ok("plugin", "set", "hostly", `args=${mine}`);
      await cli.ok("plugin", "enable", "hostly");
      const id = (await cli.ok("plugin", "inspect", "-f", "{{.Id}}", "hostly")).trim();
      const [pid] = processesWith(mine);
      for (const ns of ["net", "pid", "ipc"]) expect(readlinkSync(`/proc/${pid}/ns/${ns}`), ns).to.equal(readlinkSync(`/proc/self/ns/${ns}`));
      expect(readlinkSync(`/proc/${pid}/ns/mnt`)).to.not.equal(readlinkSync("/proc/self/ns/mnt"));
      expect(readlinkSync(`/proc/${pid}/cwd`)).to.equal("/tmp");
      const capEff = BigInt(`0x${/CapEff:\s+([0-9a-f]+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]}`);
      expect(capEff & (1n << 21n), "CAP_SYS_ADMIN").to.not.equal(0n);
      // what the plugin mounts at its PropagatedMount is seen on the host, in its root filesystem
      execFileSync("nsenter", ["-t", String(pid), "-m", "sh", "-c", "mount -t tmpfs t /data && echo hi > /data/f"]);
      expect(readFileSync(join(roots, "data/plugins", id, "rootfs/data/f"), "utf8")).to.equal("hi\n");
      await cli.ok("plugin", "rm", "-f", "hostly");
      expect(processesWith(mine)).to.deep.equal([]);
      expect(mountsUnder(roots)).to.deep.equal([]);
    });

    it("disables, leaving no process, mount or runtime state", async () => {
      expect(await cli.ok("plugin", "disable", "team/authz:1")).to.equal("team/authz:1\n");
      expect(await cli.fails("plugin", "disable", "team/authz:1")).to.contain("plugin is already disabled: plugin team/authz:1 found but disabled");
      expect(processesWith(token)).to.deep.equal([]);
      expect(mountsUnder(roots)).to.deep.equal([]);
      expect(runcList()).to.deep.equal([]);
      expect(readdirSync(join(roots, "exec/plugins"))).to.deep.equal([]);
      expect(readdirSync(join(roots, "exec/managed-plugins/bundles"))).to.deep.equal([]);
      // enabled again and removed by force: nothing left either
      await cli.ok("plugin", "enable", "team/authz:1");
      expect(processesWith(token)).to.have.length(1);
      await cli.ok("plugin", "rm", "-f", "team/authz:1");
      expect(processesWith(token)).to.deep.equal([]);
      expect(mountsUnder(roots)).to.deep.equal([]);
      expect(runcList()).to.deep.equal([]);
      expect(await cli.ok("plugin", "ls", "-q")).to.equal("");
    });

    it("tells /events of each change, as Docker's daemon does", async () => {
      const until = String(Math.floor(Date.now() / 1000) + 1);
      const out = await cli.ok("events", "--since", since, "--until", until, "--filter", "type=plugin", "--format", "{{.Action}} {{.Actor.Attributes.name}}");
      // this daemon's own since its last start: an enable, a disable, then the last plugin's create, enable and forced removal
      expect(out.split("\n").filter(Boolean)).to.include.members(["disable team/authz:1", "enable team/authz:1", "remove team/authz:1", "create hostly:latest", "remove hostly"]);
    });
  });

  describe("an enabled authorization plugin named by --authorization-plugin name:tag", () => {
    let d: TestDaemon;
    let roots: string;
    const cli = dockerChecks(() => `unix://${d.socket}`);
    before(async () => {
      roots = makeTempDir("engine-mplugin-authz-");
      d = await engined(roots);
      await cli.ok("plugin", "create", "authz:2", pluginDir);
      await cli.ok("plugin", "set", "authz:2", "DENY=/volumes");
      await cli.ok("plugin", "enable", "authz:2");
      await d.stop();
      d = await engined(roots, ["--authorization-plugin", "authz:2"]);
    });
    after(async () => d?.stop());

    it("judges requests; disabling it takes it out of the chain, as Docker's daemon does", async () => {
      expect(await cli.fails("volume", "ls")).to.contain("Error response from daemon: authorization denied by plugin authz:2: denied by the test plugin");
      await cli.ok("ps");
      expect(await cli.ok("info", "-f", "{{.Plugins.Authorization}}")).to.equal("[authz.authz:2]\n");
      await cli.ok("plugin", "disable", "authz:2");
      await cli.ok("volume", "ls");
    });

    it("a disabled one stops the daemon's start in Docker's words", async () => {
      const dataRoot = join(roots, "data");
      await d.stop();
      const r = await startEngined({ args: ["--data-root", dataRoot, "--exec-root", join(roots, "exec"), "--authorization-plugin", "authz:2"], timeoutMs: 20_000 }).then(
        (x) => ({ started: x, err: "" }),
        (err: Error) => ({ started: undefined, err: err.message }),
      );
      await r.started?.stop();
      expect(r.err).to.contain("plugin authz:2 found but disabled");
      d = await engined(roots);
    });
  });

  describe("an enabled volume plugin as a volume driver", () => {
    let d: TestDaemon;
    let roots: string;
    const cli = dockerChecks(() => `unix://${d.socket}`);
    before(async () => {
      roots = makeTempDir("engine-mplugin-vol-");
      d = await engined(roots);
      await cli.ok("import", "--change", 'CMD ["sh"]', writeFixture(roots, "rootfs.tar", await busyboxRootfs()), "busybox");
      await cli.ok("plugin", "create", "team/dirs:1", makeVolumePluginDir());
      await cli.ok("plugin", "enable", "team/dirs:1");
    });
    after(async () => {
      if (!d) return;
      await docker(`unix://${d.socket}`, ["rm", "-f", "mv-user"]);
      await docker(`unix://${d.socket}`, ["volume", "rm", "mv1"]);
      await docker(`unix://${d.socket}`, ["plugin", "rm", "-f", "team/dirs:1"]);
      await d.stop();
    });

    it("makes, mounts and removes volumes through it, its paths taken in its root filesystem", async () => {
      expect(await cli.ok("volume", "create", "-d", "team/dirs:1", "-o", "size=1", "mv1")).to.equal("mv1\n");
      const id = (await cli.ok("plugin", "inspect", "-f", "{{.Id}}", "team/dirs:1")).trim();
      const data = join(roots, "data/plugins", id, "rootfs/data/mv1/data");
      expect(existsSync(data)).to.equal(true);
      expect(await cli.ok("run", "--name", "mv-user", "-v", "mv1:/x", "busybox", "sh", "-c", "echo hi > /x/f; cat /x/f")).to.equal("hi\n");
      expect(readFileSync(join(data, "f"), "utf8")).to.equal("hi\n");
      // (the unmount follows the exit the run returned on: engined tells waiters before its clean-up, as dockerd 20.10 did)
      let v: { Driver: string; Name: string; Status: { mounts: number } } | undefined;
      for (let i = 0; i < 50 && v?.Status.mounts !== 0; i++) {
        v = JSON.parse(await cli.ok("volume", "inspect", "mv1"))[0];
        if (v!.Status.mounts !== 0) await new Promise((r) => setTimeout(r, 100));
      }
      expect(v).to.include({ Driver: "team/dirs:1", Name: "mv1" });
      expect(v!.Status).to.deep.equal({ mounts: 0, options: { size: "1" } });
      expect((await cli.ok("volume", "ls", "--format", "{{.Driver}} {{.Name}}")).split("\n")).to.include("team/dirs:1 mv1");
      await cli.ok("rm", "mv-user");
      expect(await cli.ok("volume", "rm", "mv1")).to.equal("mv1\n");
      expect(existsSync(join(roots, "data/plugins", id, "rootfs/data/mv1"))).to.equal(false);
    });

    it("is in use while a volume of it is recorded: not disabled without force, as Docker counts it", async () => {
      await cli.ok("volume", "create", "-d", "team/dirs:1", "held");
      const r = await docker(`unix://${d.socket}`, ["plugin", "disable", "team/dirs:1"]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include("plugin team/dirs:1 is in use");
      await cli.ok("volume", "rm", "held");
    });

    it("is not found disabled, in Docker's words", async () => {
      await cli.ok("plugin", "disable", "team/dirs:1");
      const r = await docker(`unix://${d.socket}`, ["volume", "create", "-d", "team/dirs:1", "mv2"]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(/create mv2: error looking up volume plugin team\/dirs:1: .*disabled/);
      await cli.ok("plugin", "enable", "team/dirs:1");
    });
  });

  describe("with a registry: push, privileges, install (pull), upgrade", () => {
    let d: TestDaemon;
    let reg: TestRegistry;
    let roots: string;
    let ref: Dockerd | undefined;
    const cli = dockerChecks(() => `unix://${d.socket}`);
    before(async function () {
      if (!existsSync(REGISTRY_BIN)) this.skip();
      reg = await startRegistry();
      roots = makeTempDir("engine-mplugin-reg-");
      d = await engined(roots);
    });
    after(async () => {
      await d?.stop();
      await ref?.stop();
      await reg?.stop();
    });

    it("pushes a plugin with Docker's media types", async () => {
      await cli.ok("plugin", "create", `${reg.host}/tp:v1`, pluginDir);
      const out = await cli.ok("plugin", "push", `${reg.host}/tp:v1`);
      // Docker's lines: the manifest, the layer and the configuration, each Preparing then Upload complete
      expect(out.split("\n")[0]).to.equal(`The push refers to repository [${reg.host}/tp]`);
      expect(out.split("\n").filter((l) => /^[a-f0-9]{12}: Upload complete$/.test(l))).to.have.length(3);
      const res = await fetch(`${reg.url}/v2/tp/manifests/v1`, { headers: { accept: "application/vnd.docker.distribution.manifest.v2+json" } });
      const manifest = (await res.json()) as { mediaType: string; config: { mediaType: string; digest: string }; layers: { mediaType: string; digest: string }[] };
      expect(manifest.mediaType).to.equal("application/vnd.docker.distribution.manifest.v2+json");
      expect(manifest.config.mediaType).to.equal("application/vnd.docker.plugin.v1+json");
      expect(manifest.layers.map((l) => l.mediaType)).to.deep.equal(["application/vnd.docker.image.rootfs.diff.tar.gzip"]);
      const diffIds = JSON.parse(await cli.ok("plugin", "inspect", "-f", "{{json .Config.rootfs.diff_ids}}", `${reg.host}/tp:v1`));
      expect(manifest.layers.map((l) => l.digest)).to.deep.equal(diffIds);
      const config = (await (await fetch(`${reg.url}/v2/tp/blobs/${manifest.config.digest}`)).json()) as { Description: string; Entrypoint: string[] };
      expect(config).to.include({ Description: "test authz plugin" });
      expect(config.Entrypoint).to.deep.equal(["/usr/local/bin/node", "/plugin.js"]);
    });

    it("lists the privileges a plugin in the registry asks for, and refuses a pull that accepted others", async () => {
      const res = await httpRequest({ socketPath: d.socket }, "GET", `/plugins/privileges?remote=${reg.host}/tp:v1`);
      expect(res.status).to.equal(200);
      const privileges = JSON.parse(res.body);
      expect(privileges).to.deep.equal([
        { Name: "network", Description: "permissions to access a network", Value: ["none"] },
        { Name: "mount", Description: "host path to mount", Value: [realpathSync(process.execPath)] },
        { Name: "mount", Description: "host path to mount", Value: ["/usr/lib/x86_64-linux-gnu"] },
      ]);
      const wrong = await httpRequest({ socketPath: d.socket }, "POST", `/plugins/pull?remote=${reg.host}/tp:v1&name=wrong`, privileges.slice(1));
      expect(wrong.status).to.equal(200);
      expect(wrong.body).to.contain('"error":"incorrect privileges"');
      expect(await cli.ok("plugin", "ls", "--format", "{{.Name}}")).to.equal(`${reg.host}/tp:v1\n`);
    });

    it("installs under an alias, enabled, and runs it", async () => {
      const out = await cli.ok("plugin", "install", "--grant-all-permissions", "--alias", "inst:1", `${reg.host}/tp:v1`);
      expect(out).to.contain(`Installed plugin ${reg.host}/tp:v1`);
      const p = JSON.parse(await cli.ok("plugin", "inspect", "-f", "{{json .}}", "inst:1"));
      expect(p).to.include({ Name: "inst:1", Enabled: true, PluginReference: `${reg.host}/tp:v1` });
      expect(p.Config.Interface).to.deep.equal({ Socket: "authz.sock", Types: ["docker.authz/1.0"] });
      expect(await activate(join(roots, "exec/plugins", p.Id, "authz.sock"))).to.deep.equal({ Implements: ["authz"] });
      expect(await cli.fails("plugin", "install", "--grant-all-permissions", "--alias", "inst:1", `${reg.host}/tp:v1`)).to.contain("plugin inst:1 already exists");
    });

    it("upgrades a disabled plugin only, keeping its settings", async () => {
      // the CLI refuses by itself; the daemon too, in Docker's words
      expect(await cli.fails("plugin", "upgrade", "--grant-all-permissions", "inst:1", `${reg.host}/tp:v1`)).to.contain("the plugin must be disabled before upgrading");
      const refused = await httpRequest({ socketPath: d.socket }, "POST", `/plugins/inst:1/upgrade?remote=${reg.host}/tp:v1`, []);
      expect([refused.status, JSON.parse(refused.body).message]).to.deep.equal([409, "plugin must be disabled before upgrading: plugin inst:1 is enabled"]);
      await cli.ok("plugin", "disable", "inst:1");
      await cli.ok("plugin", "set", "inst:1", "DENY=/x");
      const id = (await cli.ok("plugin", "inspect", "-f", "{{.Id}}", "inst:1")).trim();
      expect(await cli.ok("plugin", "upgrade", "--grant-all-permissions", "inst:1", `${reg.host}/tp:v1`)).to.contain(`Upgraded plugin inst:1 to ${reg.host}/tp:v1`);
      expect(await cli.ok("plugin", "inspect", "-f", "{{.Id}} {{json .Settings.Env}}", "inst:1")).to.equal(`${id} ["DENY=/x"]\n`);
      expect(readdirSync(join(roots, "data/plugins/tmp"))).to.deep.equal([]);
      await cli.ok("plugin", "enable", "inst:1");
      await cli.ok("plugin", "rm", "-f", "inst:1");
    });

    it("leaves the old plugin whole when the daemon is killed in the middle of an upgrade", async () => {
      await cli.ok("plugin", "install", "--grant-all-permissions", "--disable", "--alias", "kup:1", `${reg.host}/tp:v1`);
      const before = await cli.ok("plugin", "inspect", "-f", "{{.Id}} {{json .Config}}", "kup:1");
      await d.stop();
      d = await engined(roots, [], { ENGINE_DAEMON_KILL_POINT: "plugin-upgrade.set-aside" });
      const r = await docker(`unix://${d.socket}`, ["plugin", "upgrade", "--grant-all-permissions", "kup:1", `${reg.host}/tp:v1`]);
      expect(r.code).to.not.equal(0);
      for (let i = 0; i < 100 && d.proc.exitCode === null && d.proc.signalCode === null; i++) await new Promise((res) => setTimeout(res, 50));
      expect(d.proc.signalCode).to.equal("SIGKILL");
      await d.stop();
      d = await engined(roots);
      expect(await cli.ok("plugin", "inspect", "-f", "{{.Id}} {{json .Config}}", "kup:1")).to.equal(before);
      expect(readdirSync(join(roots, "data/plugins/tmp"))).to.deep.equal([]);
      await cli.ok("plugin", "rm", "kup:1");
    });

    it("installs alike with Docker's daemon (output, exit code, what is installed)", async function () {
      if (!have("dockerd")) this.skip();
      ref = await startDockerd(reg);
      const lines = [
        `docker plugin install --grant-all-permissions --disable --alias cmp:1 ${reg.host}/tp:v1`,
        `docker plugin install --grant-all-permissions --disable --alias cmp:1 ${reg.host}/tp:v1`,
        "docker plugin ls --format '{{.Name}} {{.Enabled}} {{.Description}}' | grep cmp",
        "docker plugin inspect cmp:1 -f '{{.PluginReference}} {{json .Settings}} {{json .Config.Entrypoint}} {{json .Config.Interface}}'",
        "docker plugin rm cmp:1",
      ];
      expect(compareDaemons({ engined: `unix://${d.socket}`, dockerd: ref.host }, lines), "lines answered differently").to.equal("");
      // (dockerd 20.10 asks a plain-HTTP registry on loopback over TLS for a plugin it lacks: no comparison)
      expect(await cli.fails("plugin", "install", "--grant-all-permissions", `${reg.host}/nothere:v1`)).to.contain("not found");
    });
  });

  describe("compared with Docker's daemon", () => {
    let e: TestDaemon | undefined;
    let ref: Dockerd | undefined;
    let ns: Netns | undefined;
    before(async function () {
      if (!have("dockerd")) this.skip();
      ns = makeNetns();
      [e, ref] = await Promise.all([startEngined({ netns: ns.file, args: ["--bridge", "none", "--iptables=false", "--ip6tables=false"] }), startDockerd()]);
    });
    after(async () => {
      for (const host of e && ref ? [`unix://${e.socket}`, ref.host] : []) await docker(host, ["plugin", "rm", "-f", "cmp"]);
      await e?.stop();
      await ref?.stop();
      ns?.remove();
    });

    it("answers the plugin commands alike, output and exit codes", async () => {
      const lines = [
        "docker plugin ls",
        "docker plugin create cmp $DIR",
        "docker plugin create cmp $DIR 2>&1 | grep -v \"Can't\"",
        "docker plugin ls --format '{{.Name}} {{.Description}} {{.Enabled}}'",
        "docker plugin ls --filter enabled=false --format '{{.Name}}'",
        "docker plugin ls --filter capability=authz --format '{{.Name}}'",
        "docker plugin ls --filter capability=volumedriver",
        "docker plugin inspect cmp -f '{{.Name}} {{.Enabled}} {{.PluginReference}} {{json .Settings}} {{json .Config.Interface}} {{json .Config.Linux}}'",
        "docker plugin inspect docker.io/library/cmp:latest -f '{{.Name}}'",
        "docker plugin inspect nope",
        "docker plugin set cmp DENY=x args='a b'",
        "docker plugin set cmp node=/x",
        "docker plugin set cmp zz=1",
        "docker plugin set cmp libs.destination=/x",
        "docker plugin inspect cmp -f '{{json .Settings.Env}} {{json .Settings.Args}}'",
        "docker plugin enable cmp",
        "docker plugin ls --format '{{.Name}} {{.Enabled}}'",
        "docker plugin enable cmp",
        "docker plugin set cmp DENY=y",
        "docker plugin rm cmp",
        "docker ps -a",
        "docker plugin disable cmp",
        "docker plugin disable cmp",
        "docker plugin rm cmp",
        "docker plugin rm cmp",
        "docker plugin ls",
        `docker plugin create p3@sha256:${"a".repeat(64)} $DIR 2>&1 | grep -v "Can't"`,
      ];
      expect(compareDaemons({ engined: `unix://${e!.socket}`, dockerd: ref!.host }, lines, { DIR: pluginDir }), "lines answered differently").to.equal("");
    });
  });
});
