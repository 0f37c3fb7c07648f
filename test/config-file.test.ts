/**
 * The configuration file (`--config-file`, default /etc/engine/daemon.json) and `--validate`,
 * against the real `bin/engined`: what a valid file looks like, how a bad one is reported, the
 * spec's error table row by row, option rules that need the whole configuration, proxies and
 * their masking, and options taken from the environment.
 *
 * The spec's error-table rows on insecure registries, legacy v1-only registries and
 * btrfs.min_space belong to the registry and storage-driver issues and are tested there.
 */
import "./helpers/root-hooks.js";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { daemonArgs, makeTempDir, runEngined, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";

const CONFLICT = "the following directives are specified both as a flag and in the configuration file";
const UNKNOWN = "the following directives don't match any configuration option: ";
const SYSTEMD_RUNNING = existsSync("/run/systemd/system");

/** Writes `content` (JSON unless already text) to `<dir>/<name>` and returns the path. */
function writeConfig(dir: string, content: unknown, name = "daemon.json"): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
  return path;
}

/** Flags for a start in `dir`: its own roots, pid file and socket. */
function startArgs(dir: string): string[] {
  return [...daemonArgs(dir), "-H", `unix://${join(dir, "engine.sock")}`];
}

/** A start that must fail: exit 1, one `engined: ` line or a fatal log line, nothing left behind. */
function expectFailedStart(res: RunResult, dir: string): void {
  expect(res.code, `stdout: ${res.stdout}\nstderr: ${res.stderr}`).to.equal(1);
  expect(res.stdout).to.not.include("configuration OK");
  expect(res.stderr).to.not.include("daemon has completed initialization");
  expect(existsSync(join(dir, "engine.pid")), "pid file left behind").to.equal(false);
  expect(existsSync(join(dir, "engine.sock")), "socket left behind").to.equal(false);
}

async function info(d: TestDaemon): Promise<Record<string, unknown>> {
  const res = await httpRequest({ socketPath: d.socket }, "GET", "/info");
  expect(res.status).to.equal(200);
  return JSON.parse(res.body) as Record<string, unknown>;
}

