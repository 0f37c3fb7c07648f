/**
 * Network drivers served by other processes: the example plugin
 * (host/remote-plugins/examples/veth-bridge: a bridge per network, a veth pair per container),
 * found by its socket in /run/engine/plugins, with the Docker CLI against a real engined, as a
 * user of Docker's daemon uses such a plugin. The daemon and the plugin share a network
 * namespace the test made (every link and address is made there, traffic stays there) and the
 * daemon sees a plugin folder of its own (a mount namespace). Compared with dockerd 20.10 and
 * the same plugin: the same calls in the same order, the same container interface, addresses
 * and routes, an empty MacAddress unless one is asked for, and the embedded name server at
 * 127.0.0.11 in the container.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { cleanUpPlugins, recordedCalls, SOCKET_DIR, startDirVolumes, startVethBridge, uniqueName, type PluginProcess } from "./helpers/authz-plugin.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { makeNetns, type Netns } from "./helpers/net-daemon.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

describe("network plugins of other processes (the example veth-bridge plugin)", function () {
  this.timeout(120_000);
  const name = uniqueName("vbridge");
  const volumesOnly = uniqueName("dirs");
  let work: string;
  let ns: Netns;
  let d: TestDaemon;
  let host: string;
  const record = () => join(work, "calls.jsonl");
  const calls = () => recordedCalls(record()).map((c) => c as unknown as { method: string; body: Record<string, any> });
  const methods = () => calls().map((c) => c.method);
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const links = () => ns.run("ip", "-br", "link").split("\n").map((l) => l.split(/[\s@]/)[0]).filter(Boolean);

  before(async function () {
    work = makeTempDir("engine-network-plugins-");
    ns = makeNetns();
    const sockets = join(work, "plugins");
    mkdirSync(sockets);
    mkdirSync(SOCKET_DIR, { recursive: true });
    await startVethBridge({ socket: join(sockets, `${name}.sock`), netns: ns.file, record: record() });
    await startDirVolumes({ socket: join(sockets, `${volumesOnly}.sock`), root: join(work, "volumes") });
    d = await startEngined({
      wrap: ["nsenter", `--net=${ns.file}`, "--", "unshare", "--mount", "--propagation", "private", "--", "sh", "-c", `mount --bind "$0" ${SOCKET_DIR} && exec "$@"`, sockets],
    });
    host = `unix://${d.socket}`;
    ok(await docker(host, ["import", "--change", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
  });

  after(async function () {
    if (d) {
      await docker(host, ["rm", "-f", "pa", "pb"]);
      await docker(host, ["network", "rm", "pnet"]);
      await d.stop();
    }
    await cleanUpPlugins();
    ns?.remove();
  });

  it("creates the network through the plugin, with its subnet and gateway", async () => {
    ok(await docker(host, ["network", "create", "-d", name, "--subnet", "10.91.0.0/24", "-o", "color=blue", "pnet"]), "network create");
    expect(methods().slice(0, 3)).to.deep.equal(["Plugin.Activate", "NetworkDriver.GetCapabilities", "NetworkDriver.CreateNetwork"]);
    const create = calls()[2].body;
    expect(create.Options).to.deep.include({ "com.docker.network.enable_ipv6": false, "com.docker.network.generic": { color: "blue" } });
    expect(create.IPv4Data).to.deep.equal([{ AddressSpace: "LocalDefault", Pool: "10.91.0.0/24", Gateway: "10.91.0.1/24", AuxAddresses: {} }]);
    expect(ok(await docker(host, ["network", "inspect", "-f", "{{.Driver}} {{.Scope}}", "pnet"]), "inspect")).to.equal(`${name} local\n`);
    expect(JSON.parse(ok(await docker(host, ["info", "--format", "{{json .Plugins.Network}}"]), "info"))).to.include(name);
    const bridge = `vb${(await httpRequest({ socketPath: d.socket }, "GET", "/networks/pnet").then((r) => JSON.parse(r.body).Id)).slice(0, 10)}`;
    expect(links()).to.include(bridge);
  });

  it("gives each container the plugin's interface, with the daemon's address, the plugin's gateway, and no MAC of the daemon's", async () => {
    ok(await docker(host, ["run", "-d", "--name", "pa", "--network", "pnet", "busybox", "sleep", "300"]), "run pa");
    const seen = ok(await docker(host, ["run", "--name", "pb", "--network", "pnet", "busybox", "sh", "-c", "ip -o -4 addr show eth0; ip route; ping -c1 -W5 10.91.0.2 >/dev/null && echo reached"]), "run pb");
    expect(seen).to.match(/eth0\s+inet 10\.91\.0\.3\/24/);
    expect(seen).to.include("default via 10.91.0.1 dev eth0");
    expect(seen).to.include("reached");
    const endpoint = JSON.parse(ok(await docker(host, ["inspect", "-f", "{{json .NetworkSettings.Networks.pnet}}", "pa"]), "inspect pa"));
    expect(endpoint).to.include({ IPAddress: "10.91.0.2", IPPrefixLen: 24, Gateway: "10.91.0.1", MacAddress: "" });
    const createEndpoint = calls().find((c) => c.method === "NetworkDriver.CreateEndpoint")!.body;
    expect(createEndpoint.Interface).to.deep.equal({ Address: "10.91.0.2/24", AddressIPv6: "", MacAddress: "" });
    const join = calls().find((c) => c.method === "NetworkDriver.Join")!.body;
    expect(join.SandboxKey).to.be.a("string").and.not.equal("");
    expect(join.EndpointID).to.equal(endpoint.EndpointID);
  });

  it("sets the MAC a container asks for", async () => {
    const out = ok(await docker(host, ["run", "--rm", "--network", "pnet", "--mac-address", "02:00:00:00:00:09", "busybox", "cat", "/sys/class/net/eth0/address"]), "run --mac-address");
    expect(out).to.equal("02:00:00:00:00:09\n");
    const asked = calls().filter((c) => c.method === "NetworkDriver.CreateEndpoint").at(-1)!.body;
    expect(asked.Interface.MacAddress).to.equal("02:00:00:00:00:09");
  });

  it("answers the network's names at 127.0.0.11 in each container, its own servers kept as ExtServers (Docker's embedded name server on every user-defined network)", async () => {
    const seen = ok(await docker(host, ["run", "--rm", "--network", "pnet", "--dns", "10.1.2.3", "busybox", "sh", "-c", "cat /etc/resolv.conf; nslookup -type=a pa; nslookup -type=a pa.pnet"]), "run");
    expect(seen).to.match(/^nameserver 127\.0\.0\.11$/m);
    expect(seen).to.include("# ExtServers: [10.1.2.3]");
    expect(seen.match(/Name:\tpa(\.pnet)?\nAddress: 10\.91\.0\.2\n/g)).to.have.length(2);
  });

  it("leaves the network at the container's exit and removal, and deletes it through the plugin", async () => {
    const id = ok(await docker(host, ["inspect", "-f", "{{.NetworkSettings.Networks.pnet.EndpointID}}", "pa"]), "inspect").trim();
    // (pb left at its exit; the plugin records no body for a call it does not serve)
    const before = calls().length;
    ok(await docker(host, ["rm", "-f", "pa", "pb"]), "rm");
    const left = calls().slice(before);
    expect(left.map((c) => c.method)).to.deep.equal(["NetworkDriver.RevokeExternalConnectivity", "NetworkDriver.Leave", "NetworkDriver.DeleteEndpoint"]);
    expect(left.slice(1).map((c) => c.body.EndpointID)).to.deep.equal([id, id]);
    expect(links().filter((l) => l.startsWith("vh"))).to.deep.equal([]);
    ok(await docker(host, ["network", "rm", "pnet"]), "network rm");
    expect(methods().at(-1)).to.equal("NetworkDriver.DeleteNetwork");
    expect(links().filter((l) => l.startsWith("vb"))).to.deep.equal([]);
  });

  it("fails a start the plugin cannot join, in its words, and leaves nothing behind", async () => {
    ok(await docker(host, ["network", "create", "-d", name, "--subnet", "10.92.0.0/24", "pnet2"]), "network create");
    const id = JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", "/networks/pnet2")).body).Id as string;
    ns.run("ip", "link", "del", `vb${id.slice(0, 10)}`); // the plugin's bridge, gone behind its back
    const r = await docker(host, ["run", "--rm", "--network", "pnet2", "busybox", "true"]);
    expect(r.code).to.equal(125);
    expect(r.stderr).to.match(/failed to set up container networking: remote: veth-bridge: .*vb[0-9a-f]{10}/);
    expect(methods().at(-1)).to.equal("NetworkDriver.DeleteEndpoint");
    expect(links().filter((l) => l.startsWith("vh") || l.startsWith("vc"))).to.deep.equal([]);
    ok(await docker(host, ["network", "rm", "pnet2"]), "network rm");
  });

  it("refuses a driver no plugin serves (404) and a plugin that serves no networks (500)", async () => {
    const none = await httpRequest({ socketPath: d.socket }, "POST", "/networks/create", { Name: "x1", Driver: uniqueName("none") });
    expect(none.status).to.equal(404);
    expect(JSON.parse(none.body).message).to.match(/^plugin "none\w+" not found$/);
    const volumes = await httpRequest({ socketPath: d.socket }, "POST", "/networks/create", { Name: "x2", Driver: volumesOnly });
    expect(volumes.status).to.equal(500);
    expect(JSON.parse(volumes.body).message).to.equal(`error looking up network plugin ${volumesOnly}: it does not implement the NetworkDriver interface (it implements: VolumeDriver)`);
  });
});

describe("a plugin's network across restarts of the daemon (live restore) and of the plugin", function () {
  this.timeout(180_000);
  const name = uniqueName("vbridge");
  let work: string;
  let ns: Netns;
  let d: TestDaemon | undefined;
  let host: string;
  let plugin: PluginProcess | undefined;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  // (in the host's mount namespace, as a daemon runs: the sandboxes' mounts outlive a daemon's
  // run; the plugin's socket in the shared folder, under a name no other daemon asks for)
  const start = async () => {
    d = await startEngined({ netns: ns.file, args: ["--data-root", join(work, "data"), "--exec-root", join(work, "exec"), "--pidfile", join(work, "engine.pid"), "--live-restore"] });
    host = `unix://${d.socket}`;
  };
  const startPlugin = async () => {
    plugin = await startVethBridge({ socket: join(SOCKET_DIR, `${name}.sock`), netns: ns.file });
  };

  before(async function () {
    work = makeTempDir("engine-network-plugins-restart-");
    ns = makeNetns();
    mkdirSync(SOCKET_DIR, { recursive: true });
    await startPlugin();
    await start();
    ok(await docker(host, ["import", "--change", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
  });

  after(async function () {
    if (d) {
      await docker(host, ["rm", "-f", "ra", "rb"]);
      await docker(host, ["network", "rm", "rnet"]);
      await d.stop();
    }
    await cleanUpPlugins();
    ns?.remove();
  });

  it("answers the names again in a container that ran on across the daemon's restart", async () => {
    ok(await docker(host, ["network", "create", "-d", name, "--subnet", "10.93.0.0/24", "rnet"]), "network create");
    for (const c of ["ra", "rb"]) ok(await docker(host, ["run", "-d", "--name", c, "--network", "rnet", "busybox", "sleep", "600"]), `run ${c}`);
    const ask = () => docker(host, ["exec", "ra", "nslookup", "-type=a", "rb"]);
    expect(ok(await ask(), "nslookup")).to.include("Address: 10.93.0.3");
    await d!.stop();
    d = undefined;
    await start();
    expect(ok(await docker(host, ["inspect", "-f", "{{.State.Running}}", "ra"]), "inspect")).to.equal("true\n");
    expect(ok(await ask(), "nslookup after the restart")).to.include("Address: 10.93.0.3");
  });

  it("starts while the plugin of one of its networks is not running, and uses the network once it is back", async () => {
    await d!.stop();
    d = undefined;
    await plugin!.stop(); // a clean stop: its socket is gone
    await start();
    expect(d!.output()).to.include("network plugin not available at start");
    expect(ok(await docker(host, ["network", "ls", "--format", "{{.Name}} {{.Driver}}", "-f", "name=rnet"]), "network ls")).to.equal(`rnet ${name}\n`);
    const down = await docker(host, ["run", "--rm", "--network", "rnet", "busybox", "true"]);
    expect(down.code).to.equal(125);
    await startPlugin();
    expect(ok(await docker(host, ["run", "--rm", "--network", "rnet", "busybox", "nslookup", "-type=a", "ra"]), "run once the plugin is back")).to.include("Address: 10.93.0.2");
  });
});
