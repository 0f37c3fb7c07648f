/**
 * The option table, walked whole: every flag parses its example, every key of the spec's
 * Linux and win-platform lists is accepted on its platform and refused on the other, every
 * default is the spec's, and the file's rules (unknown keys, conflicts, types) hold.
 */
import { expect } from "chai";
import { parseConfigFile } from "../core/options/config-file.js";
import { platformsOfKey } from "../core/options/option.js";
import { resolveOptions } from "../core/options/resolve.js";
import { definitionOf, optionNames, type OptionName, type Platform } from "../core/options/table.js";
import { parseDaemonArgs } from "../host/daemon-args.js";
import { daemonHelp } from "../host/daemon-help.js";

/** The spec's Linux keys ("Daemon configuration file"), `containerd` renamed `supervisor` as it says. */
const LINUX_KEYS = [
  "allow-direct-routing", "debug", "experimental", "icc", "init", "ip-forward", "ip-masq", "iptables", "ip6tables", "ipv6",
  "live-restore", "no-new-privileges", "raw-logs", "selinux-enabled", "tls", "tlsverify", "userland-proxy",
  "bip", "bip6", "bridge", "cgroup-parent", "supervisor", "supervisor-namespace", "supervisor-plugins-namespace", "data-root",
  "default-cgroupns-mode", "default-gateway", "default-gateway-v6", "default-runtime", "default-shm-size", "exec-root",
  "fixed-cidr", "fixed-cidr-v6", "group", "host-gateway-ip", "init-path", "ip", "log-driver", "log-format", "log-level",
  "pidfile", "seccomp-profile", "storage-driver", "cluster-default-advertise-addr", "tlscacert", "tlscert", "tlskey",
  "userland-proxy-path", "userns-remap",
  "max-concurrent-downloads", "max-concurrent-uploads", "max-download-attempts", "mtu", "shutdown-timeout",
  "authorization-plugins", "cdi-spec-dirs", "dns", "dns-opts", "dns-search", "exec-opts", "host-gateway-ips", "hosts",
  "insecure-registries", "labels", "node-generic-resources", "registry-mirrors", "storage-opts",
  "default-network-opts", "default-address-pools", "default-ulimits", "log-opts", "features", "proxies", "runtimes", "builder",
];

/** The spec's win-platform keys. */
const WIN_KEYS = [
  "authorization-plugins", "bridge", "supervisor", "supervisor-namespace", "supervisor-plugins-namespace", "data-root", "debug",
  "default-network-opts", "default-runtime", "default-ulimits", "dns", "dns-opts", "dns-search", "exec-opts", "experimental",
  "features", "fixed-cidr", "group", "host-gateway-ip", "hosts", "insecure-registries", "labels", "log-driver", "log-format",
  "log-level", "max-concurrent-downloads", "max-concurrent-uploads", "max-download-attempts", "mtu", "pidfile", "raw-logs",
  "registry-mirrors", "shutdown-timeout", "storage-driver", "storage-opts", "cluster-default-advertise-addr", "tlscacert",
  "tlscert", "tlskey", "tlsverify",
];

/** The spec's defaults (table "engined [OPTIONS]"), for the options that state one. */
const SPEC_DEFAULTS: Partial<Record<OptionName, unknown>> = {
  "add-runtime": {}, "config-file": "/etc/engine/daemon.json", "supervisor-namespace": "engine",
  "supervisor-plugins-namespace": "plugins.engine", "data-root": "/var/lib/engine", "default-cgroupns-mode": "private",
  "default-ipc-mode": "private", "default-network-opt": {}, "default-runtime": "ocirun", "default-shm-size": 64 * 1024 * 1024,
  "default-ulimit": {}, "exec-root": "/var/run/engine", group: "engine", icc: true, ip: "0.0.0.0", "ip-forward": true,
  "ip-masq": true, ip6tables: true, iptables: true, "log-driver": "json-file", "log-format": "text", "log-level": "info",
  "log-opt": {}, "max-concurrent-downloads": 3, "max-concurrent-uploads": 5, "max-download-attempts": 5, mtu: 1500,
  "network-control-plane-mtu": 1500, pidfile: "/var/run/engine.pid", "seccomp-profile": "builtin", "shutdown-timeout": 15,
  "userland-proxy": true, "cdi-spec-dir": ["/etc/cdi", "/var/run/cdi"], tls: false, tlsverify: false, debug: false,
  host: [], label: [], "authorization-plugin": [],
};