async function waitFor(what: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (what()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return what();
}

describe("configuration file and --validate", function () {
  this.timeout(30_000);

  describe("--validate", () => {
    it("accepts a valid file with keys of every kind: prints exactly 'configuration OK', exits 0, creates nothing", async () => {
      const dir = makeTempDir();
      const dataRoot = join(dir, "data");
      const execRoot = join(dir, "exec");
      const pidfile = join(dir, "engine.pid");
      const socket = join(dir, "engine.sock");
      const path = writeConfig(dir, {
        "data-root": dataRoot,
        "exec-root": execRoot,
        pidfile,
        hosts: [`unix://${socket}`],
        labels: ["env=test", "tier=config"],
        debug: true,
        "max-concurrent-downloads": 6,
        "default-ulimits": { nofile: { Name: "nofile", Hard: 2048, Soft: 1024 } },
        "default-address-pools": [{ base: "172.30.0.0/16", size: 24 }],
        runtimes: {
          dropin: { path: "/usr/local/bin/crun", runtimeArgs: ["--debug"] },
          shimmed: { runtimeType: "io.supervisor.runsc.v1", options: { TypeUrl: "runsc.options", ConfigPath: "/etc/runsc.toml" } },
        },
        proxies: { "http-proxy": "http://proxy.test:3128", "https-proxy": "http://u:p@proxy.test:3129", "no-proxy": "localhost,.test" },
        builder: {
          gc: {
            enabled: true,
            defaultKeepStorage: "10GB",
            policy: [{ keepStorage: "512MB", filter: ["unused-for=1400h"] }, { all: true }],
          },
        },
        "log-opts": { "max-size": "10m", "max-file": "3" },
        features: { cdi: false, "containerd-snapshotter": true },
        "default-shm-size": "128M",
      });
      const res = await runEngined(["--validate", "--config-file", path]);
      expect(res.stderr).to.equal("");
      expect(res.stdout).to.equal("configuration OK\n");
      expect(res.code).to.equal(0);
      for (const p of [pidfile, socket, dataRoot, execRoot]) expect(existsSync(p), `${p} was created`).to.equal(false);
    });

    it("names the file and every key that matches no option, in file order, and exits 1", async () => {
      const dir = makeTempDir();
      const path = writeConfig(dir, {
        "bogus-key": 1,
        debug: true,
        proxies: { "http-proxy": "http://proxy.test:1", "ftp-proxy": "ftp://proxy.test:2" },
        "another-unknown": "x",
        labels: ["a=1"],
        "storage-drvier": "overlay2",
      });
      const res = await runEngined(["--validate", "--config-file", path]);
      expect(res.code).to.equal(1);
      expect(res.stdout).to.equal("");
      expect(res.stderr).to.match(/^engined: /);
      expect(res.stderr).to.include(path);
      expect(res.stderr).to.include(`${UNKNOWN}bogus-key, proxies.ftp-proxy, another-unknown, storage-drvier`);
      // Known keys are not reported.
      expect(res.stderr).to.not.match(/\bdebug\b|\blabels\b|http-proxy/);
    });

    it("names each key with a value of the wrong type and the type expected, and exits 1", async () => {
      const dir = makeTempDir();
      const path = writeConfig(dir, {
        "max-concurrent-downloads": "3",
        labels: "a=1",
        debug: "yes",
        "default-shm-size": true,
        "log-opts": { "max-size": 10 },
      });
      const res = await runEngined(["--validate", "--config-file", path]);
      expect(res.code).to.equal(1);
      expect(res.stdout).to.equal("");
      expect(res.stderr).to.include(`unable to configure the engine daemon with file ${path}`);
      expect(res.stderr).to.include("the following directives have invalid values");
      expect(res.stderr).to.include('max-concurrent-downloads: expected an integer, got string "3"');
      expect(res.stderr).to.include('labels: expected an array of strings, got string "a=1"');
      expect(res.stderr).to.include('debug: expected a boolean, got string "yes"');
      expect(res.stderr).to.include("default-shm-size: expected a size string");
      expect(res.stderr).to.include('log-opts: expected a string for "max-size", got number 10');
    });

    it("refuses a file that is not JSON, or not a JSON object, naming it", async () => {
      const dir = makeTempDir();
      const broken = writeConfig(dir, '{ "debug": true,', "broken.json");
      const array = writeConfig(dir, '["debug"]', "array.json");
      const [a, b] = await Promise.all([
        runEngined(["--validate", "--config-file", broken]),
        runEngined(["--validate", "--config-file", array]),
      ]);
      expect(a.code).to.equal(1);
      expect(a.stdout).to.equal("");
      expect(a.stderr).to.include(`unable to configure the engine daemon with file ${broken}: it is not valid JSON`);
      expect(b.code).to.equal(1);
      expect(b.stderr).to.include(`unable to configure the engine daemon with file ${array}: it must hold a JSON object`);
    });

    it("with no --config-file and no default file, validates the flags alone", async function () {
      if (existsSync("/etc/engine/daemon.json")) {
        this.skip(); // /etc/engine/daemon.json exists on this machine: the default file would be read
      }
      const res = await runEngined(["--validate"]);
      expect(res.stderr).to.equal("");
      expect(res.stdout).to.equal("configuration OK\n");
      expect(res.code).to.equal(0);
      // Flags are still checked without a file.
      const bad = await runEngined(["--validate", "--exec-opt", "native.cgroupdriver=upstart"]);
      expect(bad.code).to.equal(1);
      expect(bad.stdout).to.equal("");
      expect(bad.stderr).to.include("native.cgroupdriver must be cgroupfs or systemd");
    });

    it("refuses a --config-file that does not exist", async () => {
      const missing = join(makeTempDir(), "nope", "daemon.json");
      const res = await runEngined(["--validate", "--config-file", missing]);
      expect(res.code).to.equal(1);
      expect(res.stdout).to.equal("");
      expect(res.stderr).to.equal(
        `engined: unable to configure the engine daemon: the configuration file ${missing} does not exist\n`,
      );
    });
  });

  describe("the spec's error table", () => {
    it("an option set in the file and as a flag stops the start, even with the same value, naming both values", async () => {
      const dir = makeTempDir();
      const path = writeConfig(dir, { debug: true, labels: ["a=1"], "max-concurrent-downloads": 3, mtu: 1400 });
      const res = await runEngined([
        ...startArgs(dir), "--config-file", path, "--max-concurrent-downloads", "4", "--label", "a=1", "--debug",
      ]);
      expectFailedStart(res, dir);
      expect(res.stderr).to.match(/^engined: /);
      expect(res.stderr).to.include(`unable to configure the engine daemon with file ${path}: ${CONFLICT}: `);
      expect(res.stderr).to.include("debug: (from flag: true, from file: true)");
      expect(res.stderr).to.include('labels: (from flag: ["a=1"], from file: ["a=1"])');
      expect(res.stderr).to.include("max-concurrent-downloads: (from flag: 4, from file: 3)");
      // in the flags' names' order, whatever order they came in (Docker's pflag visits them sorted)
      const at = (word: string) => res.stderr.indexOf(`${word}: (from flag`);
      expect(at("debug")).to.be.lessThan(at("labels"));
      expect(at("labels")).to.be.lessThan(at("max-concurrent-downloads"));
      // mtu is only in the file: no conflict.
      expect(res.stderr).to.not.include("mtu");
      expect(existsSync(join(dir, "data")), "data root created").to.equal(false);

      // The same file with --validate reports the same conflict.
      const validate = await runEngined(["--validate", "--config-file", path, "--debug"]);
      expect(validate.code).to.equal(1);
      expect(validate.stdout).to.equal("");
      expect(validate.stderr).to.include("debug: (from flag: true, from file: true)");
    });

    it("`hosts` in the file conflicts with -H on the command line", async () => {
      const dir = makeTempDir();
      const fileSocket = `unix://${join(dir, "file.sock")}`;
      const flagSocket = `unix://${join(dir, "engine.sock")}`;
      const path = writeConfig(dir, { hosts: [fileSocket] });
      const res = await runEngined([...daemonArgs(dir), "--config-file", path, "-H", flagSocket]);
      expectFailedStart(res, dir);
      expect(res.stderr).to.include(CONFLICT);
      expect(res.stderr).to.include(`hosts: (from flag: ["${flagSocket}"], from file: ["${fileSocket}"])`);
      expect(existsSync(join(dir, "file.sock"))).to.equal(false);
    });

    it("log-format and features set both by flag and by file are errors", async () => {
      const dir1 = makeTempDir();
      const logFile = writeConfig(dir1, { "log-format": "text" });
      const dir2 = makeTempDir();
      const featureFile = writeConfig(dir2, { features: { cdi: true } });
      const [logRes, featureRes] = await Promise.all([
        runEngined([...startArgs(dir1), "--config-file", logFile, "--log-format", "json"]),
        runEngined([...startArgs(dir2), "--config-file", featureFile, "--feature", "cdi=false"]),
      ]);
      expectFailedStart(logRes, dir1);
      expect(logRes.stderr).to.include(CONFLICT);
      // a string as it is, as Docker prints it (Go's %v)
      expect(logRes.stderr).to.include("log-format: (from flag: json, from file: text)");
      expectFailedStart(featureRes, dir2);
      expect(featureRes.stderr).to.include(CONFLICT);
      expect(featureRes.stderr).to.include('features: (from flag: {"cdi":false}, from file: {"cdi":true})');
    });

    it("a file with keys matching no option stops a normal start with the --validate message", async () => {
      const dir = makeTempDir();
      const path = writeConfig(dir, { "no-such-option": true, debug: false, "neither-this": [] });
      const [start, validate] = await Promise.all([
        runEngined([...startArgs(dir), "--config-file", path]),
        runEngined(["--validate", "--config-file", path]),
      ]);
      expectFailedStart(start, dir);
      const message = `engined: unable to configure the engine daemon with file ${path}: ${UNKNOWN}no-such-option, neither-this\n`;
      expect(start.stderr).to.equal(message);
      expect(validate.code).to.equal(1);
      expect(validate.stderr).to.equal(message);
    });

    it("-H fd://5 without an activation socket exits 1", async () => {
      const dir = makeTempDir();
      const res = await runEngined([...daemonArgs(dir), "-H", "fd://5"], { env: { LISTEN_PID: "", LISTEN_FDS: "" } });
      expectFailedStart(res, dir);
      expect(res.stderr).to.include("failed to start daemon");
      expect(res.stderr).to.include("socket activation");
    });

    it("native.cgroupdriver=systemd while systemd is not running is refused, by flag and by file", async function () {
      if (SYSTEMD_RUNNING) {
        this.skip(); // systemd runs as init here: the systemd cgroup driver is available
      }
      const dir1 = makeTempDir();
      const dir2 = makeTempDir();
      const path = writeConfig(dir2, { "exec-opts": ["native.cgroupdriver=systemd"] });
      const [byFlag, byFile] = await Promise.all([
        runEngined([...startArgs(dir1), "--exec-opt", "native.cgroupdriver=systemd"]),
        runEngined([...startArgs(dir2), "--config-file", path]),
      ]);
      for (const [res, dir] of [[byFlag, dir1], [byFile, dir2]] as const) {
        expectFailedStart(res, dir);
        expect(res.stderr).to.include("native.cgroupdriver=systemd was asked for, but systemd is not running on this host");
      }
    });

    it("a reload that finds a conflict changes nothing, and the daemon keeps running", async () => {
      const dir = makeTempDir();
      const path = writeConfig(dir, { labels: ["a=1"] });
      const d = await startEngined({ args: ["--config-file", path, "--debug"] });
      try {
        const before = await info(d);
        expect(before.Labels).to.deep.equal(["a=1"]);
        expect(before.Debug).to.equal(true);

        writeConfig(dir, { labels: ["b=2"], debug: false });
        d.proc.kill("SIGHUP");
        await new Promise((r) => setTimeout(r, 1000));
        expect(await waitFor(() => d.output().includes("reload failed"), 3000), d.output()).to.equal(true);

        expect(d.proc.exitCode).to.equal(null);
        expect(d.proc.signalCode).to.equal(null);
        const ping = await httpRequest({ socketPath: d.socket }, "GET", "/_ping");
        expect(ping.status).to.equal(200);
        expect(ping.body).to.equal("OK");
        const after = await info(d);
        expect(after.Labels).to.deep.equal(["a=1"]);
        expect(after.Debug).to.equal(true);
        const out = d.output();
        expect(out).to.include("reload failed");
        expect(out).to.include("specified both as a flag and in the configuration file");
        expect(out).to.include("debug: (from flag: true, from file: false)");
        expect(out).to.not.include("reloaded labels");
      } finally {
        expect(await d.stop()).to.equal(0);
      }
    });
  });

  describe("option rules", () => {
    it("--metrics-addr needs --experimental", async () => {
      const dir = makeTempDir();
      const res = await runEngined([...startArgs(dir), "--metrics-addr", "127.0.0.1:9323"]);
      expectFailedStart(res, dir);
      expect(res.stderr).to.include("metrics-addr is only supported when experimental is enabled");

      // port 0: the metrics listener is real now, and 9323 may be taken on a shared machine
      const d = await startEngined({ args: ["--metrics-addr", "127.0.0.1:0", "--experimental"] });
      try {
        expect((await info(d)).ExperimentalBuild).to.equal(true);
      } finally {
        expect(await d.stop()).to.equal(0);
      }
    });

    it("--seccomp-profile must name a readable JSON profile, which /info then reports", async () => {
      const dir = makeTempDir();
      const res = await runEngined([...startArgs(dir), "--seccomp-profile", "/nonexistent.json"]);
      expectFailedStart(res, dir);
      expect(res.stderr).to.include("seccomp-profile /nonexistent.json cannot be used");

      const profile = writeConfig(makeTempDir(), { defaultAction: "SCMP_ACT_ERRNO" }, "seccomp.json");
      const d = await startEngined({ args: ["--seccomp-profile", profile] });
      try {
        expect((await info(d)).SecurityOptions).to.include(`name=seccomp,profile=${profile}`);
      } finally {
        expect(await d.stop()).to.equal(0);
      }
    });

    it("stops a start whose --log-opt the --log-driver refuses, in Docker's words (moby's TestDaemonCorruptedLogDriverAddress)", async () => {
      const dir = makeTempDir();
      const res = await runEngined([...startArgs(dir), "--log-driver=syslog", "--log-opt", "syslog-address=corrupted:42"]);
      expectFailedStart(res, dir);
      expect(res.stderr).to.include("failed to set log opts: syslog-address should be in form proto://address, got corrupted:42");
    });

    it("--add-runtime refuses the reserved name ocirun", async () => {
      const dir = makeTempDir();
      const res = await runEngined([...startArgs(dir), "--add-runtime", "ocirun=/x"]);
      expectFailedStart(res, dir);
      expect(res.stderr).to.include('invalid value "ocirun=/x" for --add-runtime');
      expect(res.stderr).to.include("reserved");
    });
  });

  describe("proxies", () => {
    it("masks the credentials of --https-proxy in /info, in the log and in a conflict message", async () => {
      const d = await startEngined({ args: ["--https-proxy", "http://user:secret@proxy.test:3128", "--debug"] });
      let output: string;
      try {
        expect((await info(d)).HttpsProxy).to.equal("http://xxxxx:xxxxx@proxy.test:3128");
        d.proc.kill("SIGHUP"); // a reload logs too
        await waitFor(() => d.output().includes("reload"), 2000);
      } finally {
        expect(await d.stop()).to.equal(0);
        output = d.output();
      }
      expect(output).to.include("daemon has completed initialization");
      // the password itself, not the word: the debug log lists the API's /secrets routes
      expect(output).to.not.match(/:secret@|user:secret/);

      const dir = makeTempDir();
      const path = writeConfig(dir, { proxies: { "https-proxy": "http://user:filesecret@proxy.test:3128" } });
      const res = await runEngined([...startArgs(dir), "--config-file", path, "--https-proxy", "http://user:secret@proxy.test:3128"]);
      expectFailedStart(res, dir);
      // named as Docker names it, its credentials masked as Docker masks them
      expect(res.stderr).to.include("https-proxy: (from flag: http://xxxxx:xxxxx@proxy.test:3128, from file: http://xxxxx:xxxxx@proxy.test:3128)");
      expect(res.stderr).to.not.include("secret");
    });

    it("the file's proxies override the environment's; the environment fills what the file leaves out", async () => {
      const dir = makeTempDir();
      const path = writeConfig(dir, { proxies: { "http-proxy": "http://fileproxy.test:2" } });
      const d = await startEngined({
        args: ["--config-file", path],
        env: { HTTP_PROXY: "http://envproxy.test:1", NO_PROXY: ".envproxy.test" },
      });
      try {
        const i = await info(d);
        expect(i.HttpProxy).to.equal("http://fileproxy.test:2");
        expect(i.NoProxy).to.equal(".envproxy.test");
      } finally {
        expect(await d.stop()).to.equal(0);
      }
    });
  });

  describe("environment", () => {
    it("ENGINE_DRIVER selects the storage driver when -s does not, and a missing one stops the start", async () => {
      const fromEnv = await startEngined({ env: { ENGINE_DRIVER: "overlay2" } });
      try {
        expect((await info(fromEnv)).Driver).to.equal("overlay2");
      } finally {
        expect(await fromEnv.stop()).to.equal(0);
      }
      // No silent fallback: a driver that is nowhere is a fatal error naming it and where it was looked for.
      const dir = makeTempDir();
      const missing = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "s.sock")}`], { env: { ENGINE_DRIVER: "vfs-test" } });
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.include('storage plugin \\"vfs-test\\" not found; looked for: the built-in plugin');
      // The flag wins over the environment.
      const flagged = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "s.sock")}`, "-s", "other"], { env: { ENGINE_DRIVER: "overlay2" } });
      expect(flagged.code).to.equal(1);
      expect(flagged.stderr).to.include('storage plugin \\"other\\" not found');
    });
  });

  describe("--help and the order of flags", () => {
    it("--help shows every group, the keys set in the configuration file only, then the plugins' options", async () => {
      const res = await runEngined(["--help"]);
      expect(res.code).to.equal(0);
      expect(res.stderr).to.equal("");
      for (const group of [
        "API listeners:", "TLS:", "Daemon:", "Logging:", "Containers and runtimes:", "Storage:", "Security:", "Networking:",
        "Registries and proxies:", "Cluster mode and metrics:",
      ]) {
        expect(res.stdout).to.include(`\n${group}\n`);
      }
      expect(res.stdout).to.include("--config-file string");
      expect(res.stdout).to.include("--validate");
      // the option table's part ends with the keys of the file alone; the plugins' own options follow
      const tableEnd = res.stdout.indexOf("\nSet in the configuration file only: builder.\n");
      expect(tableEnd).to.be.above(0);
      expect(res.stdout.slice(tableEnd)).to.match(/\n {2}log driver json-file \(built-in; --log-opt, docker run --log-opt\):\n/);
    });

    it("--config-file before --validate works the same", async () => {
      const dir = makeTempDir();
      const valid = writeConfig(dir, { debug: true, labels: ["a=1"] });
      const missing = join(dir, "missing.json");
      const [ok, gone] = await Promise.all([
        runEngined(["--config-file", valid, "--validate"]),
        runEngined(["--config-file", missing, "--validate"]),
      ]);
      expect(ok.code).to.equal(0);
      expect(ok.stdout).to.equal("configuration OK\n");
      expect(gone.code).to.equal(1);
      expect(gone.stdout).to.equal("");
      expect(gone.stderr).to.include(`the configuration file ${missing} does not exist`);
    });
  });
});
