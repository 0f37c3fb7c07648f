/**
 * `docker cp` as a security boundary. Unit level: the scoped resolver, extractor, packer and
 * remover (host/containers/files) against real directories with evil symlinks (absolute,
 * `../../..`, loops, into host paths). End to end: a running container swaps a directory for a
 * symlink to `/` and to a host path in a loop while `docker cp` copies into (and out of) a path
 * under it many times; afterwards nothing was written outside the container's root, nothing of
 * the host was read, and the copies that landed are inside the container.
 */
import "./helpers/root-hooks.js";
import { randomBytes } from "node:crypto";
import { existsSync, fstatSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { Readable } from "node:stream";
import { expect } from "chai";
import { extract } from "tar-stream";
import { extractScoped } from "../host/containers/files/scoped-extract.js";
import { packScoped } from "../host/containers/files/scoped-pack.js";
import { removeAt, ScopedPathError, ScopedRoot } from "../host/containers/files/scoped-fs.js";
import { docker } from "./helpers/docker-cli.js";
import { makeTempDir, startEngined, type RunResult, type TestDaemon } from "./helpers/engined.js";
import { busyboxRootfs, makeTar, writeFixture } from "./fixtures/images.js";

async function tarNames(tar: Readable): Promise<{ name: string; data: string }[]> {
  const ex = extract();
  const out: { name: string; data: string }[] = [];
  tar.pipe(ex as unknown as NodeJS.WritableStream);
  for await (const e of ex) {
    const chunks: Buffer[] = [];
    for await (const c of e) chunks.push(c as Buffer);
    out.push({ name: e.header.name, data: Buffer.concat(chunks).toString() });
  }
  return out;
}

function scopedError(fn: () => unknown): ScopedPathError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(ScopedPathError);
    return e as ScopedPathError;
  }
  throw new Error("expected a ScopedPathError");
}

