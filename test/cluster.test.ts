/**
 * The cluster advertisement options on real daemon starts: `--node-generic-resource` (and
 * `node-generic-resources` in the file) checked with Docker's rules and shown by `docker info`
 * as GenericResources; `--cluster-default-advertise-addr` as an IP address, as loopback `lo`, and
 * as interfaces of a test network namespace (one with an address, one without, one with two),
 * shown as Swarm.NodeAddr, a value that names nothing usable stopping the start.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dockerInfo } from "./helpers/docker-cli.js";
import { daemonArgs, ENGINED, makeTempDir, runCommand, runEngined, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { makeNetns, type Netns } from "./helpers/net-daemon.js";

async function infoOf(d: TestDaemon, format: string): Promise<string> {
  const r = await dockerInfo(`unix://${d.socket}`, ["--format", format]);
  expect(r.code, r.stderr).to.equal(0);
  expect(r.stderr).to.equal("");
  return r.stdout.trim();
}

/** A start that must fail: the daemon's exit code and what it printed, and whether it made its data root. */
async function failedStart(args: string[], netns?: string): Promise<RunResult & { madeDataRoot: boolean }> {
  const dir = makeTempDir();
  const all = [...daemonArgs(dir), "-H", `unix://${join(dir, "engine.sock")}`, ...args];
  const r = await (netns ? runCommand("nsenter", [`--net=${netns}`, "--", ENGINED, ...all]) : runEngined(all));
  return { ...r, madeDataRoot: existsSync(join(dir, "data")) };
}

const unquote = (s: string) => s.replaceAll('\\"', '"');

