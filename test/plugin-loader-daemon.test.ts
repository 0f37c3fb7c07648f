/**
 * The plugin loader in the real daemon: `engined --authorization-plugin` with the shipped
 * authz.readonly and with a third-party package in the working directory's node_modules, checked
 * through the Docker CLI and raw API requests; and the daemon exiting 1, with its fatal log line
 * and nothing left behind, when a selected plugin is missing or its apply throws.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { existsSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { docker } from "./helpers/docker-cli.js";
import { daemonArgs, makeTempDir, ROOT, runEngined, startEngined, type RunResult } from "./helpers/engined.js";
import { removeSandboxes, sandbox, temps, write, type LogLine } from "./helpers/plugin-fixtures.js";

interface RawAnswer {
  status: number;
  body: string;
}

function rawRequest(socketPath: string, method: string, path: string, body?: unknown): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        socketPath,
        method,
        path,
        headers: payload === undefined ? {} : { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(payload) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

/** The JSON log lines (`--log-format json`) of a daemon's output. */
function jsonLines(output: string): LogLine[] {
  return output
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogLine);
}

function fatalLine(run: RunResult): LogLine {
  const fatal = jsonLines(run.stderr + "\n" + run.stdout).find((l) => l.level === "fatal");
  expect(fatal, `no fatal line in:\n${run.stderr}${run.stdout}`).to.not.equal(undefined);
  return fatal!;
}

describe("plugin loader", function () {
  after(removeSandboxes);

  describe("engined (the real daemon)", function () {
    this.timeout(30_000);

    it("--authorization-plugin readonly: reads pass, a state-changing request gets 403, /info lists authz.readonly", async function () {
      const d = await startEngined({ args: ["--authorization-plugin", "readonly"] });
      try {
        const host = `unix://${d.socket}`;
        const version = await docker(host, ["version", "--format", "{{.Server.Version}}"]);
        expect(version.code, version.stderr).to.equal(0);
        expect(version.stdout.trim()).to.match(/^\d+\.\d+\.\d+/);

        const denied = await rawRequest(d.socket, "POST", "/v1.51/containers/create", { Image: "busybox", Cmd: ["true"] });
        expect(denied.status).to.equal(403);
        expect(JSON.parse(denied.body)).to.deep.equal({
          message: "authorization denied by plugin readonly: POST /v1.51/containers/create changes state; this daemon is read-only",
        });

        const info = await rawRequest(d.socket, "GET", "/v1.51/info");
        expect(info.status).to.equal(200);
        expect((JSON.parse(info.body) as { Plugins: { Authorization: unknown } }).Plugins.Authorization).to.deep.equal(["authz.readonly"]);
        expect(d.output()).to.match(/msg="plugin loaded" plugin=authz\.readonly source=built-in/);
      } finally {
        await d.stop();
      }
    });

    it("loads a third-party package engine-plugin-authz-denyall from the working directory's node_modules", async function () {
      const sb = sandbox();
      const pkg = join(sb.root, "node_modules", "engine-plugin-authz-denyall");
      write(join(pkg, "package.json"), JSON.stringify({ name: "engine-plugin-authz-denyall", version: "1.0.0", type: "module", exports: "./index.js" }));
      const file = write(
        join(pkg, "index.js"),
        [
          "export default {",
          `  manifest: { id: "authz.denyall", kind: "authz", description: "denies everything" },`,
          "  apply(hooks) {",
          `    hooks.authorizeRequest.tap("authz.denyall", (req) => ({ plugin: "denyall", message: "denyall refuses " + req.method + " " + req.uri }));`,
          "  },",
          "};",
          "",
        ].join("\n"),
      );
      const d = await startEngined({ cwd: sb.root, args: ["--authorization-plugin", "denyall", "--log-format", "json"] });
      try {
        const version = await docker(`unix://${d.socket}`, ["version"]);
        expect(version.code).to.not.equal(0);
        expect(version.stderr).to.match(/authorization denied by plugin denyall: denyall refuses GET \/v[\d.]+\/version/);

        const ping = await rawRequest(d.socket, "GET", "/_ping");
        expect(ping.status).to.equal(403);
        expect(JSON.parse(ping.body)).to.deep.equal({ message: "authorization denied by plugin denyall: denyall refuses GET /_ping" });

        const loaded = jsonLines(d.output()).find((l) => l.msg === "plugin loaded");
        expect(loaded).to.include({ level: "info", plugin: "authz.denyall", source: "package engine-plugin-authz-denyall" });
        expect(existsSync(file)).to.equal(true);
      } finally {
        await d.stop();
      }
    });

    it("exits 1 when a selected plugin does not exist, naming it and the places looked, and leaves nothing behind", async function () {
      const dir = makeTempDir("engine-plugin-test-");
      temps.push(dir);
      const socket = join(dir, "s.sock");
      const run = await runEngined([...daemonArgs(dir), "-H", `unix://${socket}`, "--authorization-plugin", "nosuch", "--log-format", "json"], {
        cwd: dir,
      });
      expect(run.code).to.equal(1);
      const fatal = fatalLine(run);
      expect(fatal.code).to.equal("ENGINE_ERR_PLUGIN_NOT_FOUND");
      expect(fatal.msg).to.include(`failed to start daemon: authz plugin "nosuch" not found; looked for: `);
      expect(fatal.msg).to.include(`the built-in plugin ${join(ROOT, "dist", "plugins", "authz-nosuch")}`);
      expect(fatal.msg).to.include(`the package ${join(dir, "node_modules", "engine-plugin-authz-nosuch")}`);
      expect(fatal.msg).to.include(`the package ${join(ROOT, "node_modules", "engine-plugin-authz-nosuch")}`);
      expect(existsSync(socket), "socket").to.equal(false);
      expect(existsSync(join(dir, "engine.pid")), "pid file").to.equal(false);
      expect(jsonLines(run.stderr).some((l) => /API listen on/.test(l.msg))).to.equal(false);
    });

    it("exits 1 with \"failed to load\" when a selected plugin's apply throws", async function () {
      const dir = makeTempDir("engine-plugin-test-");
      temps.push(dir);
      const plugin = write(
        join(dir, "plugins", "boom.js"),
        `export default { manifest: { id: "authz.boom", kind: "authz" }, apply() { throw new Error("boom: cannot reach the policy server"); } };\n`,
      );
      const socket = join(dir, "s.sock");
      const run = await runEngined([...daemonArgs(dir), "-H", `unix://${socket}`, "--authorization-plugin", plugin, "--log-format", "json"], {
        cwd: dir,
      });
      expect(run.code).to.equal(1);
      const fatal = fatalLine(run);
      expect(fatal.code).to.equal("ENGINE_ERR_PLUGIN_LOAD_FAILED");
      expect(fatal.msg).to.equal("failed to start daemon: plugin authz.boom failed to load: boom: cannot reach the policy server");
      expect(existsSync(socket), "socket").to.equal(false);
      expect(existsSync(join(dir, "engine.pid")), "pid file").to.equal(false);
    });
  });
});
