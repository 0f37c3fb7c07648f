/**
 * The option table, walked whole: every option parses an example value, refuses a bad one
 * with a message naming the flag, has its spec default, and appears in --help.
 */
import { expect } from "chai";
import { resolveOptions } from "../core/options/resolve.js";
import { optionNames, optionTable, type OptionDefinition, type OptionName } from "../core/options/table.js";
import { parseDaemonArgs } from "../host/daemon-args.js";
import { daemonHelp } from "../host/daemon-help.js";

/** An example value for each option, and the value it must parse to. */
const examples: Record<OptionName, { args: string[]; value: unknown; bad?: string }> = {
  host: { args: ["-H", "unix:///a.sock", "--host", "tcp://:1"], value: ["unix:///a.sock", "tcp://:1"] },
  group: { args: ["-G", "docker"], value: "docker" },
  tls: { args: ["--tls"], value: true, bad: "--tls=maybe" },
  tlsverify: { args: ["--tlsverify=false"], value: false, bad: "--tlsverify=2" },
  tlscacert: { args: ["--tlscacert", "/c/ca.pem"], value: "/c/ca.pem" },
  tlscert: { args: ["--tlscert", "/c/cert.pem"], value: "/c/cert.pem" },
  tlskey: { args: ["--tlskey", "/c/key.pem"], value: "/c/key.pem" },
  "data-root": { args: ["--data-root", "/srv/engine"], value: "/srv/engine" },
  "exec-root": { args: ["--exec-root", "/run/e"], value: "/run/e" },
  pidfile: { args: ["-p", "/run/e.pid"], value: "/run/e.pid" },
  label: { args: ["--label", "a=1", "--label", "b=2"], value: ["a=1", "b=2"], bad: "--label=novalue" },
  experimental: { args: ["--experimental"], value: true },
  debug: { args: ["-D"], value: true, bad: "--debug=yes" },
  "log-level": { args: ["-l", "warn"], value: "warn", bad: "--log-level=loud" },
  "log-format": { args: ["--log-format", "json"], value: "json", bad: "--log-format=xml" },
  "raw-logs": { args: ["--raw-logs"], value: true },
  "authorization-plugin": { args: ["--authorization-plugin", "a", "--authorization-plugin", "b"], value: ["a", "b"] },
  "storage-driver": { args: ["-s", "overlay2"], value: "overlay2" },
  "log-driver": { args: ["--log-driver", "json-file"], value: "json-file" },
  help: { args: ["--help"], value: true },
  version: { args: ["-v"], value: true },
};

/** The spec's defaults (the table of `engined [OPTIONS]`), with no environment. */
const specDefaults: Partial<Record<OptionName, unknown>> = {
  host: [],
  group: "engine",
  tls: false,
  tlsverify: false,
  "data-root": "/var/lib/engine",
  "exec-root": "/var/run/engine",
  pidfile: "/var/run/engine.pid",
  debug: false,
  "log-level": "info",
  "log-format": "text",
  "log-driver": "json-file",
  "authorization-plugin": [],
  label: [],
};

describe("option table", () => {
  it("has an example for every option", () => {
    expect(Object.keys(examples).sort()).to.deep.equal([...optionNames].sort());
  });

  for (const name of optionNames) {
    const def = optionTable[name] as OptionDefinition<unknown>;
    const ex = examples[name];
    it(`--${def.flag} parses its example${ex.bad ? " and refuses a bad value" : ""}`, () => {
      const { config, given } = resolveOptions(parseDaemonArgs(ex.args), {});
      expect(config[name]).to.deep.equal(ex.value);
      expect(given.has(name)).to.equal(true);
      if (ex.bad) expect(() => resolveOptions(parseDaemonArgs([ex.bad!]), {})).to.throw(`for --${def.flag}`);
    });
  }

  it("has the spec's defaults", () => {
    const { config, given } = resolveOptions(new Map(), { HOME: "/root" });
    expect(given.size).to.equal(0);
    for (const [name, value] of Object.entries(specDefaults)) expect(config[name as OptionName], name).to.deep.equal(value);
    expect(config.tlscacert).to.equal("/root/.engine/ca.pem");
  });

  it("takes TLS defaults from ENGINE_CERT_PATH and ENGINE_TLS_VERIFY, the storage driver from ENGINE_DRIVER", () => {
    const { config } = resolveOptions(new Map(), { ENGINE_CERT_PATH: "/certs", ENGINE_TLS_VERIFY: "1", ENGINE_DRIVER: "btrfs" });
    expect(config.tlscacert).to.equal("/certs/ca.pem");
    expect(config.tlscert).to.equal("/certs/cert.pem");
    expect(config.tlskey).to.equal("/certs/key.pem");
    expect(config.tlsverify).to.equal(true);
    expect(config["storage-driver"]).to.equal("btrfs");
    // A flag wins over the environment.
    const flagged = resolveOptions(parseDaemonArgs(["-s", "overlay2"]), { ENGINE_DRIVER: "btrfs" });
    expect(flagged.config["storage-driver"]).to.equal("overlay2");
  });

  it("keeps the last value of a single-valued flag given twice, as Docker's flags do", () => {
    const { config } = resolveOptions(parseDaemonArgs(["--data-root", "/a", "--data-root", "/b"]), {});
    expect(config["data-root"]).to.equal("/b");
  });

  it("lists every option in --help", () => {
    const help = daemonHelp({});
    for (const name of optionNames) expect(help).to.include(`--${optionTable[name].flag}`);
  });
});
