/**
 * Reload on SIGHUP against a running daemon, and the reload transaction's rollback.
 */
import "./helpers/root-hooks.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { pino } from "pino";
import { createHooks } from "../core/hooks.js";
import { definitionOf } from "../core/options/table.js";
import { parseDaemonArgs } from "../host/daemon-args.js";
import { reloadDaemon } from "../host/reload.js";
import { resolveOptions } from "../core/options/resolve.js";
import { makeTempDir, sighup, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";

async function info(d: TestDaemon): Promise<Record<string, any>> {
  return JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", "/info")).body);
}

describe("reload (SIGHUP)", () => {
  it("applies labels, debug, insecure-registries and max-concurrent-downloads, and keeps serving on a bad or conflicting file", async () => {
    const dir = makeTempDir();
    const file = join(dir, "daemon.json");
    const write = (json: unknown) => writeFileSync(file, typeof json === "string" ? json : JSON.stringify(json));
    write({ labels: ["a=1"], debug: false, "insecure-registries": ["one.test:5000"], "max-concurrent-downloads": 3 });
    const d = await startEngined({ args: ["--config-file", file, "--shutdown-timeout", "20"] });
    try {
      let i = await info(d);
      expect(i.Labels).to.deep.equal(["a=1"]);
      expect(i.Debug).to.equal(false);
      expect(Object.keys(i.RegistryConfig.IndexConfigs)).to.deep.equal(["docker.io", "one.test:5000"]);
      expect(i.EngineOptions["max-concurrent-downloads"]).to.equal(3);

      write({
        labels: ["b=2", "c=3"],
        debug: true,
        "insecure-registries": ["two.test:5000", "10.9.0.0/16"],
        "max-concurrent-downloads": 9,
        mtu: 1400,
      });
      const applied = await sighup(d);
      i = await info(d);
      expect(i.Labels).to.deep.equal(["b=2", "c=3"]);
      expect(i.Debug).to.equal(true);
      expect(Object.keys(i.RegistryConfig.IndexConfigs)).to.deep.equal(["docker.io", "two.test:5000"]);
      // as Docker's registry service lists them: those given, then the loopback ranges
      expect(i.RegistryConfig.InsecureRegistryCIDRs).to.deep.equal(["10.9.0.0/16", "::1/128", "127.0.0.0/8"]);
      expect(i.EngineOptions["max-concurrent-downloads"]).to.equal(9);
      expect(applied).to.include('reloaded labels: [\\"a=1\\"] -> [\\"b=2\\",\\"c=3\\"]');
      expect(applied).to.include("reloaded max-concurrent-downloads: 3 -> 9");
      // mtu is not reloadable: reported, not applied.
      expect(applied).to.match(/option changed in the configuration file; it takes effect after a restart" option=mtu/);
      // debug took effect in the log at once.
      await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/nowhere");
      await new Promise((r) => setTimeout(r, 100));
      expect(d.output()).to.match(/level=debug msg="API call" .*url=\/nowhere/);

      // A broken file: nothing changes, the daemon serves on.
      write("{nope");
      const broken = await sighup(d);
      expect(broken).to.include("reload failed: the configuration is unchanged");
      expect(broken).to.include("is not valid JSON");
      expect((await httpRequest({ socketPath: d.socket }, "GET", "/_ping")).body).to.equal("OK");
      i = await info(d);
      expect(i.Labels).to.deep.equal(["b=2", "c=3"]);
      expect(i.EngineOptions["max-concurrent-downloads"]).to.equal(9);

      // A file that sets an option also given as a flag: nothing changes either.
      write({ labels: ["d=4"], "shutdown-timeout": 5 });
      const conflict = await sighup(d);
      expect(conflict).to.include("specified both as a flag and in the configuration file: shutdown-timeout: (from flag: 20, from file: 5)");
      i = await info(d);
      expect(i.Labels).to.deep.equal(["b=2", "c=3"]);
      expect(i.EngineOptions["shutdown-timeout"]).to.equal(20);

      // A value that breaks a rule: the same.
      write({ labels: ["e=5"], "exec-opts": ["native.cgroupdriver=systemd"] });
      expect(await sighup(d)).to.include("reload failed");
      expect((await info(d)).Labels).to.deep.equal(["b=2", "c=3"]);
    } finally {
      await d.stop();
    }
  });

  it("swaps the authorization plugin list, and keeps the old one when the new one cannot load", async () => {
    const dir = makeTempDir();
    const file = join(dir, "daemon.json");
    writeFileSync(file, JSON.stringify({ "authorization-plugins": [] }));
    const d = await startEngined({ args: ["--config-file", file] });
    const post = () => httpRequest({ socketPath: d.socket }, "POST", "/v1.51/containers/create", { Image: "x" });
    try {
      expect((await post()).status).to.equal(404);
      writeFileSync(file, JSON.stringify({ "authorization-plugins": ["readonly"] }));
      await sighup(d);
      const denied = await post();
      expect(denied.status).to.equal(403);
      expect(JSON.parse(denied.body).message).to.match(/^authorization denied by plugin readonly: /);
      expect((await info(d)).Plugins.Authorization).to.deep.equal(["authz.readonly"]);

      writeFileSync(file, JSON.stringify({ "authorization-plugins": ["no-such-plugin"] }));
      expect(await sighup(d)).to.include("reload failed while applying");
      expect((await post()).status).to.equal(403);
      expect((await info(d)).Plugins.Authorization).to.deep.equal(["authz.readonly"]);

      writeFileSync(file, JSON.stringify({ "authorization-plugins": [] }));
      await sighup(d);
      expect((await post()).status).to.equal(404);
      expect((await info(d)).Plugins.Authorization).to.equal(null);
    } finally {
      await d.stop();
    }
  });

  it("rolls back every change already applied when a plugin's reload step fails", async () => {
    const dir = makeTempDir();
    // A third-party plugin that reacts to reloads: it refuses labels with veto=yes. It taps at a
    // late stage, so the daemon's own steps (the log level) have applied their change before.
    const pluginFile = join(dir, "veto.mjs");
    writeFileSync(pluginFile, `export default {
      manifest: { id: "authz.veto", kind: "authz" },
      apply(hooks) {
        hooks.reload.tap({ name: "veto", stage: 100 }, (ctx) => {
          if (ctx.next.label.includes("veto=yes")) throw new Error("vetoed by the test plugin");
        });
      },
    };\n`);
    const file = join(dir, "daemon.json");
    writeFileSync(file, JSON.stringify({ labels: ["a=1"], debug: false }));
    const d = await startEngined({ args: ["--config-file", file, "--authorization-plugin", pluginFile] });
    try {
      writeFileSync(file, JSON.stringify({ labels: ["veto=yes"], debug: true }));
      const out = await sighup(d);
      expect(out).to.include("reload failed while applying; every change was taken back");
      expect(out).to.include("vetoed by the test plugin");
      const i = await info(d);
      expect(i.Labels).to.deep.equal(["a=1"]);
      expect(i.Debug).to.equal(false);
      // The log level was set to debug by the daemon's step, then taken back.
      await httpRequest({ socketPath: d.socket }, "POST", "/v1.51/after-rollback");
      await new Promise((r) => setTimeout(r, 100));
      expect(d.output()).to.not.include("after-rollback");
    } finally {
      await d.stop();
    }
  });

  it("runs the undo steps newest first and commits nothing when a step throws (in-process)", async () => {
    const dir = makeTempDir();
    const file = join(dir, "daemon.json");
    writeFileSync(file, JSON.stringify({ labels: ["new=1"], "max-concurrent-uploads": 9 }));
    const flags = parseDaemonArgs(["--config-file", file]);
    const current = resolveOptions(flags, {}).config;
    const hooks = createHooks();
    const events: string[] = [];
    hooks.reload.tap("first", (ctx) => {
      events.push(`apply first: ${[...ctx.changed].map((n) => definitionOf(n).key).sort().join(",")}`);
      ctx.onRollback(() => void events.push("undo first"));
    });
    hooks.reload.tapPromise("second", async (ctx) => {
      events.push("apply second");
      ctx.onRollback(async () => void events.push("undo second"));
    });
    hooks.reload.tap("third", () => {
      throw new Error("third fails");
    });
    let committed = false;
    const outcome = await reloadDaemon({
      flags,
      env: {},
      host: { platform: "linux", cgroupVersion: 1, systemd: false },
      hooks,
      log: pino({ level: "silent" }),
      current: () => current,
      commit: () => void (committed = true),
    });
    expect(outcome).to.equal("failed");
    expect(committed).to.equal(false);
    expect(events).to.deep.equal(["apply first: labels,max-concurrent-uploads", "apply second", "undo second", "undo first"]);

    // Without the failing step the same reload commits the new values.
    const ok = createHooks();
    let next: typeof current | undefined;
    const applied = await reloadDaemon({
      flags,
      env: {},
      host: { platform: "linux", cgroupVersion: 1, systemd: false },
      hooks: ok,
      log: pino({ level: "silent" }),
      current: () => current,
      commit: (c) => void (next = c),
    });
    expect(applied).to.equal("applied");
    expect(next!.label).to.deep.equal(["new=1"]);
    expect(next!["max-concurrent-uploads"]).to.equal(9);
  });
});
