/**
 * Volume drivers served by other processes: the example plugin
 * (host/remote-plugins/examples/dir-volumes), found by its socket in /run/engine/plugins, used
 * with the Docker CLI against a real engined as a user of Docker's daemon would use such a
 * plugin. Each line was compared with dockerd 20.10 and the same plugin (at
 * /run/docker/plugins): the same output, and the same calls made to the plugin.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanUpPlugins, recordedCalls, SOCKET_DIR, startDirVolumes, startPolicyServer, uniqueName, type PluginProcess } from "./helpers/authz-plugin.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";

describe("volume plugins of other processes (the example dir-volumes plugin)", function () {
  this.timeout(120_000);
  const name = uniqueName("dirs");
  const globalName = uniqueName("gdirs");
  const policyName = uniqueName("policy");
  let work: string;
  let plugin: PluginProcess;
  let d: TestDaemon;
  let host: string;
  const root = () => join(work, "volumes");
  const record = () => join(work, "calls.jsonl");
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const inspect = async (volume: string) => JSON.parse(ok(await docker(host, ["volume", "inspect", volume]), "volume inspect"))[0];
  const calls = (method: string) => recordedCalls(record()).filter((c) => (c as unknown as { method: string }).method === method).map((c) => c.body);

  before(async function () {
    work = makeTempDir("engine-volume-plugins-");
    // The daemon sees a plugin folder of its own at /run/engine/plugins (a mount namespace of
    // its own): it asks every plugin there for its volumes, as Docker's does, and so would
    // every other test's daemon, whose lists these volumes must not reach.
    const sockets = join(work, "plugins");
    mkdirSync(sockets);
    mkdirSync(SOCKET_DIR, { recursive: true });
    plugin = await startDirVolumes({ socket: join(sockets, `${name}.sock`), root: root(), record: record() });
    await startDirVolumes({ socket: join(sockets, `${globalName}.sock`), root: join(work, "global"), scope: "GLOBAL" });
    await startPolicyServer(["--socket", join(sockets, `${policyName}.sock`)]);
    d = await startEngined({ wrap: ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", `mount --bind "$0" ${SOCKET_DIR} && exec "$@"`, sockets] });
    host = `unix://${d.socket}`;
    ok(await docker(host, ["import", "--change", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
  });

  after(async function () {
    await d?.stop();
    await cleanUpPlugins();
  });

  it("creates a volume through the plugin, with its options, and shows what the plugin says of it", async () => {
    expect(ok(await docker(host, ["volume", "create", "-d", name, "-o", "size=1", "--label", "a=b", "pv1"]), "create")).to.equal("pv1\n");
    expect(calls("VolumeDriver.Create")).to.deep.include({ Name: "pv1", Opts: { size: "1" } });
    const v = await inspect("pv1");
    expect(v).to.include({ Name: "pv1", Driver: name, Mountpoint: "", Scope: "local" });
    expect(v.Labels).to.deep.equal({ a: "b" });
    expect(v.Options).to.deep.equal({ size: "1" });
    expect(v.Status).to.deep.equal({ mounts: 0, options: { size: "1" } });
  });

  it("gives the plugin's refusal of an option as the create's error", async () => {
    const r = await docker(host, ["volume", "create", "-d", name, "-o", "bad=1", "pv2"]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include("Error response from daemon: create pv2: unknown option bad");
    expect((await docker(host, ["volume", "inspect", "pv2"])).code).to.equal(1);
  });

  it("mounts the volume for a container by the container's ID, and unmounts it at its exit", async () => {
    ok(await docker(host, ["run", "--name", "pv-user", "-v", "pv1:/data", "busybox", "sh", "-c", "echo hi > /data/f"]), "run");
    expect(readFileSync(join(root(), "pv1", "data", "f"), "utf8")).to.equal("hi\n");
    const id = ok(await docker(host, ["inspect", "-f", "{{.Id}}", "pv-user"]), "inspect").trim();
    expect(calls("VolumeDriver.Mount")).to.deep.include({ Name: "pv1", ID: id });
    // made before the run returned: the exit is told once the plugin's volumes are unmounted, as
    // Docker 28 cleans up before it (dockerd 20.10 after)
    expect(calls("VolumeDriver.Unmount")).to.deep.include({ Name: "pv1", ID: id });
    const events = (await httpRequest({ socketPath: d.socket }, "GET", `/events?since=0&until=${Math.ceil(Date.now() / 1000) + 1}&filters=${encodeURIComponent(JSON.stringify({ event: ["die", "unmount"] }))}`)).body
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { Type: string; Action: string; Actor: { ID: string; Attributes: Record<string, string> } })
      .filter((e) => e.Actor.ID === id || e.Actor.Attributes.container === id);
    expect(events.map((e) => `${e.Type} ${e.Action}`)).to.deep.equal(["volume unmount", "container die"]);
    const mounts = JSON.parse(ok(await docker(host, ["inspect", "-f", "{{json .Mounts}}", "pv-user"]), "inspect mounts"));
    expect(mounts[0]).to.include({ Type: "volume", Name: "pv1", Driver: name, Destination: "/data" });
    // in use by a container: refused before the plugin is asked
    const r = await docker(host, ["volume", "rm", "pv1"]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/remove pv1: volume is in use/);
    expect(calls("VolumeDriver.Remove")).to.not.deep.include({ Name: "pv1" });
    ok(await docker(host, ["rm", "pv-user"]), "rm");
  });

  it("has the plugin mount a stopped container's volume for docker cp, both ways, logging its mount and unmount around the copy", async () => {
    ok(await docker(host, ["volume", "create", "-d", name, "pvcp"]), "create");
    const id = ok(await docker(host, ["create", "--name", "pv-cp", "-v", "pvcp:/data", "busybox"]), "create").trim();
    const since = Date.now() / 1000;
    const mountsBefore = calls("VolumeDriver.Mount").length;
    const file = join(work, "cp-in");
    writeFileSync(file, "copied\n");
    ok(await docker(host, ["cp", file, "pv-cp:/data/f"]), "cp in");
    expect(readFileSync(join(root(), "pvcp", "data", "f"), "utf8")).to.equal("copied\n");
    const out = await httpRequest({ socketPath: d.socket }, "GET", "/containers/pv-cp/archive?path=/data/f");
    expect(out.status).to.equal(200);
    // (the CLI's cp in: a stat, then the extraction; then the download: three uses, as dockerd's)
    const mounts = calls("VolumeDriver.Mount").slice(mountsBefore);
    expect(mounts).to.have.length(3);
    // (a download's use ends once its tar is sent, which may follow the end of the answer)
    const unmounted = () => mounts.every((m) => calls("VolumeDriver.Unmount").some((u) => u.ID === m.ID));
    for (let i = 0; i < 50 && !unmounted(); i++) await new Promise((r) => setTimeout(r, 100));
    for (const m of mounts) {
      expect(m.Name).to.equal("pvcp");
      // each copy's own use, by an ID of its own (as Docker's), ended by its unmount
      expect(m.ID).to.match(/^[0-9a-f]{64}$/).and.not.equal(id);
      expect(calls("VolumeDriver.Unmount")).to.deep.include({ Name: "pvcp", ID: m.ID });
    }
    const until = Math.ceil(Date.now() / 1000) + 1;
    const events = (await httpRequest({ socketPath: d.socket }, "GET", `/events?since=${since}&until=${until}`)).body
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { Type: string; Action: string; Actor: { ID: string; Attributes: Record<string, string> } })
      .filter((e) => e.Actor.ID === "pvcp" || e.Actor.ID === id);
    expect(events.map((e) => `${e.Type} ${e.Action}`)).to.deep.equal([
      "volume mount", "volume unmount",
      "volume mount", "container extract-to-dir", "volume unmount",
      "volume mount", "container archive-path", "volume unmount",
    ]);
    expect(events[0].Actor.Attributes).to.deep.equal({ container: id, destination: "/data", driver: name, propagation: "", "read/write": "true" });
    expect(events[1].Actor.Attributes).to.deep.equal({ container: id, driver: name });
    ok(await docker(host, ["rm", "pv-cp"]), "rm");
    ok(await docker(host, ["volume", "rm", "pvcp"]), "volume rm");
  });

  it("makes a volume a container names with --mount volume-driver through the plugin", async () => {
    ok(await docker(host, ["run", "--rm", "--mount", `type=volume,source=pv3,target=/v,volume-driver=${name},volume-opt=owner=me`, "busybox", "touch", "/v/x"]), "run --mount");
    expect(calls("VolumeDriver.Create")).to.deep.include({ Name: "pv3", Opts: { owner: "me" } });
    expect(readdirSync(join(root(), "pv3", "data"))).to.deep.equal(["x"]);
  });

  it("lists, inspects and removes a volume the plugin made without the daemon", async () => {
    mkdirSync(join(root(), "outside", "data"), { recursive: true });
    writeFileSync(join(root(), "outside", "options.json"), "{}");
    const ls = ok(await docker(host, ["volume", "ls", "--format", "{{.Driver}} {{.Name}}"]), "ls").split("\n");
    expect(ls).to.include.members([`${name} outside`, `${name} pv1`, `${name} pv3`]);
    const listed = JSON.parse((await httpRequest({ socketPath: d.socket }, "GET", "/volumes")).body);
    // Docker's list shows Go's zero time for a volume the daemon has no record of
    expect(listed.Volumes.find((v: { Name: string }) => v.Name === "outside")).to.include({ CreatedAt: "0001-01-01T00:00:00Z", Labels: null, Options: null });
    const v = await inspect("outside");
    expect(v).to.include({ Name: "outside", Driver: name });
    expect(v.CreatedAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(ok(await docker(host, ["volume", "rm", "outside"]), "rm")).to.equal("outside\n");
    expect(calls("VolumeDriver.Remove")).to.deep.include({ Name: "outside" });
    expect(readdirSync(root())).to.not.include("outside");
  });

  it("gives a container that names no driver the volume a plugin has under that name", async () => {
    mkdirSync(join(root(), "found", "data"), { recursive: true });
    writeFileSync(join(root(), "found", "options.json"), "{}");
    writeFileSync(join(root(), "found", "data", "f"), "from the plugin\n");
    expect(ok(await docker(host, ["run", "--rm", "-v", "found:/data", "busybox", "cat", "/data/f"]), "run -v found")).to.equal("from the plugin\n");
    expect((await inspect("found")).Driver).to.equal(name);
    expect(calls("VolumeDriver.Create").map((b) => b.Name)).to.not.include("found");
    ok(await docker(host, ["volume", "rm", "found"]), "rm");
  });

  it("prunes no plugin's volume, as Docker's prune takes local volumes only", async () => {
    ok(await docker(host, ["volume", "create", "-d", name, "unpruned"]), "create");
    const pruned = JSON.parse((await httpRequest({ socketPath: d.socket }, "POST", `/volumes/prune?filters=${encodeURIComponent('{"all":["true"]}')}`)).body);
    expect(pruned.VolumesDeleted).to.not.include("unpruned");
    expect(readdirSync(root())).to.include("unpruned");
    ok(await docker(host, ["volume", "rm", "unpruned"]), "rm");
  });

  it("takes a volume the plugin no longer has as gone", async () => {
    ok(await docker(host, ["volume", "create", "-d", name, "gone"]), "create");
    rmSync(join(root(), "gone"), { recursive: true });
    const r = await docker(host, ["volume", "inspect", "gone"]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include("get gone: no such volume");
    expect(ok(await docker(host, ["volume", "ls", "-q"]), "ls")).to.not.match(/^gone$/m);
  });

  it("shows the scope the plugin declares", async () => {
    const created = JSON.parse((await httpRequest({ socketPath: d.socket }, "POST", "/volumes/create", { Name: "gv", Driver: globalName })).body);
    expect(created).to.include({ Name: "gv", Driver: globalName, Scope: "global" });
    expect((await inspect("gv")).Scope).to.equal("global");
    ok(await docker(host, ["volume", "rm", "gv"]), "rm");
  });

  it("refuses a driver no plugin serves (404), a plugin that serves no volumes and one that does not answer (500)", async () => {
    const none = await httpRequest({ socketPath: d.socket }, "POST", "/volumes/create", { Name: "x1", Driver: uniqueName("none") });
    expect(none.status).to.equal(404);
    expect(JSON.parse(none.body).message).to.match(/^create x1: error looking up volume plugin \w+: plugin "\w+" not found$/);
    const authz = await httpRequest({ socketPath: d.socket }, "POST", "/volumes/create", { Name: "x2", Driver: policyName });
    expect(authz.status).to.equal(500);
    expect(JSON.parse(authz.body).message).to.equal(
      `create x2: error looking up volume plugin ${policyName}: it does not implement the VolumeDriver interface (it implements: authz)`,
    );
    ok(await docker(host, ["volume", "create", "-d", name, "kept"]), "create");
    await plugin.stop();
    const down = await httpRequest({ socketPath: d.socket }, "GET", "/volumes");
    expect(down.status).to.equal(200);
    // its volumes are listed as recorded, with a warning
    const body = JSON.parse(down.body);
    expect(body.Volumes.find((v: { Name: string }) => v.Name === "kept")).to.include({ Driver: name, CreatedAt: "0001-01-01T00:00:00Z" });
    expect(body.Warnings).to.have.length(1);
    // (its socket gone with it: looked for at each use, it is not found)
    expect(body.Warnings[0]).to.match(new RegExp(`^list ${name}: (cannot reach the plugin|error looking up volume plugin ${name}: plugin "${name}" not found)`));
  });
});
