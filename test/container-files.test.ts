/**
 * A container's files against a real engined with the Docker CLI: `docker cp` both ways (a
 * file, a directory, to a new name, `-a`), on stopped and running containers, `docker export`,
 * `docker diff` (the A/C/D lines Docker prints for the same operations), the stat header of
 * `HEAD`/`GET /containers/{id}/archive`, and the errors (missing path, bad path, extraction into
 * a file, a read-only root filesystem, a directory overwritten by a file).
 */
import "./helpers/root-hooks.js";
import { execFileSync } from "node:child_process";
import { chownSync, lstatSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { expect } from "chai";
import { extract } from "tar-stream";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, runCommand, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, makeTar, writeFixture } from "./fixtures/images.js";

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request with a raw body and a raw answer (tars both ways). */
function raw(socketPath: string, method: string, path: string, body?: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, headers: body ? { "content-type": "application/x-tar", "content-length": body.length } : {}, timeout: 20_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(body);
  });
}

interface Entry {
  name: string;
  type: string;
  uid: number;
  gid: number;
  mode: number;
  linkname?: string | null;
  data: string;
}

async function tarEntries(tar: Buffer): Promise<Entry[]> {
  const ex = extract();
  const out: Entry[] = [];
  const done = (async () => {
    for await (const e of ex) {
      const chunks: Buffer[] = [];
      for await (const c of e) chunks.push(c as Buffer);
      const h = e.header;
      out.push({ name: h.name, type: h.type ?? "", uid: h.uid ?? 0, gid: h.gid ?? 0, mode: h.mode ?? 0, linkname: h.linkname, data: Buffer.concat(chunks).toString() });
    }
  })();
  ex.end(tar);
  await done;
  return out;
}

function decodeStat(header: string | string[] | undefined): Record<string, unknown> {
  expect(header, "X-Docker-Container-Path-Stat").to.be.a("string");
  return JSON.parse(Buffer.from(header as string, "base64").toString());
}

