/**
 * Volumes and container mounts against a real engined, with the real Docker CLI: `docker
 * volume create|ls|inspect|rm|prune`, named volumes that outlive their containers, an image's
 * VOLUME as an anonymous volume filled from the image, `rm -v` and `--rm`, binds (`-v
 * /host:/ctr[:ro]`, `--mount type=bind`), `--mount type=volume|tmpfs`, the records across a
 * daemon restart, and the 400/404/409 answers to bad requests, read back through the API.
 */
import "./helpers/root-hooks.js";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { httpRequest } from "./helpers/http.js";
import { makeTar, writeFixture, type TarEntry } from "./fixtures/images.js";

/** busybox, plus what a test image needs under a VOLUME. */
async function rootfsWith(extra: TarEntry[]): Promise<Buffer> {
  const applets = execFileSync("/usr/bin/busybox", ["--list"], { encoding: "utf8" }).split("\n").filter((a) => a && a !== "busybox");
  return makeTar([
    ...["bin/", "etc/", "root/", "proc/", "sys/", "dev/", "var/"].map((name) => ({ name, type: "directory" as const })),
    { name: "tmp/", type: "directory", mode: 0o1777 },
    { name: "bin/busybox", data: readFileSync("/usr/bin/busybox"), mode: 0o755 },
    ...applets.map((a) => ({ name: `bin/${a}`, type: "symlink" as const, linkname: "busybox" })),
    { name: "etc/passwd", data: "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n" },
    { name: "etc/group", data: "root:x:0:\nnogroup:x:65534:\n" },
    ...extra,
  ]);
}

