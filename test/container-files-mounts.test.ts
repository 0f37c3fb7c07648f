/**
 * `docker cp` and `docker diff` of containers with mounts, against a real engined, with the
 * Docker CLI and dockerode; every expectation is what Docker's daemon (20.10) answered for the
 * same steps, checked side by side: a copy reaches the container's anonymous and named volumes,
 * its binds and its network files (`/etc/hostname`), through a path that crosses from the root
 * filesystem into a mount and through a symlink inside a volume (resolved in the container's
 * view), on a running, a stopped and a never started container; a copy into a read-only bind is
 * refused with Docker's message, one into a volume of a read-only root filesystem is not; and
 * `docker diff` lists the mount points of volumes and binds but not `/etc` and `/dev` when only
 * the runtime's mount points are in them (Docker's init layer has them).
 */
import "./helpers/root-hooks.js";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { expect } from "chai";
import Docker from "dockerode";
import { extract } from "tar-stream";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, makeTar, writeFixture } from "./fixtures/images.js";

/** Each entry of a tar: its name, type and content. */
async function entries(tar: Buffer | Readable): Promise<{ name: string; type: string; data: string; linkname?: string | null }[]> {
  const ex = extract();
  const out: { name: string; type: string; data: string; linkname?: string | null }[] = [];
  const done = (async () => {
    for await (const e of ex) {
      const chunks: Buffer[] = [];
      for await (const c of e) chunks.push(c as Buffer);
      out.push({ name: e.header.name, type: e.header.type ?? "", data: Buffer.concat(chunks).toString(), linkname: e.header.linkname });
    }
  })();
  if (Buffer.isBuffer(tar)) ex.end(tar);
  else tar.pipe(ex as unknown as NodeJS.WritableStream);
  await done;
  return out;
}

