/**
 * The `-H` listeners: every form of the option, several at once, path prefixes, stale and
 * live unix sockets, and socket activation with descriptors passed the way systemd does.
 */
import "./helpers/root-hooks.js";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { DEFAULT_UNIX_SOCKET, parseHost } from "../host/listeners/parse-host.js";
import { docker } from "./helpers/docker-cli.js";
import { daemonArgs, ENGINED, makeTempDir, runEngined, startEngined } from "./helpers/engined.js";
import { httpRequest, tcpTarget } from "./helpers/http.js";

describe("listeners (-H)", () => {
  describe("parsing", () => {
    const cases: [string, boolean, unknown][] = [
      ["", false, { proto: "unix", path: DEFAULT_UNIX_SOCKET }],
      ["unix://", false, { proto: "unix", path: DEFAULT_UNIX_SOCKET }],
      ["unix:///run/x.sock", false, { proto: "unix", path: "/run/x.sock" }],
      ["tcp://", false, { proto: "tcp", host: "127.0.0.1", port: 2375, prefix: "" }],
      ["tcp://", true, { proto: "tcp", host: "127.0.0.1", port: 2376, prefix: "" }],
      ["tcp://0.0.0.0", false, { proto: "tcp", host: "0.0.0.0", port: 2375, prefix: "" }],
      ["tcp://:4000", false, { proto: "tcp", host: "127.0.0.1", port: 4000, prefix: "" }],
      ["tcp://10.1.2.3:4000/some/path/", false, { proto: "tcp", host: "10.1.2.3", port: 4000, prefix: "/some/path" }],
      ["tcp://[::1]:4000", false, { proto: "tcp", host: "::1", port: 4000, prefix: "" }],
      ["host.example:", false, { proto: "tcp", host: "host.example", port: 2375, prefix: "" }],
      ["host.example:", true, { proto: "tcp", host: "host.example", port: 2376, prefix: "" }],
      ["host.example:5000", false, { proto: "tcp", host: "host.example", port: 5000, prefix: "" }],
      [":5000", false, { proto: "tcp", host: "127.0.0.1", port: 5000, prefix: "" }],
      ["fd://", false, { proto: "fd" }],
      ["fd://3", false, { proto: "fd", fd: 3 }],
    ];
    for (const [value, tls, expected] of cases) {
      it(`reads ${JSON.stringify(value)}${tls ? " with TLS" : ""}`, () => {
        expect(parseHost(value, tls)).to.deep.equal(expected);
      });
    }
    for (const bad of ["ssh://me@host", "npipe:////./pipe/x", "tcp://h:notaport", "tcp://h:70000", "fd://x", "::1:4000"]) {
      it(`refuses ${JSON.stringify(bad)} naming it`, () => {
        expect(() => parseHost(bad, false)).to.throw(`invalid host "${bad}"`);
      });
    }
  });

  describe("serving", () => {
    it("listens on several sockets at once, with a shorthand and a path prefix", async () => {
      const dir = makeTempDir();
      const d = await startEngined({ hosts: [`unix://${join(dir, "a.sock")}`, ":0", "tcp://127.0.0.1:0/engine"] });
      try {
        const addresses = d.addresses();
        expect(addresses).to.have.length(3);
        expect(addresses[0]).to.equal(`unix://${join(dir, "a.sock")}`);
        const plain = tcpTarget(addresses[1]);
        const prefixed = tcpTarget(addresses[2]);
        expect(addresses[2]).to.match(/^tcp:\/\/127\.0\.0\.1:\d+\/engine$/);
        expect((await httpRequest({ socketPath: join(dir, "a.sock") }, "GET", "/_ping")).body).to.equal("OK");
        expect((await httpRequest(plain, "GET", "/v1.51/_ping")).body).to.equal("OK");
        // The prefix is taken off before routing; without it the answer is 404.
        expect((await httpRequest(prefixed, "GET", "/engine/v1.51/_ping")).body).to.equal("OK");
        const bare = await httpRequest(prefixed, "GET", "/v1.51/_ping");
        expect(bare.status).to.equal(404);
        expect(JSON.parse(bare.body)).to.deep.equal({ message: "page not found" });
        // The Docker CLI puts the path in front of every request itself.
        const cli = await docker(addresses[2], ["version", "--format", "{{.Server.APIVersion}}"]);
        expect(cli.stderr).to.equal("");
        expect(cli.stdout.trim()).to.equal("1.51");
        // A plain TCP listener is reported as a warning, in the log and in /info.
        expect(d.output()).to.include("Binding to an IP address without --tlsverify is insecure");
        const info = JSON.parse((await httpRequest(plain, "GET", "/info")).body);
        expect(info.Warnings.join("\n")).to.include("without encryption");
      } finally {
        await d.stop();
      }
      expect(existsSync(join(dir, "a.sock")), "unix socket removed at stop").to.equal(false);
    });

    it("removes a stale socket file left by a crash, and refuses a socket another daemon serves", async () => {
      const first = await startEngined();
      try {
        const clash = await runEngined([...daemonArgs(makeTempDir()), "-H", `unix://${first.socket}`]);
        expect(clash.code).to.equal(1);
        expect(clash.stderr).to.include(`unix://${first.socket} is already in use`);
        // The first daemon still serves.
        expect((await httpRequest({ socketPath: first.socket }, "GET", "/_ping")).body).to.equal("OK");
      } finally {
        await first.stop();
      }
      const dir = makeTempDir();
      const stale = join(dir, "stale.sock");
      // A process that binds and exits leaves the socket file behind, as a killed daemon does.
      execFileSync("python3", ["-c", "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", stale]);
      expect(existsSync(stale)).to.equal(true);
      const d = await startEngined({ hosts: [`unix://${stale}`] });
      try {
        expect((await httpRequest({ socketPath: stale }, "GET", "/_ping")).body).to.equal("OK");
      } finally {
        await d.stop();
      }
    });

    it("refuses a path that is not a socket, changing nothing", async () => {
      const dir = makeTempDir();
      const file = join(dir, "file");
      writeFileSync(file, "keep me");
      const res = await runEngined([...daemonArgs(dir), "-H", `unix://${file}`]);
      expect(res.code).to.equal(1);
      expect(res.stderr).to.include("the path exists and is not a socket");
      expect(existsSync(file)).to.equal(true);
    });
  });

  describe("TLS versions", () => {
    it("accepts TLS 1.0 through 1.3 on a --tls listener", async () => {
      const dir = makeTempDir();
      execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
        "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")], { stdio: "ignore" });
      const d = await startEngined({
        hosts: ["tcp://127.0.0.1:0"],
        args: ["--tls", "--tlscert", join(dir, "cert.pem"), "--tlskey", join(dir, "key.pem")],
      });
      try {
        const { port } = tcpTarget(d.addresses()[0]);
        for (const [flag, name] of [["-tls1", "TLSv1"], ["-tls1_1", "TLSv1.1"], ["-tls1_2", "TLSv1.2"], ["-tls1_3", "TLSv1.3"]]) {
          // The client side must allow old versions too: OpenSSL's client refuses them by default.
          const out = execFileSync("openssl", ["s_client", flag, "-cipher", "DEFAULT:@SECLEVEL=0", "-connect", `127.0.0.1:${port}`],
            { input: "", encoding: "utf8", stdio: ["pipe", "pipe", "pipe"], timeout: 10_000 });
          // The session's protocol line (TLS 1.3 prints only the "New, ..." line).
          const escaped = name.replace(".", "\\.");
          expect(out, name).to.match(new RegExp(`(Protocol\\s*: ${escaped}$|New, ${escaped}, Cipher is [A-Z])`, "m"));
        }
      } finally {
        await d.stop();
      }
    });
  });

  describe("socket activation (fd://)", () => {
    /**
     * Does what systemd does: binds the socket, puts it at descriptor 3, sets LISTEN_FDS and
     * LISTEN_PID to the pid that will run engined, and execs it.
     */
    function activate(socketPath: string, args: string[]) {
      const script = [
        "import os, socket, sys",
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
        "s.bind(sys.argv[1]); s.listen(16)",
        "os.dup2(s.fileno(), 3); os.set_inheritable(3, True)",
        "os.environ['LISTEN_FDS'] = '1'; os.environ['LISTEN_PID'] = str(os.getpid())",
        "os.execv(sys.argv[2], [sys.argv[2]] + sys.argv[3:])",
      ].join("\n");
      const proc = spawn("python3", ["-c", script, socketPath, ENGINED, ...args], { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
      proc.stderr.on("data", (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
      return { proc, output: () => out, exited };
    }

    async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        if (cond()) return true;
        await new Promise((r) => setTimeout(r, 50));
      }
      return cond();
    }

    for (const host of ["fd://", "fd://3"]) {
      it(`serves the API on the passed socket with -H ${host}`, async () => {
        const dir = makeTempDir();
        const socketPath = join(dir, "activated.sock");
        const run = activate(socketPath, [...daemonArgs(dir), "-H", host]);
        try {
          expect(await waitFor(() => run.output().includes("daemon has completed initialization"), 20_000), run.output()).to.equal(true);
          expect(run.output()).to.include("API listen on fd://3");
          const cli = await docker(`unix://${socketPath}`, ["version", "--format", "{{.Server.Version}}"]);
          expect(cli.code, cli.stderr).to.equal(0);
          expect(cli.stdout.trim()).to.match(/^\d+\.\d+\.\d+/);
        } finally {
          run.proc.kill("SIGTERM");
          expect(await run.exited).to.equal(0);
        }
      });
    }

    it("exits when the named activation socket is missing", async () => {
      const dir = makeTempDir();
      const run = activate(join(dir, "a.sock"), [...daemonArgs(dir), "-H", "fd://5"]);
      expect(await run.exited).to.equal(1);
      expect(run.output()).to.include("fd://5 was asked for, the activated sockets are 3");
    });

    it("exits when no socket was passed at all", async () => {
      const dir = makeTempDir();
      const res = await runEngined([...daemonArgs(dir), "-H", "fd://"]);
      expect(res.code).to.equal(1);
      expect(res.stderr).to.include("no sockets found via socket activation");
      expect(existsSync(join(dir, "engine.pid")), "pid file released").to.equal(false);
    });
  });
});