describe("scoped container file access (unit)", () => {
  let rootDir: string;
  let hostDir: string;
  let root: ScopedRoot;

  beforeEach(() => {
    rootDir = makeTempDir("engine-scoped-root-");
    hostDir = makeTempDir("engine-scoped-host-");
    writeFileSync(join(hostDir, "host-secret"), "HOST SECRET");
    mkdirSync(join(rootDir, "dir", "sub"), { recursive: true });
    writeFileSync(join(rootDir, "file"), "in root");
    symlinkSync("/", join(rootDir, "abs"));
    symlinkSync("../../../../../..", join(rootDir, "dir", "rel"));
    symlinkSync(hostDir, join(rootDir, "hostlink"));
    symlinkSync("loop2", join(rootDir, "loop1"));
    symlinkSync("loop1", join(rootDir, "loop2"));
    symlinkSync("/dir/sub", join(rootDir, "tosub"));
    root = ScopedRoot.open(rootDir);
  });

  afterEach(() => root.close());

  const inode = (fd: number) => fstatSync(fd).ino;

  it("resolves absolute and climbing symlinks inside the root, never above it", () => {
    for (const path of ["/abs/x", "/dir/rel/x", "/dir/rel/../../../x", "/../../x", "/abs/abs/dir/rel/x"]) {
      const r = root.resolve(path, { followLast: false });
      try {
        expect(inode(r.dirFd), path).to.equal(statSync(rootDir).ino);
        expect(r.name).to.equal("x");
        expect(r.path).to.equal("/x");
      } finally {
        r.close();
      }
    }
    const sub = root.resolve("/tosub/y", { followLast: false });
    expect(inode(sub.dirFd)).to.equal(statSync(join(rootDir, "dir", "sub")).ino);
    expect(sub.path).to.equal("/dir/sub/y");
    sub.close();
    const followed = root.resolve("/abs", { followLast: true });
    expect([followed.name, followed.path, inode(followed.dirFd)]).to.deep.equal(["", "/", statSync(rootDir).ino]);
    followed.close();
    const kept = root.resolve("/abs", { followLast: false });
    expect([kept.name, kept.path]).to.deep.equal(["abs", "/abs"]);
    kept.close();
  });

  it("does not follow a symlink to a host path out of the root", () => {
    // the host directory's path does not exist inside the root
    expect(scopedError(() => root.resolve("/hostlink/host-secret", { followLast: false })).code).to.equal("ENOENT");
    expect(scopedError(() => root.resolve("/hostlink", { followLast: true })).code).to.equal("ENOENT");
    // made inside the root, the same path is found there, and only there
    mkdirSync(join(rootDir, hostDir), { recursive: true });
    const r = root.resolve("/hostlink", { followLast: true });
    expect([r.name, r.path, inode(r.dirFd)]).to.deep.equal(["", hostDir, statSync(join(rootDir, hostDir)).ino]);
    r.close();
  });

  it("fails link loops with ELOOP and files on the way with ENOTDIR", () => {
    expect(scopedError(() => root.resolve("/loop1/x", { followLast: false })).code).to.equal("ELOOP");
    expect(scopedError(() => root.resolve("/loop1", { followLast: true })).code).to.equal("ELOOP");
    expect(scopedError(() => root.resolve("/file/x", { followLast: false })).code).to.equal("ENOTDIR");
  });

  it("makes missing directories inside the root when asked, through symlinks too", () => {
    const r = root.resolve("/abs/hostlink/made/here", { followLast: true, create: true });
    r.close();
    expect(statSync(join(rootDir, hostDir, "made", "here")).isDirectory()).to.equal(true);
    expect(existsSync(join(hostDir, "made"))).to.equal(false);
  });

  it("extracts tars with evil entries inside the root only", async () => {
    const tar = await makeTar([
      { name: "evil", type: "symlink", linkname: "/" },
      { name: "evil/pwned-abs", data: "x" },
      { name: "host", type: "symlink", linkname: hostDir },
      { name: "host/pwned-host", data: "x" },
      { name: "climb", type: "symlink", linkname: "../../../../.." },
      { name: "climb/pwned-climb", data: "x" },
    ]);
    const dir = root.openDir("/dir");
    await extractScoped(dir, Readable.from(tar), { noOverwriteDirNonDir: true }).finally(() => dir.close());
    expect(readdirSync(hostDir)).to.deep.equal(["host-secret"]);
    expect(existsSync("/pwned-abs")).to.equal(false);
    expect(readFileSync(join(rootDir, "pwned-abs"), "utf8")).to.equal("x");
    expect(readFileSync(join(rootDir, hostDir, "pwned-host"), "utf8")).to.equal("x");
    expect(readFileSync(join(rootDir, "pwned-climb"), "utf8")).to.equal("x");

    const escape = await makeTar([{ name: "../../outside", data: "x" }]);
    const failure = (tar: Buffer) => {
      const d = root.openDir("/dir");
      return extractScoped(d, Readable.from(tar), { noOverwriteDirNonDir: false }).then(() => undefined, (e: Error) => e).finally(() => d.close());
    };
    expect((await failure(escape))?.message).to.match(/leaves the layer directory/);
    const link = await makeTar([{ name: "l", type: "link", linkname: "../file" }]);
    expect((await failure(link))?.message).to.match(/invalid hardlink/);
  });

  it("packs a symlink as a symlink, never what it points at", async () => {
    const r = root.resolve("/", { followLast: true });
    const entries = await tarNames(packScoped(r, { rebase: "", release: () => r.close() }));
    const names = entries.map((e) => e.name);
    expect(names).to.include.members(["abs", "hostlink", "dir/", "dir/rel", "file"]);
    expect(names.some((n) => n.includes("host-secret"))).to.equal(false);
    expect(entries.some((e) => e.data.includes("HOST SECRET"))).to.equal(false);
  });

  it("removes a tree without following the symlinks in it", () => {
    mkdirSync(join(rootDir, "gone", "deeper"), { recursive: true });
    symlinkSync(hostDir, join(rootDir, "gone", "deeper", "to-host"));
    symlinkSync("/", join(rootDir, "gone", "to-root"));
    const r = root.resolve("/gone", { followLast: false });
    removeAt(r.dirFd, r.name);
    r.close();
    expect(existsSync(join(rootDir, "gone"))).to.equal(false);
    expect(readdirSync(hostDir)).to.deep.equal(["host-secret"]);
    expect(existsSync(join(rootDir, "file"))).to.equal(true);
  });
});

/** A PUT of a tar straight to the API (faster than the CLI, for more rounds of the race). */
function put(socketPath: string, path: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: "PUT", path, headers: { "content-type": "application/x-tar", "content-length": body.length }, timeout: 20_000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(body);
  });
}