describe("docker cp and docker diff through a container's mounts", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let host: string;
  let work: string;
  let client: Docker;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const cpOut = async (src: string) => {
    const r = await docker(host, ["cp", src, "-"]);
    expect(r.code, `docker cp ${src} -: ${r.stderr}`).to.equal(0);
    return entries(Buffer.from(r.stdout));
  };

  before(async function () {
    work = makeTempDir("engine-cp-mounts-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    client = new Docker({ socketPath: d.socket });
    ok(await docker(host, ["import", writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "import busybox");
    // an image without /etc and /dev: the runtime makes them for its mount points
    const bare = await makeTar([{ name: "bin/", type: "directory" }, { name: "bin/busybox", data: readFileSync("/usr/bin/busybox"), mode: 0o755 }, { name: "bin/sleep", type: "symlink", linkname: "busybox" }]);
    ok(await docker(host, ["import", writeFixture(work, "bare.tar", bare), "bare"]), "import bare");
  });

  after(async () => d?.stop());

  describe("a running container with volumes and binds", () => {
    let rw: string;
    let ro: string;
    before(async () => {
      rw = join(work, "rw");
      ro = join(work, "ro");
      mkdirSync(rw);
      mkdirSync(ro);
      writeFileSync(join(rw, "hf"), "hostfile\n");
      writeFileSync(join(ro, "rf"), "rofile\n");
      ok(await docker(host, ["volume", "create", "named1"]), "volume create");
      const script = "echo x > /vol1/f; echo y > /data/named/g; ln -s ../../etc /data/named/up; ln -s /etc/passwd /vol1/pw; sleep 600";
      ok(await docker(host, ["run", "-d", "--name", "mounts", "--hostname", "cp-host", "-v", "/vol1", "-v", "named1:/data/named", "-v", `${rw}:/mnt/bind`, "-v", `${ro}:/opt/ro:ro`, "busybox", "sh", "-c", script]), "run");
      for (let i = 0; i < 50 && (await docker(host, ["exec", "mounts", "test", "-L", "/vol1/pw"])).code !== 0; i++) await new Promise((r) => setTimeout(r, 100));
    });
    after(async () => {
      await docker(host, ["rm", "-f", "mounts"]);
      await docker(host, ["volume", "rm", "named1"]);
    });

    it("docker cp out of an anonymous volume, a named volume, a bind, a read-only bind and the network files", async () => {
      expect(await cpOut("mounts:/vol1/f")).to.deep.include({ name: "f", type: "file", data: "x\n", linkname: null });
      expect((await cpOut("mounts:/data/named/g"))[0]).to.include({ name: "g", data: "y\n" });
      expect((await cpOut("mounts:/mnt/bind/hf"))[0]).to.include({ name: "hf", data: "hostfile\n" });
      expect((await cpOut("mounts:/opt/ro/rf"))[0]).to.include({ name: "rf", data: "rofile\n" });
      expect((await cpOut("mounts:/etc/hostname"))[0]).to.include({ name: "hostname", data: "cp-host\n" });
      // a path crossing from the root filesystem into the named volume
      expect((await cpOut("mounts:/data")).map((e) => `${e.type} ${e.name}`)).to.deep.equal(["directory data/", "directory data/named/", "file data/named/g", "symlink data/named/up"]);
      // symlinks in a volume resolve in the container's view: ../../etc is the container's /etc, /etc/passwd its own
      expect((await cpOut("mounts:/data/named/up/passwd"))[0].data).to.match(/^root:x:0:0:/);
      expect((await cpOut("mounts:/vol1/pw"))[0]).to.include({ type: "symlink", linkname: "/etc/passwd" });
      expect((await docker(host, ["cp", "-L", "mounts:/vol1/pw", "-"])).stdout).to.include("nobody:x:65534");
    });

    it("docker cp into the volumes and the bind; a read-only bind refuses with Docker's message", async () => {
      const file = join(work, "in.txt");
      writeFileSync(file, "payload\n");
      for (const dest of ["/vol1/", "/data/named/", "/mnt/bind/", "/data/"]) ok(await docker(host, ["cp", file, `mounts:${dest}`]), `cp into ${dest}`);
      const listing = ok(await docker(host, ["exec", "mounts", "sh", "-c", "cat /vol1/in.txt /data/named/in.txt /data/in.txt"]), "cat");
      expect(listing).to.equal("payload\npayload\npayload\n");
      expect(readdirSync(rw).sort()).to.deep.equal(["hf", "in.txt"]);
      for (const dest of ["/opt/ro/", "/opt/ro/x"]) {
        const refused = await docker(host, ["cp", file, `mounts:${dest}`]);
        expect(refused.code).to.not.equal(0);
        expect(refused.stderr).to.include("mounted volume is marked read-only");
      }
      expect(readdirSync(ro)).to.deep.equal(["rf"]);
    });

    it("dockerode: the stat, the tar and a put through a volume; a put into a read-only bind is a 400", async () => {
      const c = client.getContainer("mounts");
      const volumePath = JSON.parse(ok(await docker(host, ["inspect", "-f", "{{json .Mounts}}", "mounts"]), "inspect"))
        .find((m: { Destination: string }) => m.Destination === "/vol1").Source as string;
      // the stat of a mount point is the volume's root, not the folder under it
      const info = (await c.infoArchive({ path: "/vol1" })) as unknown as { headers: Record<string, string> };
      const stat = JSON.parse(Buffer.from(info.headers["x-docker-container-path-stat"], "base64").toString());
      expect(stat).to.include({ name: "vol1", mode: 2147484141 });
      expect(Date.parse(stat.mtime)).to.equal(Math.floor(statSync(volumePath).mtimeMs));
      const tar = await entries((await c.getArchive({ path: "/vol1/f" })) as unknown as Readable);
      expect(tar).to.have.length(1);
      expect(tar[0]).to.include({ name: "f", data: "x\n" });
      await c.putArchive(await makeTar([{ name: "from-sdk", data: "sdk\n" }]), { path: "/data/named" });
      expect(ok(await docker(host, ["exec", "mounts", "cat", "/data/named/from-sdk"]), "cat")).to.equal("sdk\n");
      const refused = await c.putArchive(await makeTar([{ name: "x", data: "x" }]), { path: "/opt/ro" }).then(() => undefined, (e: { statusCode: number; json?: { message: string } }) => e);
      expect(refused?.statusCode).to.equal(400);
      expect(refused?.json?.message).to.equal("mounted volume is marked read-only");
    });

    it("docker cp on the stopped container still reaches its volumes and network files", async () => {
      ok(await docker(host, ["stop", "-t", "0", "mounts"]), "stop");
      expect((await cpOut("mounts:/vol1/f"))[0]).to.include({ name: "f", data: "x\n" });
      expect((await cpOut("mounts:/etc/hostname"))[0].data).to.equal("cp-host\n");
      const file = join(work, "stopped.txt");
      writeFileSync(file, "while stopped\n");
      ok(await docker(host, ["cp", file, "mounts:/data/named/"]), "cp into a volume of a stopped container");
      const named = ok(await docker(host, ["volume", "inspect", "-f", "{{.Mountpoint}}", "named1"]), "volume inspect").trim();
      expect(readFileSync(join(named, "stopped.txt"), "utf8")).to.equal("while stopped\n");
    });
  });

  it("a container that never ran: its mount points are made for the copy, and docker diff lists them as Docker's", async () => {
    const bindFile = join(work, "bind-file");
    writeFileSync(bindFile, "bound\n");
    ok(await docker(host, ["create", "--name", "never", "-v", "/never", "-v", `${bindFile}:/etc/deep/hf`, "busybox", "true"]), "create");
    try {
      expect((await cpOut("never:/never")).map((e) => e.name)).to.deep.equal(["never/"]);
      expect((await cpOut("never:/etc/deep/hf"))[0].data).to.equal("bound\n");
      expect(ok(await docker(host, ["diff", "never"]), "diff").trim().split("\n")).to.deep.equal(["C /etc", "A /etc/deep", "A /etc/deep/hf", "A /never"]);
    } finally {
      await docker(host, ["rm", "-v", "never"]);
    }
  });

  it("a read-only root filesystem takes a copy into its volume, not elsewhere", async () => {
    ok(await docker(host, ["run", "--name", "ro-root", "--read-only", "-v", "/vol3", "busybox", "true"]), "run");
    try {
      const file = join(work, "ro-root.txt");
      writeFileSync(file, "into the volume\n");
      ok(await docker(host, ["cp", file, "ro-root:/vol3/"]), "cp into the volume");
      expect((await cpOut("ro-root:/vol3/ro-root.txt"))[0].data).to.equal("into the volume\n");
      const refused = await docker(host, ["cp", file, "ro-root:/tmp/"]);
      expect(refused.stderr).to.include("container rootfs is marked read-only");
    } finally {
      await docker(host, ["rm", "-v", "ro-root"]);
    }
  });

  it("docker diff lists volume and bind mount points but not /etc and /dev made for the runtime's", async () => {
    const bindFile = join(work, "diff-file");
    writeFileSync(bindFile, "x\n");
    ok(await docker(host, ["run", "-d", "--name", "diff-bare", "-v", `${bindFile}:/etc/hfile`, "-v", `${bindFile}:/opt/x/y/hfile:ro`, "-v", "/tmp", "-v", "/a/b/c", "bare", "sleep", "600"]), "run");
    ok(await docker(host, ["run", "-d", "--name", "diff-plain", "bare", "sleep", "600"]), "run");
    try {
      const lines = ok(await docker(host, ["diff", "diff-bare"]), "diff").trim().split("\n");
      expect(lines).to.deep.equal(["A /a", "A /a/b", "A /a/b/c", "C /etc", "A /etc/hfile", "A /opt", "A /opt/x", "A /opt/x/y", "A /opt/x/y/hfile", "A /tmp"]);
      // no change: Docker's daemon answers `null` and a newline, which dockerode hands over as the raw body
      expect(String(await client.getContainer("diff-plain").changes())).to.equal("null\n");
      ok(await docker(host, ["exec", "diff-plain", "busybox", "mkdir", "/etc/x"]), "mkdir");
      expect(await client.getContainer("diff-plain").changes()).to.deep.equal([{ Path: "/etc", Kind: 0 }, { Path: "/etc/x", Kind: 1 }]);
    } finally {
      await docker(host, ["rm", "-f", "-v", "diff-bare", "diff-plain"]);
    }
  });
});
