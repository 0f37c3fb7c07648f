/**
 * What moby's integration tests of the system endpoints and of the daemon's start-up
 * (`integration/system`, `integration/daemon`; Docker 28, API 1.51) expect, where engined
 * answered otherwise: `/info` at old API versions (ExecutionDriver, name-only security options,
 * the commits' `Expected`, the bridge-nf fields), the init binary and its commit, the daemon's
 * open files and tasks, the insecure-TCP warning in Docker 28's words, `/_ping`'s headers,
 * `/system/df?type=`, `OPTIONS` of any path (under the authorization plugins), an empty
 * daemon.json, an empty seccomp profile, and the proxies' conflict message and log lines.
 * Against a real engined.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { basename, join } from "node:path";
import { daemonArgs, makeTempDir, runEngined, sighup, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest, rawHead } from "./helpers/http.js";
import { recordedCalls, removeLater, SPEC_DIR, startRecorder, uniqueName, cleanUpPlugins } from "./helpers/authz-plugin.js";
import { findInit } from "../plugins/runtime-ocirun/init.js";

type Json = Record<string, any>;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("what moby's system and daemon integration tests expect", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  const api = (method: string, path: string) => httpRequest({ socketPath: d.socket }, method, path);
  const info = async (path = "/v1.51/info", daemon = d): Promise<Json> => {
    const r = await httpRequest({ socketPath: daemon.socket }, "GET", path);
    expect(r.status, r.body).to.equal(200);
    return JSON.parse(r.body) as Json;
  };

  before(async () => {
    d = await startEngined();
  });
  after(async () => d?.stop());

  describe("GET /info", () => {
    it("names Docker Hub's index as IndexServerAddress, which the Docker CLI keys Hub credentials by", async () => {
      expect((await info("/v1.51/info")).IndexServerAddress).to.equal("https://index.docker.io/v1/");
    });

    it("adds ExecutionDriver and gives the security options by name before API 1.25 (TestInfoAPIVersioned)", async () => {
      const old = await info("/v1.24/info");
      expect(old.ExecutionDriver).to.equal("<not supported>");
      expect(old.SecurityOptions).to.include("seccomp");
      expect(old.SecurityOptions.every((o: string) => !o.includes("="))).to.equal(true);
      const newer = await info("/v1.25/info");
      expect(newer).to.not.have.property("ExecutionDriver");
      expect(newer.SecurityOptions).to.include("name=seccomp,profile=builtin");
    });

    it("gives each commit an Expected equal to its ID before API 1.49, none from 1.49 (TestInfoBinaryCommits)", async () => {
      const keys = ["ContainerdCommit", "RuncCommit", "InitCommit"];
      const current = await info();
      const old = await info("/v1.48/info");
      for (const key of keys) {
        expect(current[key], key).to.have.all.keys("ID");
        expect(current[key].ID, key).to.not.equal("N/A");
        expect(old[key], key).to.deep.equal({ ID: current[key].ID, Expected: current[key].ID });
      }
      expect((await info("/v1.49/info")).InitCommit).to.have.all.keys("ID");
    });

    it("names the init binary --init runs and its commit as its --version says, and lists it in /version", async () => {
      const found = findInit("");
      const current = await info();
      const version = JSON.parse((await api("GET", "/v1.51/version")).body) as { Components: { Name: string; Version: string; Details?: Json }[] };
      if (!found) {
        expect([current.InitBinary, current.InitCommit.ID]).to.deep.equal(["docker-init", "N/A"]);
        return;
      }
      // `tini version 0.19.0 - git.de40ad0`, or Debian's `tini version 0.19.0` with no commit (Docker then says "")
      const said = execFileSync(found, ["--version"], { encoding: "utf8" });
      const commit = / - git\.(\w+)\s*$/.exec(said)?.[1] ?? "";
      expect(current.InitBinary).to.equal(basename(found));
      expect(current.InitCommit).to.deep.equal({ ID: commit });
      const component = version.Components.find((c) => c.Name === basename(found));
      expect(component).to.deep.equal({ Name: basename(found), Version: /^tini version (\S+)/.exec(said)![1], Details: { GitCommit: commit } });
    });

    it("has BridgeNfIptables and BridgeNfIp6tables, false, before API 1.50 only (TestInfoLegacyFields)", async () => {
      for (const v of ["1.24", "1.48", "1.49"]) {
        expect(await info(`/v${v}/info`), v).to.include({ BridgeNfIptables: false, BridgeNfIp6tables: false });
      }
      for (const v of ["1.50", "1.51"]) {
        const body = await info(`/v${v}/info`);
        expect(body, v).to.not.have.any.keys("BridgeNfIptables", "BridgeNfIp6tables");
      }
    });

    it("names its firewall backend from API 1.49 only, as Docker 28 names iptables", async () => {
      expect((await info("/v1.49/info")).FirewallBackend).to.deep.equal({ Driver: "iptables" });
      expect(await info("/v1.48/info")).to.not.have.property("FirewallBackend");
    });

    it("has RegistryConfig's AllowNondistributableArtifacts CIDRs and Hostnames, null, before API 1.47 only", async () => {
      for (const v of ["1.24", "1.46"]) {
        expect((await info(`/v${v}/info`)).RegistryConfig, v).to.include({ AllowNondistributableArtifactsCIDRs: null, AllowNondistributableArtifactsHostnames: null });
      }
      for (const v of ["1.47", "1.51"]) {
        expect((await info(`/v${v}/info`)).RegistryConfig, v).to.not.have.any.keys("AllowNondistributableArtifactsCIDRs", "AllowNondistributableArtifactsHostnames");
      }
    });

    it("counts the daemon's open files, its tasks in progress and its event followers, debug or not", async () => {
      const quiet = await info();
      expect(quiet.Debug).to.equal(false);
      expect(quiet.NFd).to.be.above(2);
      expect(quiet.NGoroutines).to.be.above(0);
      expect(quiet.NEventsListener).to.equal(0);
      // a client following the events is one listener while it stays
      const follower = request({ socketPath: d.socket, path: "/v1.51/events" });
      const answered = new Promise<void>((resolve) => follower.on("response", () => resolve()));
      follower.on("error", () => {});
      follower.end();
      await answered;
      try {
        expect((await info()).NEventsListener).to.equal(1);
      } finally {
        follower.destroy();
      }
    });

    it("fills NFd and NGoroutines with --debug, and says Docker-Experimental on every answer (TestInfoDebug)", async () => {
      const debug = await startEngined({ args: ["--debug", "--experimental"] });
      try {
        const body = await info("/v1.51/info", debug);
        expect(body.Debug).to.equal(true);
        expect(body.NFd).to.be.above(2);
        expect(body.NGoroutines).to.be.above(0);
        const ping = await httpRequest({ socketPath: debug.socket }, "GET", "/_ping");
        expect(ping.headers["docker-experimental"]).to.equal("true");
      } finally {
        await debug.stop();
      }
    });

    it("warns of a TCP listener without TLS in Docker 28's words (TestInfoAPIWarnings)", async () => {
      expect((await info()).Warnings.join("\n")).to.not.include("API is accessible on");
      const port = await freePort();
      const dir = makeTempDir();
      const tcp = await startEngined({ hosts: [`unix://${join(dir, "engine.sock")}`, `tcp://127.0.0.1:${port}`] });
      try {
        const unix = tcp.addresses().find((a) => a.startsWith("unix://"))!.slice("unix://".length);
        const warnings = (await info("/v1.51/info", { ...tcp, socket: unix })).Warnings as string[];
        expect(warnings).to.include(
          `WARNING: API is accessible on http://127.0.0.1:${port} without encryption.\n` +
            "         Access to the remote API is equivalent to root access on the host. Refer\n" +
            "         to the 'Docker daemon attack surface' section in the documentation for\n" +
            "         more information: https://docs.docker.com/go/attack-surface/",
        );
      } finally {
        await tcp.stop();
      }
    });
  });

  it("sends Swarm: inactive and Docker's other headers on GET and HEAD /_ping (TestPingSwarmHeader)", async () => {
    for (const method of ["GET", "HEAD"]) {
      const r = await api(method, "/_ping");
      expect(r.status, method).to.equal(200);
      expect(r.headers, method).to.include({
        swarm: "inactive",
        "docker-experimental": "false",
        "builder-version": "1",
        "cache-control": "no-cache, no-store, must-revalidate",
        pragma: "no-cache",
        "api-version": "1.51",
        ostype: "linux",
      });
      expect(r.body, method).to.equal(method === "GET" ? "OK" : "");
    }
  });

  it("spells its header names on the wire as Go's net/http does (Api-Version, Ostype, Content-Type)", async () => {
    const rawHeadNames = async (req: string) => (await rawHead(d.socket, req)).slice(1).map((l) => l.slice(0, l.indexOf(":")));
    const names = await rawHeadNames("GET /v1.51/_ping HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(names).to.include.members(["Api-Version", "Ostype", "Docker-Experimental", "Server", "Swarm", "Builder-Version", "Cache-Control", "Pragma", "Content-Type"]);
    const missing = await rawHeadNames("GET /v1.51/containers/nothing-here/json HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(missing).to.include.members(["Api-Version", "Content-Type"]);
    expect([...names, ...missing].filter((n) => n !== n.replace(/(^|-)([a-z])/g, (_m, a: string, c: string) => a + c.toUpperCase()))).to.deep.equal([]);
  });

  describe("GET /system/df?type= (TestDiskUsage)", () => {
    it("answers only the sections asked for from API 1.42, the others null", async () => {
      const volumes = JSON.parse((await api("GET", "/v1.51/system/df?type=volume")).body);
      expect(volumes).to.deep.equal({ LayersSize: 0, Images: null, Containers: null, Volumes: [], BuildCache: null });
      const two = JSON.parse((await api("GET", "/v1.51/system/df?type=container&type=build-cache")).body);
      expect(two).to.deep.equal({ LayersSize: 0, Images: null, Containers: [], Volumes: null, BuildCache: [] });
      const images = JSON.parse((await api("GET", "/v1.51/system/df?type=image")).body);
      expect(images).to.include({ Containers: null, Volumes: null, BuildCache: null });
      expect(images.Images).to.be.an("array");
      const all = JSON.parse((await api("GET", "/v1.51/system/df")).body);
      for (const key of ["Images", "Containers", "Volumes", "BuildCache"]) expect(all[key], key).to.be.an("array");
    });

    it("refuses an unknown type with 400, and takes no type before API 1.42", async () => {
      const bad = await api("GET", "/v1.51/system/df?type=volume&type=bogus");
      expect([bad.status, JSON.parse(bad.body).message]).to.deep.equal([400, "unknown object type: bogus"]);
      const old = JSON.parse((await api("GET", "/v1.41/system/df?type=volume")).body);
      for (const key of ["Images", "Containers", "Volumes"]) expect(old[key], key).to.be.an("array");
      expect(old).to.have.property("BuilderSize", 0);
    });
  });

  describe("OPTIONS (TestAPIOptionsRoute)", () => {
    it("answers 200 with an empty body on any path, versioned or not", async () => {
      for (const path of ["/", "/v1.51/anything", "/containers/json", "/v1.24/no/such/thing"]) {
        const r = await api("OPTIONS", path);
        expect([r.status, r.body], path).to.deep.equal([200, ""]);
        expect(r.headers, path).to.include({ "api-version": "1.51", "content-length": "0" });
        expect(r.headers, path).to.not.have.property("access-control-allow-origin");
      }
      expect((await api("OPTIONS", "/v1.12/x")).status).to.equal(400);
    });

    it("asks the authorization plugins first: a denied OPTIONS is refused, and the plugin sees the URI", async () => {
      const name = uniqueName("options");
      const record = join(makeTempDir("engine-options-authz-"), "calls.jsonl");
      const plugin = await startRecorder({ name, record, rules: { denyRequest: { "/v1.51/forbidden": "no options here" } } });
      mkdirSync(SPEC_DIR, { recursive: true });
      writeFileSync(removeLater(join(SPEC_DIR, `${name}.spec`)), `tcp://127.0.0.1:${plugin.listening}\n`);
      const guarded = await startEngined({ args: ["--authorization-plugin", name] });
      try {
        const sock = { socketPath: guarded.socket };
        const denied = await httpRequest(sock, "OPTIONS", "/v1.51/forbidden/path");
        expect(denied.status).to.equal(403);
        expect(JSON.parse(denied.body).message).to.include("no options here");
        const allowed = await httpRequest(sock, "OPTIONS", "/v1.51/allowed");
        expect(allowed.status).to.equal(200);
        const calls = recordedCalls(record).filter((c) => c.call === "AuthZReq");
        expect(calls.map((c) => `${c.body.RequestMethod} ${c.body.RequestUri}`)).to.include.members(["OPTIONS /v1.51/forbidden/path", "OPTIONS /v1.51/allowed"]);
      } finally {
        await guarded.stop();
        await plugin.stop();
        await cleanUpPlugins();
      }
    });
  });

  describe("daemon.json and the daemon's start", () => {
    it("takes an empty daemon.json, or one of white space or with a byte order mark, as valid (TestDaemonConfigValidation)", async () => {
      const dir = makeTempDir();
      const files: [string, Buffer][] = [
        ["empty", Buffer.alloc(0)],
        ["white space", Buffer.from(" \n\t \r\n")],
        ["{}", Buffer.from("{}")],
        ["UTF-8 with a mark", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"debug": true}')])],
        ["UTF-16 with a mark", Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"debug": true}', "utf16le")])],
      ];
      for (const [what, bytes] of files) {
        const path = join(dir, "daemon.json");
        writeFileSync(path, bytes);
        const r = await runEngined([...daemonArgs(dir), "--validate", "--config-file", path]);
        expect([r.code, r.stdout], `${what}: ${r.stderr}`).to.deep.equal([0, "configuration OK\n"]);
      }
      writeFileSync(join(dir, "daemon.json"), "{");
      const bad = await runEngined([...daemonArgs(dir), "--validate", "--config-file", join(dir, "daemon.json")]);
      expect(bad.code).to.equal(1);
    });

    it("takes an empty seccomp profile, as a flag or in the file, as the builtin one (TestConfigDaemonSeccompProfiles)", async () => {
      const dir = makeTempDir();
      const path = join(dir, "daemon.json");
      writeFileSync(path, JSON.stringify({ "seccomp-profile": "" }));
      for (const args of [["--seccomp-profile="], ["--config-file", path]]) {
        const daemon = await startEngined({ args });
        try {
          expect((await info("/v1.51/info", daemon)).SecurityOptions, args.join(" ")).to.include("name=seccomp,profile=builtin");
        } finally {
          await daemon.stop();
        }
      }
    });

    it("names proxies set both as a flag and in the file in Docker's words, credentials masked (TestDaemonProxy)", async () => {
      const dir = makeTempDir();
      const raw = "https://myuser:mypassword@example.org";
      const masked = "https://xxxxx:xxxxx@example.org";
      const path = join(dir, "daemon.json");
      writeFileSync(path, JSON.stringify({ proxies: { "http-proxy": raw, "https-proxy": raw, "no-proxy": "example.com" } }));
      const r = await runEngined([...daemonArgs(dir), "--http-proxy", raw, "--https-proxy", raw, "--no-proxy", "example.com", "--config-file", path, "--validate"]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include(
        "the following directives are specified both as a flag and in the configuration file: " +
          `http-proxy: (from flag: ${masked}, from file: ${masked}), https-proxy: (from flag: ${masked}, from file: ${masked}), ` +
          "no-proxy: (from flag: example.com, from file: example.com)",
      );
      expect(r.stderr).to.not.include("mypassword");
    });

    it("logs the proxy variables it overrides and, after SIGHUP, the configuration reloaded, credentials masked", async () => {
      const fromEnv = "http://envuser:envpassword@from-env.invalid";
      const raw = "https://myuser:mypassword@example.org";
      const daemon = await startEngined({
        args: ["--http-proxy", raw, "--https-proxy", raw, "--no-proxy", "example.com"],
        env: { ...process.env, HTTP_PROXY: fromEnv, http_proxy: fromEnv, HTTPS_PROXY: fromEnv, https_proxy: fromEnv, NO_PROXY: "ignore.invalid", no_proxy: "ignore.invalid" },
      });
      let reload: string;
      try {
        reload = await sighup(daemon);
      } finally {
        await daemon.stop();
      }
      const overridden = daemon
        .output()
        .split("\n")
        .filter((l) => l.includes("overriding existing proxy variable with value from configuration"));
      expect(overridden.map((l) => /name=(\w+)/.exec(l)?.[1])).to.have.members(["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"]);
      expect(overridden.every((l) => l.includes("level=warning"))).to.equal(true);
      expect(overridden[0]).to.include('old-value="http://xxxxx:xxxxx@from-env.invalid"');
      const reloaded = reload.split("\n").find((l) => l.includes("Reloaded configuration: "));
      expect(reloaded).to.include("level=info").and.include("https://xxxxx:xxxxx@example.org");
      expect(daemon.output()).to.not.match(/mypassword|envpassword/);
    });
  });
});
