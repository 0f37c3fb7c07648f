/**
 * The `features` map: defaults (cdi on, the others off), `--feature` flags, the file's
 * `features`, what `/info` and the real `docker info` show of them, a reload that changes them,
 * and the refusals: `windows-dns-proxy` on Linux (as Docker's Linux daemon does, on or off), and
 * `--feature` with the file's `features` (at start and on a reload). A name this engine does not
 * know is accepted and kept, as Docker does.
 */
import "./helpers/root-hooks.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { featureEnabled, featuresInForce } from "../core/features.js";
import { resolveOptions } from "../core/options/resolve.js";
import { checkRules, type RuleHost } from "../core/options/rules.js";
import { parseDaemonArgs } from "../host/daemon-args.js";
import {docker } from "./helpers/docker-cli.js";
import { daemonArgs, makeTempDir, runEngined, sighup, startEngined, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";

const linux: RuleHost = { platform: "linux", cgroupVersion: 1, systemd: false };
const win: RuleHost = { platform: "win", cgroupVersion: 1, systemd: false };
const config = (...args: string[]) => resolveOptions(parseDaemonArgs(args), {}).config;
const DEFAULT_CDI_DIRS = ["/etc/cdi", "/var/run/cdi"];
const SNAPSHOTTER_WARNING =
  "WARNING: the containerd-snapshotter feature is on, but this engine has no containerd snapshotter: images and containers stay in the overlay2 storage driver";
const DNS_PROXY_REFUSED = "feature option 'windows-dns-proxy' is only available on the win platform";

async function info(d: TestDaemon): Promise<Record<string, any>> {
  const res = await httpRequest({ socketPath: d.socket }, "GET", "/v1.51/info");
  expect(res.status, res.body).to.equal(200);
  return JSON.parse(res.body);
}

function writeJson(path: string, value: unknown): string {
  writeFileSync(path, JSON.stringify(value));
  return path;
}

describe("features", function () {
  this.timeout(60_000);

  describe("defaults, values and rules", () => {
    it("cdi is on by default, containerd-snapshotter and windows-dns-proxy off, an unknown name off", () => {
      const none = config();
      expect(featureEnabled(none, "cdi")).to.equal(true);
      expect(featureEnabled(none, "containerd-snapshotter")).to.equal(false);
      expect(featureEnabled(none, "windows-dns-proxy")).to.equal(false);
      expect(featureEnabled(none, "no-such-feature")).to.equal(false);
      expect(featuresInForce(none, "linux")).to.deep.equal({ cdi: true, "containerd-snapshotter": false });
      expect(featuresInForce(none, "win")).to.deep.equal({ "containerd-snapshotter": false, "windows-dns-proxy": false });
    });

    it("--feature name[=bool] sets them, a bare name meaning true; unknown names are kept", () => {
      const given = config("--feature", "cdi=false", "--feature", "containerd-snapshotter", "--feature", "my-thing=1", "--feature", "other=False");
      expect(given.feature).to.deep.equal({ cdi: false, "containerd-snapshotter": true, "my-thing": true, other: false });
      expect(featureEnabled(given, "cdi")).to.equal(false);
      expect(featureEnabled(given, "containerd-snapshotter")).to.equal(true);
      expect(featureEnabled(given, "my-thing")).to.equal(true);
      expect(featuresInForce(given, "linux")).to.deep.equal({ cdi: false, "containerd-snapshotter": true, "my-thing": true, other: false });
      expect(() => config("--feature", "cdi=maybe")).to.throw("expected a boolean after cdi=");
    });

    it("windows-dns-proxy is refused on Linux whatever its value, and accepted on the win platform", () => {
      expect(() => checkRules(config("--feature", "windows-dns-proxy"), linux)).to.throw(DNS_PROXY_REFUSED);
      expect(() => checkRules(config("--feature", "windows-dns-proxy=false"), linux)).to.throw(DNS_PROXY_REFUSED);
      expect(() => checkRules(config("--feature", "windows-dns-proxy"), win)).to.not.throw();
      expect(() => checkRules(config("--feature", "cdi=false", "--feature", "anything-else"), linux)).to.not.throw();
    });
  });

  describe("a running daemon", () => {
    it("by default: CDI spec directories in /info and docker info, no feature warning", async function () {
      const d = await startEngined();
      try {
        const i = await info(d);
        expect(i.CDISpecDirs).to.deep.equal(DEFAULT_CDI_DIRS);
        expect(i.Warnings).to.not.include(SNAPSHOTTER_WARNING);
        expect(i.EngineOptions.features).to.deep.equal({});
        const cli = await docker(`unix://${d.socket}`, ["info"]);
        expect(cli.code, cli.stderr).to.equal(0);
        expect(cli.stdout).to.include(" CDI spec directories:\n  /etc/cdi\n  /var/run/cdi\n");
        expect(cli.stderr).to.not.include("containerd-snapshotter");
      } finally {
        expect(await d.stop()).to.equal(0);
      }
    });

    it("flags: cdi=false empties CDISpecDirs, containerd-snapshotter warns in /info and docker info, an unknown name starts fine", async function () {
      const d = await startEngined({ args: ["--feature", "cdi=false", "--feature", "containerd-snapshotter", "--feature", "no-such-feature"] });
      try {
        const i = await info(d);
        expect(i.CDISpecDirs).to.deep.equal([]);
        expect(i.Warnings).to.include(SNAPSHOTTER_WARNING);
        expect(i.Driver).to.equal("overlay2"); // nothing pretends to be a snapshotter
        expect(i.EngineOptions.features).to.deep.equal({ cdi: false, "containerd-snapshotter": true, "no-such-feature": true });
        const cli = await docker(`unix://${d.socket}`, ["info"]);
        expect(cli.code, cli.stderr).to.equal(0);
        expect(cli.stdout).to.not.include("CDI spec directories");
        expect(cli.stderr).to.include(SNAPSHOTTER_WARNING);
        expect(d.output()).to.match(/feature not known to this engine: kept, and it changes nothing.*feature=no-such-feature/);
      } finally {
        expect(await d.stop()).to.equal(0);
      }
    });

    it("the file's features do the same; windows-dns-proxy in it is refused at start and by --validate", async function () {
      const dir = makeTempDir();
      const file = writeJson(join(dir, "daemon.json"), { features: { cdi: false, "containerd-snapshotter": true } });
      const d = await startEngined({ args: ["--config-file", file] });
      try {
        const i = await info(d);
        expect(i.CDISpecDirs).to.deep.equal([]);
        expect(i.Warnings).to.include(SNAPSHOTTER_WARNING);
      } finally {
        expect(await d.stop()).to.equal(0);
      }

      const bad = writeJson(join(dir, "bad.json"), { features: { "windows-dns-proxy": false } });
      const validate = await runEngined(["--validate", "--config-file", bad]);
      expect(validate.code).to.equal(1);
      expect(validate.stderr).to.include(DNS_PROXY_REFUSED);
      const start = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "engine.sock")}`, "--config-file", bad]);
      expect(start.code).to.equal(1);
      expect(start.stderr).to.include(DNS_PROXY_REFUSED);
      const byFlag = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "engine.sock")}`, "--feature", "windows-dns-proxy"]);
      expect(byFlag.code).to.equal(1);
      expect(byFlag.stderr).to.include(DNS_PROXY_REFUSED);
    });

    it("a reload changes them in /info; a refused feature or a flag-and-file conflict changes nothing", async function () {
      const dir = makeTempDir();
      const file = writeJson(join(dir, "daemon.json"), {});
      const d = await startEngined({ args: ["--config-file", file] });
      try {
        expect((await info(d)).CDISpecDirs).to.deep.equal(DEFAULT_CDI_DIRS);

        writeJson(file, { features: { cdi: false, "containerd-snapshotter": true } });
        const applied = await sighup(d);
        expect(applied).to.include('reloaded features: {} -> {\\"cdi\\":false,\\"containerd-snapshotter\\":true}');
        expect(applied).to.include("feature cdi is now off");
        let i = await info(d);
        expect(i.CDISpecDirs).to.deep.equal([]);
        expect(i.Warnings).to.include(SNAPSHOTTER_WARNING);
        expect(i.EngineOptions.features).to.deep.equal({ cdi: false, "containerd-snapshotter": true });

        writeJson(file, { features: { cdi: true, "windows-dns-proxy": true } });
        const refused = await sighup(d);
        expect(refused).to.include("reload failed");
        expect(refused).to.include(DNS_PROXY_REFUSED);
        i = await info(d);
        expect(i.CDISpecDirs).to.deep.equal([]);

        writeJson(file, { features: { cdi: true } });
        await sighup(d);
        i = await info(d);
        expect(i.CDISpecDirs).to.deep.equal(DEFAULT_CDI_DIRS);
        expect(i.Warnings).to.not.include(SNAPSHOTTER_WARNING);
      } finally {
        expect(await d.stop()).to.equal(0);
      }
    });

    it("--feature and the file's features are not used both: at start, and on a reload", async function () {
      const dir = makeTempDir();
      const both = writeJson(join(dir, "both.json"), { features: { cdi: true } });
      const start = await runEngined([...daemonArgs(dir), "-H", `unix://${join(dir, "engine.sock")}`, "--config-file", both, "--feature", "cdi=false"]);
      expect(start.code).to.equal(1);
      expect(start.stderr).to.include("the following directives are specified both as a flag and in the configuration file");
      expect(start.stderr).to.include('features: (from flag: {"cdi":false}, from file: {"cdi":true})');

      const file = writeJson(join(dir, "daemon.json"), {});
      const d = await startEngined({ args: ["--config-file", file, "--feature", "cdi=false"] });
      try {
        expect((await info(d)).CDISpecDirs).to.deep.equal([]);
        writeJson(file, { features: { "containerd-snapshotter": true } });
        const conflict = await sighup(d);
        expect(conflict).to.include("reload failed");
        expect(conflict).to.include('features: (from flag: {\\"cdi\\":false}, from file: {\\"containerd-snapshotter\\":true})');
        const i = await info(d);
        expect(i.CDISpecDirs).to.deep.equal([]);
        expect(i.Warnings).to.not.include(SNAPSHOTTER_WARNING);
        expect(i.EngineOptions.features).to.deep.equal({ cdi: false });
      } finally {
        expect(await d.stop()).to.equal(0);
      }
    });
  });
});
