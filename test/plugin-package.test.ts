/**
 * A third-party plugin, as its author ships it and an operator installs it: the package
 * test/fixtures/engine-plugin-volume-folder (plain JavaScript, nothing of the engine imported)
 * is packed with `npm pack` and installed with `npm install` into a folder of its own, the
 * daemon's working folder. From there the engine finds it by name (`-d folder`), the volume
 * conformance suite runs against the driver the engine makes of it, and its typed options are
 * checked and documented with no line of host code about them: a bad value is a 400 naming the
 * option, `engined --help` lists them, and the package's README table is written from them.
 */
import "./helpers/root-hooks.js";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { pino } from "pino";
import type { PluginManifest } from "../core/contracts/plugin.js";
import type { VolumeDriver } from "../core/contracts/volume.js";
import { createHooks } from "../core/hooks.js";
import { pluginOptionsTable } from "../core/options/plugin-options-doc.js";
import { DriverRegistry } from "../host/plugins/driver-registry.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, ROOT, runCommand, runEngined, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { volumeConformance } from "./volume-conformance.js";

const PACKAGE = join(ROOT, "test", "fixtures", "engine-plugin-volume-folder");
const HOST = { platform: "linux" as NodeJS.Platform, arch: process.arch, kernel: "6", cgroupVersion: 2 as const };

describe("a third-party plugin package: engine-plugin-volume-folder", function () {
  this.timeout(120_000);
  /** The operator's folder, with the package installed in its node_modules. */
  let app: string;

  before(async function () {
    const work = makeTempDir("engine-plugin-package-");
    const pack = await runCommand("npm", ["pack", "--pack-destination", work], { cwd: PACKAGE, timeoutMs: 60_000 });
    expect(pack.code, pack.stderr).to.equal(0);
    const tarball = join(work, pack.stdout.trim().split("\n").at(-1)!);
    app = join(work, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ private: true }));
    const install = await runCommand("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball], { cwd: app, timeoutMs: 60_000 });
    expect(install.code, install.stderr).to.equal(0);
  });

  /** The driver as the engine makes it: found in `app`'s node_modules by name, its manifest's options applied. */
  async function engineMade(dataRoot: string): Promise<VolumeDriver> {
    const registry = new DriverRegistry({
      hooks: createHooks(),
      log: pino({ level: "silent" }),
      host: HOST,
      dataRoot,
      execRoot: join(dataRoot, "exec"),
      resolve: { builtinDir: join(dataRoot, "no-builtins"), searchFrom: [app] },
    });
    return registry.driver("volume", "folder", { chosenBy: "client", context: () => ({ dataRoot, home: join(dataRoot, "volumes") }) });
  }

  volumeConformance("folder", (home) => engineMade(home));

  it("is found as an installed package, and refuses an option or a value its manifest does not allow", async () => {
    const driver = await engineMade(makeTempDir("engine-plugin-folder-"));
    expect(() => driver.validateOptions({ uid: "abc" })).to.throw('invalid option "uid": "abc": expected an integer');
    expect(() => driver.validateOptions({ gid: "-1" })).to.throw('invalid option "gid": "-1": expected an integer of at least 0');
    expect(() => driver.validateOptions({ private: "maybe" })).to.throw('invalid option "private": "maybe": expected a boolean (true or false)');
    expect(() => driver.validateOptions({ colour: "red" })).to.throw('invalid option: "colour" (the folder driver knows uid, gid and private)');
    // the values reach the driver typed: a number owns the folder, a boolean makes it private
    const info = await driver.create("typed", { uid: "1234", gid: "5678", private: "true" });
    const st = statSync(info.mountpoint);
    expect([st.uid, st.gid, st.mode & 0o777]).to.deep.equal([1234, 5678, 0o700]);
    expect(info.options).to.deep.equal({ uid: "1234", gid: "5678", private: "true" });
    await driver.remove("typed");
  });

  describe("with a daemon whose working folder has the package", () => {
    let d: TestDaemon;
    before(async () => {
      d = await startEngined({ cwd: app });
    });
    after(async () => {
      await d?.stop();
    });

    it("answers a bad typed option with a 400 naming it, and makes the volume with good ones", async () => {
      const sock = { socketPath: d.socket };
      const bad = await httpRequest(sock, "POST", "/v1.51/volumes/create", { Name: "pkg-bad", Driver: "folder", DriverOpts: { uid: "abc" } });
      expect(bad.status).to.equal(400);
      expect(JSON.parse(bad.body).message).to.equal('create pkg-bad: invalid option "uid": "abc": expected an integer');
      const cli = await docker(`unix://${d.socket}`, ["volume", "create", "-d", "folder", "-o", "private=perhaps", "pkg-cli"]);
      expect(cli.code).to.equal(1);
      expect(cli.stderr).to.include('create pkg-cli: invalid option "private": "perhaps": expected a boolean (true or false)');
      const good = await docker(`unix://${d.socket}`, ["volume", "create", "-d", "folder", "-o", "uid=4321", "-o", "private=1", "pkg-good"]);
      expect([good.code, good.stderr]).to.deep.equal([0, ""]);
      const inspect = await docker(`unix://${d.socket}`, ["volume", "inspect", "--format", "{{.Driver}} {{.Mountpoint}}", "pkg-good"]);
      const [driverName, mountpoint] = inspect.stdout.trim().split(" ");
      expect(driverName).to.equal("folder");
      expect(mountpoint).to.equal(join(d.dir, "data", "folder-volumes", "pkg-good", "_data"));
      const st = statSync(mountpoint);
      expect([st.uid, st.mode & 0o777]).to.deep.equal([4321, 0o700]);
      expect((await docker(`unix://${d.socket}`, ["volume", "rm", "pkg-good"])).code).to.equal(0);
    });
  });

  it("is documented from its manifest: engined --help run there, and the package's README table", async () => {
    const help = await runEngined(["--help"], { cwd: app });
    expect(help.code).to.equal(0);
    expect(help.stdout).to.match(
      /\n {2}volume driver folder \(package engine-plugin-volume-folder; docker volume create -o\):\n {4}uid uint +Owner \(user id\) of the volume's folder; default: root\n {4}gid uint +Group id[^\n]*\n {4}private bool +Mode 0700 instead of 0755: only its owner may enter \(default false\)\n/,
    );
    const { manifest } = (await import(join(app, "node_modules", "engine-plugin-volume-folder", "manifest.js"))) as { manifest: PluginManifest };
    const readme = readFileSync(join(PACKAGE, "README.md"), "utf8");
    const table = /<!-- options: written from manifest.js -->\n([\s\S]*?)\n<!-- end of options -->/.exec(readme)?.[1];
    expect(table, "the README's options table, from manifest.js").to.equal(pluginOptionsTable(manifest).join("\n"));
  });
});
