/**
 * The plugin loader in-process (host/plugins/plugin-loader.ts, loadPlugins): where it finds a
 * plugin (the built-in folder, packages in node_modules, paths), what it reports when one is
 * missing, invalid, of another kind or declared twice, the order it applies plugins in, and what
 * it does with requirements, plugins not for this host and optional plugins that fail. The
 * plugins are plain ESM modules each test writes into a sandbox (test/helpers/plugin-fixtures.ts);
 * the real daemon's side is in plugin-loader-daemon.test.ts.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { mkdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { loadPlugins } from "../host/plugins/plugin-loader.js";
import { defaultResolveOptions } from "../host/plugins/resolve-plugin.js";
import { ROOT } from "./helpers/engined.js";
import { ask, authz, builtin, denyWrites, depsFor, g, HOST, pluginSource, rejection, removeSandboxes, sandbox, write } from "./helpers/plugin-fixtures.js";

describe("plugin loader", function () {
  after(removeSandboxes);

  describe("in-process (loadPlugins)", function () {
    beforeEach(() => {
      g.__order = [];
      g.__ctx = undefined;
    });

    it("finds a built-in plugin as <builtinDir>/<kind>-<name>/index.js and applies it with its context", async function () {
      const sb = sandbox();
      const file = builtin(sb, "authz-nowrite", {
        id: "authz.nowrite",
        apply: `${denyWrites("nowrite")} globalThis.__ctx = { dataRoot: ctx.dataRoot, execRoot: ctx.execRoot, host: ctx.host, options: ctx.options, hasLog: typeof ctx.log.info === "function" };`,
      });
      const { deps, hooks, lines } = depsFor(sb);
      const applied = await loadPlugins([authz("nowrite")], deps);

      expect(applied.map((p) => ({ id: p.id, source: p.source, file: p.file }))).to.deep.equal([
        { id: "authz.nowrite", source: "built-in", file },
      ]);
      expect(g.__order).to.deep.equal(["authz.nowrite"]);
      expect(g.__ctx).to.deep.equal({ dataRoot: deps.dataRoot, execRoot: deps.execRoot, host: HOST, options: {}, hasLog: true });
      expect(await ask(hooks, "POST")).to.deep.equal({ plugin: "nowrite", message: "no POST /v1.51/containers/create" });
      expect(await ask(hooks, "GET", "/v1.51/info")).to.equal(undefined);
      const loaded = lines.find((l) => l.msg === "plugin loaded");
      expect(loaded).to.include({ level: "info", plugin: "authz.nowrite", source: "built-in" });
    });

    it("loads the shipped authz.readonly from the default built-in folder", async function () {
      const sb = sandbox();
      const { deps, hooks } = depsFor(sb);
      deps.resolve = { ...defaultResolveOptions(), searchFrom: [sb.root] };
      const applied = await loadPlugins([authz("readonly")], deps);
      expect(applied.map((p) => [p.id, p.source])).to.deep.equal([["authz.readonly", "built-in"]]);
      expect(applied[0].file).to.equal(join(ROOT, "dist/plugins/authz-readonly/index.js"));
      expect(await ask(hooks, "HEAD", "/_ping")).to.equal(undefined);
      expect(await ask(hooks, "DELETE", "/v1.51/containers/x")).to.deep.equal({
        plugin: "readonly",
        message: "DELETE /v1.51/containers/x changes state; this daemon is read-only",
      });
    });

    it("finds a package engine-plugin-authz-<name> in node_modules via searchFrom (exports and main), also from a nested folder", async function () {
      const sb = sandbox();
      const exportsPkg = join(sb.root, "node_modules", "engine-plugin-authz-viaexports");
      write(
        join(exportsPkg, "package.json"),
        JSON.stringify({ name: "engine-plugin-authz-viaexports", type: "module", exports: { ".": { import: "./lib/entry.js" } } }),
      );
      const exportsFile = write(join(exportsPkg, "lib", "entry.js"), pluginSource({ id: "authz.viaexports", apply: denyWrites("viaexports") }));
      const mainPkg = join(sb.root, "node_modules", "engine-plugin-authz-viamain");
      write(join(mainPkg, "package.json"), JSON.stringify({ name: "engine-plugin-authz-viamain", type: "module", main: "main.js" }));
      const mainFile = write(join(mainPkg, "main.js"), pluginSource({ id: "authz.viamain" }));

      const direct = depsFor(sb, [sb.root]);
      const applied = await loadPlugins([authz("viaexports"), authz("viamain")], direct.deps);
      expect(applied.map((p) => ({ id: p.id, source: p.source, file: p.file }))).to.deep.equal([
        { id: "authz.viaexports", source: "package engine-plugin-authz-viaexports", file: exportsFile },
        { id: "authz.viamain", source: "package engine-plugin-authz-viamain", file: mainFile },
      ]);
      expect(await ask(direct.hooks, "POST", "/build")).to.deep.equal({ plugin: "viaexports", message: "no POST /build" });

      // From a child folder three levels down, the walk up the parents finds the same packages.
      const nested = join(sb.root, "a", "b", "c");
      mkdirSync(nested, { recursive: true });
      const walked = depsFor(sb, [nested]);
      const again = await loadPlugins([authz("viamain"), authz("viaexports")], walked.deps);
      expect(again.map((p) => [p.id, p.file])).to.deep.equal([
        ["authz.viamain", mainFile],
        ["authz.viaexports", exportsFile],
      ]);
      expect(await ask(walked.hooks, "PUT", "/x")).to.deep.equal({ plugin: "viaexports", message: "no PUT /x" });
    });

    it("takes a path reference: an absolute module file, a package folder, and a ./ or ../ relative path", async function () {
      const sb = sandbox();
      const file = write(join(sb.root, "elsewhere", "my-plugin.js"), pluginSource({ id: "authz.byfile" }));
      const folder = join(sb.root, "elsewhere", "folder-plugin");
      write(join(folder, "package.json"), JSON.stringify({ type: "module", exports: "./src/plugin.js" }));
      const folderFile = write(join(folder, "src", "plugin.js"), pluginSource({ id: "authz.byfolder" }));
      const relFile = write(join(sb.root, "elsewhere", "relative.js"), pluginSource({ id: "authz.byrelative" }));
      let rel = relative(process.cwd(), relFile);
      if (!rel.startsWith("../")) rel = `./${rel}`;

      const { deps } = depsFor(sb);
      const applied = await loadPlugins([authz(file), authz(folder), authz(rel)], deps);
      expect(applied.map((p) => ({ id: p.id, source: p.source, file: p.file }))).to.deep.equal([
        { id: "authz.byfile", source: "path", file },
        { id: "authz.byfolder", source: "path", file: folderFile },
        { id: "authz.byrelative", source: "path", file: relFile },
      ]);
      expect(g.__order).to.deep.equal(["authz.byfile", "authz.byfolder", "authz.byrelative"]);
    });

    it("reports a plugin that is nowhere with ENGINE_ERR_PLUGIN_NOT_FOUND and every place it looked", async function () {
      const sb = sandbox();
      const deep = join(sb.root, "x", "y");
      const other = join(sb.root, "other");
      mkdirSync(deep, { recursive: true });
      mkdirSync(other);
      const { deps } = depsFor(sb, [deep, other]);
      const err = await rejection(loadPlugins([authz("nosuch")], deps));
      expect(err.code).to.equal("ENGINE_ERR_PLUGIN_NOT_FOUND");
      expect(err.message).to.match(/^authz plugin "nosuch" not found; looked for: /);

      const expected = [`the built-in plugin ${join(sb.builtin, "authz-nosuch")}`];
      for (const start of [deep, other]) {
        for (let dir = start; ; dir = dirname(dir)) {
          expected.push(`the package ${join(dir, "node_modules", "engine-plugin-authz-nosuch")}`);
          if (dirname(dir) === dir) break;
        }
      }
      const tried = err.message.slice(err.message.indexOf("looked for: ") + "looked for: ".length).split("; ");
      // Every place, in order, each once (the two walks share the parents above the sandbox).
      expect(tried).to.deep.equal([...new Set(expected)]);
      expect(tried).to.include(`the package ${join(sb.root, "node_modules", "engine-plugin-authz-nosuch")}`);
      expect(tried).to.include("the package /node_modules/engine-plugin-authz-nosuch");
      expect(g.__order).to.deep.equal([]);

      const path = join(sb.root, "missing", "plugin.js");
      const byPath = await rejection(loadPlugins([authz(path)], depsFor(sb).deps));
      expect(byPath.code).to.equal("ENGINE_ERR_PLUGIN_NOT_FOUND");
      expect(byPath.message).to.equal(`authz plugin "${path}" not found; looked for: the path ${path}`);

      const badName = await rejection(loadPlugins([authz("Bad Name")], depsFor(sb).deps));
      expect(badName.code).to.equal("ENGINE_ERR_PLUGIN_NOT_FOUND");
      expect(badName.message).to.include(`"Bad Name"`).and.include("a plugin name has only a-z, 0-9");
    });

    it("refuses two selections whose modules declare one id with ENGINE_ERR_PLUGIN_DUPLICATE_ID naming both files", async function () {
      const sb = sandbox();
      const first = builtin(sb, "authz-first", { id: "authz.same" });
      const second = builtin(sb, "authz-second", { id: "authz.same" });
      const { deps } = depsFor(sb);
      const err = await rejection(loadPlugins([authz("first"), authz("second")], deps));
      expect(err.code).to.equal("ENGINE_ERR_PLUGIN_DUPLICATE_ID");
      expect(err.message).to.equal(`plugin id authz.same is declared twice: by ${first} and by ${second}`);
      expect(g.__order).to.deep.equal([]);
    });

    it("loads what a plugin requires and applies it first", async function () {
      const sb = sandbox();
      builtin(sb, "authz-a", { id: "authz.a", requires: ["authz.b"], apply: denyWrites("a") });
      const bFile = builtin(sb, "authz-b", { id: "authz.b", apply: denyWrites("b") });
      const { deps, hooks, lines } = depsFor(sb);
      const applied = await loadPlugins([authz("a")], deps);
      expect(applied.map((p) => p.id)).to.deep.equal(["authz.b", "authz.a"]);
      expect(applied[0]).to.include({ source: "built-in", file: bFile });
      expect(g.__order).to.deep.equal(["authz.b", "authz.a"]);
      // Taps run in apply order: the requirement's tap answers first.
      expect(await ask(hooks, "POST", "/x")).to.deep.equal({ plugin: "b", message: "no POST /x" });
      expect(lines.filter((l) => l.msg === "plugin loaded").map((l) => l.plugin)).to.deep.equal(["authz.b", "authz.a"]);

      // Selected in the other order too, the requirement still comes first (and is loaded once).
      g.__order = [];
      const both = await loadPlugins([authz("a"), authz("b")], depsFor(sb).deps);
      expect(both.map((p) => p.id)).to.deep.equal(["authz.b", "authz.a"]);
      expect(g.__order).to.deep.equal(["authz.b", "authz.a"]);
    });

    it("finds a requirement the operator gave as a path, whatever the order of the selections", async function () {
      const sb = sandbox();
      builtin(sb, "authz-needsb", { id: "authz.needsb", requires: ["authz.pathb"] });
      const pathB = write(join(sb.root, "third-party", "b.js"), pluginSource({ id: "authz.pathb" }));
      const applied = await loadPlugins([authz("needsb"), authz(pathB)], depsFor(sb).deps);
      expect(applied.map((p) => [p.id, p.source])).to.deep.equal([
        ["authz.pathb", "path"],
        ["authz.needsb", "built-in"],
      ]);
      g.__order = [];
      const reversed = await loadPlugins([authz(pathB), authz("needsb")], depsFor(sb).deps);
      expect(reversed.map((p) => p.id)).to.deep.equal(["authz.pathb", "authz.needsb"]);
      expect(g.__order).to.deep.equal(["authz.pathb", "authz.needsb"]);
    });

    it("refuses a requirement cycle with ENGINE_ERR_PLUGIN_CYCLE naming it", async function () {
      const sb = sandbox();
      builtin(sb, "authz-ca", { id: "authz.ca", requires: ["authz.cb"] });
      builtin(sb, "authz-cb", { id: "authz.cb", requires: ["authz.ca"] });
      const err = await rejection(loadPlugins([authz("ca")], depsFor(sb).deps));
      expect(err.code).to.equal("ENGINE_ERR_PLUGIN_CYCLE");
      expect(err.message).to.equal("plugin requirements form a cycle: authz.ca -> authz.cb -> authz.ca");
      expect(g.__order).to.deep.equal([]);
    });

    it("refuses a plugin whose requirement is nowhere, saying what it looked for", async function () {
      const sb = sandbox();
      builtin(sb, "authz-needy", { id: "authz.needy", requires: ["authz.nowhere"] });
      const err = await rejection(loadPlugins([authz("needy")], depsFor(sb).deps));
      expect(err.code).to.equal("ENGINE_ERR_PLUGIN_NOT_FOUND");
      expect(err.message).to.include(`authz plugin "nowhere" not found`);
      expect(err.message).to.include(`the built-in plugin ${join(sb.builtin, "authz-nowhere")}`);
      expect(err.message).to.include(`the package ${join(sb.root, "node_modules", "engine-plugin-authz-nowhere")}`);
      expect(g.__order).to.deep.equal([]);
    });

    it("skips an optional plugin whose requirement is nowhere, with a warning, and applies the rest", async function () {
      const sb = sandbox();
      builtin(sb, "authz-needy", { id: "authz.needy", requires: ["authz.nowhere"] });
      builtin(sb, "authz-plain", { id: "authz.plain" });
      const { deps, lines } = depsFor(sb);
      const applied = await loadPlugins([authz("needy", true), authz("plain")], deps);
      expect(applied.map((p) => p.id)).to.deep.equal(["authz.plain"]);
      expect(g.__order).to.deep.equal(["authz.plain"]);
      const warn = lines.find((l) => l.msg === "optional plugin could not be loaded");
      expect(warn).to.include({ level: "warn", kind: "authz", name: "nowhere" });
      expect(String(warn!.err)).to.include(`authz plugin "nowhere" not found`);
      expect(lines.find((l) => l.msg === "plugin skipped: what it requires could not be loaded")).to.include({
        level: "warn",
        plugin: "authz.needy",
        requires: "authz.nowhere",
      });
    });

    it("stops on a selected plugin that is not for this host (ENGINE_ERR_PLUGIN_NOT_SUPPORTED) and skips an optional one with an info line", async function () {
      const sb = sandbox();
      builtin(sb, "authz-onlyarm", {
        id: "authz.onlyarm",
        supported: `return host.arch === "arm64" ? true : "needs arm64, this host is " + host.arch;`,
      });
      builtin(sb, "authz-anywhere", { id: "authz.anywhere", supported: "return true;" });

      const err = await rejection(loadPlugins([authz("onlyarm")], depsFor(sb).deps));
      expect(err.code).to.equal("ENGINE_ERR_PLUGIN_NOT_SUPPORTED");
      expect(err.message).to.equal("plugin authz.onlyarm was selected but is not supported on this host: needs arm64, this host is x64");
      expect(g.__order).to.deep.equal([]);

      const { deps, lines } = depsFor(sb);
      const applied = await loadPlugins([authz("onlyarm", true), authz("anywhere")], deps);
      expect(applied.map((p) => p.id)).to.deep.equal(["authz.anywhere"]);
      expect(g.__order).to.deep.equal(["authz.anywhere"]);
      const skipped = lines.find((l) => l.msg === "plugin skipped: not for this host");
      expect(skipped).to.include({ level: "info", plugin: "authz.onlyarm", reason: "needs arm64, this host is x64" });
      expect(lines.some((l) => l.msg === "plugin loaded" && l.plugin === "authz.onlyarm")).to.equal(false);
    });

    it("drops an optional plugin whose requirement is not for this host, and stops when the requirer was selected", async function () {
      const sb = sandbox();
      builtin(sb, "authz-needsarm", { id: "authz.needsarm", requires: ["authz.armonly"] });
      builtin(sb, "authz-armonly", { id: "authz.armonly", supported: `return "not on " + host.arch;` });

      const { deps, lines } = depsFor(sb);
      const applied = await loadPlugins([authz("needsarm", true)], deps);
      expect(applied).to.deep.equal([]);
      expect(g.__order).to.deep.equal([]);
      expect(lines.find((l) => l.msg === "plugin skipped: not for this host")).to.include({ plugin: "authz.armonly", reason: "not on x64" });
      expect(lines.find((l) => l.msg === "plugin skipped: what it requires is not for this host")).to.include({
        level: "info",
        plugin: "authz.needsarm",
        requires: "authz.armonly",
      });

      // A selected plugin whose requirement was only an optional candidate that is not for this host.
      const err = await rejection(loadPlugins([authz("armonly", true), authz("needsarm")], depsFor(sb).deps));
      expect(err.code).to.equal("ENGINE_ERR_PLUGIN_MISSING_REQUIREMENT");
      expect(err.message).to.equal("plugin authz.needsarm requires authz.armonly, which is not available");
    });

    it("stops when a selected plugin's apply throws (ENGINE_ERR_PLUGIN_LOAD_FAILED) and skips an optional one with a warning", async function () {
      const sb = sandbox();
      builtin(sb, "authz-boom", { id: "authz.boom", apply: `throw new Error("no socket to talk to");` });
      builtin(sb, "authz-fine", { id: "authz.fine", apply: denyWrites("fine") });

      const err = await rejection(loadPlugins([authz("boom")], depsFor(sb).deps));
      expect(err.code).to.equal("ENGINE_ERR_PLUGIN_LOAD_FAILED");
      expect(err.message).to.equal("plugin authz.boom failed to load: no socket to talk to");

      g.__order = [];
      const { deps, hooks, lines } = depsFor(sb);
      const applied = await loadPlugins([authz("boom", true), authz("fine")], deps);
      expect(applied.map((p) => p.id)).to.deep.equal(["authz.fine"]);
      expect(g.__order).to.deep.equal(["authz.boom", "authz.fine"]);
      const warn = lines.find((l) => l.msg === "optional plugin failed to apply");
      expect(warn).to.include({ level: "warn", plugin: "authz.boom", err: "plugin authz.boom failed to load: no socket to talk to" });
      expect(lines.filter((l) => l.msg === "plugin loaded").map((l) => l.plugin)).to.deep.equal(["authz.fine"]);
      expect(await ask(hooks, "POST", "/y")).to.deep.equal({ plugin: "fine", message: "no POST /y" });
    });

    it("stops when a selected plugin requires an optional one whose apply failed", async function () {
      const sb = sandbox();
      builtin(sb, "authz-flaky", { id: "authz.flaky", apply: `throw new Error("flaked");` });
      builtin(sb, "authz-dependent", { id: "authz.dependent", requires: ["authz.flaky"] });
      const err = await rejection(loadPlugins([authz("flaky", true), authz("dependent")], depsFor(sb).deps));
      expect(err.code).to.equal("ENGINE_ERR_PLUGIN_MISSING_REQUIREMENT");
      expect(err.message).to.equal("plugin authz.dependent requires authz.flaky, which is not available");
      expect(g.__order).to.deep.equal(["authz.flaky"]);

      // When the requirer is optional too, it is skipped with a warning.
      g.__order = [];
      const { deps, lines } = depsFor(sb);
      const applied = await loadPlugins([authz("flaky", true), authz("dependent", true)], deps);
      expect(applied).to.deep.equal([]);
      expect(lines.find((l) => l.msg === "plugin skipped: a plugin it requires failed")).to.include({
        level: "warn",
        plugin: "authz.dependent",
      });
    });

    describe("refuses a module that is not a plugin with ENGINE_ERR_PLUGIN_INVALID", function () {
      const cases: { title: string; source: string; detail: RegExp }[] = [
        {
          title: "no default export",
          source: `export const manifest = { id: "authz.bad", kind: "authz" };\nexport function apply() {}\n`,
          detail: /it has no default export \(nor one named `plugin`\)$/,
        },
        {
          title: "manifest without kind",
          source: `export default { manifest: { id: "authz.bad" }, apply() {} };\n`,
          detail: /manifest\.kind should be .*"authz"/,
        },
        {
          title: "kind not in the list",
          source: `export default { manifest: { id: "metrics.bad", kind: "metrics" }, apply() {} };\n`,
          detail: /manifest\.kind should be \((?=.*"storage")(?=.*"runtime")(?=.*"network")(?=.*"log")(?=.*"authz")(?=.*"volume")/,
        },
        {
          title: "id whose kind part is not the kind",
          source: `export default { manifest: { id: "log.bad", kind: "authz" }, apply() {} };\n`,
          detail: /manifest id "log\.bad" must be "authz\.<name>"$/,
        },
        {
          title: "no apply",
          source: `export default { manifest: { id: "authz.bad", kind: "authz" } };\n`,
          detail: /it has no apply\(hooks, ctx\) function$/,
        },
        {
          title: "a module that does not import",
          source: `export default {;\n`,
          detail: /it could not be imported: /,
        },
      ];
      for (const c of cases) {
        it(c.title, async function () {
          const sb = sandbox();
          const file = builtin(sb, "authz-bad", c.source);
          const err = await rejection(loadPlugins([authz("bad")], depsFor(sb).deps));
          expect(err.code).to.equal("ENGINE_ERR_PLUGIN_INVALID");
          expect(err.message.startsWith(`${file} is not a valid engine plugin: `), err.message).to.equal(true);
          expect(err.message).to.match(c.detail);
        });
      }
    });

    it("refuses a module of another kind than selected with ENGINE_ERR_PLUGIN_KIND_MISMATCH", async function () {
      const sb = sandbox();
      const file = builtin(sb, "authz-journal", { id: "log.journal" });
      const err = await rejection(loadPlugins([authz("journal")], depsFor(sb).deps));
      expect(err.code).to.equal("ENGINE_ERR_PLUGIN_KIND_MISMATCH");
      expect(err.message).to.equal(`${file} is a log plugin, but a authz plugin was asked for`);
      expect(g.__order).to.deep.equal([]);
    });

    it("keeps the operator's order when no plugin requires another", async function () {
      const sb = sandbox();
      builtin(sb, "authz-x", { id: "authz.x", apply: denyWrites("x") });
      builtin(sb, "authz-y", { id: "authz.y", apply: denyWrites("y") });

      const xy = depsFor(sb);
      expect((await loadPlugins([authz("x"), authz("y")], xy.deps)).map((p) => p.id)).to.deep.equal(["authz.x", "authz.y"]);
      expect(g.__order).to.deep.equal(["authz.x", "authz.y"]);
      expect((await ask(xy.hooks, "POST"))?.plugin).to.equal("x");

      g.__order = [];
      const yx = depsFor(sb);
      expect((await loadPlugins([authz("y"), authz("x")], yx.deps)).map((p) => p.id)).to.deep.equal(["authz.y", "authz.x"]);
      expect(g.__order).to.deep.equal(["authz.y", "authz.x"]);
      expect((await ask(yx.hooks, "POST"))?.plugin).to.equal("y");
    });
  });
});
