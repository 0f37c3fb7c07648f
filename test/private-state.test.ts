/**
 * The daemon's state is private to root, as Docker keeps its own (core/state-modes.ts): after
 * a load, an import, a commit and a pull from a real registry, image/ and every folder below it
 * are 0700 and every blob, layer tar, layout and record 0600; the data root, containers/ and
 * each container's folder 0710; network/ 0700. A user other than root reads no blob. A data
 * root an older engined left readable (0644 files in 0755 folders) is tightened at the next
 * start, and its images and containers run on. The daemon's umask is 0022 whatever its caller's.
 *
 * Every daemon's folder is opened to everyone to pass through (0711, as / and /var/lib are),
 * so that only the daemon's own modes keep another user out.
 */
import "./helpers/root-hooks.js";
import { expect } from "chai";
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, lstatSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { startRegistry, type TestRegistry } from "./helpers/registry.js";
import { busyboxRootfs, dockerSaveTar, imageOf, makeTar, writeFixture } from "./fixtures/images.js";
import { pushImage, type PushedImage } from "./fixtures/registry-push.js";

const mode = (path: string) => lstatSync(path).mode & 0o7777;
const octal = (m: number) => `0${m.toString(8)}`;
const hex = (digest: string) => digest.slice("sha256:".length);

/** Every folder and file under `dir` whose mode is not 0700 (folders) or 0600 (files). */
function looseUnder(dir: string): string[] {
  const loose: string[] = [];
  const walk = (path: string) => {
    const st = lstatSync(path);
    if (st.isDirectory()) {
      if ((st.mode & 0o7777) !== 0o700) loose.push(`${octal(st.mode & 0o7777)} ${path}`);
      for (const name of readdirSync(path)) walk(join(path, name));
    } else if (st.isFile() && (st.mode & 0o7777) !== 0o600) {
      loose.push(`${octal(st.mode & 0o7777)} ${path}`);
    }
  };
  walk(dir);
  return loose;
}

/** `cat` as nobody (uid and gid 65534, no other group), what it read thrown away: its exit code and error. */
function catAsNobody(file: string): { status: number | null; stderr: string } {
  const r = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "cat", file], {
    encoding: "utf8",
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 10_000,
  });
  return { status: r.status, stderr: r.stderr };
}

function ok(r: RunResult, what: string): string {
  expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
  return r.stdout;
}

/** The data root's modes that an image operation or a container must leave private. */
function expectPrivateState(data: string): void {
  expect(looseUnder(join(data, "image")), "image/ holds only 0700 folders and 0600 files").to.deep.equal([]);
  expect(octal(mode(data)), "data root").to.equal("0710");
  expect(octal(mode(join(data, "containers"))), "containers/").to.equal("0710");
  for (const id of readdirSync(join(data, "containers"))) expect(octal(mode(join(data, "containers", id))), `containers/${id}`).to.equal("0710");
  expect(octal(mode(join(data, "network"))), "network/").to.equal("0700");
  expect(octal(mode(join(data, "tmp"))), "tmp/").to.equal("0700");
}

