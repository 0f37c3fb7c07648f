/**
 * The daemon as a process: its command line, pid file, roots, log formats, socket access,
 * graceful shutdown, and two daemons side by side on one host.
 */
import "./helpers/root-hooks.js";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect } from "chai";
import { daemonArgs, makeTempDir, ROOT, runEngined, startEngined } from "./helpers/engined.js";
import { startNetDaemon } from "./helpers/net-daemon.js";
import { httpRequest } from "./helpers/http.js";

const pkgVersion = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version as string;

describe("the daemon process", () => {
  describe("command line", () => {
    it("-v and --version print the version and exit 0", async () => {
      for (const flag of ["-v", "--version"]) {
        const res = await runEngined([flag]);
        expect(res.code).to.equal(0);
        expect(res.stdout).to.match(new RegExp(`^Engine version ${pkgVersion.replace(/\./g, "\\.")}, build \\w+\\n$`));
      }
    });

    it("--help lists the options by group, with their defaults, and exits 0", async () => {
      const res = await runEngined(["--help"]);
      expect(res.code).to.equal(0);
      expect(res.stdout).to.include("Usage:\tengined [OPTIONS]");
      for (const text of ["API listeners:", "TLS:", "Logging:", "-H, --host list", "--data-root string", "(default /var/lib/engine)", "(default /var/run/engine.pid)", '-l, --log-level string', "(default info)"]) {
        expect(res.stdout).to.include(text);
      }
    });

    it("refuses an unknown flag, a bad value and a positional argument, naming them", async () => {
      const unknown = await runEngined(["--bogus", "1"]);
      expect(unknown.code).to.equal(1);
      expect(unknown.stderr).to.include("unknown flag: --bogus");
      const badBool = await runEngined(["--debug=maybe"]);
      expect(badBool.code).to.equal(1);
      expect(badBool.stderr).to.include('invalid value "maybe" for --debug: expected a boolean');
      const badLevel = await runEngined(["--log-level", "loud"]);
      expect(badLevel.code).to.equal(1);
      expect(badLevel.stderr).to.include('invalid value "loud" for --log-level: expected one of: debug, info, warn, error, fatal');
      const positional = await runEngined(["start"]);
      expect(positional.code).to.equal(1);
      expect(positional.stderr).to.include("engined takes no arguments");
    });
  });

  describe("pid file", () => {
    it("refuses to start when the pid file names a live process, and starts over a stale one", async () => {
      const dir = makeTempDir();
      writeFileSync(join(dir, "engine.pid"), String(process.pid));
      const res = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "s.sock")}`]);
      expect(res.code).to.equal(1);
      expect(res.stderr).to.include(`pid file found, ensure engined is not running or delete ${join(dir, "engine.pid")}`);
      expect(readFileSync(join(dir, "engine.pid"), "utf8")).to.equal(String(process.pid));
      expect(existsSync(join(dir, "s.sock"))).to.equal(false);

      // A pid that is surely not running: above the kernel's pid_max.
      const pidMax = Number(readFileSync("/proc/sys/kernel/pid_max", "utf8"));
      const d = await startEngined({ args: [] });
      try {
        writeFileSync(join(dir, "engine.pid"), String(pidMax + 1));
        const d2 = await startEngined({ args: ["--pidfile", join(dir, "engine.pid")] });
        expect(readFileSync(join(dir, "engine.pid"), "utf8")).to.equal(String(d2.proc.pid));
        await d2.stop();
      } finally {
        await d.stop();
      }
    });
  });

  describe("shutdown", () => {
    it("on SIGTERM closes the listeners, removes socket and pid file, and exits 0", async () => {
      const d = await startEngined();
      expect(existsSync(d.pidfile)).to.equal(true);
      expect(readFileSync(d.pidfile, "utf8")).to.equal(String(d.proc.pid));
      d.proc.kill("SIGTERM");
      const code = await new Promise<number | null>((r) => d.proc.once("exit", (c) => r(c)));
      expect(code).to.equal(0);
      expect(existsSync(d.socket)).to.equal(false);
      expect(existsSync(d.pidfile)).to.equal(false);
      expect(d.output()).to.include("daemon shut down");
      await d.stop();
    });

    it("on SIGTERM stops while a client is attached to a running container: the stream ends with the container", async function () {
      this.timeout(60_000);
      const n = await startNetDaemon();
      try {
        // a container that ends at once on the SIGTERM the shutdown sends it
        await n.cli("run", "-d", "--name", "held", "busybox", "sh", "-c", "trap 'exit 3' TERM; echo up; while true; do sleep 0.1; done");
        const attach = spawn("docker", ["-H", n.host, "attach", "held"], { stdio: ["ignore", "pipe", "pipe"] });
        const attachExit = new Promise<number | null>((r) => attach.once("exit", (c) => r(c)));
        // attached once the daemon has taken the stream over: its upgrade is answered at once
        await new Promise((r) => setTimeout(r, 1000));
        const began = Date.now();
        n.d.proc.kill("SIGTERM");
        const code = await new Promise<number | null>((r) => n.d.proc.once("exit", (c) => r(c)));
        expect(code).to.equal(0);
        expect(n.d.output()).to.include("daemon shut down");
        // (the open stream held the listener's close, and so the whole shutdown, for as long as
        // the client stayed: here until the test's timeout)
        expect(Date.now() - began).to.be.below(20_000);
        expect(await attachExit).to.not.equal(null);
      } finally {
        await n.stop();
      }
    });

    it("on SIGINT does the same", async () => {
      const d = await startEngined();
      d.proc.kill("SIGINT");
      const code = await new Promise<number | null>((r) => d.proc.once("exit", (c) => r(c)));
      expect(code).to.equal(0);
      expect(existsSync(d.socket)).to.equal(false);
      await d.stop();
    });
  });

  describe("logs", () => {
    it("--log-format json writes one object a line with level, msg and an RFC 3339 time", async () => {
      const d = await startEngined({ args: ["--log-format", "json"] });
      await d.stop();
      const lines = d.output().split("\n").filter((l) => l.startsWith("{"));
      expect(lines.length).to.be.greaterThan(2);
      for (const line of lines) {
        const entry = JSON.parse(line);
        expect(entry.level).to.be.oneOf(["debug", "info", "warning", "error", "fatal"]);
        expect(entry.msg).to.be.a("string");
        expect(entry.time).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      }
      expect(lines.some((l) => JSON.parse(l).msg === "daemon has completed initialization")).to.equal(true);
    });

    it("text format is time=... level=... msg=..., and --debug adds debug lines", async () => {
      const d = await startEngined({ args: ["--debug"] });
      await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/nothing-here");
      await d.stop();
      const out = d.output();
      expect(out).to.match(/^time="\d{4}-\d\d-\d\dT[\d:.]+Z" level=info msg="starting engined"/m);
      expect(out).to.match(/level=debug msg="API call" .*method=POST url=\/nothing-here/);
    });

    it("--log-level error leaves out info and warning lines", async () => {
      const d = await startEngined({ args: ["--log-level", "error"], readyBy: "socket" });
      expect((await httpRequest({ socketPath: d.socket }, "GET", "/_ping")).body).to.equal("OK");
      await d.stop();
      expect(d.output()).to.not.match(/level=(info|warning|debug)/);
    });
  });

  describe("roots", () => {
    it("creates the data and exec roots with safe modes, follows a symlinked data root, and honours ENGINE_TMPDIR", async () => {
      const dir = makeTempDir();
      const real = join(dir, "real-data");
      mkdirSync(real);
      symlinkSync(real, join(dir, "data-link"));
      const tmp = join(dir, "engine-tmp");
      const d = await startEngined({
        args: ["--data-root", join(dir, "data-link"), "--exec-root", join(dir, "exec-new")],
        env: { ENGINE_TMPDIR: tmp },
      });
      try {
        const info = JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", "/info")).body);
        expect(info.DockerRootDir).to.equal(real);
        expect(statSync(join(dir, "exec-new")).mode & 0o777).to.equal(0o700);
        expect(statSync(tmp).mode & 0o777).to.equal(0o700);
        expect(existsSync(join(real, "tmp"))).to.equal(false);
        expect(existsSync(join(real, "engine-id"))).to.equal(true);
      } finally {
        await d.stop();
      }
      const fresh = await startEngined();
      try {
        expect(statSync(join(fresh.dir, "data")).mode & 0o777).to.equal(0o710); // Docker's: nobody else passes through
        expect(statSync(join(fresh.dir, "data", "tmp")).mode & 0o777).to.equal(0o700);
      } finally {
        await fresh.stop();
      }
    });

    it("keeps the socket pairs of decompressions in <exec-root>/pairs (0700) and removes at start what a killed daemon left there", async () => {
      const dir = makeTempDir();
      const pairs = join(dir, "exec", "pairs");
      mkdirSync(pairs, { recursive: true });
      writeFileSync(join(pairs, "0123456789abcdef"), "");
      const d = await startEngined({ args: ["--exec-root", join(dir, "exec")] });
      try {
        expect(readdirSync(pairs)).to.deep.equal([]);
        expect(statSync(pairs).mode & 0o777).to.equal(0o700);
      } finally {
        await d.stop();
      }
    });

    it("keeps the daemon ID across restarts", async () => {
      const dir = makeTempDir();
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const d = await startEngined({ args: ["--data-root", join(dir, "data")] });
        ids.push(JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", "/info")).body).ID);
        await d.stop();
      }
      expect(ids[0]).to.match(/^[0-9a-f-]{36}$/);
      expect(ids[1]).to.equal(ids[0]);
    });
  });

  describe("the unix socket's access", () => {
    it("gives the socket mode 0660 and the group named by --group", async () => {
      const d = await startEngined({ args: ["--group", "daemon"] });
      try {
        const st = statSync(d.socket);
        expect(st.mode & 0o777).to.equal(0o660);
        expect(st.gid).to.equal(1);
        expect(st.uid).to.equal(0);
      } finally {
        await d.stop();
      }
    });

    it("warns and keeps the socket root's when the default group does not exist", async () => {
      const d = await startEngined();
      try {
        expect(statSync(d.socket).gid).to.equal(0);
        expect(d.output()).to.include("the group for the API socket does not exist");
      } finally {
        await d.stop();
      }
    });

    it("refuses to start when a group named on the command line does not exist", async () => {
      const dir = makeTempDir();
      const res = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "s.sock")}`, "--group", "no-such-group-x"]);
      expect(res.code).to.equal(1);
      expect(res.stderr).to.include("group no-such-group-x not found");
      expect(existsSync(join(dir, "engine.pid"))).to.equal(false);
    });
  });

  describe("several daemons on one host", () => {
    it("run side by side with distinct roots, pid files and sockets, each with its own state", async () => {
      const a = await startEngined({ args: ["--label", "which=a"] });
      const b = await startEngined({ args: ["--label", "which=b"] });
      try {
        const infoA = JSON.parse((await httpRequest({ socketPath: a.socket }, "GET", "/info")).body);
        const infoB = JSON.parse((await httpRequest({ socketPath: b.socket }, "GET", "/info")).body);
        expect(infoA.Labels).to.deep.equal(["which=a"]);
        expect(infoB.Labels).to.deep.equal(["which=b"]);
        expect(infoA.ID).to.not.equal(infoB.ID);
        expect(infoA.DockerRootDir).to.not.equal(infoB.DockerRootDir);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
    });

    it("a second daemon on the same pid file is refused with a clear message", async () => {
      const a = await startEngined();
      try {
        const dir = makeTempDir();
        const res = await runEngined([...daemonArgs(dir), "--pidfile", a.pidfile, "-H", `unix://${join(dir, "b.sock")}`]);
        expect(res.code).to.equal(1);
        expect(res.stderr).to.include("pid file found, ensure engined is not running");
        expect((await httpRequest({ socketPath: a.socket }, "GET", "/_ping")).body).to.equal("OK");
      } finally {
        await a.stop();
      }
    });
  });
});