describe("docker cp against a symlink-swapping container", function () {
  this.timeout(240_000);
  let d: TestDaemon;
  let host: string;
  let work: string;
  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what}: ${r.stderr}`).to.equal(0);
    return r.stdout;
  };

  before(async function () {
    work = makeTempDir("engine-race-");
    d = await startEngined();
    host = `unix://${d.socket}`;
    ok(await docker(host, ["import", "-c", 'CMD ["sh"]', writeFixture(work, "rootfs.tar", await busyboxRootfs()), "busybox"]), "docker import");
  });

  after(async () => d?.stop());

  it("never writes outside the container's root nor reads the host while a path component is swapped for symlinks", async () => {
    const token = randomBytes(6).toString("hex");
    const hostDir = makeTempDir("engine-race-host-");
    const secret = `host-secret-${token}`;
    writeFileSync(join(hostDir, "SECRET"), secret);
    const hostRel = hostDir.replace(/^\//, "");
    // bounded: the loop ends by itself, and the container is removed at the end of the test
    const loop = [
      "mkdir -p /work; i=0",
      "while [ $i -lt 200000 ]; do",
      "  rm -rf /work/d; mkdir /work/d; echo container-own > /work/d/SECRET",
      "  rm -rf /work/d; ln -s / /work/d",
      `  rm -rf /work/d; ln -s ${hostDir} /work/d`,
      `  rm -rf /work/d; ln -s ../../../../../../../${hostRel} /work/d`,
      "  i=$((i+1))",
      "done",
    ].join("\n");
    ok(await docker(host, ["run", "-d", "--name", "race", "--network", "none", "busybox", "sh", "-c", loop]), "run the swapper");
    try {
      const src = join(work, "src");
      mkdirSync(src);
      const deadline = Date.now() + 60_000;
      let cliCopies = 0;
      let cliLanded = 0;
      let reads = 0;
      // docker cp in: a file into the directory, and to a new name under it
      for (let n = 0; n < 200 && Date.now() < deadline; n++) {
        const name = `race-${token}-${n}`;
        writeFileSync(join(src, name), `copy ${n}\n`);
        const target = n % 2 === 0 ? "race:/work/d/" : `race:/work/d/${name}`;
        const r = await docker(host, ["cp", join(src, name), target]);
        cliCopies++;
        if (r.code === 0) cliLanded++;
        if (n % 4 === 0) {
          // docker cp out of the swapped path: the container's file or nothing, never the host's
          const out = await docker(host, ["cp", "race:/work/d/SECRET", "-"]);
          reads++;
          expect(out.stdout).to.not.include(secret);
        }
      }
      // and many more rounds straight through the API, a directory with a file in each tar
      let apiLanded = 0;
      for (let n = 0; n < 300 && Date.now() < deadline; n++) {
        const tar = await makeTar([{ name: `api-${token}-${n}/`, type: "directory" }, { name: `api-${token}-${n}/f`, data: `api ${n}\n` }]);
        if ((await put(d.socket, "/v1.51/containers/race/archive?path=/work/d&noOverwriteDirNonDir=true", tar)) === 200) apiLanded++;
      }
      expect(cliCopies).to.be.greaterThan(20);
      expect(reads).to.be.greaterThan(5);

      // nothing reached the host: not the symlinked host folder, not the host's /
      expect(readdirSync(hostDir)).to.deep.equal(["SECRET"]);
      expect(readFileSync(join(hostDir, "SECRET"), "utf8")).to.equal(secret);
      for (const name of readdirSync("/")) expect(name).to.not.include(token);

      // what landed is in the container's root: in /work/d, or where /work/d pointed inside it
      ok(await docker(host, ["kill", "race"]), "kill the swapper");
      const exported = join(work, "race.tar");
      ok(await docker(host, ["export", "-o", exported, "race"]), "export");
      const landed = (await tarNames(Readable.from(readFileSync(exported)))).filter((e) => e.name.includes(token));
      for (const e of landed) {
        const cli = new RegExp(`^(work/d/)?race-${token}-(\\d+)$`).exec(e.name);
        const api = new RegExp(`^(work/d/)?api-${token}-(\\d+)/(f)?$`).exec(e.name);
        expect(cli ?? api, `a copy landed at ${e.name}`).to.not.equal(null);
        if (cli) expect(e.data).to.equal(`copy ${cli[2]}\n`);
        if (api?.[3]) expect(e.data).to.equal(`api ${api[2]}\n`);
      }
      expect(cliLanded + apiLanded, "some copies landed").to.be.greaterThan(0);
    } finally {
      await docker(host, ["rm", "-f", "race"]);
    }
  });

  it("through a volume: a swapped path in it never leads to the host, and a read-only bind stays unwritten", async () => {
    const token = randomBytes(6).toString("hex");
    const hostDir = makeTempDir("engine-race-vol-host-");
    const roDir = makeTempDir("engine-race-vol-ro-");
    const secret = `host-secret-${token}`;
    writeFileSync(join(hostDir, "SECRET"), secret);
    writeFileSync(join(roDir, "SECRET"), "the read-only bind's own"); // in the container's view: may be read
    const hostRel = hostDir.replace(/^\//, "");
    // in the volume, /vol/d is a folder, a symlink to /, to a host path, climbing, and to the read-only bind
    const loop = [
      "i=0",
      "while [ $i -lt 200000 ]; do",
      "  rm -rf /vol/d; mkdir /vol/d; echo container-own > /vol/d/SECRET",
      "  rm -rf /vol/d; ln -s / /vol/d",
      `  rm -rf /vol/d; ln -s ${hostDir} /vol/d`,
      `  rm -rf /vol/d; ln -s ../../../../../../../${hostRel} /vol/d`,
      "  rm -rf /vol/d; ln -s /ro /vol/d",
      "  i=$((i+1))",
      "done",
    ].join("\n");
    ok(await docker(host, ["run", "-d", "--name", "race-vol", "--network", "none", "-v", "/vol", "-v", `${roDir}:/ro:ro`, "busybox", "sh", "-c", loop]), "run the swapper");
    try {
      const deadline = Date.now() + 20_000;
      let landed = 0;
      let reads = 0;
      for (let n = 0; n < 150 && Date.now() < deadline; n++) {
        const tar = await makeTar([{ name: `vol-${token}-${n}`, data: `vol ${n}\n` }]);
        if ((await put(d.socket, "/v1.51/containers/race-vol/archive?path=/vol/d&noOverwriteDirNonDir=true", tar)) === 200) landed++;
        if (n % 3 === 0) {
          const out = await docker(host, ["cp", "race-vol:/vol/d/SECRET", "-"]);
          reads++;
          expect(out.stdout).to.not.include(secret);
        }
      }
      expect(reads).to.be.greaterThan(5);
      expect(readdirSync(hostDir)).to.deep.equal(["SECRET"]);
      expect(readdirSync(roDir)).to.deep.equal(["SECRET"]);
      for (const name of readdirSync("/")) expect(name).to.not.include(token);

      // what landed is in the volume's /d or where /vol/d pointed inside the container: its root
      ok(await docker(host, ["kill", "race-vol"]), "kill the swapper");
      const volume = JSON.parse(ok(await docker(host, ["inspect", "-f", "{{json .Mounts}}", "race-vol"]), "inspect"))
        .find((m: { Destination: string }) => m.Destination === "/vol").Source as string;
      const inVolume = existsSync(join(volume, "d")) && statSync(join(volume, "d")).isDirectory() ? readdirSync(join(volume, "d")) : [];
      const exported = join(work, "race-vol.tar");
      ok(await docker(host, ["export", "-o", exported, "race-vol"]), "export");
      const inRoot = (await tarNames(Readable.from(readFileSync(exported)))).filter((e) => e.name.includes(token));
      for (const e of inRoot) expect(e.name, `a copy landed at ${e.name}`).to.match(new RegExp(`^vol-${token}-\\d+$`));
      const all = [...inVolume.filter((n) => n.includes(token)), ...inRoot.map((e) => e.name)];
      // Copies that went into the folder /vol/d are deleted with it by the swapper's next
      // round, so what is found may be none of them: the daemon's 200s show copies were made.
      expect(landed, "some copies were accepted").to.be.greaterThan(0);
      expect(all.length).to.be.at.most(landed);
    } finally {
      await docker(host, ["rm", "-f", "-v", "race-vol"]);
    }
  });
});