describe("private state: the data root's files are root's alone", function () {
  this.timeout(180_000);
  let reg: TestRegistry;
  let pushed: PushedImage;
  let d: TestDaemon;
  let host: string;
  let data: string;
  let work: string;

  before(async () => {
    work = makeTempDir("engine-private-");
    reg = await startRegistry();
    pushed = await pushImage(reg, "lib/pulled", "v1", [await busyboxRootfs(), await makeTar([{ name: "pulled", data: "from the registry\n" }])]);
    d = await startEngined();
    chmodSync(d.dir, 0o711);
    host = `unix://${d.socket}`;
    data = join(d.dir, "data");
    // every test that runs busybox finds it here, whichever tests a grep picks (never a pull)
    ok(await docker(host, ["import", "-c", 'CMD ["sh"]', writeFixture(work, "busybox.tar", await busyboxRootfs()), "busybox"]), "docker import");
  });

  after(async () => {
    await d?.stop();
    await reg?.stop();
  });

  it("import: the layer tar is a 0600 blob in 0700 folders, which nobody else reads", async () => {
    const id = ok(await docker(host, ["import", "-c", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import").trim();
    const [image] = JSON.parse(ok(await docker(host, ["image", "inspect", id]), "inspect")) as { RootFS: { Layers: string[] } }[];
    const blob = join(data, "image", "blobs", "sha256", hex(image.RootFS.Layers[0]));
    expect(octal(mode(blob))).to.equal("0600");
    expectPrivateState(data);
    const nobody = catAsNobody(blob);
    expect(nobody.status).to.not.equal(0);
    expect(nobody.stderr).to.include("Permission denied");
  });

  it("load: the archive's layer tars and config are 0600 blobs", async () => {
    const layer = await makeTar([{ name: "loaded", data: "from an archive\n" }]);
    const image = imageOf([layer]);
    const archive = writeFixture(work, "loaded.tar", await dockerSaveTar([{ image, tags: ["loaded:v1"] }]));
    expect(ok(await docker(host, ["load", "-i", archive]), "docker load")).to.include("Loaded image: loaded:v1");
    const [diffId] = (JSON.parse(image.config.toString()) as { rootfs: { diff_ids: string[] } }).rootfs.diff_ids;
    for (const digest of [image.id, diffId]) expect(octal(mode(join(data, "image", "blobs", "sha256", hex(digest)))), digest).to.equal("0600");
    expectPrivateState(data);
  });

  it("commit: the container's layer tar is a 0600 blob; the container's folder is 0710, its network files still readable inside", async () => {
    ok(await docker(host, ["run", "--name", "to-commit", "--network", "none", "busybox", "sh", "-c", "echo changed > /changed"]), "docker run");
    const id = ok(await docker(host, ["commit", "to-commit", "committed:v1"]), "docker commit").trim();
    const [image] = JSON.parse(ok(await docker(host, ["image", "inspect", id]), "inspect")) as { RootFS: { Layers: string[] } }[];
    const top = image.RootFS.Layers[image.RootFS.Layers.length - 1];
    expect(octal(mode(join(data, "image", "blobs", "sha256", hex(top))))).to.equal("0600");
    expectPrivateState(data);
    // what a container reads of the daemon's files keeps Docker's modes, for any user in it
    const cid = ok(await docker(host, ["inspect", "-f", "{{.Id}}", "to-commit"]), "inspect").trim();
    for (const f of ["hosts", "hostname", "resolv.conf"]) expect(octal(mode(join(data, "containers", cid, f))), f).to.equal("0644");
    const asNobody = ok(await docker(host, ["run", "--rm", "--user", "65534:65534", "busybox", "sh", "-c", "cat /etc/hosts /etc/hostname /etc/resolv.conf >/dev/null && echo read"]), "run as nobody");
    expect(asNobody).to.equal("read\n");
  });

  it("pull: the config blob, the layers' layouts and records are 0600 in 0700 folders", async () => {
    ok(await docker(host, ["pull", `${reg.host}/lib/pulled:v1`]), "docker pull");
    const config = join(data, "image", "blobs", "sha256", hex(pushed.configDigest));
    expect(octal(mode(config))).to.equal("0600");
    // the busybox layer is the imported one already: the second is pulled, kept as a layout
    expect(readdirSync(join(data, "image", "layers")).filter((f) => f.endsWith(".layout"))).to.have.length(1);
    expectPrivateState(data);
    expect(catAsNobody(config).stderr).to.include("Permission denied");
    expect(ok(await docker(host, ["run", "--rm", "--network", "none", `${reg.host}/lib/pulled:v1`, "cat", "/pulled"]), "run")).to.equal("from the registry\n");
  });
});

describe("private state: a data root an older engined left readable", function () {
  this.timeout(180_000);
  let work: string;
  const args = () => ["--data-root", join(work, "data")];

  before(() => {
    work = makeTempDir("engine-private-upgrade-");
    chmodSync(work, 0o711);
  });

  it("is made private at the next start, once, and its images and containers run on", async () => {
    const data = join(work, "data");
    let d = await startEngined({ args: args() });
    let host = `unix://${d.socket}`;
    let blob: string;
    let cid: string;
    try {
      const id = ok(await docker(host, ["import", "-c", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import").trim();
      const [image] = JSON.parse(ok(await docker(host, ["image", "inspect", id]), "inspect")) as { RootFS: { Layers: string[] } }[];
      blob = join(data, "image", "blobs", "sha256", hex(image.RootFS.Layers[0]));
      cid = ok(await docker(host, ["create", "--network", "none", "busybox", "echo", "still runs"]), "docker create").trim();
    } finally {
      await d.stop();
    }
    // as an older engined left it: no stamp, image/ readable by all, folders 0755, the data root 0711
    rmSync(join(data, "modes-version"), { force: true });
    execFileSync("chmod", ["-R", "go+rX", join(data, "image")]);
    for (const dir of [join(data, "containers", cid), join(data, "network")]) chmodSync(dir, 0o755);
    chmodSync(data, 0o711);
    expect(octal(mode(blob))).to.equal("0644");
    expect(catAsNobody(blob).status, "the loosened blob is readable by anyone").to.equal(0);

    d = await startEngined({ args: args() });
    host = `unix://${d.socket}`;
    try {
      expectPrivateState(data);
      expect(d.output()).to.match(/made the state an older engined left readable private to root.* changed=\d+/);
      expect(catAsNobody(blob).stderr).to.include("Permission denied");
      expect(readFileSync(join(data, "modes-version"), "utf8")).to.equal("1\n");
      expect(ok(await docker(host, ["start", "-a", cid]), "docker start")).to.equal("still runs\n");
      expect(ok(await docker(host, ["run", "--rm", "--network", "none", "busybox", "echo", "new"]), "docker run")).to.equal("new\n");
    } finally {
      await d.stop();
    }
  });

  it("a fresh data root is stamped at its first start, and nothing is said", async () => {
    const d = await startEngined();
    try {
      expect(existsSync(join(d.dir, "data", "modes-version"))).to.equal(true);
      expect(d.output()).to.not.include("older engined");
    } finally {
      await d.stop();
    }
  });
});

describe("private state: the daemon's umask", function () {
  this.timeout(60_000);

  it("is 0022 whatever its caller's was (0000 here), as dockerd's", async () => {
    const before = process.umask(0);
    let d: TestDaemon;
    try {
      d = await startEngined();
    } finally {
      process.umask(before);
    }
    try {
      const pid = Number(readFileSync(join(d.dir, "engine.pid"), "utf8").trim());
      expect(readFileSync(`/proc/${pid}/status`, "utf8")).to.match(/^Umask:\s+0022$/m);
      expect(octal(statSync(join(d.dir, "data", "image")).mode & 0o7777)).to.equal("0700");
    } finally {
      await d.stop();
    }
  });
});
