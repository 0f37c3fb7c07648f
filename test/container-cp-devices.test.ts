/**
 * `docker cp` into a container leaves device nodes and FIFOs out (issue 24): a tar with a
 * character device (1:3 named `evil-null`), a block device, FIFOs, a hard link to the device and
 * regular files goes into a running container through the API, the Docker CLI (`docker cp -`),
 * dockerode and docker-py. Each time the regular files and the hard link between them are in the
 * container's root (looked at on the host with lstat), no device or FIFO is anywhere under the
 * copy, the answer is Docker's (200, empty body, which every client takes as it did), and its
 * `Warning` header and the daemon's log name what was left out. Last, white-box: the header's
 * escaping and bounds with names no test tar needs to carry.
 */
import "./helpers/root-hooks.js";
import { lstatSync, readdirSync, readFileSync, writeFileSync, type Stats } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { expect } from "chai";
import Docker from "dockerode";
import tarStream from "tar-stream";
import {docker } from "./helpers/docker-cli.js";
import { makeTempDir, runCommand, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, writeFixture } from "./fixtures/images.js";
import { headerSafe, SkippedEntries, skippedWarning } from "../host/containers/files/skipped-entries.js";

type Header = Parameters<ReturnType<typeof tarStream.pack>["entry"]>[0];

/** A tar of these headers (a file's data given as a string), in order. */
async function tarOf(entries: (Header & { data?: string })[]): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const c of pack) chunks.push(c as Buffer);
  })();
  for (const { data, ...h } of entries) {
    const body = Buffer.from(data ?? "");
    await new Promise<void>((res, rej) =>
      pack.entry({ mode: 0o644, uid: 0, gid: 0, mtime: new Date(1_700_000_000_000), ...h, size: body.length }, body, (e) => (e ? rej(e) : res())),
    );
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** A name no header may carry raw: a quote, a comma, a newline. */
const ODD = 'odd "name",\n';

/** The tar of the issue, under the folder `top`. */
const evilTar = (top: string) =>
  tarOf([
    { name: `${top}/`, type: "directory", mode: 0o755 },
    { name: `${top}/before.txt`, data: "before\n" },
    { name: `${top}/evil-null`, type: "character-device", devmajor: 1, devminor: 3, mode: 0o666 },
    { name: `${top}/evil-blk`, type: "block-device", devmajor: 7, devminor: 0 },
    { name: `${top}/evil-fifo`, type: "fifo" },
    { name: `${top}/null-link`, type: "link", linkname: `${top}/evil-null` },
    { name: `${top}/${ODD}`, type: "fifo" },
    { name: `${top}/after.txt`, data: "after\n" },
    { name: `${top}/file-link`, type: "link", linkname: `${top}/before.txt` },
  ]);

/** The `Warning` header for `evilTar(top)` copied into /tmp. */
const evilWarning = (top: string) =>
  `299 - "5 entries not copied (device nodes and FIFOs are not copied into a container): ` +
  `/tmp/${top}/evil-null (character device), /tmp/${top}/evil-blk (block device), /tmp/${top}/evil-fifo (FIFO), ` +
  `/tmp/${top}/null-link (hard link to a skipped entry), /tmp/${top}/odd %22name%22%2C%0A (FIFO)"`;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function put(socketPath: string, path: string, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: "PUT", path, headers: { "content-type": "application/x-tar", "content-length": body.length }, timeout: 20_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(body);
  });
}

const lstat = (path: string): Stats | undefined => lstatSync(path, { throwIfNoEntry: false });

/** Every device node or FIFO under `dir`, walked without following symlinks. */
function nodesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const st = lstatSync(join(dir, name));
    if (st.isCharacterDevice() || st.isBlockDevice() || st.isFIFO()) found.push(join(dir, name));
    if (st.isDirectory()) found.push(...nodesUnder(join(dir, name)));
  }
  return found;
}