describe("cluster advertisement: node generic resources", function () {
  this.timeout(60_000);
  const daemons: TestDaemon[] = [];
  afterEach(async () => {
    await Promise.all(daemons.splice(0).map((d) => d.stop()));
  });

  it("shows a count and named resources in docker info's GenericResources, from flags and from the file", async () => {
    const d = await startEngined({ args: ["--node-generic-resource", "gpu=2", "--node-generic-resource", "fpga=fpga-0", "--node-generic-resource", " fpga = fpga-1 "] });
    daemons.push(d);
    expect(JSON.parse(await infoOf(d, "{{json .GenericResources}}"))).to.deep.equal([
      { DiscreteResourceSpec: { Kind: "gpu", Value: 2 } },
      { NamedResourceSpec: { Kind: "fpga", Value: "fpga-0" } },
      { NamedResourceSpec: { Kind: "fpga", Value: "fpga-1" } },
    ]);
    const dir = makeTempDir();
    const file = join(dir, "daemon.json");
    writeFileSync(file, JSON.stringify({ "node-generic-resources": ["ssd=1"] }));
    const fromFile = await startEngined({ args: ["--config-file", file] });
    daemons.push(fromFile);
    expect(JSON.parse(await infoOf(fromFile, "{{json .GenericResources}}"))).to.deep.equal([{ DiscreteResourceSpec: { Kind: "ssd", Value: 1 } }]);
  });

  it("shows null without resources, as Docker does", async () => {
    const d = await startEngined();
    daemons.push(d);
    expect(await infoOf(d, "{{json .GenericResources}}")).to.equal("null");
  });

  it("refuses an entry without one '=', a negative count, and a name mixing a count with other values, naming them", async () => {
    const noEq = await failedStart(["--node-generic-resource", "gpu"]);
    expect(noEq.code).to.equal(1);
    expect(noEq.stderr).to.include('invalid value "gpu" for --node-generic-resource: expected <name>=<value> with exactly one "="');
    const twoEq = await failedStart(["--node-generic-resource", "gpu=a=b"]);
    expect(twoEq.stderr).to.include('invalid value "gpu=a=b" for --node-generic-resource');
    const negative = await failedStart(["--node-generic-resource", "gpu=-1"]);
    expect(negative.code).to.equal(1);
    expect(negative.stderr).to.include("invalid daemon configuration: node-generic-resource gpu: a count cannot be negative (-1)");
    const mixed = await failedStart(["--node-generic-resource", "gpu=2", "--node-generic-resource", "gpu=uuid-1"]);
    expect(mixed.code).to.equal(1);
    expect(mixed.stderr).to.include("node-generic-resource gpu mixes a count with other values (2, uuid-1)");
    // Two counts of one name are refused too: a count is given once.
    const twice = await failedStart(["--node-generic-resource", "gpu=2", "--node-generic-resource", "gpu=3"]);
    expect(twice.stderr).to.include("node-generic-resource gpu mixes a count with other values (2, 3)");
  });

  it("engined --validate reports the rule for a file's resources", async () => {
    const dir = makeTempDir();
    const file = join(dir, "daemon.json");
    writeFileSync(file, JSON.stringify({ "node-generic-resources": ["gpu=1", "gpu=x"] }));
    const r = await runEngined(["--validate", "--config-file", file]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include("node-generic-resource gpu mixes a count with other values (1, x)");
  });
});

describe("cluster advertisement: --cluster-default-advertise-addr", function () {
  this.timeout(60_000);
  const daemons: TestDaemon[] = [];
  let ns: Netns;
  before(() => {
    // Addresses from the documentation ranges, on veth interfaces (left down) of a namespace of
    // the test's own, gone with it: nothing is sent anywhere.
    ns = makeNetns();
    const link = (name: string, ...addrs: string[]) => {
      ns.run("ip", "link", "add", name, "type", "veth", "peer", "name", `${name}p`);
      for (const a of addrs) ns.run("ip", "addr", "add", a, "dev", name, ...(a.includes(":") ? ["nodad"] : []));
    };
    link("eng-adv0", "192.0.2.10/24", "2001:db8::10/64");
    link("eng-adv1");
    link("eng-adv2", "198.51.100.1/24", "198.51.100.2/24");
    link("eng-adv6", "2001:db8::6/64");
  });
  afterEach(async () => {
    await Promise.all(daemons.splice(0).map((d) => d.stop()));
  });
  after(() => ns?.remove());

  it("advertises an IP address as given, and loopback lo as 127.0.0.1, in Swarm.NodeAddr", async () => {
    const byIp = await startEngined({ args: ["--cluster-default-advertise-addr", "192.0.2.7"] });
    daemons.push(byIp);
    expect(await infoOf(byIp, "{{.Swarm.NodeAddr}} {{.Swarm.LocalNodeState}}")).to.equal("192.0.2.7 inactive");
    const byLo = await startEngined({ args: ["--cluster-default-advertise-addr", "lo"] });
    daemons.push(byLo);
    expect(await infoOf(byLo, "{{.Swarm.NodeAddr}}")).to.equal("127.0.0.1");
  });

  it("advertises the address of an interface of the daemon's network namespace (IPv4, else IPv6)", async () => {
    const v4 = await startEngined({ netns: ns.file, args: ["--bridge", "none", "--cluster-default-advertise-addr", "eng-adv0"] });
    daemons.push(v4);
    expect(await infoOf(v4, "{{.Swarm.NodeAddr}}"), ns.run("ip", "-br", "addr")).to.equal("192.0.2.10");
    const v6 = await startEngined({ netns: ns.file, args: ["--bridge", "none", "--cluster-default-advertise-addr", "eng-adv6"] });
    daemons.push(v6);
    expect(await infoOf(v6, "{{.Swarm.NodeAddr}}"), `${ns.run("ip", "-br", "addr")}\n${v6.output()}`).to.equal("2001:db8::6");
  });

  it("refuses to start, before making anything, with an interface without an address, one with two, a name that is nothing, an unspecified address or a port", async () => {
    const cases: [string, string][] = [
      ["eng-adv1", 'invalid cluster-default-advertise-addr "eng-adv1": interface eng-adv1 has no IPv4 or IPv6 address'],
      ["eng-adv2", 'invalid cluster-default-advertise-addr "eng-adv2": interface eng-adv2 has more than one IPv4 address (198.51.100.1 and 198.51.100.2)'],
      ["eng-nothing", 'invalid cluster-default-advertise-addr "eng-nothing": it is neither a network interface of this host nor an IP address'],
      ["0.0.0.0", 'invalid cluster-default-advertise-addr "0.0.0.0": the unspecified address cannot be advertised'],
      ["192.0.2.10:2377", 'invalid cluster-default-advertise-addr "192.0.2.10:2377": it is neither a network interface of this host nor an IP address'],
    ];
    for (const [value, message] of cases) {
      const r = await failedStart(["--bridge", "none", "--cluster-default-advertise-addr", value], ns.file);
      expect(r.code, value).to.equal(1);
      expect(unquote(r.stderr), value).to.include(message);
      expect(r.madeDataRoot, `${value}: nothing is created before the check`).to.equal(false);
    }
  });
});