describe("container files (docker cp, export, diff)", function () {
  this.timeout(120_000);
  let d: TestDaemon;
  let host: string;
  let work: string;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };
  const api = (method: string, path: string, body?: Buffer) => raw(d.socket, method, `/v1.51${path}`, body);

  before(async function () {
    work = makeTempDir("engine-files-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    ok(await docker(host, ["import", "-c", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
  });

  after(async () => d?.stop());

  it("docker cp copies a file and a directory into a stopped container and back, to new names too", async () => {
    ok(await docker(host, ["create", "--name", "cp-stopped", "--network", "none", "busybox", "cat", "/tmp/file.txt", "/newdir/a.txt", "/root/dir/link"]), "create");
    try {
      const src = join(work, "src");
      mkdirSync(join(src, "dir", "sub"), { recursive: true });
      writeFileSync(join(src, "file.txt"), "hello file\n", { mode: 0o640 });
      writeFileSync(join(src, "dir", "a.txt"), "a\n");
      writeFileSync(join(src, "dir", "sub", "b.sh"), "#!/bin/sh\n", { mode: 0o755 });
      symlinkSync("a.txt", join(src, "dir", "link"));

      ok(await docker(host, ["cp", join(src, "file.txt"), "cp-stopped:/tmp/"]), "cp file in");
      ok(await docker(host, ["cp", join(src, "file.txt"), "cp-stopped:/tmp/renamed.txt"]), "cp file to a new name");
      ok(await docker(host, ["cp", join(src, "dir"), "cp-stopped:/root/"]), "cp dir in");
      ok(await docker(host, ["cp", join(src, "dir"), "cp-stopped:/newdir"]), "cp dir to a new name");

      const out = join(work, "out");
      mkdirSync(out);
      ok(await docker(host, ["cp", "cp-stopped:/tmp/file.txt", out]), "cp file out");
      ok(await docker(host, ["cp", "cp-stopped:/tmp/renamed.txt", join(out, "again.txt")]), "cp file out to a new name");
      ok(await docker(host, ["cp", "cp-stopped:/root/dir", out]), "cp dir out");
      ok(await docker(host, ["cp", "cp-stopped:/newdir", join(out, "newdir-copy")]), "cp renamed dir out");

      expect(readFileSync(join(out, "file.txt"), "utf8")).to.equal("hello file\n");
      expect(lstatSync(join(out, "file.txt")).mode & 0o777).to.equal(0o640);
      expect(readFileSync(join(out, "again.txt"), "utf8")).to.equal("hello file\n");
      for (const dir of [join(out, "dir"), join(out, "newdir-copy")]) {
        expect(readFileSync(join(dir, "a.txt"), "utf8")).to.equal("a\n");
        expect(readFileSync(join(dir, "sub", "b.sh"), "utf8")).to.equal("#!/bin/sh\n");
        expect(lstatSync(join(dir, "sub", "b.sh")).mode & 0o777).to.equal(0o755);
        expect(readlinkSync(join(dir, "link"))).to.equal("a.txt");
      }
      // the container sees them where they were put
      expect(ok(await docker(host, ["start", "-a", "cp-stopped"]), "start")).to.equal("hello file\na\na\n");
    } finally {
      await docker(host, ["rm", "-f", "cp-stopped"]);
    }
  });

  it("docker cp works on a running container, and -a gives the container's user the files", async () => {
    ok(await docker(host, ["run", "-d", "--name", "cp-running", "--network", "none", "--user", "1234:2345", "busybox", "sleep", "300"]), "run");
    try {
      const src = join(work, "owned.txt");
      writeFileSync(src, "owned\n");
      chownSync(src, 4321, 4322);
      ok(await docker(host, ["cp", src, "cp-running:/tmp/plain.txt"]), "cp");
      ok(await docker(host, ["cp", "-a", src, "cp-running:/tmp/archive.txt"]), "cp -a");
      const plain = await tarEntries((await api("GET", "/containers/cp-running/archive?path=/tmp/plain.txt")).body);
      const archived = await tarEntries((await api("GET", "/containers/cp-running/archive?path=/tmp/archive.txt")).body);
      // without -a the tar's owner (the local file's), with -a the container's user
      expect(plain.map((e) => [e.name, e.uid, e.gid, e.data])).to.deep.equal([["plain.txt", 4321, 4322, "owned\n"]]);
      expect(archived.map((e) => [e.name, e.uid, e.gid, e.data])).to.deep.equal([["archive.txt", 1234, 2345, "owned\n"]]);
      // a compressed body (gzip, xz, bzip2) is a tar too
      const tar = await makeTar([{ name: "packed.txt", data: "packed\n" }]);
      for (const [tool, name] of [["gzip", "gz"], ["xz", "xz"], ["bzip2", "bz2"]]) {
        const put = await api("PUT", `/containers/cp-running/archive?path=/tmp&noOverwriteDirNonDir=true`, execFileSync(tool, ["-c"], { input: tar }));
        expect(put.status, `${name}: ${put.body}`).to.equal(200);
      }
      expect((await tarEntries((await api("GET", "/containers/cp-running/archive?path=/tmp/packed.txt")).body))[0].data).to.equal("packed\n");
      // what the running process sees
      const out = join(work, "from-running");
      ok(await docker(host, ["cp", "cp-running:/tmp/archive.txt", out]), "cp out of a running container");
      expect(readFileSync(out, "utf8")).to.equal("owned\n");
    } finally {
      await docker(host, ["rm", "-f", "cp-running"]);
    }
  });

  it("HEAD and GET /archive carry the path's stat in X-Docker-Container-Path-Stat", async () => {
    ok(await docker(host, ["run", "--name", "stat-c", "--network", "none", "busybox", "sh", "-c", "printf 12345 > /tmp/five && chmod 4755 /tmp/five && ln -s /etc/passwd /tmp/pl && ln -s ../nowhere /tmp/dangling"]), "run");
    try {
      const head = await api("HEAD", "/containers/stat-c/archive?path=/tmp/five");
      expect(head.status).to.equal(200);
      const five = decodeStat(head.headers["x-docker-container-path-stat"]);
      expect(five).to.include({ name: "five", size: 5, mode: 2 ** 23 + 0o755, linkTarget: "" });
      expect(five.mtime).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

      const dir = decodeStat((await api("HEAD", "/containers/stat-c/archive?path=/tmp/")).headers["x-docker-container-path-stat"]);
      expect(dir).to.include({ name: "tmp", mode: 2 ** 31 + 2 ** 20 + 0o777 });
      const root = decodeStat((await api("HEAD", "/containers/stat-c/archive?path=/")).headers["x-docker-container-path-stat"]);
      expect(root).to.include({ name: "/", mode: 2 ** 31 + 0o755 });

      const link = decodeStat((await api("HEAD", "/containers/stat-c/archive?path=/tmp/pl")).headers["x-docker-container-path-stat"]);
      expect(link).to.include({ name: "pl", mode: 2 ** 27 + 0o777, linkTarget: "/etc/passwd" });
      const dangling = decodeStat((await api("HEAD", "/containers/stat-c/archive?path=/tmp/dangling")).headers["x-docker-container-path-stat"]);
      expect(dangling).to.include({ name: "dangling", linkTarget: "/nowhere" });

      // GET: the same header and a tar of the resource under the requested base name
      const get = await api("GET", "/containers/stat-c/archive?path=/tmp/five");
      expect(get.status).to.equal(200);
      expect(get.headers["content-type"]).to.equal("application/x-tar");
      expect(decodeStat(get.headers["x-docker-container-path-stat"])).to.deep.equal(five);
      expect((await tarEntries(get.body)).map((e) => [e.name, e.type, e.data])).to.deep.equal([["five", "file", "12345"]]);
      const getLink = await tarEntries((await api("GET", "/containers/stat-c/archive?path=/tmp/pl")).body);
      expect(getLink.map((e) => [e.name, e.type, e.linkname])).to.deep.equal([["pl", "symlink", "/etc/passwd"]]);
      const getDir = await tarEntries((await api("GET", "/containers/stat-c/archive?path=/etc/.")).body);
      expect(getDir[0].name).to.equal("./");
      expect(getDir.map((e) => e.name)).to.include.members(["./group", "./passwd"]);
      expect(getDir.every((e) => e.name.startsWith("./"))).to.equal(true);

      // docker cp -L follows the link through the stat's linkTarget
      const out = join(work, "followed");
      ok(await docker(host, ["cp", "-L", "stat-c:/tmp/pl", out]), "cp -L");
      expect(readFileSync(out, "utf8")).to.match(/^root:x:0:0/);
    } finally {
      await docker(host, ["rm", "-f", "stat-c"]);
    }
  });

  it("refuses missing and bad paths, extraction into a file, a read-only root and overwriting a directory", async () => {
    ok(await docker(host, ["create", "--name", "err-c", "--network", "none", "busybox", "true"]), "create");
    ok(await docker(host, ["create", "--name", "ro-c", "--read-only", "--network", "none", "busybox", "true"]), "create ro");
    try {
      const message = (a: Answer) => JSON.parse(a.body.toString()).message as string;
      const missing = await api("GET", "/containers/err-c/archive?path=/nope/x");
      expect(missing.status).to.equal(404);
      expect(message(missing)).to.equal("Could not find the file /nope/x in container err-c");
      expect((await api("HEAD", "/containers/err-c/archive?path=/nope")).status).to.equal(404);
      const empty = await api("GET", "/containers/err-c/archive?path=");
      expect(empty.status).to.equal(400);
      expect(message(empty)).to.equal("bad parameter: path cannot be empty");
      const throughFile = await api("HEAD", "/containers/err-c/archive?path=/etc/passwd/x");
      expect(throughFile.status).to.equal(400);
      // a part longer than a file name may be: the request's mistake (400), not the daemon's
      const tooLong = await api("GET", `/containers/err-c/archive?path=/tmp/${"x".repeat(300)}`);
      expect([tooLong.status, message(tooLong)]).to.deep.equal([400, `invalid path /tmp/${"x".repeat(300)}: file name too long`]);
      expect((await api("GET", "/containers/nosuch/archive?path=/")).status).to.equal(404);

      const tar = await makeTar([{ name: "x.txt", data: "x" }]);
      const intoFile = await api("PUT", "/containers/err-c/archive?path=/etc/passwd", tar);
      expect(intoFile.status).to.equal(400);
      expect(message(intoFile)).to.equal("extraction point is not a directory");
      const intoMissing = await api("PUT", "/containers/err-c/archive?path=/nope", tar);
      expect(intoMissing.status).to.equal(404);
      const ro = await api("PUT", "/containers/ro-c/archive?path=/tmp", tar);
      expect(ro.status).to.equal(400);
      expect(message(ro)).to.equal("container rootfs is marked read-only");
      const roCli = await docker(host, ["cp", join(work, "rootfs.tar"), "ro-c:/tmp/"]);
      expect(roCli.code).to.equal(1);
      expect(roCli.stderr).to.include("container rootfs is marked read-only");

      const fileOverDir = await makeTar([{ name: "tmp", data: "not a dir" }]);
      const overwrite = await api("PUT", "/containers/err-c/archive?path=/&noOverwriteDirNonDir=1", fileOverDir);
      expect(overwrite.status).to.equal(400);
      expect(message(overwrite)).to.match(/cannot overwrite directory "\/tmp" with non-directory "\/"/);
      const escape = await api("PUT", "/containers/err-c/archive?path=/tmp", await makeTar([{ name: "../../escape", data: "x" }]));
      expect(escape.status).to.equal(400);

      const cliMissing = await docker(host, ["cp", "err-c:/nope", join(work, "never")]);
      expect(cliMissing.code).to.equal(1);
      expect(cliMissing.stderr).to.include("Could not find the file /nope in container err-c");
    } finally {
      await docker(host, ["rm", "-f", "err-c", "ro-c"]);
    }
  });

  it("docker export writes the container's whole file system as a tar", async () => {
    ok(await docker(host, ["run", "--name", "export-c", "--network", "none", "busybox", "sh", "-c", "echo exported > /root/mark && rm /etc/group"]), "run");
    try {
      const file = join(work, "export.tar");
      ok(await docker(host, ["export", "-o", file, "export-c"]), "export");
      const entries = await tarEntries(readFileSync(file));
      const names = entries.map((e) => e.name);
      expect(names).to.include.members(["bin/", "bin/busybox", "etc/", "etc/passwd", "root/mark", "tmp/"]);
      expect(names).to.not.include("etc/group");
      expect(names.some((n) => n.startsWith("/") || n.startsWith("./"))).to.equal(false);
      expect(entries.find((e) => e.name === "root/mark")!.data).to.equal("exported\n");
      expect(entries.find((e) => e.name === "bin/sh")).to.include({ type: "symlink", linkname: "busybox" });
      // the same listing as the real tar reads it
      const listed = ok(await runCommand("tar", ["-tf", file]), "tar -t").split("\n").filter(Boolean);
      expect(listed).to.deep.equal(names);
    } finally {
      await docker(host, ["rm", "-f", "export-c"]);
    }
  });

  it("docker diff prints the A/C/D lines Docker prints for the same changes", async () => {
    const script = "mkdir -p /a/b && touch /tmp/new && rm /etc/group && echo x >> /etc/passwd";
    ok(await docker(host, ["run", "--name", "diff-c", "--network", "none", "busybox", "sh", "-c", script]), "run");
    try {
      const lines = ok(await docker(host, ["diff", "diff-c"]), "diff").trim().split("\n");
      expect(lines).to.deep.equal(["A /a", "A /a/b", "C /etc", "D /etc/group", "C /etc/passwd", "C /tmp", "A /tmp/new"]);
      const json = JSON.parse((await api("GET", "/containers/diff-c/changes")).body.toString());
      expect(json[0]).to.deep.equal({ Path: "/a", Kind: 1 });
      expect(json).to.deep.include({ Path: "/etc/group", Kind: 2 });
      // an untouched container has no changes
      ok(await docker(host, ["create", "--name", "diff-none", "busybox", "true"]), "create");
      expect(ok(await docker(host, ["diff", "diff-none"]), "diff none")).to.equal("");
    } finally {
      await docker(host, ["rm", "-f", "diff-c", "diff-none"]);
    }
  });
});