describe("docker cp into a container leaves device nodes and FIFOs out", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let host: string;
  let work: string;
  let id: string;
  /** The running container's root filesystem, as mounted on the host. */
  let rootfs: string;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };

  /** What `evilTar(top)` must leave in the container's /tmp: the files, one link between them, nothing else. */
  const expectCopied = (top: string) => {
    const dir = join(rootfs, "tmp", top);
    expect(readFileSync(join(dir, "before.txt"), "utf8")).to.equal("before\n");
    expect(readFileSync(join(dir, "after.txt"), "utf8")).to.equal("after\n");
    expect(lstat(join(dir, "file-link"))!.ino, "file-link is a hard link to before.txt").to.equal(lstat(join(dir, "before.txt"))!.ino);
    for (const name of ["evil-null", "evil-blk", "evil-fifo", "null-link", ODD]) expect(lstat(join(dir, name)), name).to.equal(undefined);
    expect(nodesUnder(dir)).to.deep.equal([]);
    expect(readdirSync(dir).sort()).to.deep.equal(["after.txt", "before.txt", "file-link"]);
  };

  before(async function () {
    work = makeTempDir("engine-cp-devices-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    ok(await docker(host, ["import", "-c", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
    id = ok(await docker(host, ["create", "--name", "cp-dev", "--network", "none", "busybox", "sleep", "300"]), "create").trim();
    ok(await docker(host, ["start", "cp-dev"]), "start");
    rootfs = join(d.dir, "exec", "containers", id, "rootfs");
    expect(lstat(join(rootfs, "bin", "busybox"))?.isFile(), "the container's root is mounted on the host").to.equal(true);
  });

  after(async () => {
    if (d) await docker(host, ["rm", "-f", "cp-dev"]);
    await d?.stop();
  });

  it("through the API: 200, an empty body, the files copied, the rest named in a Warning header and the log", async () => {
    const answer = await put(d.socket, "/v1.51/containers/cp-dev/archive?path=/tmp&noOverwriteDirNonDir=true", await evilTar("api"));
    expect(answer.status, answer.body.toString()).to.equal(200);
    expect(answer.body.length).to.equal(0);
    expect(answer.headers.warning).to.equal(evilWarning("api"));
    expectCopied("api");
    expect(d.output()).to.include(`docker cp into container ${id.slice(0, 12)}: 5 entries not copied`);
    // a copy with nothing left out has no warning
    const plain = await put(d.socket, "/v1.51/containers/cp-dev/archive?path=/tmp", await tarOf([{ name: "plain.txt", data: "plain\n" }]));
    expect(plain.status).to.equal(200);
    expect(plain.headers.warning).to.equal(undefined);
  });

  it("through the Docker CLI (docker cp -): exit 0 and the regular files only", async () => {
    const r = await docker(host, ["cp", "-", "cp-dev:/tmp"], {}, { input: await evilTar("cli") });
    expect(r.code, r.stderr).to.equal(0);
    expectCopied("cli");
  });

  it("through dockerode and docker-py: their put_archive succeeds as with Docker", async function () {
    const client = new Docker({ socketPath: d.socket });
    await client.getContainer(id).putArchive(await evilTar("dockerode"), { path: "/tmp" });
    expectCopied("dockerode");

    const probe = await runCommand("python3", ["-c", "import docker"], { timeoutMs: 20_000 });
    if (probe.code !== 0) return; // the Docker SDK for Python is not installed
    const tarFile = join(work, "py.tar");
    writeFileSync(tarFile, await evilTar("py"));
    const script = "import docker,sys\nc=docker.DockerClient(base_url='unix://'+sys.argv[1])\nprint(c.containers.get('cp-dev').put_archive('/tmp', open(sys.argv[2],'rb').read()))";
    const py = await runCommand("python3", ["-c", script, d.socket, tarFile], { timeoutMs: 30_000 });
    expect(py.code, py.stderr).to.equal(0);
    expect(py.stdout.trim()).to.equal("True");
    expectCopied("py");
  });

  it("leaves the name of a skipped entry as it was, and a hard link to it out; a later entry there is written", async () => {
    expect((await put(d.socket, "/v1.51/containers/cp-dev/archive?path=/tmp", await tarOf([{ name: "keep/name", data: "kept\n" }]))).status).to.equal(200);
    const second = await tarOf([
      { name: "keep/name", type: "character-device", devmajor: 1, devminor: 3 },
      { name: "keep/link", type: "link", linkname: "keep/name" },
      { name: "keep/later", type: "fifo" },
      { name: "keep/later", data: "now a file\n" },
      { name: "keep/later-link", type: "link", linkname: "keep/later" },
    ]);
    const answer = await put(d.socket, "/v1.51/containers/cp-dev/archive?path=/tmp", second);
    expect(answer.status).to.equal(200);
    expect(answer.headers.warning).to.equal(
      `299 - "3 entries not copied (device nodes and FIFOs are not copied into a container): ` +
        `/tmp/keep/name (character device), /tmp/keep/link (hard link to a skipped entry), /tmp/keep/later (FIFO)"`,
    );
    const dir = join(rootfs, "tmp", "keep");
    // the container's own file was not linked to under the device's name, nor replaced
    expect(readFileSync(join(dir, "name"), "utf8")).to.equal("kept\n");
    expect(lstat(join(dir, "link"))).to.equal(undefined);
    expect(readFileSync(join(dir, "later"), "utf8")).to.equal("now a file\n");
    expect(lstat(join(dir, "later-link"))!.ino).to.equal(lstat(join(dir, "later"))!.ino);
    expect(nodesUnder(dir)).to.deep.equal([]);
  });

  it("names at most 20 entries in the header, and counts the rest", async () => {
    const fifos = Array.from({ length: 30 }, (_, i) => ({ name: `many/f${String(i).padStart(2, "0")}`, type: "fifo" as const }));
    const answer = await put(d.socket, "/v1.51/containers/cp-dev/archive?path=/tmp", await tarOf([...fifos, { name: "many/file", data: "x" }]));
    expect(answer.status).to.equal(200);
    const warning = answer.headers.warning as string;
    expect(warning).to.match(/^299 - "30 entries not copied \(device nodes and FIFOs are not copied into a container\): \/tmp\/many\/f00 \(FIFO\), /);
    expect(warning).to.match(/\/tmp\/many\/f19 \(FIFO\), and 10 more"$/);
    expect(warning).to.not.include("f20");
    expect(readFileSync(join(rootfs, "tmp", "many", "file"), "utf8")).to.equal("x");
    expect(readdirSync(join(rootfs, "tmp", "many"))).to.deep.equal(["file"]);
  });
});

describe("the Warning header of a copy that left entries out", () => {
  it("escapes what a header may not carry raw and stays short whatever the names", () => {
    expect(headerSafe('a "b",\\c%d\ne\u00e9')).to.equal("a %22b%22%2C%5Cc%25d%0Ae%C3%A9");
    const long = new SkippedEntries();
    for (let i = 0; i < 1000; i++) long.add(`/tmp/${String(i).padStart(4, "0")}${"x".repeat(4000)}`, "FIFO");
    const warning = skippedWarning(long);
    // each name cut to 200 characters, the list stopped near 2000, the rest counted
    expect(warning.length).to.be.below(2600);
    expect(warning).to.match(/^299 - "1000 entries not copied \(device nodes and FIFOs are not copied into a container\): \/tmp\/0000x+\.\.\. \(FIFO\), /);
    expect(warning).to.match(/, and 99\d more"$/);
    expect(warning).to.match(/^[\x20-\x7e]+$/);
  });
});