describe("volumes", function () {
  this.timeout(60_000);

  let d: TestDaemon;
  let host: string;
  let work: string;
  const dataRoot = () => join(work, "data");
  const dk = (...args: string[]): Promise<RunResult> => docker(host, args);
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}:\n${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await httpRequest({ socketPath: d.socket }, method, path, body);
    return { status: res.status, json: res.body ? JSON.parse(res.body) : undefined };
  };
  const volumeNames = async () => ((await api("GET", "/volumes")).json.Volumes as { Name: string }[]).map((v) => v.Name);
  const start = async () => {
    d = await startEngined({ args: ["--data-root", dataRoot()] });
    host = `unix://${d.socket}`;
  };

  before(async function () {
    work = makeTempDir("engine-volumes-");
    await start();
    ok(await dk("import", "--change", 'CMD ["sh"]', writeFixture(work, "busybox.tar", await rootfsWith([]))), "import busybox");
    ok(await dk("tag", (await dk("images", "-q")).stdout.trim(), "busybox"), "tag busybox");
    const seeded = await rootfsWith([
      { name: "seed/", type: "directory", mode: 0o750, uid: 65534, gid: 65534 },
      { name: "seed/hello", data: "from the image\n", uid: 65534, gid: 65534 },
    ]);
    ok(await dk("import", "--change", 'CMD ["sh"]', "--change", "VOLUME /seed", writeFixture(work, "seeded.tar", seeded), "seeded"), "import seeded");
  });
  afterEach(async function () {
    if (!d) return;
    const ids = (await dk("ps", "-aq")).stdout.split("\n").filter(Boolean);
    if (ids.length) await dk("rm", "-f", "-v", ...ids);
    for (const name of await volumeNames()) await api("DELETE", `/volumes/${name}`);
  });
  after(async function () {
    await d?.stop();
  });

  describe("docker volume", function () {
    it("creates (idempotently), lists with filters, inspects and removes a volume", async function () {
      expect(ok(await dk("volume", "create", "--label", "team=a", "vol1"), "create").trim()).to.equal("vol1");
      expect(ok(await dk("volume", "create", "vol1"), "create again").trim()).to.equal("vol1");
      ok(await dk("volume", "create", "vol2"), "create vol2");
      expect(ok(await dk("volume", "ls", "-q"), "ls").trim().split("\n")).to.deep.equal(["vol1", "vol2"]);
      expect(ok(await dk("volume", "ls", "-q", "--filter", "label=team=a"), "ls label").trim()).to.equal("vol1");
      expect(ok(await dk("volume", "ls", "-q", "--filter", "name=2"), "ls name").trim()).to.equal("vol2");
      expect(ok(await dk("volume", "ls", "-q", "--filter", "driver=local", "--filter", "dangling=true"), "ls dangling").trim().split("\n")).to.have.length(2);
      const [v] = JSON.parse(ok(await dk("volume", "inspect", "vol1"), "inspect"));
      expect(v).to.deep.include({ Driver: "local", Name: "vol1", Scope: "local", Labels: { team: "a" }, Mountpoint: join(dataRoot(), "volumes", "vol1", "_data") });
      expect(Date.parse(v.CreatedAt)).to.be.closeTo(Date.now(), 60_000);
      expect(existsSync(v.Mountpoint)).to.equal(true);
      expect(ok(await dk("volume", "rm", "vol1", "vol2"), "rm").trim().split("\n")).to.deep.equal(["vol1", "vol2"]);
      expect(existsSync(v.Mountpoint)).to.equal(false);
      const missing = await dk("volume", "inspect", "vol1");
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.match(/no such volume/i);
      expect((await api("GET", "/volumes/vol1")).status).to.equal(404);
      // `rm -f` of a volume that is not there is fine
      ok(await dk("volume", "rm", "-f", "vol1"), "rm -f missing");
    });

    it("answers the API in Docker's shapes", async function () {
      const created = await api("POST", "/volumes/create", { Name: "shape", Driver: "local", DriverOpts: { type: "tmpfs", device: "tmpfs", o: "size=1m" }, Labels: { k: "v" } });
      expect(created.status).to.equal(201);
      expect(Object.keys(created.json).sort()).to.deep.equal(["CreatedAt", "Driver", "Labels", "Mountpoint", "Name", "Options", "Scope"]);
      expect(created.json.Options).to.deep.equal({ type: "tmpfs", device: "tmpfs", o: "size=1m" });
      const again = await api("POST", "/volumes/create", { Name: "shape" });
      expect(again.status).to.equal(201);
      expect(again.json.CreatedAt).to.equal(created.json.CreatedAt);
      const other = await api("POST", "/volumes/create", { Name: "shape", Driver: "other" });
      expect(other.status).to.equal(409);
      expect(other.json.message).to.match(/^create shape: volume name must be unique/);
      const list = await api("GET", "/volumes");
      expect(list.json).to.have.keys(["Volumes", "Warnings"]);
      expect((await api("GET", `/volumes?filters=${encodeURIComponent('{"color":["x"]}')}`)).status).to.equal(400);
      expect((await api("DELETE", "/volumes/shape")).status).to.equal(204);
      expect((await api("DELETE", "/volumes/shape")).status).to.equal(404);
    });

    it("refuses bad names, unknown drivers and unknown options with clear errors", async function () {
      const badName = await dk("volume", "create", "-bad");
      expect(badName.code).not.to.equal(0);
      const viaApi = await api("POST", "/volumes/create", { Name: "a/b" });
      expect(viaApi.status).to.equal(400);
      expect(viaApi.json.message).to.equal('create a/b: "a/b" includes invalid characters for a local volume name, only "[a-zA-Z0-9][a-zA-Z0-9_.-]" are allowed. If you intended to pass a host directory, use absolute path');
      // a name longer than its files' names may be: refused (Docker's daemon fails at its mkdir
      // with a 500); one of 250 bytes is taken
      const long = await api("POST", "/volumes/create", { Name: "v".repeat(256) });
      expect([long.status, long.json.message]).to.deep.equal([400, `create ${"v".repeat(256)}: volume name is too long: 256 bytes, at most 250`]);
      const longest = await api("POST", "/volumes/create", { Name: "w".repeat(250) });
      expect(longest.status).to.equal(201);
      expect((await api("DELETE", `/volumes/${"w".repeat(250)}`)).status).to.equal(204);
      const driver = await dk("volume", "create", "-d", "nosuch", "x1");
      expect(driver.code).to.equal(1);
      expect(driver.stderr).to.include('create x1: error looking up volume plugin nosuch: plugin "nosuch" not found');
      expect((await api("POST", "/volumes/create", { Name: "x1", Driver: "nosuch" })).status).to.equal(404);
      // a container's volumes are named as dockerd names them, an anonymous one by a generated name
      const anon = await api("POST", "/containers/create", { Image: "busybox", Cmd: ["true"], Volumes: { "/anon": {} }, HostConfig: { VolumeDriver: "nosuch" } });
      expect(anon.status).to.equal(404);
      expect(anon.json.message).to.match(/^create [0-9a-f]{64}: error looking up volume plugin nosuch: plugin "nosuch" not found$/);
      // a path is never a driver a client may name (test/api-driver-names.test.ts)
      expect((await api("POST", "/volumes/create", { Name: "x1", Driver: "../../evil" })).status).to.equal(400);
      const option = await dk("volume", "create", "-o", "foo=bar", "x2");
      expect(option.code).to.equal(1);
      expect(option.stderr).to.include('create x2: invalid option: "foo"');
      const missing = await api("POST", "/volumes/create", { Name: "x3", DriverOpts: { type: "tmpfs" } });
      expect(missing.status).to.equal(400);
      expect(missing.json.message).to.equal('create x3: missing required option: "device"');
      expect(await volumeNames()).to.deep.equal([]);
    });

    it("prunes anonymous volumes only, unless asked for all", async function () {
      ok(await dk("volume", "create", "named"), "create");
      ok(await dk("create", "--name", "anon", "-v", "/scratch", "busybox", "true"), "create container");
      const [anon] = JSON.parse(ok(await dk("inspect", "anon"), "inspect")).map((c: { Mounts: { Name: string }[] }) => c.Mounts[0].Name);
      expect(anon).to.match(/^[0-9a-f]{64}$/);
      // in use: a prune leaves it
      expect(ok(await dk("volume", "prune", "-f"), "prune in use")).not.to.include(anon);
      expect(await volumeNames()).to.include(anon);
      ok(await dk("rm", "anon"), "rm without -v");
      const pruned = ok(await dk("volume", "prune", "-f"), "prune");
      expect(pruned).to.include(anon);
      expect(await volumeNames()).to.deep.equal(["named"]);
      // a local volume made with options (a tmpfs, an NFS mount) is no local data: never pruned, as Docker's prune skips it
      ok(await dk("volume", "create", "-o", "type=tmpfs", "-o", "device=tmpfs", "mounted"), "create with options");
      const all = await api("POST", `/volumes/prune?filters=${encodeURIComponent('{"all":["true"]}')}`);
      expect(all.json).to.deep.equal({ VolumesDeleted: ["named"], SpaceReclaimed: 0 });
      expect(await volumeNames()).to.deep.equal(["mounted"]);
      ok(await dk("volume", "rm", "mounted"), "rm mounted");
      // before API 1.42 a prune takes every unused volume
      ok(await dk("volume", "create", "old"), "create old");
      const old = await api("POST", "/v1.41/volumes/prune");
      expect(old.json.VolumesDeleted).to.deep.equal(["old"]);
    });

    it("refuses to remove a volume a container uses (409, Docker's message)", async function () {
      const id = ok(await dk("create", "-v", "busy:/x", "busybox", "true"), "create").trim();
      const rm = await dk("volume", "rm", "busy");
      expect(rm.code).to.equal(1);
      expect(rm.stderr).to.include(`remove busy: volume is in use - [${id}]`);
      const res = await api("DELETE", "/volumes/busy?force=1");
      expect(res.status).to.equal(409);
      ok(await dk("rm", id), "rm container");
      ok(await dk("volume", "rm", "busy"), "rm volume");
    });
  });

  describe("containers with volumes", function () {
    it("keeps a named volume's data for the next container", async function () {
      ok(await dk("run", "--rm", "-v", "data:/data", "busybox", "sh", "-c", "echo x > /data/f"), "write");
      expect(await volumeNames(), "a named volume outlives --rm").to.deep.equal(["data"]);
      expect(ok(await dk("run", "--rm", "-v", "data:/data", "busybox", "cat", "/data/f"), "read").trim()).to.equal("x");
      expect(readFileSync(join(dataRoot(), "volumes", "data", "_data", "f"), "utf8")).to.equal("x\n");
      const df = (await api("GET", "/system/df")).json;
      expect(df.Volumes.find((v: { Name: string }) => v.Name === "data").UsageData).to.deep.equal({ Size: 2, RefCount: 0 });
      expect((await api("GET", "/info")).json.Plugins.Volume).to.include("local");
    });

    it("gives an image's VOLUME an anonymous volume filled from the image, removed by rm -v", async function () {
      const out = ok(await dk("run", "--name", "c1", "seeded", "sh", "-c", "cat /seed/hello; stat -c '%u %a' /seed"), "run");
      expect(out).to.equal("from the image\n65534 750\n");
      const [c] = JSON.parse(ok(await dk("inspect", "c1"), "inspect"));
      expect(c.Mounts).to.have.length(1);
      const m = c.Mounts[0];
      expect(m).to.deep.include({ Type: "volume", Destination: "/seed", Driver: "local", RW: true, Propagation: "" });
      expect(m.Name).to.match(/^[0-9a-f]{64}$/);
      expect(m.Source).to.equal(join(dataRoot(), "volumes", m.Name, "_data"));
      const vol = (await api("GET", `/volumes/${m.Name}`)).json;
      expect(vol.Labels).to.deep.equal({ "com.docker.volume.anonymous": "" });
      const listed = (await api("GET", "/containers/json?all=1")).json.find((x: { Id: string }) => x.Id === c.Id);
      expect(listed.Mounts).to.deep.equal(c.Mounts);
      ok(await dk("rm", "-v", "c1"), "rm -v");
      expect((await api("GET", `/volumes/${m.Name}`)).status).to.equal(404);
      // --rm removes its anonymous volumes too, and a named volume is filled the same way
      ok(await dk("run", "--rm", "seeded", "true"), "run --rm");
      expect(ok(await dk("run", "--rm", "-v", "fresh:/seed", "seeded", "cat", "/seed/hello"), "named copy-up")).to.equal("from the image\n");
      expect(ok(await dk("run", "--rm", "-v", "empty:/seed:nocopy", "seeded", "ls", "-A", "/seed"), "nocopy")).to.equal("");
      expect((await volumeNames()).sort()).to.deep.equal(["empty", "fresh"]);
    });

    it("binds host paths (made when missing), read-only with :ro", async function () {
      const hostDir = join(work, "bind-src");
      mkdirSync(hostDir, { recursive: true });
      writeFileSync(join(hostDir, "in"), "host\n");
      expect(ok(await dk("run", "--rm", "-v", `${hostDir}:/x`, "busybox", "sh", "-c", "cat /x/in; echo back > /x/out"), "bind")).to.equal("host\n");
      expect(readFileSync(join(hostDir, "out"), "utf8")).to.equal("back\n");
      const ro = await dk("run", "--rm", "-v", `${hostDir}:/x:ro`, "busybox", "sh", "-c", "touch /x/nope");
      expect(ro.code).not.to.equal(0);
      expect(ro.stderr).to.match(/Read-only file system/);
      expect(existsSync(join(hostDir, "nope"))).to.equal(false);
      const made = join(work, "made-by-bind");
      ok(await dk("run", "--rm", "-v", `${made}:/m`, "busybox", "true"), "missing source");
      expect(existsSync(made)).to.equal(true);
      const id = ok(await dk("create", "-v", `${hostDir}:/x:ro`, "busybox", "true"), "create").trim();
      const [c] = JSON.parse(ok(await dk("inspect", id), "inspect"));
      expect(c.Mounts).to.deep.equal([{ Type: "bind", Source: hostDir, Destination: "/x", Mode: "ro", RW: false, Propagation: "rprivate" }]);
    });

    it("mounts --mount type=bind, volume and tmpfs", async function () {
      const hostDir = join(work, "mount-src");
      mkdirSync(hostDir, { recursive: true });
      writeFileSync(join(hostDir, "in"), "m\n");
      const script = "cat /b/in; echo v > /v/f; grep ' /t ' /proc/mounts; touch /b/no 2>/dev/null || echo ro";
      const out = ok(await dk(
        "run", "--name", "mounts",
        "--mount", `type=bind,source=${hostDir},target=/b,readonly`,
        "--mount", "type=volume,source=mvol,target=/v,volume-label=x=y",
        "--mount", "type=tmpfs,target=/t,tmpfs-size=1048576",
        "busybox", "sh", "-c", script,
      ), "run");
      const lines = out.trim().split("\n");
      expect(lines[0]).to.equal("m");
      expect(lines[1]).to.match(/^tmpfs \/t tmpfs .*size=1024k/);
      expect(lines[2]).to.equal("ro");
      expect(readFileSync(join(dataRoot(), "volumes", "mvol", "_data", "f"), "utf8")).to.equal("v\n");
      expect((await api("GET", "/volumes/mvol")).json.Labels).to.deep.equal({ x: "y" });
      const [c] = JSON.parse(ok(await dk("inspect", "mounts"), "inspect"));
      expect(c.Mounts.map((m: { Type: string; Destination: string; RW: boolean }) => [m.Type, m.Destination, m.RW])).to.deep.equal([
        ["bind", "/b", false], ["volume", "/v", true], ["tmpfs", "/t", true],
      ]);
    });

    it("a shared bind needs a shared source, a slave one a shared or slave source (Docker's words); a mount made in a shared bind reaches the host", async function () {
      const plain = join(work, "plain-src");
      mkdirSync(plain, { recursive: true });
      const refused = await dk("run", "--rm", "--mount", `type=bind,src=${plain},dst=/t,bind-propagation=rshared`, "busybox", "true");
      expect(refused.code).to.equal(125);
      expect(refused.stderr).to.match(new RegExp(`path ${plain} is mounted on \\S+ but it is not a shared mount`));
      const slave = await dk("run", "--rm", "-v", `${plain}:/t:rslave`, "busybox", "true");
      expect(slave.stderr).to.match(new RegExp(`path ${plain} is mounted on \\S+ but it is not a shared or slave mount`));
      // a source of its own made shared: allowed, and the container's root propagates
      const shared = join(work, "shared-src");
      mkdirSync(shared, { recursive: true });
      execFileSync("mount", ["-t", "tmpfs", "engine-test-shared", shared]);
      try {
        execFileSync("mount", ["--make-shared", shared]);
        mkdirSync(join(shared, "sub"));
        ok(await dk("run", "--rm", "--privileged", "--mount", `type=bind,src=${shared},dst=/t,bind-propagation=rshared`, "busybox", "mount", "-t", "tmpfs", "inner", "/t/sub"), "run rshared");
        const reached = readFileSync("/proc/self/mountinfo", "utf8").split("\n").some((l) => l.split(" ")[4] === join(shared, "sub"));
        expect(reached, "the container's mount reached the host").to.equal(true);
        expect(ok(await dk("run", "--rm", "-v", `${shared}:/t:rslave`, "busybox", "sh", "-c", "grep ' /t ' /proc/self/mountinfo | grep -c master:"), "run rslave").trim()).to.equal("1");
      } finally {
        execFileSync("umount", ["-R", shared]);
      }
    });

    it("has the driver mount a volume with options while the container runs", async function () {
      ok(await dk("volume", "create", "-o", "type=tmpfs", "-o", "device=tmpfs", "-o", "o=size=2m", "tv"), "create");
      const mountpoint = join(dataRoot(), "volumes", "tv", "_data");
      const onHost = () => readFileSync("/proc/self/mountinfo", "utf8").split("\n").some((l) => l.split(" ")[4] === mountpoint);
      const out = ok(await dk("run", "--rm", "-v", "tv:/t", "busybox", "sh", "-c", "grep ' /t ' /proc/mounts; echo data > /t/f; cat /t/f"), "run");
      expect(out).to.match(/^tmpfs \/t tmpfs .*size=2048k.*\ndata\n$/s);
      expect(onHost(), "unmounted after the exit").to.equal(false);
      // a failing mount fails the start with the driver's reason
      ok(await dk("volume", "create", "-o", "type=ext4", "-o", "device=/dev/engine-no-such-device", "bad"), "create bad");
      const bad = await dk("run", "--rm", "-v", "bad:/b", "busybox", "true");
      expect(bad.code).not.to.equal(0);
      // in Docker's words: the volume's path, then its driver's mount(2) error with the errno's text
      expect(bad.stderr).to.include(`error while mounting volume '${join(dataRoot(), "volumes", "bad", "_data")}': failed to mount local volume: mount /dev/engine-no-such-device:${join(dataRoot(), "volumes", "bad", "_data")}: no such file or directory`);
    });

    it("refuses bad mounts at create with 400 and a clear message", async function () {
      const create = (HostConfig: unknown, extra: Record<string, unknown> = {}) => api("POST", "/containers/create", { Image: "busybox", Cmd: ["true"], HostConfig, ...extra });
      const cases: [unknown, string][] = [
        [{ Mounts: [{ Type: "bind", Source: "rel/dir", Target: "/x" }] }, `invalid mount config for type "bind": invalid mount path: 'rel/dir' mount path must be absolute`],
        [{ Mounts: [{ Type: "bind", Source: join(work, "no-such-dir"), Target: "/x" }] }, `invalid mount config for type "bind": bind source path does not exist: ${join(work, "no-such-dir")}`],
        [{ Mounts: [{ Type: "tmpfs", Source: "x", Target: "/x" }] }, `invalid mount config for type "tmpfs": field Source must not be specified`],
        [{ Mounts: [{ Type: "nfs", Target: "/x" }] }, `invalid mount config for type "nfs": mount type unknown`],
        [{ Mounts: [{ Type: "volume", Target: "relative" }] }, `invalid mount config for type "volume": invalid mount path: 'relative' mount path must be absolute`],
        [{ Binds: ["rel/dir:/x"] }, `create rel/dir: "rel/dir" includes invalid characters for a local volume name, only "[a-zA-Z0-9][a-zA-Z0-9_.-]" are allowed. If you intended to pass a host directory, use absolute path`],
        [{ Binds: ["/a:/x:bogus"] }, "invalid mode: bogus"],
        [{ Binds: ["/a:/"] }, `invalid volume specification: '/a:/': invalid mount config for type "bind": invalid specification: destination can't be '/'`],
        [{ Binds: ["/a:/x", "v1:/x"] }, "Duplicate mount point: /x"],
        [{ Binds: ["v1:/x"], Tmpfs: { "/x": "" } }, "Duplicate mount point: /x"],
        [{ Mounts: [{ Type: "volume", Source: "v2", Target: "/x", VolumeOptions: { DriverConfig: { Name: "local", Options: { foo: "1" } } } }] }, 'create v2: invalid option: "foo"'],
      ];
      for (const [hc, message] of cases) {
        const res = await create(hc);
        expect({ status: res.status, message: res.json.message }, JSON.stringify(hc)).to.deep.equal({ status: 400, message });
      }
      const driver = await create({ Binds: ["v3:/x"], VolumeDriver: "nosuch" });
      expect(driver.status).to.equal(404);
      const cli = await dk("run", "--rm", "-v", "/a:/x:bogus", "busybox", "true");
      expect(cli.code).to.equal(125);
      expect(cli.stderr).to.include("invalid mode: bogus");
      // nothing was made by the refused creates
      expect(await volumeNames()).to.deep.equal([]);
      expect(ok(await dk("ps", "-aq"), "ps")).to.equal("");
    });

    it("sends the volume events: create, mount, unmount, destroy", async function () {
      const since = Math.floor(Date.now() / 1000) - 1;
      ok(await dk("run", "--rm", "-v", "ev:/e", "busybox", "true"), "run");
      ok(await dk("volume", "rm", "ev"), "rm");
      const until = Math.ceil(Date.now() / 1000) + 1;
      const out = ok(await dk("events", "--since", String(since), "--until", String(until), "--filter", "type=volume", "--filter", "volume=ev", "--format", "{{.Action}} {{.Actor.ID}}"), "events");
      expect(out.trim().split("\n")).to.deep.equal(["create ev", "mount ev", "unmount ev", "destroy ev"]);
    });
  });

  describe("across a restart", function () {
    it("keeps volumes, their labels and data, and who uses them", async function () {
      ok(await dk("volume", "create", "--label", "keep=1", "kept"), "create");
      ok(await dk("run", "--name", "user", "-v", "kept:/k", "busybox", "sh", "-c", "echo still > /k/f"), "write");
      await d.stop();
      await start();
      const v = (await api("GET", "/volumes/kept")).json;
      expect(v).to.deep.include({ Name: "kept", Labels: { keep: "1" }, Driver: "local" });
      expect(ok(await dk("run", "--rm", "-v", "kept:/k", "busybox", "cat", "/k/f"), "read").trim()).to.equal("still");
      expect((await api("DELETE", "/volumes/kept")).status).to.equal(409);
      ok(await dk("rm", "user"), "rm user");
      expect((await api("DELETE", "/volumes/kept")).status).to.equal(204);
    });
  });
});