/** Repeatable flags and the plural keys the spec gives them. */
const PLURALS: [string, string][] = [
  ["label", "labels"], ["storage-opt", "storage-opts"], ["add-runtime", "runtimes"], ["authorization-plugin", "authorization-plugins"],
  ["host", "hosts"], ["insecure-registry", "insecure-registries"], ["registry-mirror", "registry-mirrors"], ["dns-opt", "dns-opts"],
  ["exec-opt", "exec-opts"], ["cdi-spec-dir", "cdi-spec-dirs"], ["default-ulimit", "default-ulimits"], ["log-opt", "log-opts"],
  ["feature", "features"], ["default-address-pool", "default-address-pools"], ["default-network-opt", "default-network-opts"],
  ["node-generic-resource", "node-generic-resources"], ["host-gateway-ip", "host-gateway-ips"],
];

/** A file holding one option's example value under its key (dotted keys become nested objects). */
function fileWith(name: OptionName): string {
  const def = definitionOf(name);
  const value = def.example.file ?? def.type.toFile(def.example.value as never);
  const [top, member] = def.key!.split(".");
  return JSON.stringify(member ? { [top]: { [member]: value } } : { [top]: value });
}


describe("option table", () => {
  for (const name of optionNames) {
    const def = definitionOf(name);
    if (def.flag && def.example.args) {
      it(`--${def.flag} parses its example ${JSON.stringify(def.example.args.join(" "))}`, () => {
        const { config, given } = resolveOptions(parseDaemonArgs(def.example.args!), {});
        expect(config[name]).to.deep.equal(def.example.value);
        expect(given.has(name)).to.equal(true);
      });
    }
    if (def.key) {
      const platforms = platformsOfKey(def, def.key);
      const other: Platform = platforms.includes("win") ? "linux" : "win";
      it(`key ${def.key} reads its example on ${platforms.join(" and ")}${platforms.length < 2 ? `, refused on ${other}` : ""}`, () => {
        for (const platform of platforms) {
          expect(parseConfigFile(fileWith(name), "/d.json", platform).get(name)).to.deep.equal(def.example.value);
        }
        if (platforms.length < 2) {
          expect(() => parseConfigFile(fileWith(name), "/d.json", other)).to.throw(`not supported on the ${other} platform: ${def.key}`);
        }
      });
    }
  }

  it("knows every key of the spec's Linux list on Linux, and every key of the win list on win", () => {
    const keysOn = (platform: Platform) =>
      new Set(optionNames.flatMap((n) => {
        const def = definitionOf(n);
        return [def.key, ...(def.legacyKeys ?? [])]
          .filter((k): k is string => Boolean(k) && platformsOfKey(def, k!).includes(platform))
          .map((k) => k.split(".")[0]);
      }));
    const linux = keysOn("linux");
    for (const key of LINUX_KEYS) expect(linux.has(key), `linux: ${key}`).to.equal(true);
    const win = keysOn("win");
    for (const key of WIN_KEYS) expect(win.has(key), `win: ${key}`).to.equal(true);
    // Keys of the Linux list that the win list does not have are refused there.
    for (const key of LINUX_KEYS.filter((k) => !WIN_KEYS.includes(k))) expect(win.has(key), `not on win: ${key}`).to.equal(false);
  });

  it("has the spec's defaults", () => {
    const { config, given } = resolveOptions(new Map(), { HOME: "/root" });
    expect(given.size).to.equal(0);
    for (const [name, value] of Object.entries(SPEC_DEFAULTS)) expect(config[name as OptionName], name).to.deep.equal(value);
    expect(config.tlscacert).to.equal("/root/.engine/ca.pem");
  });

  it("gives repeatable flags the plural keys", () => {
    for (const [flag, key] of PLURALS) {
      const name = optionNames.find((n) => definitionOf(n).flag === flag)!;
      expect(definitionOf(name).key, flag).to.equal(key);
      expect(definitionOf(name).type.repeatable, flag).to.equal(true);
    }
  });

  it("takes TLS defaults from ENGINE_CERT_PATH and ENGINE_TLS_VERIFY, the driver from ENGINE_DRIVER, proxies from the environment", () => {
    const env = { ENGINE_CERT_PATH: "/certs", ENGINE_TLS_VERIFY: "yes", ENGINE_DRIVER: "btrfs", https_proxy: "http://p:3128", HTTP_PROXY: "http://q:3128" };
    const { config } = resolveOptions(new Map(), env);
    expect([config.tlscacert, config.tlscert, config.tlskey]).to.deep.equal(["/certs/ca.pem", "/certs/cert.pem", "/certs/key.pem"]);
    expect(config.tlsverify).to.equal(true);
    expect(config["storage-driver"]).to.equal("btrfs");
    expect(config["https-proxy"]).to.equal("http://p:3128");
    expect(config["http-proxy"]).to.equal("http://q:3128");
    // The file and flags win over the environment.
    const file = parseConfigFile('{"storage-driver":"overlay2","proxies":{"https-proxy":"http://f:1"}}', "/d.json", "linux");
    const merged = resolveOptions(parseDaemonArgs(["--http-proxy", "http://flag:2"]), env, file);
    expect(merged.config["storage-driver"]).to.equal("overlay2");
    expect(merged.config["https-proxy"]).to.equal("http://f:1");
    expect(merged.config["http-proxy"]).to.equal("http://flag:2");
  });

  it("records ENGINE_RAMDISK and ENGINE_DISABLE_PIGZ when set to anything", () => {
    expect(resolveOptions(new Map(), {}).config["no-pivot-root"]).to.equal(false);
    const { config } = resolveOptions(new Map(), { ENGINE_RAMDISK: "1", ENGINE_DISABLE_PIGZ: "yes" });
    expect(config["no-pivot-root"]).to.equal(true);
    expect(config["disable-pigz"]).to.equal(true);
  });

  it("reads ENGINE_CONMON and ENGINE_TMPDIR into the conmon and tmpdir options", () => {
    const defaults = resolveOptions(new Map(), {}).config;
    expect([defaults.conmon, defaults.tmpdir]).to.deep.equal(["conmon", ""]);
    const { config } = resolveOptions(new Map(), { ENGINE_CONMON: "/opt/conmon", ENGINE_TMPDIR: "/var/tmp/e" });
    expect([config.conmon, config.tmpdir]).to.deep.equal(["/opt/conmon", "/var/tmp/e"]);
  });

  it("keeps the last value of a single-valued flag given twice, as Docker's flags do", () => {
    expect(resolveOptions(parseDaemonArgs(["--data-root", "/a", "--data-root", "/b"]), {}).config["data-root"]).to.equal("/b");
  });

  it("refuses bad values, naming the flag and what was expected", () => {
    const cases: [string[], string][] = [
      [["--debug=maybe"], 'invalid value "maybe" for --debug: expected a boolean'],
      [["--mtu", "big"], 'invalid value "big" for --mtu: expected an integer'],
      [["--max-concurrent-downloads", "0"], "expected an integer of at least 1"],
      [["--log-level", "loud"], "expected one of: debug, info, warn, error, fatal"],
      [["--default-shm-size", "lots"], "expected a size such as 64m"],
      [["--default-ulimit", "nofile=2048:1024"], "soft limit must be less than or equal to hard limit"],
      [["--default-ulimit", "bogus=1"], "invalid ulimit type: bogus"],
      [["--default-address-pool", "base=10.0.0.0/16,size=8"], "pool size 8 must be between"],
      [["--default-address-pool", "10.0.0.0/16"], "expected base=<CIDR>,size=<prefix length>"],
      [["--default-network-opt", "bridge=mtu"], "expected <driver>=<option>=<value>"],
      [["--bip", "172.31.0.1"], "expected a subnet in CIDR notation"],
      [["--dns", "resolver"], "expected an IP address"],
      [["--add-runtime", "ocirun=/bin/x"], "runtime name 'ocirun' is reserved"],
      // as Docker 28 (moby's TestRunWithRuntimeFromCommandLine)
      [["--add-runtime", "runc=my-runc"], "runtime name 'runc' is reserved"],
      [["--add-runtime", "RunC=my-runc"], "runtime name 'runc' is reserved"],
      [["--feature", "cdi=maybe"], "expected a boolean after cdi="],
      [["--exec-opt", "native.cgroupdriver=other"], "native.cgroupdriver must be cgroupfs or systemd"],
      [["--exec-opt", "foo=bar"], "unknown exec option foo"],
      [["--userns-remap", "a:b:c"], "expected default, a user or uid"],
      [["--host-gateway-ip", "10.0.0.1", "--host-gateway-ip", "10.0.0.2"], "at most one IPv4 and one IPv6 address"],
      [["--label", "novalue"], "expected key=value"],
      [["--registry-mirror", "mirror.test"], "expected a URL"],
      [["--metrics-addr", "9323"], "expected <ip>:<port>"],
    ];
    for (const [args, message] of cases) {
      expect(() => resolveOptions(parseDaemonArgs(args), {}), args.join(" ")).to.throw(message);
    }
  });

  it("lists every flag in --help, and the file-only keys", () => {
    const help = daemonHelp({});
    for (const name of optionNames) {
      const def = definitionOf(name);
      if (def.flag) expect(help).to.include(`--${def.flag}`);
    }
    expect(help).to.include("Set in the configuration file only: builder.");
  });

  describe("the configuration file", () => {
    it("names every key that matches no option, and every bad value, in one message with the file", () => {
      const text = JSON.stringify({ debug: true, "no-such": 1, "other-thing": "x", proxies: { "ftp-proxy": "x" }, mtu: "big", labels: "a=1" });
      expect(() => parseConfigFile(text, "/etc/engine/daemon.json", "linux")).to.throw(
        "unable to configure the engine daemon with file /etc/engine/daemon.json: " +
          "the following directives don't match any configuration option: no-such, other-thing, proxies.ftp-proxy; " +
          'the following directives have invalid values: mtu: expected an integer, got string "big"; labels: expected an array of strings, got string "a=1"',
      );
    });

    it("reads both runtime forms and refuses a mix", () => {
      const ok = parseConfigFile(JSON.stringify({
        runtimes: { fast: { path: "/usr/bin/crun", runtimeArgs: ["--debug"] }, shim: { runtimeType: "io.supervisor.ocirun.v2", options: { ConfigPath: "/x" } } },
      }), "/d.json", "linux");
      expect(ok.get("add-runtime")).to.deep.equal({
        fast: { path: "/usr/bin/crun", runtimeArgs: ["--debug"] },
        shim: { runtimeType: "io.supervisor.ocirun.v2", options: { ConfigPath: "/x" } },
      });
      expect(() => parseConfigFile('{"runtimes":{"x":{"path":"/a","runtimeType":"b"}}}', "/d.json", "linux")).to.throw("give either path");
      expect(() => parseConfigFile('{"runtimes":{"x":{"path":"/a","options":{}}}}', "/d.json", "linux")).to.throw("options go with runtimeType");
      expect(() => parseConfigFile('{"runtimes":{"x":{"pth":"/a"}}}', "/d.json", "linux")).to.throw("runtimes:");
    });

    it("reads the legacy host-gateway-ip string, and refuses it beside host-gateway-ips", () => {
      expect(parseConfigFile('{"host-gateway-ip":"172.31.0.1"}', "/d.json", "linux").get("host-gateway-ip")).to.deep.equal(["172.31.0.1"]);
      expect(() => parseConfigFile('{"host-gateway-ip":"172.31.0.1","host-gateway-ips":["172.31.0.2"]}', "/d.json", "linux"))
        .to.throw("sets the same option");
    });

    it("checks the builder's sizes and filters, and default-ulimits' names", () => {
      expect(() => parseConfigFile('{"builder":{"gc":{"defaultKeepStorage":"lots"}}}', "/d.json", "linux")).to.throw("expected a size");
      expect(() => parseConfigFile('{"builder":{"gc":{"policy":[{"filter":["unused-for=soon"]}]}}}', "/d.json", "linux")).to.throw("expected a duration");
      expect(() => parseConfigFile('{"builder":{"gc":{"enabled":"yes"}}}', "/d.json", "linux")).to.throw("builder:");
      expect(() => parseConfigFile('{"default-ulimits":{"nofile":{"Name":"nproc","Hard":1,"Soft":1}}}', "/d.json", "linux")).to.throw("they must match");
    });

    it("refuses a file that is not a JSON object", () => {
      expect(() => parseConfigFile("{nope", "/d.json", "linux")).to.throw("/d.json: it is not valid JSON");
      expect(() => parseConfigFile("[1]", "/d.json", "linux")).to.throw("it must hold a JSON object, not an array");
    });

    it("refuses a key also given as a flag, whatever the values, naming each with both values", () => {
      const file = parseConfigFile('{"debug":true,"hosts":["unix:///b.sock"],"labels":["a=1"]}', "/d.json", "linux");
      expect(() => resolveOptions(parseDaemonArgs(["--debug", "-H", "unix:///a.sock", "--label", "a=1"]), {}, file, "file /d.json")).to.throw(
        "unable to configure the engine daemon with file /d.json: the following directives are specified both as a flag and in the configuration file: " +
          // in the flags' names' order (debug, host, label), as Docker's pflag visits them
          'debug: (from flag: true, from file: true), hosts: (from flag: ["unix:///a.sock"], from file: ["unix:///b.sock"]), labels: (from flag: ["a=1"], from file: ["a=1"])',
      );
    });
  });
});
